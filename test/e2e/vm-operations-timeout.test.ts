/**
 * `shutdownBeforeDelete` when the VM does not stop in time, through the real CLI (dynamic SDK): the stop is refused
 * without effect (an injected 409), the VM stays Running past cloudinfra:jobTimeoutMs, and the destroy fails naming
 * the setting and the timeout, with the VM left as it was; once it can stop, the destroy goes through.
 */
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { cliWorld, describeCli } from "./helpers";

const world = await cliWorld();
const [fra] = world.datacenters;

describeCli("shutdownBeforeDelete: a VM that does not stop in time is not deleted (real CLI)", () => {
  it("fails the destroy naming the setting and the timeout, and leaves the VM running", async () => {
    const stack = await world.stack(
      "quickstart",
      async () => ({
        id: new cloudinfra.VirtualMachine("vm", {
          name: "ops-timeout",
          datacenterId: fra!.id,
          imageId: 1,
          configurationId: 1,
          shutdownBeforeDelete: true,
        }).id,
      }),
      { ...world.config, "cloudinfra:jobTimeoutMs": "1000" },
    );
    const id = (await stack.up({ color: "never" })).outputs.id!.value as string;
    await world.faults("stopVm,status=409,message=The VM is busy");
    const failed = await stack.destroy({ color: "never" }).then(
      () => "destroyed",
      (error: unknown) => String(error),
    );
    expect(failed).toMatch(/shutdownBeforeDelete: VM "ops-timeout" \(.+\) was not Stopped within 1000 ms/);
    expect(failed).toMatch(/it\s+was not deleted/);
    const vm = await world.api.getVm({ params: { id } });
    expect(vm.status).toBe("Running");

    await world.faults("");
    await stack.destroy({ color: "never" });
    await expect(world.api.getVm({ params: { id } })).rejects.toMatchObject({ status: 404 });
  });
});
