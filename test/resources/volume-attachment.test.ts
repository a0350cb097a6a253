import { describe, expect, it } from "vitest";
import { Volume, VolumeAttachment, type VolumeArgs } from "../../sdk";
import { destroy, preview, refresh, RunError, up, type RunResult } from "../harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra, ams] = stack.datacenters;

const getVolume = (id: string) => stack.api.getVolume({ params: { id } });
const volumesNamed = async (prefix: string) =>
  (await stack.api.listVolumes({ query: { search: prefix, limit: 100 } })).data.filter((v) =>
    v.name.startsWith(prefix),
  );
const failure = async (run: Promise<RunResult>) => (await run.catch((e: unknown) => e)) as RunError;
const routesSince = async (since: number) => (await stack.requests(since)).map((r) => r.route);

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

describe("VolumeAttachment lifecycle", () => {
  it("attaches, stays unchanged, moves by replacement, survives drift and deletion, and is destroyed", async () => {
    const options = stack.options();
    const vol = volumeArgs("lc-att");

    // 1. create: the API shows the volume In-use on the VM; the id is <volumeId>:<virtualMachineId>
    const created = await up(program(vol, vmA), options);
    expect(created.step("att").op).toBe("create");
    let volumeId = created.outputs.volumeId as string;
    expect(created.outputs.attachmentId).toBe(`${volumeId}:${vmA}`);
    expect(created.outputs.status).toBe("In-use");
    expect(await getVolume(volumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmA });

    // 2. a second up: no changes; 3. refresh: no changes, for the attachment and for the volume it attached
    const again = await up(program(vol, vmA), options);
    expect([again.step("vol").op, again.step("att").op]).toEqual(["same", "same"]);
    const clean = await refresh(options);
    expect([clean.step("vol").refresh, clean.step("att").refresh]).toEqual(["same", "same"]);

    // 4. an attachment has nothing to change in place; its volume grows in place while attached
    const grown = await up(program({ ...vol, sizeGb: 20 }, vmA), options);
    expect([grown.step("vol").op, grown.step("att").op]).toEqual(["update", "same"]);
    expect(await getVolume(volumeId)).toMatchObject({ sizeGb: 20, status: "In-use", virtualMachineId: vmA });
    const bigger = { ...vol, sizeGb: 20 };

    // 5. another VM replaces the attachment: detached from the old VM first, then attached to the new one
    const moved = await up(program(bigger, vmB), options);
    expect(moved.step("att").op).toBe("replace");
    expect(moved.step("att").diff?.deleteBeforeReplace).toBe(true);
    expect(moved.outputs.attachmentId).toBe(`${volumeId}:${vmB}`);
    expect(await getVolume(volumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmB });

    // 5b. the volume replaced (renamed: created first) replaces its attachment: the new volume is attached, then the
    // old one detached and deleted
    const renamed = { ...bigger, name: "lc-att-b" };
    const replaced = await up(program(renamed, vmB), options);
    expect([replaced.step("vol").op, replaced.step("att").op]).toEqual(["replace", "replace"]);
    const oldVolumeId = volumeId;
    volumeId = replaced.outputs.volumeId as string;
    expect(replaced.outputs.attachmentId).toBe(`${volumeId}:${vmB}`);
    await expect(getVolume(oldVolumeId)).rejects.toMatchObject({ status: 404 });
    expect(await getVolume(volumeId)).toMatchObject({ name: "lc-att-b", status: "In-use", virtualMachineId: vmB });

    // 6. drift: detached behind the stack's back. Refresh drops the attachment, the next up attaches it again.
    const detach = await stack.api.detachVolume({ params: { id: volumeId } });
    await stack.api.jobs.wait(detach.jobId);
    const drifted = await refresh(options);
    expect(drifted.step("att").refresh).toBe("gone");
    const repaired = await up(program(renamed, vmB), options);
    expect([repaired.step("vol").op, repaired.step("att").op]).toEqual(["same", "create"]);
    expect(await getVolume(volumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmB });

    // 7. the volume deleted behind the stack's back: refresh drops both, the next up recreates both
    const detachAgain = await stack.api.detachVolume({ params: { id: volumeId } });
    await stack.api.jobs.wait(detachAgain.jobId);
    const deletion = await stack.api.deleteVolume({ params: { id: volumeId } });
    await stack.api.jobs.wait(deletion.jobId);
    const gone = await refresh(options);
    expect([gone.step("vol").refresh, gone.step("att").refresh]).toEqual(["gone", "gone"]);
    const recreated = await up(program(renamed, vmB), options);
    expect([recreated.step("vol").op, recreated.step("att").op]).toEqual(["create", "create"]);
    const newVolumeId = recreated.outputs.volumeId as string;
    expect(newVolumeId).not.toBe(volumeId);
    expect(await getVolume(newVolumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmB });

    // 8. destroy detaches (the attachment goes first), then deletes the volume: nothing of the stack is left
    await destroy(options);
    expect(await volumesNamed("lc-")).toEqual([]);
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

  it("9. refuses bad inputs at check, naming each property, before any request", async () => {
    const options = stack.options();
    const since = stack.mark();
    const error = await failure(
      up(() => {
        new VolumeAttachment("att", { volumeId: "vol-1", mountPoint: "/data" } as never);
      }, options),
    );
    expect(error).toBeInstanceOf(RunError);
    for (const property of ["volumeId", "virtualMachineId", "mountPoint"]) expect(error.message).toContain(property);
    expect(error.message).toContain("UUID");
    expect(await stack.requests(since)).toEqual([]);
  });

  it("refuses a VM in another data center with the API's error naming both, recording nothing", async () => {
    // Which data center a VM is in needs a request: this cannot be a check failure.
    const options = stack.options();
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

  it("11. takes over an attachment that already exists, without an attach request", async () => {
    const options = stack.options();
    const first = await up(program(volumeArgs("ad-att"), undefined), options);
    const volumeId = first.outputs.volumeId as string;
    const attach = await stack.api.attachVolume({ params: { id: volumeId }, body: { virtualMachineId: vmA } });
    await stack.api.jobs.wait(attach.jobId);

    // Attached to another VM than the program's, the volume is not taken: the error says where it is.
    const elsewhere = await failure(up(program(volumeArgs("ad-att"), vmB), options));
    expect(elsewhere.message).toContain("att-a");
    expect(elsewhere.message).toContain("detach it there first");
    expect(await getVolume(volumeId)).toMatchObject({ status: "In-use", virtualMachineId: vmA });

    const since = stack.mark();
    const adopted = await up(program(volumeArgs("ad-att"), vmA), options);
    expect(adopted.step("att").op).toBe("create");
    expect(adopted.outputs.attachmentId).toBe(`${volumeId}:${vmA}`);
    expect(await routesSince(since)).not.toContain("attachVolume");

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
