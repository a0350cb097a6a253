/**
 * Rescue mode, declared, through the real CLI with both SDKs in parallel: entered and left by the program, quiet on
 * refresh, a rescue entered through the API behind the stack's back shown by refresh and ended by the next `up`, and
 * `powerState: "stopped"` together with `rescue` refused at check with the reason.
 */
import * as plugin from "@cloudinfra/pulumi/plugin";
import type { Stack } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import * as dynamic from "../../sdk";
import { cliWorld, describeCli } from "./helpers";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
const [rescueImage, otherImage] = world.emulator.bootstrap.fixtures.rescueImages;

interface VmArgs {
  name: string;
  powerState?: "running" | "stopped";
  rescue?: { sourceType: "catalog" | "custom"; sourceImageId: string };
}
const sdks = {
  plugin: (args: VmArgs) => {
    const vm = new plugin.VirtualMachine("vm", { datacenterId: fra!.id, imageId: 1, configurationId: 1, ...args });
    return { id: vm.id, rescued: vm.rescued, rescueImage: vm.rescueImage };
  },
  dynamic: (args: VmArgs) => {
    const vm = new dynamic.VirtualMachine("vm", { datacenterId: fra!.id, imageId: 1, configurationId: 1, ...args });
    return { id: vm.id, rescued: vm.rescued, rescueImage: vm.rescueImage };
  },
};

const rescueOf = (id: string) => world.api.getRescue({ params: { id } });

/** The VM's outputs as the stack's state records them (what refresh wrote). */
async function recordedRescue(stack: Stack): Promise<Record<string, unknown> | undefined> {
  const deployment = (await stack.exportStack()).deployment as {
    resources?: { urn: string; outputs?: Record<string, unknown> }[];
  };
  return deployment.resources?.find((r) => r.urn.endsWith("::vm"))?.outputs;
}

describeCli("VM rescue mode, declared (real CLI)", () => {
  it.concurrent.each(Object.keys(sdks) as (keyof typeof sdks)[])(
    "%s SDK: rescue on, quiet refresh, image changed, off; entered behind the stack's back, refresh shows it, up ends it",
    async (sdk) => {
      const make = sdks[sdk];
      const rescue = { sourceType: "catalog" as const, sourceImageId: rescueImage!.id };
      let args: VmArgs = { name: `rescue-${sdk}`, rescue };
      const stack = await world.stack("quickstart", async () => make(args));

      const created = await stack.up({ color: "never" });
      const id = created.outputs.id!.value as string;
      expect(created.outputs.rescued!.value).toBe(true);
      expect(created.outputs.rescueImage!.value).toEqual(rescueImage);
      expect(await rescueOf(id)).toEqual({ rescued: true, image: rescueImage });
      expect((await world.api.getVm({ params: { id } })).status).toBe("Rescued");

      const quiet = await stack.refresh({ color: "never" });
      expect(Object.keys(quiet.summary.resourceChanges ?? {})).toEqual(["same"]);
      await stack.preview({ color: "never", expectNoChanges: true });

      // another image: leave, then enter again
      args = { ...args, rescue: { ...rescue, sourceImageId: otherImage!.id } };
      const changed = await stack.up({ color: "never" });
      expect(changed.outputs.id!.value).toBe(id);
      expect((await rescueOf(id)).image?.id).toBe(otherImage!.id);

      // removed from the program: the VM leaves rescue and runs its own disk
      args = { name: `rescue-${sdk}` };
      const left = await stack.up({ color: "never" });
      expect(left.outputs.rescued!.value).toBe(false);
      expect(left.outputs.rescueImage!.value).toBeNull();
      expect(await rescueOf(id)).toEqual({ rescued: false, image: null });
      expect((await world.api.getVm({ params: { id } })).status).toBe("Running");
      await stack.preview({ color: "never", expectNoChanges: true });

      // entered through the API behind the stack's back: refresh shows it, the next up ends it
      const { jobId } = await world.api.rescueVm({ params: { id }, body: rescue });
      await world.api.jobs.wait(jobId);
      const drift = await stack.refresh({ color: "never" });
      expect(drift.summary.resourceChanges).toMatchObject({ update: 1 });
      expect(await recordedRescue(stack)).toMatchObject({ rescued: true, rescueImage });
      const repaired = await stack.up({ color: "never" });
      expect(repaired.summary.resourceChanges).toMatchObject({ update: 1 });
      expect(await rescueOf(id)).toEqual({ rescued: false, image: null });
      await stack.preview({ color: "never", expectNoChanges: true });

      // powerState "stopped" with rescue: refused at check, with the reason, before any request
      args = { name: `rescue-${sdk}`, powerState: "stopped", rescue };
      const mark = world.mark();
      const refused = await stack.up({ color: "never" }).then(
        () => undefined,
        (error: unknown) => String(error),
      );
      expect(refused).toMatch(
        /property rescue .* has a problem: cannot go with powerState \\?"stopped\\?": a VM in rescue mode/,
      );
      const mutations = (await world.requests(mark)).filter((r) => r.method !== "GET" && r.path.includes(id));
      expect(mutations).toEqual([]);
      expect((await world.api.getVm({ params: { id } })).status).toBe("Running");

      await stack.destroy({ color: "never" });
    },
  );
});
