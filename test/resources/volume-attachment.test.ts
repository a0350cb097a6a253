import { describe, expect, it } from "vitest";
import { Volume, VolumeAttachment, type VolumeArgs } from "../../sdk";
import { destroy, preview, refresh, RunError, up, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra, ams] = stack.datacenters;

const getVolume = (id: string) => stack.api.getVolume({ params: { id } });
const volumesNamed = async (prefix: string) =>
  (await stack.api.listVolumes({ query: { search: prefix, limit: 100 } })).data.filter((v) =>
    v.name.startsWith(prefix),
  );
const failure = async (run: Promise<RunResult>) => (await run.catch((e: unknown) => e)) as RunError;

/** Running VMs made through the API (VirtualMachine is not under test here); the emulator gives each an interface. */
async function vm(name: string, datacenterId: string): Promise<string> {
  const [job] = await stack.api.createVm({ body: { name, datacenterId, imageId: 1, configurationId: 1 } });
  return (await stack.api.jobs.wait(job.id)).resourceId!;
}
const [vmA, vmB, vmAms] = await Promise.all([vm("att-a", fra.id), vm("att-b", fra.id), vm("att-ams", ams.id)]);

const volumeArgs = (name: string, datacenterId = fra.id): VolumeArgs => ({
  name,
  datacenterId,
  volumeTypeId: 1,
  sizeGb: 10,
});

/** A volume, attached to `virtualMachineId` unless it is undefined. */
function program(volume: VolumeArgs, virtualMachineId: string | undefined) {
  return () => {
    const vol = new Volume("vol", volume);
    if (virtualMachineId === undefined) return { volumeId: vol.id };
    const att = new VolumeAttachment("att", { volumeId: vol.id, virtualMachineId });
    return { volumeId: vol.id, attachmentId: att.id, status: att.status };
  };
}

// The lifecycle (create, no-op, the volume grown while attached, replaced with its volume, detached behind the stack,
// bad inputs, failed attach, adoption, destroy) is in the table, test/lifecycle/table.ts, played on every host; here
// what is particular to attachments.
describe("VolumeAttachment", () => {
  it("another VM replaces the attachment, detached first; its volume deleted behind the stack takes it along", async () => {
    const options = stack.options();
    const vol = volumeArgs("mv-att");
    const volumeId = (await up(program(vol, vmA), options)).outputs.volumeId as string;
    const moved = await up(program(vol, vmB), options);
    expect(moved.step("att").op).toBe("replace");
    expect(moved.step("att").diff?.deleteBeforeReplace).toBe(true);
    expect(moved.outputs.attachmentId).toBe(`${volumeId}:${vmB}`);
    expect(await getVolume(volumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmB });

    // the volume deleted behind the stack's back: refresh drops both, the next up recreates both
    await stack.api.jobs.wait((await stack.api.detachVolume({ params: { id: volumeId } })).jobId);
    await stack.api.jobs.wait((await stack.api.deleteVolume({ params: { id: volumeId } })).jobId);
    const gone = await refresh(options);
    expect([gone.step("vol").refresh, gone.step("att").refresh]).toEqual(["gone", "gone"]);
    const recreated = await up(program(vol, vmB), options);
    expect([recreated.step("vol").op, recreated.step("att").op]).toEqual(["create", "create"]);
    const newVolumeId = recreated.outputs.volumeId as string;
    expect(newVolumeId).not.toBe(volumeId);
    expect(await getVolume(newVolumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmB });

    await destroy(options);
    expect(await volumesNamed("mv-")).toEqual([]);
    expect((await stack.api.listVolumes({ query: { "filter[virtualMachineId]": vmB } })).data).toEqual([]);
  });

  it("preview changes nothing", async () => {
    const options = stack.options();
    const since = stack.mark();
    const planned = await preview(program(volumeArgs("pv-att"), vmA), options);
    expect(planned.step("att").op).toBe("create");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);
    expect(await volumesNamed("pv-")).toEqual([]);
  });

  it("refuses a VM in another data center with the API's error naming both, recording nothing", async () => {
    // The preview check (preflight.ts) refuses this first when the ids are known; off, `up` meets the API's 400.
    const options = stack.options();
    options.config = { ...options.config, "cloudinfra:preflight": "off" };
    const error = await failure(up(program(volumeArgs("dc-att"), vmAms), options));
    expect(error.message).toContain(fra.name);
    expect(error.message).toContain(ams.name);
    expect(error.message).toContain("own data center");
    expect(error.result.state.resources.some((r) => r.name === "att")).toBe(false);
    const [volume] = await volumesNamed("dc-att");
    expect(volume).toMatchObject({ status: "Available", virtualMachineId: null });
    await destroy(options);
    expect(await volumesNamed("dc-")).toEqual([]);
  });

  it("11. an attachment to another VM than the program's is not taken over: the error says where the volume is", async () => {
    const options = stack.options();
    const first = await up(program(volumeArgs("ad-att"), undefined), options);
    const volumeId = first.outputs.volumeId as string;
    const attach = await stack.api.attachVolume({ params: { id: volumeId }, body: { virtualMachineId: vmA } });
    await stack.api.jobs.wait(attach.jobId);

    const elsewhere = await failure(up(program(volumeArgs("ad-att"), vmB), options));
    expect(elsewhere.message).toContain("att-a");
    expect(elsewhere.message).toContain("detach it there first");
    expect(elsewhere.result.state.resources.some((r) => r.name === "att")).toBe(false);
    expect(await getVolume(volumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmA });

    await stack.api.jobs.wait((await stack.api.detachVolume({ params: { id: volumeId } })).jobId);
    await destroy(options);
    expect(await volumesNamed("ad-")).toEqual([]);
  });

  it("destroy succeeds when the VM was deleted behind the stack's back", async () => {
    const options = stack.options();
    const vmGone = await vm("att-gone", fra.id);
    await up(program(volumeArgs("vg-att"), vmGone), options);
    const deletion = await stack.api.deleteVm({ params: { id: vmGone } });
    await stack.api.jobs.wait(deletion.jobId);
    await destroy(options);
    expect(await volumesNamed("vg-")).toEqual([]);
  });
});
