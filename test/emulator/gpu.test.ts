import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import type { GpuVmRec, TeamRec } from "../../emulator/state";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
let mainEntity: string;
let childEntity: string;
let fra: string;
let ams: string;
let nyc: string;
const A100 = 1;
const H100 = 2;
const GPU = "/resource/gpu";

beforeAll(async () => {
  emu = await testEmulator({ jobDurationMs: 90_000 });
  mainEntity = emu.bootstrap.entityId;
  childEntity = emu.bootstrap.childEntityId;
  [fra, ams, nyc] = emu.bootstrap.fixtures.datacenters.map((d) => d.id);
});

afterEach(() => {
  emu.ctx.jobFault = () => null;
});

/**
 * Jobs run at realistic durations on the emulator's clock, which only moves when a test moves it: an intermediate
 * status (Creating, Deleting …) stays put until `finishJobs` jumps past every job's end.
 */
async function finishJobs(): Promise<void> {
  emu.advance(100_000);
  await emu.settle();
}

type Availability = { datacenterId: string; datacenterName: string; gpuCounts: Record<string, { available: boolean }> };
type Entry = { seriesId: number; seriesName: string; seriesCode: string; availability: Availability[] };
type Gpu = {
  id: string;
  name: string;
  status: string;
  publicIp: string | null;
  jupyterLabUrl: string | null;
  series: { id: number; name: string; code: string };
  gpuCount: number;
  datacenter: { id: string; name: string };
  teamId: number | null;
  createdAt: string;
};

function addTeam(entityId = mainEntity): TeamRec {
  const now = emu.ctx.now();
  const id = emu.ctx.state.nextTeamId++;
  const team: TeamRec = {
    id,
    entityId,
    name: `team-${id}`,
    parentTeamId: null,
    memberIds: [],
    createdAt: now,
    updatedAt: now,
  };
  emu.ctx.state.teams[String(id)] = team;
  return team;
}

const body = (over: Record<string, unknown> = {}) => ({
  name: `gpu-${randomUUID().slice(0, 8)}`,
  datacenterId: fra,
  seriesId: A100,
  gpuCount: 1,
  ...over,
});

async function createGpu(over: Record<string, unknown> = {}, query = ""): Promise<{ gpu: GpuVmRec; jobId: string }> {
  const res = await emu.call<{ jobId: string; id: string }>("POST", `${GPU}${query}`, { body: body(over) });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return { gpu: emu.ctx.state.gpuVms[res.body.data!.id], jobId: res.body.data!.jobId };
}

async function runningGpu(over: Record<string, unknown> = {}): Promise<GpuVmRec> {
  const { gpu } = await createGpu(over);
  await finishJobs();
  expect(gpu.status).toBe("Running");
  return gpu;
}

const getGpu = (id: string, as: "admin" | "outsider" = "admin") => emu.call<Gpu>("GET", `${GPU}/${id}`, { as });

describe("inventory", () => {
  it("lists every series with availability per data center and count, never cached", async () => {
    const res = await emu.call<Entry[]>("GET", `${GPU}/inventory`);
    expect(res.status).toBe(200);
    expect(res.headers["cache-control"]).toBe("no-store");
    const entries = res.body.data!;
    expect(entries.map((e) => [e.seriesId, e.seriesName, e.seriesCode])).toEqual([
      [A100, "NVIDIA A100", "a100"],
      [H100, "NVIDIA H100", "h100"],
    ]);
    for (const entry of entries) {
      expect(entry.availability.map((a) => a.datacenterName)).toEqual(["fra-1", "ams-1", "nyc-1"]);
      for (const a of entry.availability) {
        expect(Object.keys(a.gpuCounts).sort()).toEqual(["1", "2", "4", "8"]);
        for (const count of [1, 2, 4, 8]) {
          const truth = emu.ctx.state.catalog.gpuAvailability.find(
            (x) => x.seriesId === entry.seriesId && x.datacenterId === a.datacenterId && x.gpuCount === count,
          )!.available;
          expect(a.gpuCounts[String(count)].available).toBe(truth);
        }
      }
    }
    const h100fra = entries[1].availability[0].gpuCounts;
    expect(h100fra["8"].available).toBe(false);
    expect(h100fra["4"].available).toBe(true);
  });

  it("filters by code, data center and count (count keeps data centers where it is available)", async () => {
    const byCode = await emu.call<Entry[]>("GET", `${GPU}/inventory?code=h100`);
    expect(byCode.body.data!.map((e) => e.seriesCode)).toEqual(["h100"]);

    const eight = await emu.call<Entry[]>("GET", `${GPU}/inventory?count=8`);
    expect(eight.body.data!.map((e) => e.seriesCode)).toEqual(["a100"]);
    expect(eight.body.data![0].availability.map((a) => a.datacenterId)).toEqual([fra, ams]);

    const nycOnly = await emu.call<Entry[]>("GET", `${GPU}/inventory?datacenterId=${nyc}`);
    expect(nycOnly.body.data!.map((e) => e.availability.map((a) => a.datacenterName))).toEqual([["nyc-1"], ["nyc-1"]]);

    const none = await emu.call<Entry[]>("GET", `${GPU}/inventory?datacenterId=${nyc}&count=4`);
    expect(none.status).toBe(200);
    expect(none.body.data).toEqual([]);

    for (const query of ["count=3", "datacenterId=nope", "colour=red"]) {
      const bad = await emu.call("GET", `${GPU}/inventory?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.body.error).toBe("INVALID_REQUEST");
    }
  });

  it("is recomputed on each call", async () => {
    const slot = emu.ctx.state.catalog.gpuAvailability.find(
      (a) => a.seriesId === A100 && a.datacenterId === ams && a.gpuCount === 2,
    )!;
    const read = async () =>
      (await emu.call<Entry[]>("GET", `${GPU}/inventory?code=a100&datacenterId=${ams}`)).body.data![0].availability[0]
        .gpuCounts["2"].available;
    expect(await read()).toBe(true);
    slot.available = false;
    try {
      expect(await read()).toBe(false);
    } finally {
      slot.available = true;
    }
    expect(await read()).toBe(true);
  });
});

describe("create", () => {
  it("answers {jobId, id}, exists at once as Creating, and becomes Running with a public IP and JupyterLab URL", async () => {
    const res = await emu.call<{ jobId: string; id: string }>("POST", GPU, {
      body: body({ name: "trainer", gpuCount: 2, imageName: "pytorch-2.4" }),
    });
    expect(res.status).toBe(202);
    expect(Object.keys(res.body.data!).sort()).toEqual(["id", "jobId"]);
    const { id, jobId } = res.body.data!;
    expect(emu.ctx.state.jobs[jobId]).toMatchObject({ operation: "gpu.create", resourceType: "gpu", targetId: id });
    const before = await getGpu(id);
    expect(before.body.data).toMatchObject({
      name: "trainer",
      status: "Creating",
      publicIp: null,
      jupyterLabUrl: null,
    });

    await finishJobs();
    const after = (await getGpu(id)).body.data!;
    expect(after).toMatchObject({
      id,
      status: "Running",
      series: { id: A100, name: "NVIDIA A100", code: "a100" },
      gpuCount: 2,
      datacenter: { id: fra, name: "fra-1" },
      teamId: null,
    });
    expect(after.publicIp).toMatch(/^203\.0\.113\.\d+$/);
    expect(after.jupyterLabUrl).toContain(after.publicIp);
    expect(emu.ctx.state.jobs[jobId]).toMatchObject({ status: "completed", resourceId: id });
    expect(emu.ctx.state.gpuVms[id].imageName).toBe("pytorch-2.4");
  });

  it("gives each GPU VM its own public address", async () => {
    const a = await runningGpu();
    const b = await runningGpu();
    expect(a.publicIp).not.toBeNull();
    expect(a.publicIp).not.toBe(b.publicIp);
  });

  it("answers 409 CONFLICT listing what is available now for the series, and creates nothing", async () => {
    const before = Object.keys(emu.ctx.state.gpuVms).length;
    const res = await emu.call<never>("POST", GPU, { body: body({ seriesId: H100, gpuCount: 8 }) });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("CONFLICT");
    const data = (res.body as unknown as { data: { available: unknown[] } }).data;
    const expected = emu.ctx.state.catalog.gpuAvailability
      .filter((a) => a.seriesId === H100 && a.available)
      .map((a) => ({
        datacenterId: a.datacenterId,
        datacenterName: emu.bootstrap.fixtures.datacenters.find((d) => d.id === a.datacenterId)!.name,
        gpuCount: a.gpuCount,
      }));
    expect(expected.length).toBeGreaterThan(0);
    expect(data.available).toEqual(expected);
    expect(res.body.message).toContain("NVIDIA H100");
    expect(res.body.message).toContain("fra-1 × 4");
    expect(res.body.message).toContain("nyc-1 × 2");
    expect(Object.keys(emu.ctx.state.gpuVms)).toHaveLength(before);

    const nycFour = await emu.call("POST", GPU, { body: body({ datacenterId: nyc, gpuCount: 4 }) });
    expect(nycFour.status).toBe(409);
  });

  it("refuses unknown series, data center, team and image with one 400 naming each", async () => {
    const dc = randomUUID();
    const res = await emu.call("POST", GPU, {
      body: body({ seriesId: 9, datacenterId: dc, teamId: 999, imageId: 77 }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("INVALID_REQUEST");
    for (const part of [
      "seriesId",
      "GPU series 9",
      `datacenterId: data center ${dc}`,
      "teamId",
      "999",
      "imageId",
      "77",
    ]) {
      expect(res.body.message).toContain(part);
    }
  });

  it("refuses bad counts, bad UUIDs and unknown fields with 400", async () => {
    for (const b of [body({ gpuCount: 3 }), body({ datacenterId: "x" }), { ...body(), vram: 80 }, body({ name: "" })]) {
      const res = await emu.call("POST", GPU, { body: b });
      expect(res.status, JSON.stringify(b)).toBe(400);
      expect(res.body.error).toBe("INVALID_REQUEST");
    }
  });

  it("refuses create to a tenant-user and hides GPU VMs from an outsider", async () => {
    expect((await emu.call("POST", GPU, { as: "member", body: body() })).status).toBe(403);
    const gpu = await runningGpu();
    expect((await emu.call("GET", `${GPU}/${gpu.id}`, { as: "member" })).status).toBe(200);
    for (const [method, path] of [
      ["GET", ""],
      ["PUT", ""],
      ["DELETE", ""],
      ["POST", "/stop"],
      ["GET", "/ssh-key"],
    ] as const) {
      const res = await emu.call(method, `${GPU}/${gpu.id}${path}`, {
        as: "outsider",
        ...(method === "PUT" ? { body: { name: "stolen" } } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const list = await emu.call<Gpu[]>("GET", `${GPU}?limit=100`, { as: "outsider" });
    expect(list.body.data!.map((g) => g.id)).not.toContain(gpu.id);
    expect(emu.ctx.state.gpuVms[gpu.id]).toMatchObject({ status: "Running", name: gpu.name });
  });

  it("leaves the GPU VM in Error and points the failed job at it", async () => {
    emu.ctx.jobFault = (op) => (op === "gpu.create" ? { kind: "fail", error: "no capacity" } : null);
    const { gpu, jobId } = await createGpu();
    await finishJobs();
    expect(emu.ctx.state.jobs[jobId]).toMatchObject({ status: "failed", error: "no capacity", resourceId: gpu.id });
    expect((await getGpu(gpu.id)).body.data).toMatchObject({ status: "Error", publicIp: null });
  });

  it("serves the private key generated at creation", async () => {
    const gpu = await runningGpu();
    const res = await emu.call<{ privateKey: string }>("GET", `${GPU}/${gpu.id}/ssh-key`);
    expect(res.status).toBe(200);
    expect(res.body.data!.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(res.body.data!.privateKey).toBe(emu.ctx.state.gpuVms[gpu.id].privateKey);
  });
});

describe("power", () => {
  it("stops, starts and resets an A100 synchronously, refusing the wrong state with 409", async () => {
    const gpu = await runningGpu();
    const jobs = Object.keys(emu.ctx.state.jobs).length;
    const call = (op: string) => emu.call<{ id: string; status: string }>("POST", `${GPU}/${gpu.id}/${op}`);
    expect((await call("start")).status).toBe(409);
    const stop = await call("stop");
    expect(stop.status).toBe(200);
    expect(stop.body.data).toEqual({ id: gpu.id, status: "Stopped" });
    expect((await getGpu(gpu.id)).body.data!.status).toBe("Stopped");
    expect((await call("stop")).status).toBe(409);
    expect((await call("reset")).status).toBe(409);
    expect((await call("start")).status).toBe(200);
    expect(emu.ctx.state.gpuVms[gpu.id].status).toBe("Running");
    expect((await call("reset")).status).toBe(200);
    expect(Object.keys(emu.ctx.state.jobs)).toHaveLength(jobs);
  });

  it("answers 501 NOT_IMPLEMENTED to start on an H100", async () => {
    const gpu = await runningGpu({ seriesId: H100 });
    expect((await emu.call("POST", `${GPU}/${gpu.id}/stop`)).status).toBe(200);
    const res = await emu.call("POST", `${GPU}/${gpu.id}/start`);
    expect(res.status).toBe(501);
    expect(res.body.error).toBe("NOT_IMPLEMENTED");
    expect(emu.ctx.state.gpuVms[gpu.id].status).toBe("Stopped");
  });

  it("refuses power operations and delete while the create job runs", async () => {
    const { gpu, jobId } = await createGpu();
    expect(emu.ctx.state.jobs[jobId].status).toBe("pending");
    for (const [method, op] of [
      ["POST", "/start"],
      ["POST", "/stop"],
      ["POST", "/reset"],
      ["DELETE", ""],
    ] as const) {
      const res = await emu.call(method, `${GPU}/${gpu.id}${op}`);
      expect(res.status, op).toBe(409);
      expect(res.body.message).toContain("Creating");
    }
    emu.advance(30_000);
    await getGpu(gpu.id);
    expect(emu.ctx.state.jobs[jobId].status).toBe("in_progress");
    emu.advance(70_000);
    await getGpu(gpu.id);
    expect(emu.ctx.state.jobs[jobId].status).toBe("completed");
    expect(emu.ctx.state.gpuVms[gpu.id].status).toBe("Running");
  });
});

describe("update and delete", () => {
  it("renames and regroups; null removes from the group; an unknown team is 400", async () => {
    const gpu = await runningGpu();
    const team = addTeam();
    const res = await emu.call<Gpu>("PUT", `${GPU}/${gpu.id}`, { body: { name: "renamed", teamId: team.id } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ name: "renamed", teamId: team.id });
    expect((await getGpu(gpu.id)).body.data).toMatchObject({ name: "renamed", teamId: team.id });
    expect((await emu.call<Gpu>("PUT", `${GPU}/${gpu.id}`, { body: { teamId: null } })).body.data!.teamId).toBeNull();
    const foreign = addTeam(childEntity);
    const bad = await emu.call("PUT", `${GPU}/${gpu.id}`, { body: { teamId: foreign.id } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain(String(foreign.id));
    expect(emu.ctx.state.gpuVms[gpu.id].teamId).toBeNull();
  });

  it("deletes through a job (operation shape), releasing the public IP", async () => {
    const gpu = await runningGpu();
    const ip = gpu.publicIp;
    const res = await emu.call<Record<string, unknown>>("DELETE", `${GPU}/${gpu.id}`);
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      resourceType: "gpu_virtual_machine",
      operation: "delete",
      progressPercentage: 0,
    });
    expect(emu.ctx.state.jobs[res.body.data!.jobId as string].operation).toBe("gpu.delete");
    expect((await getGpu(gpu.id)).body.data!.status).toBe("Deleting");
    expect((await emu.call("PUT", `${GPU}/${gpu.id}`, { body: { name: "late" } })).status).toBe(409);
    await finishJobs();
    expect((await getGpu(gpu.id)).status).toBe(404);
    expect(Object.values(emu.ctx.state.gpuVms).some((g) => g.publicIp === ip)).toBe(false);
  });
});

describe("list", () => {
  const q = (query: string) => `${GPU}?entityId=${childEntity}&${query}`;
  let team: TeamRec;

  beforeAll(async () => {
    team = addTeam(childEntity);
    for (const [name, over] of [
      ["beta", { teamId: team.id }],
      ["alpha", {}],
      ["Gamma", { seriesId: H100 }],
    ] as const) {
      await createGpu({ name, ...over }, `?entityId=${childEntity}`);
      emu.advance(1000);
    }
    await finishJobs();
  });

  const names = async (query: string) => {
    const res = await emu.call<Gpu[]>("GET", q(query));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data!.map((g) => g.name);
  };

  it("lists the entity's GPU VMs newest first, sorts, searches and filters by team", async () => {
    expect(await names("")).toEqual(["Gamma", "alpha", "beta"]);
    expect(await names("sort=name:asc")).toEqual(["alpha", "beta", "Gamma"]);
    expect(await names("sort=createdAt:asc")).toEqual(["beta", "alpha", "Gamma"]);
    expect(await names("search=GAM")).toEqual(["Gamma"]);
    expect(await names(`filter[teamId]=${team.id}`)).toEqual(["beta"]);
    const paged = await emu.call<Gpu[]>("GET", q("limit=2&page=2"));
    expect(paged.body.data!.map((g) => g.name)).toEqual(["beta"]);
    expect(paged.body.meta).toMatchObject({ total: 3, totalPages: 2, hasPreviousPage: true, hasNextPage: false });
    const main = await emu.call<Gpu[]>("GET", `${GPU}?limit=100`);
    expect(main.body.data!.map((g) => g.name)).not.toContain("Gamma");
  });

  it("refuses unknown sort fields and filters", async () => {
    for (const query of ["sort=status:asc", "sort=name", "filter[status]=Running"]) {
      expect((await emu.call("GET", q(query))).status, query).toBe(400);
    }
  });
});
