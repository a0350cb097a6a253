/**
 * VM operations through the real CLI, both SDKs in parallel: `shutdownBeforeDelete` (stop, reads until Stopped, then
 * DELETE; without it DELETE only; the same when a replacement deletes the old VM) and `resetTrigger` (one POST reset,
 * the VM kept, then nothing to change). The emulator's request log is the evidence.
 */
import * as plugin from "@cloudinfra/pulumi/plugin";
import { expect, it } from "vitest";
import * as dynamic from "../../sdk";
import { cliWorld, describeCli } from "./helpers";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;

interface VmArgs {
  name: string;
  imageId: number;
  shutdownBeforeDelete?: boolean;
  resetTrigger?: string;
}
const sdks = {
  plugin: (args: VmArgs) => new plugin.VirtualMachine("vm", { datacenterId: fra!.id, configurationId: 1, ...args }).id,
  dynamic: (args: VmArgs) =>
    new dynamic.VirtualMachine("vm", { datacenterId: fra!.id, configurationId: 1, ...args }).id,
};

/** The requests about one VM since `mark`, as `METHOD suffix` (suffix: the path after the VM's id, e.g. `/stop`). */
async function requestsAbout(vmId: string, mark: number): Promise<string[]> {
  const prefix = `/v1/resource/virtual-machines/${vmId}`;
  return (await world.requests(mark))
    .filter((r) => r.path.split("?")[0]!.startsWith(prefix))
    .map((r) => `${r.method} ${r.path.split("?")[0]!.slice(prefix.length) || "/"}`);
}

/** Stop, then only reads until Stopped, then the delete (reads before the stop allowed: the VM is looked at first). */
function expectShutdownThenDelete(seen: string[]): void {
  const stop = seen.indexOf("POST /stop");
  const del = seen.indexOf("DELETE /");
  expect(stop, seen.join(", ")).toBeGreaterThanOrEqual(0);
  expect(del, seen.join(", ")).toBeGreaterThan(stop + 1);
  expect(
    seen.slice(stop + 1, del).every((r) => r === "GET /"),
    seen.join(", "),
  ).toBe(true);
  expect(seen.filter((r) => r.startsWith("POST") || r.startsWith("DELETE"))).toEqual(["POST /stop", "DELETE /"]);
}

describeCli("VM operations: shutdownBeforeDelete and resetTrigger (real CLI)", () => {
  it.concurrent.each(Object.keys(sdks) as (keyof typeof sdks)[])(
    "%s SDK: reset in place, shutdown before a replacement's delete and before destroy; without it DELETE only",
    async (sdk) => {
      const make = sdks[sdk];
      let args: VmArgs = { name: `ops-${sdk}`, imageId: 1, shutdownBeforeDelete: true, resetTrigger: "1" };
      const stack = await world.stack("quickstart", async () => ({ id: make(args) }));

      // created: no reset at the first create
      let mark = world.mark();
      const first = (await stack.up({ color: "never" })).outputs.id!.value as string;
      expect((await requestsAbout(first, mark)).filter((r) => r === "POST /reset")).toEqual([]);

      // resetTrigger changed: one POST reset, the same VM, nothing to change after
      args = { ...args, resetTrigger: "2" };
      mark = world.mark();
      const reset = await stack.up({ color: "never" });
      expect(reset.outputs.id!.value).toBe(first);
      expect(reset.summary.resourceChanges).toMatchObject({ update: 1 });
      const afterReset = await requestsAbout(first, mark);
      expect(afterReset.filter((r) => r.startsWith("POST") || r.startsWith("DELETE"))).toEqual(["POST /reset"]);
      expect((await world.api.getVm({ params: { id: first } })).status).toBe("Running");
      await stack.preview({ color: "never", expectNoChanges: true });

      // a replacement (new image) deletes the old VM: stop, reads until Stopped, then DELETE
      args = { ...args, imageId: 2 };
      mark = world.mark();
      const second = (await stack.up({ color: "never" })).outputs.id!.value as string;
      expect(second).not.toBe(first);
      expectShutdownThenDelete(await requestsAbout(first, mark));

      // destroy of the running VM: stop, reads until Stopped, then DELETE
      mark = world.mark();
      await stack.destroy({ color: "never" });
      expectShutdownThenDelete(await requestsAbout(second, mark));

      // without the setting: DELETE only
      args = { name: `ops-${sdk}-plain`, imageId: 1 };
      const plain = (await stack.up({ color: "never" })).outputs.id!.value as string;
      mark = world.mark();
      await stack.destroy({ color: "never" });
      const plainDelete = await requestsAbout(plain, mark);
      expect(plainDelete.filter((r) => r.startsWith("POST") || r.startsWith("DELETE"))).toEqual(["DELETE /"]);
    },
  );

  it("a VM already stopped is deleted at once (no stop sent)", async () => {
    const stack = await world.stack("quickstart", async () => ({
      id: new plugin.VirtualMachine("vm", {
        name: "ops-stopped",
        datacenterId: fra!.id,
        imageId: 1,
        configurationId: 1,
        powerState: "stopped",
        shutdownBeforeDelete: true,
      }).id,
    }));
    const id = (await stack.up({ color: "never" })).outputs.id!.value as string;
    expect((await world.api.getVm({ params: { id } })).status).toBe("Stopped");
    const mark = world.mark();
    await stack.destroy({ color: "never" });
    const seen = await requestsAbout(id, mark);
    expect(seen.filter((r) => r.startsWith("POST") || r.startsWith("DELETE"))).toEqual(["DELETE /"]);
  });
});
