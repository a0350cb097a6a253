import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { hashSecret } from "../../emulator/http";
import { AUTOMATIC_NETWORK_ID } from "../../emulator/routes/vms";
import { keyStart, newApiKeySecret } from "../../emulator/secrets";
import type { JobRec, NetworkRec, TeamRec, VmRec, VolumeRec } from "../../emulator/state";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
let mainEntity: string;
let childEntity: string;
let otherEntity: string;
let fra: string;
let ams: string;
let nyc: string;
let operatorKey: string;

const VMS = "/resource/virtual-machines";
const rescueLinux = "9a7b6c5d-1e2f-4a3b-9c4d-5e6f7a8b9c01";

beforeAll(async () => {
  emu = await testEmulator({ jobDurationMs: 90_000 });
  const { bootstrap, ctx } = emu;
  mainEntity = bootstrap.entityId;
  childEntity = bootstrap.childEntityId;
  otherEntity = ctx.state.users[bootstrap.users.outsider.id].entityId;
  [fra, ams, nyc] = bootstrap.fixtures.datacenters.map((d) => d.id);
  operatorKey = addUser("vm-operator");
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

/** A user of the main entity with one role, and an API key for it. */
function addUser(role: "vm-operator" | "tenant-user"): string {
  const now = emu.ctx.now();
  const id = randomUUID();
  emu.ctx.state.users[id] = {
    id,
    entityId: mainEntity,
    email: `${role}-${id}@acme.example`,
    firstName: "Op",
    lastName: null,
    passwordHash: null,
    roles: [role],
    inviteStatus: "activated",
    invitedAt: null,
    totpSecret: null,
    twoFactorSetupAt: null,
    backupCodeHashes: [],
    platformAdmin: false,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  const secret = newApiKeySecret();
  const keyId = randomUUID();
  emu.ctx.state.apiKeys[keyId] = {
    id: keyId,
    userId: id,
    entityId: mainEntity,
    name: role,
    secretHash: hashSecret(secret),
    start: keyStart(secret),
    roleId: null,
    metadata: null,
    enabled: true,
    expiresAt: now + 86_400_000,
    createdAt: now,
    lastUsedAt: null,
    rateLimit: null,
  };
  return secret;
}

function addNetwork(over: Partial<NetworkRec> = {}): NetworkRec {
  const now = emu.ctx.now();
  const net: NetworkRec = {
    id: randomUUID(),
    entityId: mainEntity,
    name: `net-${randomUUID().slice(0, 8)}`,
    description: null,
    status: "Active",
    datacenterId: fra,
    networkType: "standard",
    cidrBlock: "10.20.0.0/24",
    snatEnabled: false,
    dhcpServerEnabled: true,
    dhcpStartAddress: null,
    dhcpEndAddress: null,
    defaultRouteEnabled: false,
    defaultRoute: null,
    serveDNSServersEnabled: false,
    dnsServers: [],
    createdAt: now,
    updatedAt: now,
    ...over,
  };
  emu.ctx.state.networks[net.id] = net;
  return net;
}

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

const baseBody = (over: Record<string, unknown> = {}) => ({
  name: `vm-${randomUUID().slice(0, 8)}`,
  datacenterId: fra,
  imageId: 1,
  configurationId: 1,
  ...over,
});

/** Creates VMs and returns their records (which exist at once, before the jobs end). */
async function createVms(over: Record<string, unknown> = {}, query = ""): Promise<{ vms: VmRec[]; jobs: JobRec[] }> {
  const res = await emu.call<{ id: string }[]>("POST", `${VMS}${query}`, { body: baseBody(over) });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  const jobs = res.body.data!.map((item) => emu.ctx.state.jobs[item.id]);
  return { vms: jobs.map((j) => emu.ctx.state.vms[j.targetId]), jobs };
}

async function runningVm(over: Record<string, unknown> = {}): Promise<VmRec> {
  const { vms } = await createVms(over);
  await finishJobs();
  expect(vms[0].status).toBe("Running");
  return vms[0];
}

type Detail = {
  status: string;
  virtualMachine: Record<string, unknown> & {
    networkInterfaces: { networkId: string; primary: boolean; privateIp: string }[];
  };
  usage: unknown;
  consoleEnabled: boolean;
  networkHotplug: boolean;
};
const getVm = (id: string, as: "admin" | "outsider" | "member" = "admin") =>
  emu.call<Detail>("GET", `${VMS}/${id}`, { as });
const operator = () => ({ as: null, headers: { "x-api-key": operatorKey } });

describe("create", () => {
  it("answers the job array, creates the VM at once as Creating, and the job makes it Running", async () => {
    const res = await emu.call<Record<string, unknown>[]>("POST", VMS, { body: baseBody({ name: "solo" }) });
    expect(res.status).toBe(202);
    expect(res.body.data).toHaveLength(1);
    const item = res.body.data![0];
    expect(Object.keys(item).sort()).toEqual(["createdAt", "id", "resourceType", "status"]);
    expect(item).toMatchObject({ status: "pending", resourceType: "vm" });
    const job = emu.ctx.state.jobs[item.id as string];
    expect(job.operation).toBe("vm.create");
    const vmId = job.targetId;
    const before = await getVm(vmId);
    expect(before.status).toBe(200);
    expect(before.body.data!.status).toBe("Creating");
    expect(before.body.data!.virtualMachine.name).toBe("solo");

    await finishJobs();
    const after = await getVm(vmId);
    expect(after.body.data!.status).toBe("Running");
    expect(emu.ctx.state.jobs[item.id as string]).toMatchObject({
      status: "completed",
      resourceId: vmId,
      progress: 100,
    });
  });

  it("gives the VM detail every contract field, an automatic private IP and an ed25519 key", async () => {
    const vm = await runningVm({ configurationId: 2, imageId: 2, sshKeyIds: ["key-1"] });
    const res = await getVm(vm.id);
    const d = res.body.data!;
    expect(d.consoleEnabled).toBe(true);
    expect(d.networkHotplug).toBe(true);
    expect(d.usage).toBeTypeOf("object");
    expect(d.virtualMachine).toMatchObject({
      id: vm.id,
      teamId: null,
      cpu: 4,
      ram: 8,
      disk: 100,
      configurationId: 2,
      configuration: "m-4vcpu-8gb",
      configurationCategoryCode: "general",
      image: "debian-12",
      imageId: 2,
      datacenter: { id: fra, name: "fra-1" },
      networkInterfaces: [],
      primaryPublicIp: null,
      sshKeyIds: ["key-1"],
    });
    expect(d.virtualMachine.primaryPrivateIp).toMatch(/^10\.255\.\d+\.\d+$/);
    expect(emu.ctx.state.vms[vm.id].nics).toEqual([
      expect.objectContaining({ networkId: AUTOMATIC_NETWORK_ID, primary: true }),
    ]);
    const key = await emu.call<{ privateKey: string }>("GET", `${VMS}/${vm.id}/ssh-key`);
    expect(key.status).toBe(200);
    expect(key.body.data!.privateKey).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/);
    expect(key.body.data!.privateKey).toBe(emu.ctx.state.vms[vm.id].privateKey);
  });

  it("creates N instances named name-1..name-N with one job each and distinct addresses", async () => {
    const { vms, jobs } = await createVms({ name: "batch", numberOfInstances: 3, allocatePublicIp: true });
    expect(vms.map((v) => v.name)).toEqual(["batch-1", "batch-2", "batch-3"]);
    expect(new Set(jobs.map((j) => j.id)).size).toBe(3);
    expect(new Set(vms.map((v) => v.nics[0].privateIp)).size).toBe(3);
    const publicIps = vms.map((v) => v.publicIp);
    expect(new Set(publicIps).size).toBe(3);
    for (const ip of publicIps) expect(ip).toMatch(/^203\.0\.113\.\d+$/);
    await finishJobs();
    for (const job of jobs) expect(emu.ctx.state.jobs[job.id].status).toBe("completed");
    const list = await emu.call<{ name: string; primaryPublicIp: string }[]>("GET", `${VMS}?search=batch-&limit=100`);
    expect(list.body.data!.map((v) => v.name).sort()).toEqual(["batch-1", "batch-2", "batch-3"]);
  });

  it("accepts 10 instances and refuses 0 and 11", async () => {
    const { vms } = await createVms({ name: "ten", numberOfInstances: 10 });
    expect(vms).toHaveLength(10);
    expect(vms[9].name).toBe("ten-10");
    const before = Object.keys(emu.ctx.state.vms).length;
    for (const n of [0, 11]) {
      const res = await emu.call("POST", VMS, { body: baseBody({ numberOfInstances: n }) });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("INVALID_REQUEST");
      expect(res.body.message).toContain("numberOfInstances");
    }
    expect(Object.keys(emu.ctx.state.vms)).toHaveLength(before);
    await finishJobs();
  });

  it("moves to 198.51.100.0/24 when 203.0.113.0/24 is used up", async () => {
    const fillers: string[] = [];
    for (let host = 1; host <= 254; host++) {
      const id = randomUUID();
      fillers.push(id);
      emu.ctx.state.gpuVms[id] = {
        id,
        entityId: otherEntity,
        name: `filler-${host}`,
        status: "Running",
        datacenterId: fra,
        seriesId: 1,
        gpuCount: 1,
        teamId: null,
        imageName: null,
        imageId: null,
        publicIp: `203.0.113.${host}`,
        privateKey: "",
        createdAt: 0,
        updatedAt: 0,
      };
    }
    try {
      const { vms } = await createVms({ allocatePublicIp: true });
      expect(vms[0].publicIp).toMatch(/^198\.51\.100\.\d+$/);
      await finishJobs();
    } finally {
      for (const id of fillers) delete emu.ctx.state.gpuVms[id];
    }
  });

  it("refuses a name whose numbered instance names would exceed 128 characters", async () => {
    const res = await emu.call("POST", VMS, { body: baseBody({ name: "n".repeat(127), numberOfInstances: 2 }) });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("name: with numberOfInstances 2");
    const single = await createVms({ name: "n".repeat(128) });
    expect(single.vms[0].name).toHaveLength(128);
    await finishJobs();
  });

  it("refuses bad UUIDs, unknown fields and a missing content type with 400", async () => {
    for (const body of [baseBody({ datacenterId: "not-a-uuid" }), { ...baseBody(), colour: "blue" }]) {
      const res = await emu.call("POST", VMS, { body });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("INVALID_REQUEST");
    }
    const res = await emu.call("POST", VMS, { body: baseBody(), headers: { "content-type": "text/plain" } });
    expect(res.status).toBe(400);
  });

  it("names every unknown catalog item and team in one 400, and creates nothing", async () => {
    const before = Object.keys(emu.ctx.state.vms).length;
    const missingDc = randomUUID();
    const res = await emu.call<never>("POST", VMS, {
      body: baseBody({ datacenterId: missingDc, imageId: 99, configurationId: 98, teamId: 97 }),
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("INVALID_REQUEST");
    const issues = (res.body as unknown as { data: { issues: { field: string; message: string }[] } }).data.issues;
    expect(issues.map((i) => i.field)).toEqual(["datacenterId", "imageId", "configurationId", "teamId"]);
    expect(res.body.message).toContain(missingDc);
    expect(res.body.message).toContain("99");
    expect(res.body.message).toContain("98");
    expect(res.body.message).toContain("97");
    expect(Object.keys(emu.ctx.state.vms)).toHaveLength(before);
  });

  it("refuses a team of another entity and accepts one of its own", async () => {
    const foreign = addTeam(otherEntity);
    const refused = await emu.call("POST", VMS, { body: baseBody({ teamId: foreign.id }) });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain(`teamId: resource group ${foreign.id}`);
    const team = addTeam();
    const { vms } = await createVms({ teamId: team.id });
    expect(vms[0].teamId).toBe(team.id);
    await finishJobs();
    expect((await getVm(vms[0].id)).body.data!.virtualMachine.teamId).toBe(team.id);
  });

  it("lets a tenant-admin of the main entity create in its child entity, invisible from the main one", async () => {
    const { vms } = await createVms({}, `?entityId=${childEntity}`);
    expect(vms[0].entityId).toBe(childEntity);
    expect((await getVm(vms[0].id)).status).toBe(404);
    expect((await emu.call("GET", `${VMS}/${vms[0].id}?entityId=${childEntity}`)).status).toBe(200);
    await finishJobs();
    // Leave the child entity empty for the list tests.
    expect((await emu.call("DELETE", `${VMS}/${vms[0].id}?entityId=${childEntity}`)).status).toBe(202);
    await finishJobs();
    expect(emu.ctx.state.vms[vms[0].id]).toBeUndefined();
  });
});

describe("network interfaces", () => {
  it("takes addresses from each network's CIDR from .10 upwards, unique per network, with the chosen primary", async () => {
    const a = addNetwork({ cidrBlock: "10.40.0.0/24" });
    const b = addNetwork({ cidrBlock: "192.168.7.0/24" });
    const first = await runningVm({
      networkInterfaces: [
        { networkId: a.id, primary: false },
        { networkId: b.id, primary: true },
      ],
    });
    const second = await runningVm({ networkInterfaces: [{ networkId: a.id, primary: true }] });
    const d1 = (await getVm(first.id)).body.data!.virtualMachine;
    expect(
      d1.networkInterfaces.map(({ networkId, primary, privateIp }) => ({ networkId, primary, privateIp })),
    ).toEqual([
      { networkId: a.id, primary: false, privateIp: "10.40.0.10" },
      { networkId: b.id, primary: true, privateIp: "192.168.7.10" },
    ]);
    expect(d1.primaryPrivateIp).toBe("192.168.7.10");
    const d2 = (await getVm(second.id)).body.data!.virtualMachine;
    expect(d2.primaryPrivateIp).toBe("10.40.0.11");
    const found = await emu.call<{ id: string }[]>("GET", `${VMS}?search=10.40.0.11`);
    expect(found.body.data!.map((v) => v.id)).toEqual([second.id]);
  });

  it("skips the network's default route when allocating", async () => {
    const net = addNetwork({ cidrBlock: "10.41.0.0/24", defaultRoute: "10.41.0.10" });
    const vm = await runningVm({ networkInterfaces: [{ networkId: net.id, primary: true }] });
    expect(vm.nics[0].privateIp).toBe("10.41.0.11");
  });

  it("accepts 5 interfaces and refuses 6, none or two primaries", async () => {
    const nets = Array.from({ length: 6 }, (_, i) => addNetwork({ cidrBlock: `10.50.${i}.0/24` }));
    const nic = (i: number, primary = i === 0) => ({ networkId: nets[i].id, primary });
    const { vms } = await createVms({ networkInterfaces: [0, 1, 2, 3, 4].map((i) => nic(i)) });
    expect(vms[0].nics).toHaveLength(5);
    const before = Object.keys(emu.ctx.state.vms).length;
    for (const networkInterfaces of [
      [0, 1, 2, 3, 4, 5].map((i) => nic(i)),
      [nic(0, false), nic(1, false)],
      [nic(0, true), nic(1, true)],
      [],
    ]) {
      const res = await emu.call("POST", VMS, { body: baseBody({ networkInterfaces }) });
      expect(res.status, JSON.stringify(networkInterfaces)).toBe(400);
      expect(res.body.error).toBe("INVALID_REQUEST");
      expect(res.body.message).toContain("networkInterfaces");
    }
    expect(Object.keys(emu.ctx.state.vms)).toHaveLength(before);
    await finishJobs();
  });

  it("refuses unknown, foreign, other-data-center, inactive and repeated networks, naming field and value", async () => {
    const foreign = addNetwork({ entityId: otherEntity });
    const elsewhere = addNetwork({ datacenterId: ams });
    const creating = addNetwork({ status: "Creating" });
    const good = addNetwork({ cidrBlock: "10.60.0.0/24" });
    const unknown = randomUUID();
    const cases: [string, string, string][] = [
      [unknown, "does not exist", unknown],
      [foreign.id, "does not exist", foreign.id],
      [elsewhere.id, "data center ams-1", elsewhere.id],
      [creating.id, "Creating, not Active", creating.id],
    ];
    for (const [networkId, reason, value] of cases) {
      const res = await emu.call("POST", VMS, {
        body: baseBody({ networkInterfaces: [{ networkId, primary: true }] }),
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toContain("networkInterfaces.0.networkId");
      expect(res.body.message).toContain(reason);
      expect(res.body.message).toContain(value);
    }
    const repeated = await emu.call("POST", VMS, {
      body: baseBody({
        networkInterfaces: [
          { networkId: good.id, primary: true },
          { networkId: good.id, primary: false },
        ],
      }),
    });
    expect(repeated.status).toBe(400);
    expect(repeated.body.message).toContain("networkInterfaces.1.networkId");
  });

  it("answers 409 and creates nothing when a network has no free address for every instance", async () => {
    const tiny = addNetwork({ cidrBlock: "10.70.0.0/30" });
    const before = Object.keys(emu.ctx.state.vms).length;
    const res = await emu.call("POST", VMS, {
      body: baseBody({ numberOfInstances: 2, networkInterfaces: [{ networkId: tiny.id, primary: true }] }),
    });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("CONFLICT");
    expect(Object.keys(emu.ctx.state.vms)).toHaveLength(before);
    const one = await runningVm({ networkInterfaces: [{ networkId: tiny.id, primary: true }] });
    expect(one.nics[0].privateIp).toBe("10.70.0.2");
  });
});

describe("permissions and visibility", () => {
  it("refuses create to a tenant-user (403) but lets it read", async () => {
    const res = await emu.call("POST", VMS, { as: "member", body: baseBody() });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    expect((await emu.call("GET", VMS, { as: "member" })).status).toBe(200);
  });

  it("hides the main entity's VMs from an outsider (404, absent from lists, no jobs)", async () => {
    const { vms, jobs } = await createVms();
    const id = vms[0].id;
    expect((await getVm(id, "outsider")).status).toBe(404);
    for (const [method, path] of [
      ["DELETE", ""],
      ["POST", "/start"],
      ["GET", "/ssh-key"],
      ["GET", "/rescue"],
    ] as const) {
      const res = await emu.call(method, `${VMS}/${id}${path}`, { as: "outsider" });
      expect(res.status, path).toBe(404);
      expect(res.body.error).toBe("NOT_FOUND");
    }
    const list = await emu.call<{ id: string }[]>("GET", `${VMS}?limit=100`, { as: "outsider" });
    expect(list.body.data!.map((v) => v.id)).not.toContain(id);
    const other = await emu.call<{ jobs: unknown[] }>("POST", "/resource/jobs", {
      as: "outsider",
      body: { jobIds: [jobs[0].id] },
    });
    expect(other.status).toBe(200);
    expect(other.body.data!.jobs).toEqual([]);
    const own = await emu.call<{ jobs: { id: string }[] }>("POST", "/resource/jobs", {
      body: { jobIds: [jobs[0].id] },
    });
    expect(own.body.data!.jobs.map((j) => j.id)).toEqual([jobs[0].id]);
    await finishJobs();
    expect(emu.ctx.state.vms[id].status).toBe("Running");
  });

  it("lets a vm-operator start, stop and rescue, but not create or delete", async () => {
    const vm = await runningVm();
    expect((await emu.call("POST", VMS, { ...operator(), body: baseBody() })).status).toBe(403);
    expect((await emu.call("DELETE", `${VMS}/${vm.id}`, operator())).status).toBe(403);
    expect((await emu.call("POST", `${VMS}/${vm.id}/stop`, operator())).status).toBe(200);
    expect(emu.ctx.state.vms[vm.id].status).toBe("Stopped");
    expect((await emu.call("POST", `${VMS}/${vm.id}/start`, operator())).status).toBe(200);
    expect(emu.ctx.state.vms[vm.id].status).toBe("Running");
    const rescue = await emu.call("POST", `${VMS}/${vm.id}/rescue`, {
      ...operator(),
      body: { sourceType: "catalog", sourceImageId: rescueLinux },
    });
    expect(rescue.status).toBe(202);
    await finishJobs();
    expect(emu.ctx.state.vms[vm.id].status).toBe("Rescued");
    expect((await emu.call("DELETE", `${VMS}/${vm.id}/rescue`, operator())).status).toBe(202);
    await finishJobs();
    expect(emu.ctx.state.vms[vm.id].status).toBe("Running");
  });

  it("answers 401 without credentials", async () => {
    const res = await emu.call("GET", VMS, { as: null });
    expect(res.status).toBe(401);
  });
});

describe("jobs", () => {
  it("shows the create job pending, then in_progress, then completed as the clock moves", async () => {
    const { vms, jobs } = await createVms();
    const job = jobs[0];
    expect(emu.ctx.state.jobs[job.id]).toMatchObject({ status: "pending", progress: 0, resourceId: null });
    emu.advance(20_000);
    await getVm(vms[0].id);
    const mid = emu.ctx.state.jobs[job.id];
    expect(mid.status).toBe("in_progress");
    expect(mid.progress).toBeGreaterThan(0);
    expect(mid.progress).toBeLessThan(100);
    expect(emu.ctx.state.vms[vms[0].id].status).toBe("Creating");
    emu.advance(30_000);
    await getVm(vms[0].id);
    expect(emu.ctx.state.jobs[job.id]).toMatchObject({ status: "completed", progress: 100, resourceId: vms[0].id });
    expect(emu.ctx.state.jobs[job.id].completedAt).not.toBeNull();
    expect(emu.ctx.state.vms[vms[0].id].status).toBe("Running");
  });

  it("leaves the VM in Error and points the failed job at it", async () => {
    emu.ctx.jobFault = (op) => (op === "vm.create" ? { kind: "fail", error: "provider exploded" } : null);
    const { vms, jobs } = await createVms();
    emu.ctx.jobFault = () => null;
    await finishJobs();
    expect(emu.ctx.state.jobs[jobs[0].id]).toMatchObject({
      status: "failed",
      error: "provider exploded",
      resourceId: vms[0].id,
    });
    expect((await getVm(vms[0].id)).body.data!.status).toBe("Error");
    expect((await emu.call("POST", `${VMS}/${vms[0].id}/start`)).status).toBe(409);
    expect((await emu.call("DELETE", `${VMS}/${vms[0].id}`)).status).toBe(202);
    await finishJobs();
    expect(emu.ctx.state.vms[vms[0].id]).toBeUndefined();
  });
});

describe("power operations", () => {
  it("stops, starts and resets synchronously without creating jobs, and refuses the wrong state with 409", async () => {
    const vm = await runningVm();
    const jobCount = Object.keys(emu.ctx.state.jobs).length;
    const call = (op: string) => emu.call<{ id: string; status: string }>("POST", `${VMS}/${vm.id}/${op}`);

    const stop = await call("stop");
    expect(stop.status).toBe(200);
    expect(stop.body.data).toEqual({ id: vm.id, status: "Stopped" });
    expect((await getVm(vm.id)).body.data!.status).toBe("Stopped");
    expect((await call("stop")).status).toBe(409);
    expect((await call("reset")).status).toBe(409);

    const start = await call("start");
    expect(start.status).toBe(200);
    expect((await getVm(vm.id)).body.data!.status).toBe("Running");
    const again = await call("start");
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("CONFLICT");

    expect((await call("reset")).status).toBe(200);
    expect(emu.ctx.state.vms[vm.id].status).toBe("Running");
    expect(Object.keys(emu.ctx.state.jobs)).toHaveLength(jobCount);
  });

  it("refuses every state-changing operation while a job works on the VM", async () => {
    const { vms } = await createVms();
    const id = vms[0].id;
    const attempts: [string, string, unknown?][] = [
      ["POST", "start"],
      ["POST", "stop"],
      ["POST", "reset"],
      ["PUT", "size", { configurationId: 2 }],
      ["POST", "rescue", { sourceType: "catalog", sourceImageId: rescueLinux }],
      ["DELETE", "rescue"],
      ["DELETE", ""],
    ];
    for (const [method, op, body] of attempts) {
      const res = await emu.call(method as "POST", `${VMS}/${id}${op ? `/${op}` : ""}`, body ? { body } : {});
      expect(res.status, `${method} ${op}`).toBe(409);
      expect(res.body.message).toContain("Creating");
    }
    expect(emu.ctx.state.vms[id].status).toBe("Creating");
    emu.advance(60_000);
    await getVm(id);
    expect(emu.ctx.state.vms[id].status).toBe("Running");
  });
});

describe("update", () => {
  it("renames and moves between resource groups; null removes the group", async () => {
    const vm = await runningVm();
    const team = addTeam();
    const res = await emu.call<Detail>("PUT", `${VMS}/${vm.id}`, { body: { name: "renamed", teamId: team.id } });
    expect(res.status).toBe(200);
    expect(res.body.data!.virtualMachine).toMatchObject({ name: "renamed", teamId: team.id });
    expect((await getVm(vm.id)).body.data!.virtualMachine).toMatchObject({ name: "renamed", teamId: team.id });
    const cleared = await emu.call<Detail>("PUT", `${VMS}/${vm.id}`, { body: { teamId: null } });
    expect(cleared.body.data!.virtualMachine).toMatchObject({ name: "renamed", teamId: null });
    expect(emu.ctx.state.vms[vm.id].teamId).toBeNull();
  });

  it("refuses an unknown team and unknown fields with 400, changing nothing", async () => {
    const vm = await runningVm({ name: "keep" });
    const unknownTeam = await emu.call("PUT", `${VMS}/${vm.id}`, { body: { name: "x", teamId: 9999 } });
    expect(unknownTeam.status).toBe(400);
    expect(unknownTeam.body.message).toContain("9999");
    const unknownField = await emu.call("PUT", `${VMS}/${vm.id}`, { body: { imageId: 2 } });
    expect(unknownField.status).toBe(400);
    expect(emu.ctx.state.vms[vm.id].name).toBe("keep");
  });
});

describe("delete", () => {
  it("answers the operation shape, then removes the VM, releasing its addresses and detaching its volumes", async () => {
    const net = addNetwork({ cidrBlock: "10.80.0.0/24" });
    const vm = await runningVm({ allocatePublicIp: true, networkInterfaces: [{ networkId: net.id, primary: true }] });
    const publicIp = vm.publicIp;
    const now = emu.ctx.now();
    const volume: VolumeRec = {
      id: randomUUID(),
      entityId: mainEntity,
      name: "data",
      status: "In-use",
      sizeGb: 20,
      volumeTypeId: 1,
      volumeSizeId: 102,
      datacenterId: fra,
      virtualMachineId: vm.id,
      teamId: null,
      createdAt: now,
      updatedAt: now,
    };
    emu.ctx.state.volumes[volume.id] = volume;

    const res = await emu.call<Record<string, unknown>>("DELETE", `${VMS}/${vm.id}`);
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      resourceType: "virtual_machine",
      operation: "delete",
      stage: "initializing",
    });
    expect(res.body.data!.progressPercentage).toBe(0);
    expect(emu.ctx.state.jobs[res.body.data!.jobId as string].operation).toBe("vm.delete");
    expect((await getVm(vm.id)).body.data!.status).toBe("Deleting");
    expect((await emu.call("DELETE", `${VMS}/${vm.id}`)).status).toBe(409);

    await finishJobs();
    expect((await getVm(vm.id)).status).toBe(404);
    expect(emu.ctx.state.vms[vm.id]).toBeUndefined();
    expect(emu.ctx.state.volumes[volume.id]).toMatchObject({ virtualMachineId: null, status: "Available" });
    const holders = Object.values(emu.ctx.state.vms).filter(
      (v) => v.publicIp === publicIp || v.nics.some((n) => n.networkId === net.id),
    );
    expect(holders).toEqual([]);
    const reuse = await runningVm({ networkInterfaces: [{ networkId: net.id, primary: true }] });
    expect(reuse.nics[0].privateIp).toBe("10.80.0.10");
  });

  it("restores the previous status when the delete job fails", async () => {
    const vm = await runningVm();
    emu.ctx.jobFault = (op) => (op === "vm.delete" ? { kind: "fail", error: "busy" } : null);
    expect((await emu.call("DELETE", `${VMS}/${vm.id}`)).status).toBe(202);
    await finishJobs();
    expect(emu.ctx.state.vms[vm.id].status).toBe("Running");
  });
});

describe("resize", () => {
  it("grows a running VM through a job and returns it to Running", async () => {
    const vm = await runningVm({ configurationId: 1 });
    const res = await emu.call<Record<string, unknown>>("PUT", `${VMS}/${vm.id}/size`, {
      body: { configurationId: 3 },
    });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({ operation: "resize", resourceType: "virtual_machine" });
    expect(emu.ctx.state.vms[vm.id].status).toBe("Resizing");
    await finishJobs();
    const d = (await getVm(vm.id)).body.data!;
    expect(d.status).toBe("Running");
    expect(d.virtualMachine).toMatchObject({ configurationId: 3, cpu: 8, ram: 32, disk: 200 });
  });

  it("returns a stopped VM to Stopped", async () => {
    const vm = await runningVm({ configurationId: 1 });
    await emu.call("POST", `${VMS}/${vm.id}/stop`);
    expect((await emu.call("PUT", `${VMS}/${vm.id}/size`, { body: { configurationId: 2 } })).status).toBe(202);
    await finishJobs();
    expect(emu.ctx.state.vms[vm.id]).toMatchObject({ status: "Stopped", configurationId: 2 });
  });

  it("refuses to shrink, naming what would shrink, and refuses unknown configurations", async () => {
    const vm = await runningVm({ configurationId: 2 });
    const down = await emu.call("PUT", `${VMS}/${vm.id}/size`, { body: { configurationId: 1 } });
    expect(down.status).toBe(400);
    expect(down.body.message).toContain("cpu 4 → 2");
    expect(down.body.message).toContain("ram 8 → 4");
    expect(down.body.message).toContain("disk 100 → 50");

    emu.ctx.state.catalog.configurations.push({
      id: 50,
      name: "odd-cpu-heavy",
      cpu: 32,
      ram: 4,
      disk: 800,
      categoryCode: "compute",
      maxVolumes: 4,
    });
    try {
      const ramOnly = await emu.call("PUT", `${VMS}/${vm.id}/size`, { body: { configurationId: 50 } });
      expect(ramOnly.status).toBe(400);
      expect(ramOnly.body.message).toContain("ram 8 → 4");
      expect(ramOnly.body.message).not.toMatch(/cpu \d/);
      expect(ramOnly.body.message).not.toMatch(/disk \d/);
    } finally {
      emu.ctx.state.catalog.configurations.pop();
    }
    const unknown = await emu.call("PUT", `${VMS}/${vm.id}/size`, { body: { configurationId: 77 } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("configurationId");
    expect(unknown.body.message).toContain("77");
    expect(emu.ctx.state.vms[vm.id]).toMatchObject({ status: "Running", configurationId: 2 });
  });
});

describe("rescue", () => {
  it("enters rescue from a catalog image and leaves it again", async () => {
    const vm = await runningVm();
    expect((await emu.call("GET", `${VMS}/${vm.id}/rescue`)).body.data).toEqual({ rescued: false, image: null });
    const res = await emu.call<Record<string, unknown>>("POST", `${VMS}/${vm.id}/rescue`, {
      body: { sourceType: "catalog", sourceImageId: rescueLinux },
    });
    expect(res.status).toBe(202);
    expect(res.body.data).toMatchObject({
      operation: "rescue",
      resourceType: "virtual_machine",
      stage: "initializing",
    });
    expect(typeof res.body.message).toBe("string");
    expect(emu.ctx.state.vms[vm.id].status).toBe("Rescuing");
    await finishJobs();
    expect((await emu.call("GET", `${VMS}/${vm.id}/rescue`)).body.data).toEqual({
      rescued: true,
      image: { id: rescueLinux, name: "rescue-linux", osFamily: "linux" },
    });
    expect((await getVm(vm.id)).body.data!.status).toBe("Rescued");

    const twice = await emu.call("POST", `${VMS}/${vm.id}/rescue`, {
      body: { sourceType: "catalog", sourceImageId: rescueLinux },
    });
    expect(twice.status).toBe(409);
    expect(twice.body.message).toContain("already rescued");

    const out = await emu.call<Record<string, unknown>>("DELETE", `${VMS}/${vm.id}/rescue`);
    expect(out.status).toBe(202);
    expect(out.body.data).toMatchObject({ operation: "unrescue" });
    expect(emu.ctx.state.vms[vm.id].status).toBe("Unrescuing");
    await finishJobs();
    expect((await emu.call("GET", `${VMS}/${vm.id}/rescue`)).body.data).toEqual({ rescued: false, image: null });
    expect(emu.ctx.state.vms[vm.id].status).toBe("Running");
    expect((await emu.call("DELETE", `${VMS}/${vm.id}/rescue`)).status).toBe(409);
  });

  it("requires a catalog rescue image for sourceType catalog and accepts any UUID for custom", async () => {
    const vm = await runningVm();
    const custom = randomUUID();
    const bad = await emu.call("POST", `${VMS}/${vm.id}/rescue`, {
      body: { sourceType: "catalog", sourceImageId: custom },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain(custom);
    expect(emu.ctx.state.vms[vm.id].status).toBe("Running");
    expect(
      (await emu.call("POST", `${VMS}/${vm.id}/rescue`, { body: { sourceType: "other", sourceImageId: custom } }))
        .status,
    ).toBe(400);
    const ok = await emu.call("POST", `${VMS}/${vm.id}/rescue`, {
      body: { sourceType: "custom", sourceImageId: custom },
    });
    expect(ok.status).toBe(202);
    await finishJobs();
    const status = await emu.call<{ rescued: boolean; image: { id: string } }>("GET", `${VMS}/${vm.id}/rescue`);
    expect(status.body.data).toMatchObject({ rescued: true, image: { id: custom } });
  });
});

describe("list", () => {
  const q = (query: string) => `${VMS}?entityId=${childEntity}&${query}`;
  type Item = { id: string; name: string; status: string; configuration: { cpu: number }; teamId: number | null };
  let ids: Record<string, string>;
  let team: TeamRec;

  beforeAll(async () => {
    team = addTeam(childEntity);
    const make = async (name: string, over: Record<string, unknown>) => {
      const { vms } = await createVms({ name, ...over }, `?entityId=${childEntity}`);
      emu.advance(1000); // distinct createdAt
      return vms[0].id;
    };
    ids = {
      alpha: await make("alpha", { datacenterId: fra, configurationId: 2, imageId: 1, teamId: team.id }),
      bravo: await make("bravo", { datacenterId: ams, configurationId: 1, imageId: 2, allocatePublicIp: true }),
      charlie: await make("charlie", { datacenterId: nyc, configurationId: 3, imageId: 1 }),
      delta: await make("Delta", { datacenterId: fra, configurationId: 4, imageId: 3 }),
    };
    await finishJobs();
    await emu.call("POST", `${VMS}/${ids.charlie}/stop?entityId=${childEntity}`);
  });

  const names = async (query: string) => {
    const res = await emu.call<Item[]>("GET", q(query));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data!.map((v) => v.name);
  };

  it("lists only the entity's VMs, newest first, with list-item fields", async () => {
    const res = await emu.call<Record<string, unknown>[]>("GET", q(""));
    expect(res.body.data!.map((v) => v.name)).toEqual(["Delta", "charlie", "bravo", "alpha"]);
    expect(res.body.meta).toEqual({
      total: 4,
      page: 1,
      pageSize: 10,
      totalPages: 1,
      hasNextPage: false,
      hasPreviousPage: false,
    });
    expect(res.body.data![2]).toMatchObject({
      id: ids.bravo,
      status: "Running",
      configuration: { cpu: 2, ram: 4, disk: 50 },
      datacenter: { id: ams, name: "ams-1", region: "eu-west", country: "NL" },
      imageName: "debian-12",
      teamId: null,
    });
    expect((res.body.data![2] as { primaryPublicIp: string }).primaryPublicIp).toMatch(/^203\.0\.113\./);
  });

  it("sorts by every documented field", async () => {
    expect(await names("sort=name:asc")).toEqual(["alpha", "bravo", "charlie", "Delta"]);
    expect(await names("sort=createdAt:asc")).toEqual(["alpha", "bravo", "charlie", "Delta"]);
    expect(await names("sort=configuration:desc")).toEqual(["Delta", "charlie", "alpha", "bravo"]);
    expect(await names("sort=datacenter:asc")).toEqual(expect.arrayContaining(["bravo", "alpha", "Delta", "charlie"]));
    expect((await names("sort=datacenter:asc"))[0]).toBe("bravo");
    expect((await names("sort=datacenter:asc"))[3]).toBe("charlie");
    expect((await names("sort=region:desc"))[0]).toBe("charlie");
    await emu.call("PUT", `${VMS}/${ids.bravo}?entityId=${childEntity}`, { body: { name: "bravo" } });
    expect((await names("sort=updatedAt:desc"))[0]).toBe("bravo");
  });

  it("filters by team, region, data center, configuration, image name and status", async () => {
    expect(await names(`filter[teamId]=${team.id}`)).toEqual(["alpha"]);
    expect(await names("filter[regionId]=1&sort=name:asc")).toEqual(["alpha", "Delta"]);
    expect(await names(`filter[datacenterId]=${nyc}`)).toEqual(["charlie"]);
    expect(await names("filter[configurationId]=1")).toEqual(["bravo"]);
    expect(await names("filter[imageName]=windows-2022")).toEqual(["Delta"]);
    expect(await names("filter[status]=stopped")).toEqual(["charlie"]);
  });

  it("searches name, private and public IP case-insensitively, then pages", async () => {
    expect(await names("search=DEL")).toEqual(["Delta"]);
    const bravo = emu.ctx.state.vms[ids.bravo];
    expect(await names(`search=${bravo.publicIp}`)).toEqual(["bravo"]);
    expect(await names(`search=${bravo.nics[0].privateIp}`)).toEqual(["bravo"]);
    const page2 = await emu.call<Item[]>("GET", q("limit=3&page=2&sort=name:asc"));
    expect(page2.body.data!.map((v) => v.name)).toEqual(["Delta"]);
    expect(page2.body.meta).toMatchObject({ total: 4, totalPages: 2, hasNextPage: false, hasPreviousPage: true });
    const beyond = await emu.call<Item[]>("GET", q("page=9"));
    expect(beyond.status).toBe(200);
    expect(beyond.body.data).toEqual([]);
  });

  it("refuses bad sort, unknown filters and bad filter values with 400", async () => {
    for (const query of ["sort=name", "sort=colour:asc", "filter[owner]=x", "filter[datacenterId]=nope", "limit=101"]) {
      const res = await emu.call("GET", q(query));
      expect(res.status, query).toBe(400);
      expect(res.body.error).toBe("INVALID_REQUEST");
    }
  });
});
