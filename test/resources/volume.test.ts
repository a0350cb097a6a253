import { describe, expect, it } from "vitest";
import { Volume, type VolumeArgs } from "../../sdk";
import { destroy, preview, refresh, RunError, up, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra, ams] = stack.datacenters;
/** Fixture catalog: ssd (1) offers 10, 20, 50, 100, 200, 500 GB (ids 101…106); nvme (2) 50, 100, 250, 500, 1000. */
const SSD = 1;
const NVME = 2;

const getVolume = (id: string) => stack.api.getVolume({ params: { id } });
const volumesNamed = async (prefix: string) =>
  (await stack.api.listVolumes({ query: { search: prefix, limit: 100 } })).data.filter((v) =>
    v.name.startsWith(prefix),
  );
const failure = async (run: Promise<RunResult>) => (await run.catch((e: unknown) => e)) as RunError;

/** A running VM made through the API (VMs are not under test here). */
async function vmInFra(name: string): Promise<string> {
  const [job] = await stack.api.createVm({ body: { name, datacenterId: fra.id, imageId: 1, configurationId: 1 } });
  return (await stack.api.jobs.wait(job.id)).resourceId!;
}

async function attachByHand(volumeId: string, virtualMachineId: string): Promise<void> {
  const { jobId } = await stack.api.attachVolume({ params: { id: volumeId }, body: { virtualMachineId } });
  await stack.api.jobs.wait(jobId);
}

function program(args: VolumeArgs) {
  return () => {
    const vol = new Volume("vol", args);
    return { id: vol.id, volumeSizeId: vol.volumeSizeId, datacenterName: vol.datacenterName };
  };
}

// The lifecycle (create, no-op, in place, replace, drift, bad inputs, deleted behind the stack, failed job, adoption,
// destroy) is in the table, test/lifecycle/table.ts, played on every host; here what is particular to volumes.
describe("Volume", () => {
  it("grows from the size refresh found; a new type and data center under the same name delete the old volume first", async () => {
    const options = stack.options();
    const base = { name: "gl-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 10 };
    const id = (await up(program(base), options)).outputs.id as string;
    const { jobId } = await stack.api.resizeVolume({ params: { id }, body: { newSizeGb: 50 } });
    await stack.api.jobs.wait(jobId);
    expect((await refresh(options)).step("vol").refresh).toBe("changed");
    const grown = await up(program({ ...base, sizeGb: 100 }), options);
    expect(grown.step("vol").op).toBe("update");
    expect(await getVolume(id)).toMatchObject({ sizeGb: 100, volumeSizeId: 104 });

    // another type and data center under the same name: the old volume is deleted first (names are unique)
    const nvme = { ...base, datacenterId: ams.id, volumeTypeId: NVME, sizeGb: 100 };
    const retyped = await up(program(nvme), options);
    expect(retyped.step("vol").op).toBe("replace");
    expect(retyped.step("vol").diff?.deleteBeforeReplace).toBe(true);
    const retypedId = retyped.outputs.id as string;
    expect(retypedId).not.toBe(id);
    await expect(getVolume(id)).rejects.toMatchObject({ status: 404 });
    expect(await getVolume(retypedId)).toMatchObject({
      volumeTypeId: NVME,
      sizeGb: 100,
      volumeSizeId: 202,
      datacenter: { id: ams.id },
    });
    await destroy(options);
    expect(await volumesNamed("gl-")).toEqual([]);
  });

  it("preview changes nothing", async () => {
    const options = stack.options();
    const since = stack.mark();
    const planned = await preview(
      program({ name: "pv-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 10 }),
      options,
    );
    expect(planned.step("vol").op).toBe("create");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);
    expect(await volumesNamed("pv-")).toEqual([]);
  });

  // The table's bad step refuses a shrink, a teamId that is no id and an unknown property; these would replace the
  // volume, which allows a shrink, so they are refused on their own here.
  it("9. refuses bad inputs at check, naming each property, before any request", async () => {
    const options = stack.options();
    const since = stack.mark();
    const bad = {
      name: " ",
      datacenterId: "fra-1",
      volumeTypeId: 0,
      sizeGb: 10.5,
    } as unknown as VolumeArgs;
    const error = await failure(up(program(bad), options));
    expect(error).toBeInstanceOf(RunError);
    for (const property of ["name", "datacenterId", "volumeTypeId", "sizeGb"]) {
      expect(error.message).toContain(property);
    }
    expect(error.message).toContain("UUID");
    expect(await stack.requests(since)).toEqual([]);
  });

  it("refuses a size the type does not offer, naming the sizes it does, without creating anything", async () => {
    const options = stack.options();
    const since = stack.mark();
    const error = await failure(
      up(program({ name: "sz-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 30 }), options),
    );
    expect(error.message).toContain("sizeGb: volume type ssd has no 30 GB size");
    expect(error.message).toContain("10, 20, 50, 100, 200, 500 GB");
    // Besides the one credential check of the run (GET /auth/check), only the size catalogue was asked: check refuses
    // the size from it, and the preview checks' reads (the stack's own key, whether the name is free) are not made
    // for inputs already refused.
    expect((await stack.requests(since)).map((r) => r.route).filter((r) => r !== "check")).toEqual(["volumeSizes"]);
    expect(error.result.state.resources.filter((r) => r.name === "vol")).toEqual([]);
    expect(await volumesNamed("sz-")).toEqual([]);
  });

  it("GET volume-sizes was sent before every volume create, and a GET before every delete: once per data center, none before a delete", async () => {
    const options = stack.options();
    const many = () => {
      const ids: Record<string, unknown> = {};
      for (let i = 0; i < 4; i++) {
        ids[`f${i}`] = new Volume(`f${i}`, {
          name: `rq-f${i}`,
          datacenterId: fra.id,
          volumeTypeId: SSD,
          sizeGb: 10,
        }).id;
      }
      for (let i = 0; i < 2; i++) {
        ids[`a${i}`] = new Volume(`a${i}`, {
          name: `rq-a${i}`,
          datacenterId: ams.id,
          volumeTypeId: NVME,
          sizeGb: 50,
        }).id;
      }
      return ids;
    };
    const since = stack.mark();
    await up(many, options);
    const created = await stack.requests(since);
    expect(created.filter((r) => r.route === "createVolume")).toHaveLength(6);
    expect(created.filter((r) => r.route === "volumeSizes").map((r) => r.path)).toEqual(
      expect.arrayContaining([expect.stringContaining(fra.id), expect.stringContaining(ams.id)]),
    );
    expect(created.filter((r) => r.route === "volumeSizes")).toHaveLength(2);
    expect(await volumesNamed("rq-")).toHaveLength(6);

    const beforeDestroy = stack.mark();
    await destroy(options);
    const destroyed = await stack.requests(beforeDestroy);
    // Deleted together: one bulk request (ids 1-50) for what the engine deleted at once, single deletes for the rest.
    const deletes = destroyed.filter((r) => r.route === "deleteVolume" || r.route === "bulkDeleteVolumes");
    expect(deletes.every((r) => r.status === 202)).toBe(true);
    expect(deletes.length).toBeLessThan(6);
    expect(destroyed.filter((r) => r.route === "getVolume")).toEqual([]);
    expect(await volumesNamed("rq-")).toEqual([]);
  });

  it("volumeSizeId, the API's own field, was refused as unknown: accepted when it agrees with sizeGb, a clear error when not", async () => {
    const options = stack.options();
    const agreed = await up(
      program({ name: "vs-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 20, volumeSizeId: 102 }),
      options,
    );
    expect(await getVolume(agreed.outputs.id as string)).toMatchObject({ sizeGb: 20, volumeSizeId: 102 });
    expect(
      (
        await up(
          program({ name: "vs-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 20, volumeSizeId: 102 }),
          options,
        )
      ).step("vol").op,
    ).toBe("same");

    const since = stack.mark();
    const error = await failure(
      up(program({ name: "vs-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 50, volumeSizeId: 102 }), options),
    );
    expect(error.message).toContain("volumeSizeId: 102 does not agree with sizeGb 50");
    expect(error.message).toContain("set it to 103");
    expect(error.message).not.toContain("volumeSizeId: volumeSizeId");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);
    expect(await getVolume(agreed.outputs.id as string)).toMatchObject({ sizeGb: 20 });

    const grown = await up(
      program({ name: "vs-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 50, volumeSizeId: 103 }),
      options,
    );
    expect(grown.step("vol").op).toBe("update");
    expect(await getVolume(agreed.outputs.id as string)).toMatchObject({ sizeGb: 50, volumeSizeId: 103 });
    await destroy(options);
    expect(await volumesNamed("vs-")).toEqual([]);
  });

  it("an ambiguous create (5xx) that created nothing reported the raw 'may have taken effect' error: resent; lost on every send (1 + maxRetries) says nothing was created", async () => {
    const options = stack.options();
    const args = { name: "amb-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 10 };
    const since = stack.mark();
    await stack.faults("createVolume,status=500,count=1");
    const created = await up(program(args), options);
    await stack.faults("");
    const posts = (await stack.requests(since)).filter((r) => r.route === "createVolume");
    expect(posts.map((r) => r.status)).toEqual([500, 202]);
    expect((await volumesNamed("amb-")).map((v) => v.id)).toEqual([created.outputs.id]);
    await destroy(options);

    await stack.faults("createVolume,status=502,count=4");
    const failed = await up(program(args), { ...options, throwOnError: false });
    await stack.faults("");
    const message = failed.errors.map((e) => e.message).join("\n");
    expect(message).toContain("nothing was created; the next `pulumi up` creates it");
    expect(message).not.toContain("may have taken effect");
    expect(failed.state.resources.filter((r) => r.name === "vol")).toEqual([]);
    expect(await volumesNamed("amb-")).toEqual([]);
  });

  it("11. adopt refuses a volume that differs in what would replace it, naming the property", async () => {
    const options = stack.options();
    const existing = await stack.api.createVolume({
      body: { name: "ad-vol", datacenterId: fra.id, volumeTypeId: SSD, volumeSizeId: 101, sizeGb: 10 },
    });
    await stack.api.jobs.wait(existing.jobId);
    const mismatched = await failure(
      up(program({ name: "ad-vol", datacenterId: fra.id, volumeTypeId: NVME, sizeGb: 50, adopt: true }), options),
    );
    expect(mismatched.message).toContain("Cannot adopt volume");
    expect(mismatched.message).toContain("volumeTypeId");
    expect(await getVolume(existing.id)).toMatchObject({ volumeTypeId: SSD, sizeGb: 10 });
    await stack.api.jobs.wait((await stack.api.deleteVolume({ params: { id: existing.id } })).jobId);
    expect(await volumesNamed("ad-")).toEqual([]);
  });

  it("delete waits until the volume is detached, then deletes it", async () => {
    const options = stack.options();
    const vmId = await vmInFra("wt-vm");
    const created = await up(program({ name: "wt-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 10 }), options);
    const id = created.outputs.id as string;
    await attachByHand(id, vmId);

    const since = stack.mark();
    const destroying = destroy(options);
    // Once the API has refused the delete of the attached volume, detach it (as its VolumeAttachment's delete would).
    for (;;) {
      const seen = (await stack.requests(since)).filter((r) => r.route === "deleteVolume");
      if (seen.length > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const detachedAt = stack.mark();
    const { jobId } = await stack.api.detachVolume({ params: { id } });
    await stack.api.jobs.wait(jobId);
    await destroying;
    const log = await stack.requests(since);
    // The delete is sent first (no look before it); the provider looks only after a refusal.
    expect(log.find((r) => r.route === "deleteVolume" || r.route === "getVolume")?.route).toBe("deleteVolume");
    const deletes = log.filter((r) => r.route === "deleteVolume");
    expect(deletes.filter((r) => r.status !== 202).every((r) => r.status === 409)).toBe(true);
    const accepted = deletes.filter((r) => r.status === 202);
    expect(accepted).toHaveLength(1);
    expect(accepted[0].seq).toBeGreaterThan(detachedAt);
    expect(await volumesNamed("wt-")).toEqual([]);
    await stack.api.deleteVm({ params: { id: vmId } });
  });

  it("delete names the VM of a volume that stays attached", async () => {
    const options = stack.options({
      config: { ...stack.options().config, "cloudinfra:jobTimeoutMs": "1000" },
    });
    const vmId = await vmInFra("st-vm");
    const created = await up(program({ name: "st-vol", datacenterId: fra.id, volumeTypeId: SSD, sizeGb: 10 }), options);
    const id = created.outputs.id as string;
    await attachByHand(id, vmId);
    const error = await failure(destroy(options));
    expect(error.message).toContain("still attached to virtual machine st-vm");
    expect(error.message).toContain("VolumeAttachment");
    expect((await getVolume(id)).status).toBe("In-use");
    const { jobId } = await stack.api.detachVolume({ params: { id } });
    await stack.api.jobs.wait(jobId);
    await destroy(options);
    expect(await volumesNamed("st-")).toEqual([]);
    await stack.api.deleteVm({ params: { id: vmId } });
  });
});
