import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Volume, VolumeSizes } from "../../provider/api";
import type { VmRec } from "../../emulator/state";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

/** Jobs end within milliseconds: used with settle(). */
let emu: TestEmulator;
/** Realistic job durations (seconds): intermediate states stay put until the clock is advanced. */
let slow: TestEmulator;
beforeAll(async () => {
  emu = await testEmulator();
  slow = await testEmulator({ jobDurationMs: 90_000 });
});

const FRA = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";
const AMS = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f602";
const SSD = 1;
const NVME = 2;
/** ssd sizes: 101 = 10 GB, 102 = 20 GB, 103 = 50 GB, 104 = 100 GB; nvme 201 = 50 GB (at most 4 per VM). */
const SSD_10 = { volumeTypeId: SSD, volumeSizeId: 101, sizeGb: 10 };
const NVME_50 = { volumeTypeId: NVME, volumeSizeId: 201, sizeGb: 50 };

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

/** A VM record placed straight in the state (the VM routes are not under test here). */
function addVm(on: TestEmulator, over: Partial<VmRec> = {}): VmRec {
  const now = on.ctx.now();
  const vm: VmRec = {
    id: randomUUID(),
    entityId: on.bootstrap.entityId,
    name: unique("vm"),
    status: "Running",
    datacenterId: FRA,
    imageId: 1,
    configurationId: 1,
    teamId: null,
    publicIp: null,
    nics: [],
    sshKeyIds: [],
    privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----",
    rescueImageId: null,
    createdAt: now,
    updatedAt: now,
    ...over,
  };
  on.ctx.state.vms[vm.id] = vm;
  return vm;
}

async function createVolume(
  on: TestEmulator,
  over: Record<string, unknown> = {},
  as: "admin" | "outsider" = "admin",
): Promise<string> {
  const r = await on.call<{ jobId: string; id: string }>("POST", "/resource/volumes", {
    as,
    body: { name: unique("vol"), datacenterId: FRA, ...SSD_10, ...over },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.data!.id;
}

/** Creates a volume and waits until it is Available. */
async function availableVolume(over: Record<string, unknown> = {}, as: "admin" | "outsider" = "admin") {
  const id = await createVolume(emu, over, as);
  await emu.settle();
  expect(emu.ctx.state.volumes[id].status).toBe("Available");
  return id;
}

async function attached(vm: VmRec, over: Record<string, unknown> = {}): Promise<string> {
  const id = await availableVolume({ datacenterId: vm.datacenterId, ...over });
  const r = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  await emu.settle();
  expect(emu.ctx.state.volumes[id].status).toBe("In-use");
  return id;
}

/** Runs `fn` with every job of `operation` started meanwhile set to fail. */
async function withFailingJobs<T>(on: TestEmulator, operation: string, fn: () => Promise<T>): Promise<T> {
  const original = on.ctx.jobFault;
  on.ctx.jobFault = (op) => (op === operation ? { kind: "fail", error: "injected failure" } : original(op));
  try {
    return await fn();
  } finally {
    on.ctx.jobFault = original;
  }
}

const getVolume = (id: string, as: "admin" | "outsider" = "admin") =>
  emu.call<Volume>("GET", `/resource/volumes/${id}`, { as });

describe("create", () => {
  it("answers 202 with the job and the id, holds the volume as Creating, then Available", async () => {
    const name = unique("data");
    const r = await slow.call<{ jobId: string; id: string }>("POST", "/resource/volumes", {
      body: { name, datacenterId: FRA, ...NVME_50 },
    });
    expect(r.status).toBe(202);
    const { id, jobId } = r.body.data!;
    expect(slow.ctx.state.volumes[id]).toMatchObject({ name, status: "Creating", virtualMachineId: null });
    expect(slow.ctx.state.jobs[jobId]).toMatchObject({ operation: "volume.create", resourceType: "volume" });

    slow.advance(60_000);
    const got = await slow.call<Volume>("GET", `/resource/volumes/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      id,
      name,
      status: "Available",
      sizeGb: 50,
      volumeTypeId: NVME,
      volumeTypeName: "nvme",
      volumeSizeId: 201,
      datacenter: { id: FRA, name: "fra-1" },
      virtualMachineId: null,
      virtualMachineName: null,
      teamId: null,
    });
    expect(slow.ctx.state.jobs[jobId]).toMatchObject({ status: "completed", resourceId: id });
  });

  it("keeps a resource group of the entity and refuses one it does not have", async () => {
    const teamId = emu.ctx.state.nextTeamId++;
    const now = emu.ctx.now();
    emu.ctx.state.teams[String(teamId)] = {
      id: teamId,
      entityId: emu.bootstrap.entityId,
      name: "storage",
      parentTeamId: null,
      memberIds: [],
      createdAt: now,
      updatedAt: now,
    };
    const id = await createVolume(emu, { teamId });
    expect((await getVolume(id)).body.data!.teamId).toBe(teamId);
    const listed = await emu.call<Volume[]>("GET", `/resource/volumes?filter[teamId]=${teamId}`);
    expect(listed.body.data!.map((v) => v.id)).toEqual([id]);

    const r = await emu.call("POST", "/resource/volumes", {
      body: { name: unique("vol"), datacenterId: FRA, ...SSD_10, teamId: teamId + 1000 },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("INVALID_REQUEST");
    expect(r.body.message).toContain("teamId");
  });

  it("names every catalog mismatch at once and lists what is valid", async () => {
    const before = Object.keys(emu.ctx.state.volumes).length;
    const r = await emu.call<never>("POST", "/resource/volumes", {
      body: { name: unique("vol"), datacenterId: randomUUID(), volumeTypeId: SSD, volumeSizeId: 201, sizeGb: 50 },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("INVALID_REQUEST");
    const fields = (r.body as unknown as { data: { issues: { field: string }[] } }).data.issues.map((i) => i.field);
    expect(fields).toEqual(["datacenterId", "volumeSizeId"]);
    expect(r.body.message).toContain("101 (10 GB)");

    const wrongSize = await emu.call("POST", "/resource/volumes", {
      body: { name: unique("vol"), datacenterId: FRA, volumeTypeId: SSD, volumeSizeId: 103, sizeGb: 40 },
    });
    expect(wrongSize.status).toBe(400);
    expect(wrongSize.body.message).toMatch(/sizeGb: size 103 is 50 GB, not 40/);

    const wrongType = await emu.call("POST", "/resource/volumes", {
      body: { name: unique("vol"), datacenterId: FRA, volumeTypeId: 9, volumeSizeId: 101, sizeGb: 10 },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toMatch(/volumeTypeId: volume type 9 does not exist/);
    expect(Object.keys(emu.ctx.state.volumes)).toHaveLength(before);
  });

  it("refuses a duplicate name in the entity with 409, while another entity may use it", async () => {
    const name = unique("dup");
    await createVolume(emu, { name });
    const again = await emu.call("POST", "/resource/volumes", { body: { name, datacenterId: FRA, ...SSD_10 } });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("CONFLICT");
    expect(Object.values(emu.ctx.state.volumes).filter((v) => v.name === name)).toHaveLength(1);
    await createVolume(emu, { name }, "outsider");
  });

  it("refuses unknown fields and malformed ids with 400, and tenant-users with 403", async () => {
    const unknown = await emu.call("POST", "/resource/volumes", {
      body: { name: unique("vol"), datacenterId: FRA, ...SSD_10, iops: 3000 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("iops");

    const badUuid = await emu.call("POST", "/resource/volumes", {
      body: { name: unique("vol"), datacenterId: "fra-1", ...SSD_10 },
    });
    expect(badUuid.status).toBe(400);
    expect((await emu.call("GET", "/resource/volumes/not-a-uuid")).status).toBe(400);

    const name = unique("member");
    const member = await emu.call("POST", "/resource/volumes", {
      as: "member",
      body: { name, datacenterId: FRA, ...SSD_10 },
    });
    expect(member.status).toBe(403);
    expect(member.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    expect(Object.values(emu.ctx.state.volumes).some((v) => v.name === name)).toBe(false);
  });

  it("marks the volume Error when its job fails, and the job names it", async () => {
    const r = await withFailingJobs(emu, "volume.create", () =>
      emu.call<{ jobId: string; id: string }>("POST", "/resource/volumes", {
        body: { name: unique("broken"), datacenterId: FRA, ...SSD_10 },
      }),
    );
    await emu.settle();
    const { id, jobId } = r.body.data!;
    expect((await getVolume(id)).body.data!.status).toBe("Error");
    expect(emu.ctx.state.jobs[jobId]).toMatchObject({ status: "failed", resourceId: id, error: "injected failure" });
  });
});

describe("list and read", () => {
  it("is invisible to other entities", async () => {
    const id = await availableVolume();
    const vm = addVm(emu);
    expect((await getVolume(id, "outsider")).status).toBe(404);
    const del = await emu.call("DELETE", `/resource/volumes/${id}`, { as: "outsider" });
    expect(del.status).toBe(404);
    const attach = await emu.call("PUT", `/resource/volumes/${id}/attach`, {
      as: "outsider",
      body: { virtualMachineId: vm.id },
    });
    expect(attach.status).toBe(404);
    const list = await emu.call<Volume[]>("GET", "/resource/volumes?limit=100", { as: "outsider" });
    expect(list.body.data!.map((v) => v.id)).not.toContain(id);
    expect(emu.ctx.state.volumes[id]).toMatchObject({ status: "Available", virtualMachineId: null });
  });

  it("filters, searches, sorts and pages", async () => {
    const tag = unique("lst");
    const a = await createVolume(emu, { name: `${tag}-b`, ...SSD_10 });
    emu.advance(1000);
    const b = await createVolume(emu, { name: `${tag}-a`, datacenterId: AMS, ...NVME_50 });
    emu.advance(1000);
    const c = await createVolume(emu, { name: `${tag}-c`, volumeTypeId: SSD, volumeSizeId: 104, sizeGb: 100 });
    await emu.settle();
    const ids = async (query: string) => {
      const r = await emu.call<Volume[]>("GET", `/resource/volumes?search=${tag}&${query}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data!.map((v) => v.id);
    };
    expect(await ids("limit=100")).toEqual([c, b, a]);
    expect(await ids("sort=name:asc")).toEqual([b, a, c]);
    expect(await ids("sort=sizeGb:desc")).toEqual([c, b, a]);
    expect(await ids("filter[regionId]=2")).toEqual([b]);
    expect(await ids(`filter[datacenterId]=${FRA}`)).toEqual([c, a]);
    expect(await ids("filter[volumeTypeId]=1&sort=createdAt:asc")).toEqual([a, c]);
    expect(await ids("filter[volumeSizeId]=104")).toEqual([c]);
    expect(await ids("filter[sizeGb]=50")).toEqual([b]);
    expect(await ids("filter[status]=available&filter[sizeGb]=10")).toEqual([a]);
    expect(await ids("filter[status]=In-use")).toEqual([]);

    const page = await emu.call<Volume[]>("GET", `/resource/volumes?search=${tag.toUpperCase()}&limit=2&page=2`);
    expect(page.body.data!.map((v) => v.id)).toEqual([a]);
    expect(page.body.meta).toEqual({
      total: 3,
      page: 2,
      pageSize: 2,
      totalPages: 2,
      hasNextPage: false,
      hasPreviousPage: true,
    });
    expect((await emu.call("GET", "/resource/volumes?sort=color:asc")).status).toBe(400);
    expect((await emu.call("GET", "/resource/volumes?sort=name")).status).toBe(400);
  });

  it("lets a tenant-user read", async () => {
    const id = await availableVolume();
    const r = await emu.call<Volume>("GET", `/resource/volumes/${id}`, { as: "member" });
    expect(r.status).toBe(200);
    expect(r.body.data!.id).toBe(id);
  });
});

describe("delete", () => {
  it("goes through Deleting and removes the volume; the job names it", async () => {
    const r0 = await slow.call<{ id: string }>("POST", "/resource/volumes", {
      body: { name: unique("del"), datacenterId: FRA, ...SSD_10 },
    });
    const id = r0.body.data!.id;
    const early = await slow.call("DELETE", `/resource/volumes/${id}`);
    expect(early.status).toBe(409);
    expect(early.body.message).toContain("Creating");
    slow.advance(60_000);

    const r = await slow.call<{ jobId: string; resourceType: string; operation: string }>(
      "DELETE",
      `/resource/volumes/${id}`,
    );
    expect(r.status).toBe(202);
    expect(r.body.data).toMatchObject({
      resourceType: "volume",
      operation: "delete",
      stage: "initializing",
      progressPercentage: 0,
    });
    expect(slow.ctx.state.volumes[id].status).toBe("Deleting");
    slow.advance(60_000);
    expect((await slow.call("GET", `/resource/volumes/${id}`)).status).toBe(404);
    expect(slow.ctx.state.volumes[id]).toBeUndefined();
    expect(slow.ctx.state.jobs[r.body.data!.jobId]).toMatchObject({ status: "completed", resourceId: id });
  });

  it("deletes a volume left in Error by a failed create job (regression: it could never be cleaned up)", async () => {
    const r = await withFailingJobs(emu, "volume.create", () =>
      emu.call<{ id: string }>("POST", "/resource/volumes", {
        body: { name: unique("failed"), datacenterId: FRA, ...SSD_10 },
      }),
    );
    await emu.settle();
    const id = r.body.data!.id;
    expect(emu.ctx.state.volumes[id].status).toBe("Error");

    // A failed delete job returns it to Error, not to Available.
    await withFailingJobs(emu, "volume.delete", () => emu.call("DELETE", `/resource/volumes/${id}`));
    await emu.settle();
    expect(emu.ctx.state.volumes[id].status).toBe("Error");

    const del = await emu.call("DELETE", `/resource/volumes/${id}`);
    expect(del.status, JSON.stringify(del.body)).toBe(202);
    await emu.settle();
    expect(emu.ctx.state.volumes[id]).toBeUndefined();
  });

  it("refuses an attached volume with 409 naming the VM", async () => {
    const vm = addVm(emu, { name: unique("db-server") });
    const id = await attached(vm);
    const r = await emu.call("DELETE", `/resource/volumes/${id}`);
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("CONFLICT");
    expect(r.body.message).toContain(vm.name);
    expect(emu.ctx.state.volumes[id]).toMatchObject({ status: "In-use", virtualMachineId: vm.id });
  });
});

describe("attach and detach", () => {
  it("reserves the VM while Attaching, is In-use after, and detaches back to Available", async () => {
    const vm = addVm(slow, { status: "Stopped" });
    const r0 = await slow.call<{ id: string }>("POST", "/resource/volumes", {
      body: { name: unique("att"), datacenterId: FRA, ...SSD_10 },
    });
    const id = r0.body.data!.id;
    slow.advance(60_000);
    const r = await slow.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } });
    expect(r.status).toBe(202);
    expect(r.body.data).toMatchObject({ resourceType: "volume", operation: "attach" });
    expect(slow.ctx.state.volumes[id]).toMatchObject({ status: "Attaching", virtualMachineId: vm.id });
    const busy = await slow.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } });
    expect(busy.status).toBe(409);

    slow.advance(60_000);
    const got = await slow.call<Volume>("GET", `/resource/volumes/${id}`);
    expect(got.body.data).toMatchObject({ status: "In-use", virtualMachineId: vm.id, virtualMachineName: vm.name });

    const d = await slow.call("PUT", `/resource/volumes/${id}/detach`);
    expect(d.status).toBe(202);
    expect(d.body.data).toMatchObject({ operation: "detach" });
    expect(slow.ctx.state.volumes[id]).toMatchObject({ status: "Detaching", virtualMachineId: vm.id });
    slow.advance(60_000);
    const after = await slow.call<Volume>("GET", `/resource/volumes/${id}`);
    expect(after.body.data).toMatchObject({ status: "Available", virtualMachineId: null, virtualMachineName: null });
  });

  it("refuses a VM in another data center with 400 naming both", async () => {
    const vm = addVm(emu, { datacenterId: AMS });
    const id = await availableVolume();
    const r = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("INVALID_REQUEST");
    expect(r.body.message).toContain("fra-1");
    expect(r.body.message).toContain("ams-1");
    expect(emu.ctx.state.volumes[id]).toMatchObject({ status: "Available", virtualMachineId: null });
  });

  it("refuses an unknown VM, another entity's VM and a VM that is not Running or Stopped", async () => {
    const id = await availableVolume();
    const missing = randomUUID();
    const r = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: missing } });
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("NOT_FOUND");
    expect(r.body.message).toContain(missing);

    const foreign = addVm(emu, { entityId: emu.ctx.state.users[emu.bootstrap.users.outsider.id].entityId });
    const r2 = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: foreign.id } });
    expect(r2.status).toBe(404);

    const creating = addVm(emu, { status: "Creating" });
    const r3 = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: creating.id } });
    expect(r3.status).toBe(409);
    expect(r3.body.message).toContain("Creating");
    expect(emu.ctx.state.volumes[id]).toMatchObject({ status: "Available", virtualMachineId: null });

    const bad = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: "vm-1" } });
    expect(bad.status).toBe(400);
  });

  it("refuses to go over the configuration's maximum volume count (409)", async () => {
    const vm = addVm(emu, { configurationId: 1 });
    for (let i = 0; i < 4; i++) await attached(vm);
    const id = await availableVolume();
    const r = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/maximum of its configuration \(4\)/);
    expect(emu.ctx.state.volumes[id].virtualMachineId).toBeNull();
    const onVm = await emu.call<Volume[]>("GET", `/resource/volumes?filter[virtualMachineId]=${vm.id}`);
    expect(onVm.body.data!.map((v) => v.status)).toEqual(["In-use", "In-use", "In-use", "In-use"]);
  });

  it("refuses to go over the per-VM maximum of a size (409) while other sizes still attach", async () => {
    const vm = addVm(emu, { configurationId: 2 });
    for (let i = 0; i < 4; i++) await attached(vm, NVME_50);
    const id = await availableVolume(NVME_50);
    const r = await emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } });
    expect(r.status).toBe(409);
    expect(r.body.message).toMatch(/maximum per VM for that size \(4\)/);
    await attached(vm, SSD_10);
  });

  it("reverts a failed attach to Available with no VM", async () => {
    const vm = addVm(emu);
    const id = await availableVolume();
    const r = await withFailingJobs(emu, "volume.attach", () =>
      emu.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } }),
    );
    expect(r.status).toBe(202);
    await emu.settle();
    expect((await getVolume(id)).body.data).toMatchObject({ status: "Available", virtualMachineId: null });
  });

  it("keeps a volume In-use on its VM when the detach fails", async () => {
    const vm = addVm(emu);
    const id = await attached(vm);
    const r = await withFailingJobs(emu, "volume.detach", () => emu.call("PUT", `/resource/volumes/${id}/detach`));
    expect(r.status).toBe(202);
    await emu.settle();
    expect((await getVolume(id)).body.data).toMatchObject({ status: "In-use", virtualMachineId: vm.id });
  });

  it("refuses to detach a volume that is not In-use", async () => {
    const id = await availableVolume();
    const r = await emu.call("PUT", `/resource/volumes/${id}/detach`);
    expect(r.status).toBe(409);
    expect(r.body.message).toContain("Available");
    expect(emu.ctx.state.volumes[id].status).toBe("Available");
  });
});

describe("resize", () => {
  it("refuses to shrink or keep the size (400)", async () => {
    const id = await availableVolume({ volumeTypeId: SSD, volumeSizeId: 103, sizeGb: 50 });
    for (const newSizeGb of [20, 50]) {
      const r = await emu.call("PUT", `/resource/volumes/${id}/resize`, { body: { newSizeGb } });
      expect(r.status).toBe(400);
      expect(r.body.message).toContain("volumes cannot shrink");
    }
    expect(emu.ctx.state.volumes[id]).toMatchObject({ sizeGb: 50, volumeSizeId: 103, status: "Available" });
  });

  it("refuses a size the type does not have, listing the sizes available", async () => {
    const id = await availableVolume();
    const r = await emu.call("PUT", `/resource/volumes/${id}/resize`, { body: { newSizeGb: 30 } });
    expect(r.status).toBe(400);
    expect(r.body.message).toContain("20 GB");
    expect(r.body.message).toContain("500 GB");
    const mismatch = await emu.call("PUT", `/resource/volumes/${id}/resize`, {
      body: { newSizeGb: 100, newVolumeSizeId: 105 },
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.message).toMatch(/newVolumeSizeId: size 105 is 200 GB, not 100/);
    const otherType = await emu.call("PUT", `/resource/volumes/${id}/resize`, {
      body: { newSizeGb: 100, newVolumeSizeId: 202 },
    });
    expect(otherType.status).toBe(400);
    expect(otherType.body.message).toContain("not a size of volume type ssd");
    expect(emu.ctx.state.volumes[id]).toMatchObject({ sizeGb: 10, volumeSizeId: 101, status: "Available" });
  });

  it("grows an In-use volume through Resizing and back to In-use, looking the size up", async () => {
    const vm = addVm(slow);
    const r0 = await slow.call<{ id: string }>("POST", "/resource/volumes", {
      body: { name: unique("grow"), datacenterId: FRA, ...SSD_10 },
    });
    const id = r0.body.data!.id;
    const early = await slow.call("PUT", `/resource/volumes/${id}/resize`, { body: { newSizeGb: 20 } });
    expect(early.status).toBe(409);
    slow.advance(60_000);
    await slow.call("PUT", `/resource/volumes/${id}/attach`, { body: { virtualMachineId: vm.id } });
    slow.advance(60_000);

    const r = await slow.call("PUT", `/resource/volumes/${id}/resize`, { body: { newSizeGb: 100 } });
    expect(r.status).toBe(202);
    expect(r.body.data).toMatchObject({ operation: "resize" });
    expect(slow.ctx.state.volumes[id]).toMatchObject({ status: "Resizing", sizeGb: 10 });
    slow.advance(60_000);
    const got = await slow.call<Volume>("GET", `/resource/volumes/${id}`);
    expect(got.body.data).toMatchObject({ status: "In-use", sizeGb: 100, volumeSizeId: 104, virtualMachineId: vm.id });
  });

  it("accepts a matching newVolumeSizeId", async () => {
    const id = await availableVolume();
    const r = await emu.call("PUT", `/resource/volumes/${id}/resize`, {
      body: { newSizeGb: 200, newVolumeSizeId: 105 },
    });
    expect(r.status).toBe(202);
    await emu.settle();
    expect((await getVolume(id)).body.data).toMatchObject({ status: "Available", sizeGb: 200, volumeSizeId: 105 });
  });
});

describe("available virtual machines", () => {
  it("lists the entity's VMs of the volume's data center with their volume counts", async () => {
    const id = await availableVolume({ datacenterId: AMS });
    const busy = addVm(emu, { datacenterId: AMS, configurationId: 3, name: unique("a-busy") });
    const idle = addVm(emu, { datacenterId: AMS, name: unique("b-idle") });
    addVm(emu, { datacenterId: AMS, status: "Deleting" });
    addVm(emu, { datacenterId: FRA });
    addVm(emu, { datacenterId: AMS, entityId: emu.ctx.state.users[emu.bootstrap.users.outsider.id].entityId });
    await attached(busy);
    await attached(busy);

    const r = await emu.call("GET", `/resource/volumes/${id}/available-virtual-machines`);
    expect(r.status).toBe(200);
    const ours = (r.body.data as { id: string }[]).filter((v) => v.id === busy.id || v.id === idle.id);
    expect(ours).toEqual([
      { id: busy.id, name: busy.name, datacenterId: AMS, currentVolumeCount: 2, maxVolumeCount: 16 },
      { id: idle.id, name: idle.name, datacenterId: AMS, currentVolumeCount: 0, maxVolumeCount: 4 },
    ]);
    const listed = (r.body.data as { id: string; datacenterId: string }[]).map((v) => emu.ctx.state.vms[v.id]);
    expect(listed.every((vm) => vm.datacenterId === AMS && vm.status !== "Deleting")).toBe(true);
    expect(listed.every((vm) => vm.entityId === emu.bootstrap.entityId)).toBe(true);
  });
});

describe("bulk", () => {
  it("refuses 0 and 51 ids", async () => {
    for (const path of ["/resource/volumes/bulk/delete", "/resource/volumes/bulk/detach"]) {
      expect((await emu.call("POST", path, { body: { ids: [] } })).status).toBe(400);
      const ids = Array.from({ length: 51 }, () => randomUUID());
      expect((await emu.call("POST", path, { body: { ids } })).status).toBe(400);
    }
  });

  it("deletes what it can and explains the rest, item by item", async () => {
    const vm = addVm(emu);
    const free = await availableVolume();
    const inUse = await attached(vm);
    const foreign = await availableVolume({}, "outsider");
    const missing = randomUUID();
    const r = await emu.call<{ id: string; success: boolean; jobId: string | null; error: string | null }[]>(
      "POST",
      "/resource/volumes/bulk/delete",
      { body: { ids: [free, inUse, foreign, missing] } },
    );
    expect(r.status).toBe(202);
    const [ok, refused, hidden, unknown] = r.body.data!;
    expect(ok).toMatchObject({ id: free, success: true, error: null });
    expect(emu.ctx.state.jobs[ok.jobId!].operation).toBe("volume.delete");
    expect(refused).toMatchObject({ id: inUse, success: false, jobId: null });
    expect(refused.error).toContain(vm.name);
    expect(hidden).toMatchObject({ id: foreign, success: false, jobId: null });
    expect(unknown).toMatchObject({ id: missing, success: false, jobId: null });
    await emu.settle();
    expect(emu.ctx.state.volumes[free]).toBeUndefined();
    expect(emu.ctx.state.volumes[inUse].status).toBe("In-use");
    expect(emu.ctx.state.volumes[foreign].status).toBe("Available");
  });

  it("detaches what it can and explains the rest", async () => {
    const vm = addVm(emu);
    const first = await attached(vm);
    const second = await attached(vm);
    const free = await availableVolume();
    const r = await emu.call<{ id: string; success: boolean; error: string | null }[]>(
      "POST",
      "/resource/volumes/bulk/detach",
      { body: { ids: [first, free, second] } },
    );
    expect(r.status).toBe(202);
    expect(r.body.data!.map((i) => i.success)).toEqual([true, false, true]);
    expect(r.body.data![1].error).toContain("not In-use");
    await emu.settle();
    for (const id of [first, second, free]) {
      expect(emu.ctx.state.volumes[id]).toMatchObject({ status: "Available", virtualMachineId: null });
    }
  });
});

describe("volume sizes", () => {
  it("lists every type with its sizes for a known data center", async () => {
    const r = await emu.call<VolumeSizes>("GET", `/resource/data-centers/${AMS}/volume-sizes`);
    expect(r.status).toBe(200);
    expect(r.body.data!.datacenterId).toBe(AMS);
    expect(r.body.data!.volumeTypes.map((t) => [t.id, t.name, t.description])).toEqual([
      [1, "ssd", "General purpose SSD"],
      [2, "nvme", null],
    ]);
    expect(r.body.data!.volumeTypes[1].availableSizes[0]).toEqual({
      id: 201,
      sizeGb: 50,
      displayName: "50 GB",
      maxVolumesPerVm: 4,
    });
    expect(r.body.data!.volumeTypes[0].availableSizes).toHaveLength(6);
  });

  it("answers 404 for an unknown data center", async () => {
    const r = await emu.call("GET", `/resource/data-centers/${randomUUID()}/volume-sizes`);
    expect(r.status).toBe(404);
    expect(r.body.error).toBe("NOT_FOUND");
  });
});
