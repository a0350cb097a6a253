/**
 * Resizes whose answer is lost, as the API (the emulator) holds them: what a provider can read back after a volume or
 * VM resize answered 503 to decide whether it took effect. With `after` the request was carried out: the resource
 * shows status Resizing from the request on (before its job starts), then the new size once the job completed, or its
 * old size and status once the job failed. Without `after` nothing happened: old size, no job, the old status, and
 * the same request sent again resizes it. (The spec documents neither a Resizing status nor a way to find a job by
 * its resource: a provider can rely on the size read back once no job runs, not on seeing the job.)
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiError, type CloudClient } from "../../provider/client";
import { clientHarness, type ClientHarness } from "./helpers";

let h: ClientHarness;
let api: CloudClient;
let count = 0;
const state = () => h.emulator.ctx.state;

async function faults(spec: string): Promise<void> {
  const admin = `${h.emulator.baseUrl.replace(/\/v1$/, "")}/__admin/faults`;
  const response = await fetch(admin, {
    method: spec === "" ? "DELETE" : "PUT",
    headers: spec === "" ? {} : { "content-type": "application/json" },
    body: spec === "" ? undefined : JSON.stringify({ spec }),
  });
  expect(response.status).toBe(200);
}

/** The error a call rejects with (it must reject). */
async function failure(call: Promise<unknown>): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiError;
}

/** Waits until no job of the emulator is pending or in progress. */
async function jobsEnded(): Promise<void> {
  await expect
    .poll(() => Object.values(state().jobs).filter((j) => j.status === "pending" || j.status === "in_progress"), {
      timeout: 10_000,
      interval: 20,
    })
    .toEqual([]);
}

beforeAll(async () => {
  // Jobs long enough (a volume resize ~530 ms, a VM resize 2 s) to read the resource while they run.
  h = await clientHarness({ jobDurationMs: 6000 });
  // One attempt: the 503 reaches the caller as it would a provider whose retries do not cover creates and resizes.
  api = h.client({ retry: { retries: 0 } });
});

beforeEach(async () => {
  await faults("");
});

async function newVolume(): Promise<{ id: string; size20: number }> {
  const dc = h.emulator.bootstrap.fixtures.datacenters[0]!.id;
  const ssd = (await api.volumeSizes({ params: { id: dc } })).volumeTypes.find((t) => t.name === "ssd")!;
  const [size10, size20] = ssd.availableSizes;
  const created = await api.createVolume({
    body: { name: `lr-vol-${++count}`, datacenterId: dc, volumeTypeId: ssd.id, volumeSizeId: size10!.id, sizeGb: 10 },
  });
  await api.jobs.wait(created.jobId);
  return { id: created.id, size20: size20!.id };
}

async function newVm(): Promise<string> {
  const [job] = await api.createVm({
    body: {
      name: `lr-vm-${++count}`,
      datacenterId: h.emulator.bootstrap.fixtures.datacenters[0]!.id,
      imageId: 1,
      configurationId: 1,
      numberOfInstances: 1,
    },
  });
  return (await api.jobs.wait(job!.id)).resourceId!;
}

describe("a volume resize whose answer is lost", () => {
  it("carried out (after): Resizing at once, the new size once its job completed", async () => {
    const { id, size20 } = await newVolume();
    await faults("resizeVolume,status=503,after,count=1");
    const error = await failure(api.resizeVolume({ params: { id }, body: { newSizeGb: 20, newVolumeSizeId: size20 } }));
    expect(error).toMatchObject({ status: 503, mayHaveSucceeded: true });
    expect(await api.getVolume({ params: { id } })).toMatchObject({ status: "Resizing", sizeGb: 10 });
    await jobsEnded();
    expect(await api.getVolume({ params: { id } })).toMatchObject({ status: "Available", sizeGb: 20 });
  });

  it("carried out, its job failed: back to the old size and status", async () => {
    const { id, size20 } = await newVolume();
    await faults("resizeVolume,status=503,after,count=1;job=volume.resize,fail,count=1");
    await failure(api.resizeVolume({ params: { id }, body: { newSizeGb: 20, newVolumeSizeId: size20 } }));
    await jobsEnded();
    expect(await api.getVolume({ params: { id } })).toMatchObject({ status: "Available", sizeGb: 10 });
    const job = Object.values(state().jobs).find((j) => j.operation === "volume.resize" && j.targetId === id);
    expect(job).toMatchObject({ status: "failed" });
  });

  it("not carried out (503 before the handler): nothing changed, no job, and the same request sent again resizes", async () => {
    const { id, size20 } = await newVolume();
    await faults("resizeVolume,status=503,count=1");
    const error = await failure(api.resizeVolume({ params: { id }, body: { newSizeGb: 20, newVolumeSizeId: size20 } }));
    // The client cannot tell this 503 from the one above: both may have taken effect for all it knows.
    expect(error).toMatchObject({ status: 503, mayHaveSucceeded: true });
    expect(await api.getVolume({ params: { id } })).toMatchObject({ status: "Available", sizeGb: 10 });
    expect(Object.values(state().jobs).filter((j) => j.operation === "volume.resize" && j.targetId === id)).toEqual([]);
    const { jobId } = await api.resizeVolume({ params: { id }, body: { newSizeGb: 20, newVolumeSizeId: size20 } });
    await api.jobs.wait(jobId);
    expect(await api.getVolume({ params: { id } })).toMatchObject({ status: "Available", sizeGb: 20 });
  });
});

describe("a VM resize whose answer is lost", () => {
  it("carried out (connection dropped after the handler): Resizing at once, the new configuration once done", async () => {
    const id = await newVm();
    await faults("resizeVm,drop,after,count=1");
    const error = await failure(api.resizeVm({ params: { id }, body: { configurationId: 2 } }));
    expect(error).toMatchObject({ status: 0, code: "NETWORK_ERROR", mayHaveSucceeded: true });
    expect(await api.getVm({ params: { id } })).toMatchObject({
      status: "Resizing",
      virtualMachine: { configurationId: 1 },
    });
    await jobsEnded();
    expect(await api.getVm({ params: { id } })).toMatchObject({
      status: "Running",
      virtualMachine: { configurationId: 2 },
    });
  });

  it("not carried out (503 before the handler): still Running with the old configuration; sent again, resized", async () => {
    const id = await newVm();
    await faults("resizeVm,status=503,count=1");
    await failure(api.resizeVm({ params: { id }, body: { configurationId: 2 } }));
    expect(await api.getVm({ params: { id } })).toMatchObject({
      status: "Running",
      virtualMachine: { configurationId: 1 },
    });
    const { jobId } = await api.resizeVm({ params: { id }, body: { configurationId: 2 } });
    await api.jobs.wait(jobId);
    expect((await api.getVm({ params: { id } })).virtualMachine.configurationId).toBe(2);
  });
});
