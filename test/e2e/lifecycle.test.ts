/**
 * The provider's lifecycle through the real CLI against the emulator: drift shown by refresh and repaired by up, a
 * resource deleted behind the stack dropped and recreated, replacements (create-before-delete, and delete-before-
 * replace where the unique name is kept), a failed create recorded and repaired, a check failure in preview.
 * Every claim is checked against what the emulator holds.
 */
import * as pulumi from "@pulumi/pulumi";
import type { EngineEvent, OpType, Stack } from "@pulumi/pulumi/automation";
import { CommandError } from "@pulumi/pulumi/automation";
import { beforeAll, describe, expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { cliWorld, describeCli, gone, stateResource } from "./helpers";

const world = await cliWorld();
const [fra] = world.datacenters;

/**
 * A network with a VM on it and a standalone network; config `app:*` steers what the tests change: `description`,
 * `imageId` (replaces the VM, create-before-delete: VM names need not be unique) and `snat` (replaces the standalone
 * network, which keeps its unique name: delete-before-replace), `cidr` (for the check failure).
 */
async function program() {
  const config = new pulumi.Config("app");
  const prefix = config.require("prefix");
  const network = new cloudinfra.Network("net", {
    name: `${prefix}-net`,
    datacenterId: fra.id,
    networkType: "custom",
    cidrBlock: config.get("cidr") ?? "10.40.0.0/24",
    description: config.get("description") ?? "managed by Pulumi",
  });
  const vm = new cloudinfra.VirtualMachine("vm", {
    name: `${prefix}-vm`,
    datacenterId: fra.id,
    imageId: config.getNumber("imageId") ?? 1,
    configurationId: 1,
    networkInterfaces: [{ networkId: network.id, primary: true }],
  });
  const solo = new cloudinfra.Network("solo", {
    name: `${prefix}-solo`,
    datacenterId: fra.id,
    networkType: "standard",
    snatEnabled: config.getBoolean("snat") ?? true,
  });
  return { networkId: network.id, vmId: vm.id, soloId: solo.id };
}

/** The steps the engine reported, as `name:op` in the order they started. */
function stepRecorder(): { onEvent: (event: EngineEvent) => void; steps: string[] } {
  const steps: string[] = [];
  return {
    steps,
    onEvent(event) {
      const meta = event.resourcePreEvent?.metadata;
      if (meta !== undefined && meta.type.startsWith("pulumi-nodejs:dynamic/")) {
        steps.push(`${meta.urn.split("::").pop()}:${meta.op satisfies OpType}`);
      }
    },
  };
}

describeCli("the lifecycle through the real CLI", () => {
  describe("drift, replacement", () => {
    let stack: Stack;
    let ids: { networkId: string; vmId: string; soloId: string };

    beforeAll(async () => {
      stack = await world.stack("drift", program, { ...world.config, "app:prefix": "lc" });
      const created = await stack.up({ color: "never" });
      ids = Object.fromEntries(Object.entries(created.outputs).map(([k, v]) => [k, v.value])) as typeof ids;
      expect((await world.api.getVm({ params: { id: ids.vmId } })).status).toBe("Running");
    });

    it("a change made through the API is shown by refresh and repaired by the next up", async () => {
      await world.api.updateNetwork({ params: { id: ids.networkId }, body: { description: "edited by hand" } });
      const refreshed = await stack.refresh({ color: "never" });
      expect(refreshed.summary.resourceChanges).toMatchObject({ update: 1 });
      expect((await stateResource(stack, "net"))?.outputs?.description).toBe("edited by hand");

      const repaired = await stack.up({ color: "never" });
      expect(repaired.summary.resourceChanges).toMatchObject({ update: 1 });
      expect((await world.api.getNetwork({ params: { id: ids.networkId } })).description).toBe("managed by Pulumi");
      await stack.preview({ color: "never", expectNoChanges: true });
    });

    it("a resource deleted behind the stack is dropped by refresh and recreated by up", async () => {
      await world.api.jobs.wait((await world.api.deleteVm({ params: { id: ids.vmId } })).jobId);
      const refreshed = await stack.refresh({ color: "never" });
      expect(refreshed.summary.resourceChanges).toMatchObject({ delete: 1 });
      expect(await stateResource(stack, "vm")).toBeUndefined();

      const recreated = await stack.up({ color: "never" });
      expect(recreated.summary.resourceChanges).toMatchObject({ create: 1 });
      const vmId = recreated.outputs.vmId.value as string;
      expect(vmId).not.toBe(ids.vmId);
      expect((await world.api.getVm({ params: { id: vmId } })).status).toBe("Running");
      ids.vmId = vmId;
    });

    it("a replace-on-change input (imageId) replaces the VM, creating the new one before deleting the old", async () => {
      await stack.setConfig("app:imageId", { value: "2" });
      const recorder = stepRecorder();
      const replaced = await stack.up({ color: "never", onEvent: recorder.onEvent });
      expect(replaced.summary.resourceChanges).toMatchObject({ replace: 1 });
      const vmSteps = recorder.steps.filter((s) => s.startsWith("vm:"));
      expect(vmSteps).toEqual(["vm:create-replacement", "vm:replace", "vm:delete-replaced"]);
      const vmId = replaced.outputs.vmId.value as string;
      expect(vmId).not.toBe(ids.vmId);
      expect((await world.api.getVm({ params: { id: vmId } })).virtualMachine.imageId).toBe(2);
      expect(await gone(() => world.api.getVm({ params: { id: ids.vmId } }))).toBe(true);
      ids.vmId = vmId;
    });

    it("a replacement that keeps a unique name (the network's) deletes the old network first", async () => {
      await stack.setConfig("app:snat", { value: "false" });
      const recorder = stepRecorder();
      const replaced = await stack.up({ color: "never", onEvent: recorder.onEvent });
      expect(replaced.summary.resourceChanges).toMatchObject({ replace: 1 });
      const soloSteps = recorder.steps.filter((s) => s.startsWith("solo:"));
      // the engine's order for a delete-before-replace: the old one goes before the new one is created
      expect(soloSteps).toEqual(["solo:delete-replaced", "solo:replace", "solo:create-replacement"]);
      const soloId = replaced.outputs.soloId.value as string;
      expect(soloId).not.toBe(ids.soloId);
      expect(await world.api.getNetwork({ params: { id: soloId } })).toMatchObject({
        name: "lc-solo",
        snatEnabled: false,
      });
      expect(await gone(() => world.api.getNetwork({ params: { id: ids.soloId } }))).toBe(true);
    });

    it("a check failure fails preview naming the property, and nothing changes", async () => {
      const since = world.mark();
      const before = (await stack.exportStack()).deployment as unknown;
      await stack.setConfig("app:cidr", { value: "10.40.0.1/24" });
      const failed = await stack.preview({ color: "never" }).catch((e: unknown) => e);
      await stack.removeConfig("app:cidr");
      expect(failed).toBeInstanceOf(CommandError);
      const message = String(failed);
      expect(message).toContain("cidrBlock");
      expect(message).toContain("use 10.40.0.0/24");
      expect((await stack.exportStack()).deployment).toEqual(before);
      const writes = (await world.requests(since)).filter((r) => r.method !== "GET" && !r.path.endsWith("/jobs"));
      expect(writes).toEqual([]);
    });

    it("destroy deletes everything the stack holds", async () => {
      await stack.destroy({ color: "never" });
      expect((await world.api.listNetworks({ query: { search: "lc-" } })).data).toEqual([]);
      expect((await world.api.listVms({ query: { search: "lc-" } })).data).toEqual([]);
    });
  });

  it("a create whose job fails is recorded with its id, the API's resource is the stack's, and the next up repairs it", async () => {
    const stack = await world.stack("drift", program, { ...world.config, "app:prefix": "jf" });
    await world.faults("job=vm.create,fail=Quota exceeded,count=1");
    const failed = await stack.up({ color: "never" }).catch((e: unknown) => e);
    await world.faults("");
    expect(failed).toBeInstanceOf(CommandError);
    expect(String(failed)).toContain("Quota exceeded");

    const partial = await stateResource(stack, "vm");
    expect(partial?.id).toBeTruthy();
    expect(partial?.initErrors?.join(" ")).toContain("Quota exceeded");
    const [inApi, ...others] = (await world.api.listVms({ query: { search: "jf-vm" } })).data;
    expect(others).toEqual([]);
    expect(inApi).toMatchObject({ id: partial!.id, status: "Error" });

    const repaired = await stack.up({ color: "never" });
    expect(repaired.summary.resourceChanges).toMatchObject({ replace: 1 });
    const vmId = repaired.outputs.vmId.value as string;
    expect((await world.api.getVm({ params: { id: vmId } })).status).toBe("Running");
    expect(await gone(() => world.api.getVm({ params: { id: partial!.id! } }))).toBe(true);
    expect((await stateResource(stack, "vm"))?.initErrors ?? []).toEqual([]);

    await stack.destroy({ color: "never" });
    expect((await world.api.listVms({ query: { search: "jf-" } })).data).toEqual([]);
    expect((await world.api.listNetworks({ query: { search: "jf-" } })).data).toEqual([]);
  });
});
