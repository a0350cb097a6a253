/**
 * The provider plugin through the real CLI: what the lifecycle table (test/lifecycle/table.ts, run through the CLI with
 * the plugin by test/lifecycle/cli-plugin.test.ts) does not say. A regression found on the way: a network whose last VM
 * went away while its delete was refused. (The other one, a secret input's value printed by the engine beside a check
 * failure, is the table's User `bad` step: `hides`.)
 */
import { expect, it } from "vitest";
import { cliWorld, describeCli, gone } from "./helpers";
import { resource, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const api = world.api;
const [fra] = world.datacenters;

describeCli("the provider plugin through the real CLI: regressions", () => {
  it("destroy deletes a network whose last VM went away between the API's refusal and the provider's look at it", async () => {
    // Regression: the delete was refused (409) while a VM was connected; when the VM was gone by the time the
    // provider listed the network's VMs, it reported the network as one that "cannot be deleted now" instead of
    // deleting it (seen in plugin-import's destroy, where imported VMs and networks are deleted side by side).
    const stack = await world.stack("quickstart", async () => {
      const net = resource("Network", "net", {
        name: "rc-net",
        datacenterId: fra!.id,
        networkType: "custom",
        cidrBlock: "10.70.0.0/24",
      });
      return { net: net.id };
    });
    const net = (await stack.up({ color: "never" })).outputs.net!.value as string;
    const [job] = await api.createVm({
      body: {
        name: "rc-vm",
        datacenterId: fra!.id,
        imageId: 1,
        configurationId: 1,
        networkInterfaces: [{ networkId: net, primary: true }],
      },
    });
    const vm = (await api.jobs.wait(job!.id)).resourceId!;

    // The provider's look at the network's VMs answers late; the VM is deleted once the delete has been refused.
    await world.faults("networkVms,latency=1500ms,count=1");
    const mark = world.mark();
    const destroyed = stack.destroy({ color: "never" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    try {
      const deadline = Date.now() + 60_000;
      while (!(await world.requests(mark)).some((r) => r.route === "deleteNetwork" && r.status === 409)) {
        if (Date.now() > deadline) throw new Error("the network's delete was never refused");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await api.jobs.wait((await api.deleteVm({ params: { id: vm } })).jobId);
      expect(await destroyed).toBeUndefined();
    } finally {
      await world.faults("");
    }
    const deletes = (await world.requests(mark)).filter((r) => r.route === "deleteNetwork").map((r) => r.status);
    expect(deletes).toEqual([409, 200]);
    expect(await gone(() => api.getNetwork({ params: { id: net } }))).toBe(true);
  });
});
