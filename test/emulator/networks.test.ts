import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Network } from "../../provider/api";
import type { VmRec } from "../../emulator/state";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

/** Jobs end within milliseconds: used with settle(). */
let emu: TestEmulator;
/** Realistic job durations (seconds): a network stays Creating until the clock is advanced. */
let slow: TestEmulator;
beforeAll(async () => {
  emu = await testEmulator();
  slow = await testEmulator({ jobDurationMs: 90_000 });
});

const FRA = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";
const AMS = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f602";

let counter = 0;
const unique = (prefix: string) => `${prefix}-${++counter}`;

type Item = { id: string; success: boolean; jobId: string | null; error: string | null };

async function createNetwork(
  body: Record<string, unknown> = {},
  as: "admin" | "outsider" = "admin",
  on: TestEmulator = emu,
): Promise<string> {
  const r = await on.call<{ jobId: string; id: string }>("POST", "/resource/networks", {
    as,
    body: { name: unique("net"), datacenterId: FRA, networkType: "standard", ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  if (on === emu) await emu.settle();
  return r.body.data!.id;
}

const getNetwork = (id: string, as: "admin" | "outsider" = "admin") =>
  emu.call<Network>("GET", `/resource/networks/${id}`, { as });

/** A VM record with one NIC on each given network, placed straight in the state. */
function addVm(networkIds: string[], over: Partial<VmRec> = {}): VmRec {
  const now = emu.ctx.now();
  const vm: VmRec = {
    id: randomUUID(),
    entityId: emu.bootstrap.entityId,
    name: unique("vm"),
    status: "Running",
    datacenterId: FRA,
    imageId: 1,
    configurationId: 1,
    teamId: null,
    publicIp: null,
    nics: networkIds.map((networkId, i) => ({
      id: randomUUID(),
      networkId,
      primary: i === 0,
      privateIp: `10.0.0.${10 + i}`,
    })),
    sshKeyIds: [],
    privateKey: "-----BEGIN OPENSSH PRIVATE KEY-----",
    rescueImageId: null,
    createdAt: now,
    updatedAt: now,
    ...over,
  };
  emu.ctx.state.vms[vm.id] = vm;
  return vm;
}

const issueFields = (body: unknown) =>
  (body as { data: { issues: { field: string }[] } }).data.issues.map((i) => i.field);

describe("create", () => {
  it("answers 202 with the job and id, holds the network as Creating, then Active with its defaults", async () => {
    const name = unique("default");
    const r = await slow.call<{ jobId: string; id: string }>("POST", "/resource/networks", {
      body: { name, datacenterId: FRA, networkType: "standard" },
    });
    expect(r.status).toBe(202);
    const { id, jobId } = r.body.data!;
    expect(slow.ctx.state.networks[id]).toMatchObject({ name, status: "Creating" });
    expect(slow.ctx.state.jobs[jobId]).toMatchObject({ operation: "network.create", resourceType: "network" });
    slow.advance(60_000);

    const got = await slow.call<Network>("GET", `/resource/networks/${id}`);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({
      id,
      name,
      description: null,
      status: "Active",
      datacenter: { id: FRA, name: "fra-1" },
      networkType: "standard",
      cidrBlock: "10.0.0.0/24",
      snatEnabled: true,
      dhcpServerEnabled: true,
      dhcpStartAddress: null,
      dhcpEndAddress: null,
      defaultRouteEnabled: false,
      defaultRoute: null,
      serveDNSServersEnabled: false,
      dnsServers: [],
      gateway: "10.0.0.1",
      allocationPools: [{ start: "10.0.0.2", end: "10.0.0.254" }],
      connectedVmCount: 0,
    });
    expect(slow.ctx.state.jobs[jobId]).toMatchObject({ status: "completed", resourceId: id });
  });

  it("keeps every setting given and derives the pool from the DHCP range", async () => {
    const id = await createNetwork({
      networkType: "custom",
      description: "backend",
      cidrBlock: "192.168.8.0/22",
      dhcpStartAddress: "192.168.9.10",
      dhcpEndAddress: "192.168.9.200",
      defaultRouteEnabled: true,
      defaultRoute: "192.168.8.254",
      serveDNSServersEnabled: true,
      dnsServers: ["1.1.1.1", "8.8.8.8"],
    });
    const net = (await getNetwork(id)).body.data!;
    expect(net).toMatchObject({
      networkType: "custom",
      snatEnabled: false,
      description: "backend",
      cidrBlock: "192.168.8.0/22",
      gateway: "192.168.8.1",
      allocationPools: [{ start: "192.168.9.10", end: "192.168.9.200" }],
      defaultRoute: "192.168.8.254",
      dnsServers: ["1.1.1.1", "8.8.8.8"],
    });
    expect(emu.ctx.state.networks[id].dnsServers).toEqual(["1.1.1.1", "8.8.8.8"]);
  });

  it("refuses DHCP and route addresses outside the CIDR, naming each field", async () => {
    const name = unique("outside");
    const r = await emu.call("POST", "/resource/networks", {
      body: {
        name,
        datacenterId: FRA,
        networkType: "standard",
        cidrBlock: "10.1.0.0/24",
        dhcpStartAddress: "10.1.1.10",
        dhcpEndAddress: "10.1.0.255",
        defaultRoute: "10.2.0.1",
      },
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("INVALID_REQUEST");
    expect(issueFields(r.body)).toEqual(["dhcpStartAddress", "dhcpEndAddress", "defaultRoute"]);
    expect(r.body.message).toContain("10.1.0.1 - 10.1.0.254");

    const reversed = await emu.call("POST", "/resource/networks", {
      body: {
        name,
        datacenterId: FRA,
        networkType: "standard",
        dhcpStartAddress: "10.0.0.100",
        dhcpEndAddress: "10.0.0.50",
      },
    });
    expect(reversed.status).toBe(400);
    expect(reversed.body.message).toMatch(/dhcpStartAddress: the DHCP range starts at 10.0.0.100, after its end/);
    expect(Object.values(emu.ctx.state.networks).some((n) => n.name === name)).toBe(false);
  });

  it("refuses an unknown data center, a misaligned or too small CIDR, and SNAT on custom networks", async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ datacenterId: randomUUID() }, /datacenterId: data center .* does not exist/],
      [{ cidrBlock: "10.0.0.5/24" }, /cidrBlock: host bits are set.*use 10\.0\.0\.0\/24/],
      [{ cidrBlock: "10.0.0.0/31" }, /cidrBlock: a network's prefix length must be \/8 to \/30/],
      [{ cidrBlock: "10.0.0.0/33" }, /cidrBlock/],
      [{ networkType: "custom", snatEnabled: true }, /snatEnabled/],
      [{ networkType: "other" }, /networkType/],
    ];
    for (const [over, message] of cases) {
      const r = await emu.call("POST", "/resource/networks", {
        body: { name: unique("bad"), datacenterId: FRA, networkType: "standard", ...over },
      });
      expect(r.status, JSON.stringify(over)).toBe(400);
      expect(r.body.message).toMatch(message);
    }
  });

  it("refuses a duplicate name with 409, while another entity may use it", async () => {
    const name = unique("dup");
    await createNetwork({ name });
    const again = await emu.call("POST", "/resource/networks", {
      body: { name, datacenterId: AMS, networkType: "custom" },
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("CONFLICT");
    expect(Object.values(emu.ctx.state.networks).filter((n) => n.name === name)).toHaveLength(1);
    await createNetwork({ name }, "outsider");
  });

  it("refuses unknown fields and bad UUIDs with 400 and tenant-users with 403", async () => {
    const unknown = await emu.call("POST", "/resource/networks", {
      body: { name: unique("x"), datacenterId: FRA, networkType: "standard", mtu: 9000 },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toContain("mtu");
    expect((await emu.call("GET", "/resource/networks/12345")).status).toBe(400);
    const name = unique("member");
    const member = await emu.call("POST", "/resource/networks", {
      as: "member",
      body: { name, datacenterId: FRA, networkType: "standard" },
    });
    expect(member.status).toBe(403);
    expect(Object.values(emu.ctx.state.networks).some((n) => n.name === name)).toBe(false);
    expect((await emu.call("GET", "/resource/networks", { as: "member" })).status).toBe(200);
  });

  it("marks the network Error when its job fails, and the job names it", async () => {
    const original = emu.ctx.jobFault;
    emu.ctx.jobFault = (op) => (op === "network.create" ? { kind: "fail", error: "no capacity" } : original(op));
    let r;
    try {
      r = await emu.call<{ jobId: string; id: string }>("POST", "/resource/networks", {
        body: { name: unique("broken"), datacenterId: FRA, networkType: "standard" },
      });
    } finally {
      emu.ctx.jobFault = original;
    }
    await emu.settle();
    const { id, jobId } = r.body.data!;
    expect((await getNetwork(id)).body.data!.status).toBe("Error");
    expect(emu.ctx.state.jobs[jobId]).toMatchObject({ status: "failed", resourceId: id, error: "no capacity" });
  });
});

describe("list and read", () => {
  it("filters, searches by name or CIDR and sorts", async () => {
    const tag = unique("lst");
    const a = await createNetwork({ name: `${tag}-b`, cidrBlock: "172.16.10.0/24" });
    emu.advance(1000);
    const b = await createNetwork({
      name: `${tag}-a`,
      datacenterId: AMS,
      networkType: "custom",
      cidrBlock: "172.16.9.0/24",
    });
    emu.advance(1000);
    const c = await createNetwork({ name: `${tag}-c`, cidrBlock: "172.16.10.0/25" });
    const ids = async (query: string) => {
      const r = await emu.call<Network[]>("GET", `/resource/networks?search=${tag}&${query}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.data!.map((n) => n.id);
    };
    expect(await ids("limit=100")).toEqual([c, b, a]);
    expect(await ids("sort=name:asc")).toEqual([b, a, c]);
    expect(await ids("sort=cidrBlock:asc")).toEqual([b, a, c]);
    expect(await ids("sort=cidrBlock:desc")).toEqual([c, a, b]);
    expect(await ids("filter[regionId]=2")).toEqual([b]);
    expect(await ids(`filter[datacenterId]=${FRA}`)).toEqual([c, a]);
    expect(await ids("filter[networkType]=custom")).toEqual([b]);

    const byCidr = await emu.call<Network[]>("GET", "/resource/networks?search=172.16.9.");
    expect(byCidr.body.data!.map((n) => n.id)).toEqual([b]);
    expect((await emu.call("GET", "/resource/networks?filter[networkType]=vpc")).status).toBe(400);
  });

  it("is invisible to other entities", async () => {
    const id = await createNetwork();
    expect((await getNetwork(id, "outsider")).status).toBe(404);
    const put = await emu.call("PUT", `/resource/networks/${id}`, { as: "outsider", body: { description: "x" } });
    expect(put.status).toBe(404);
    expect((await emu.call("DELETE", `/resource/networks/${id}`, { as: "outsider" })).status).toBe(404);
    expect((await emu.call("GET", `/resource/networks/${id}/virtual-machines`, { as: "outsider" })).status).toBe(404);
    const list = await emu.call<Network[]>("GET", "/resource/networks?limit=100", { as: "outsider" });
    expect(list.body.data!.map((n) => n.id)).not.toContain(id);
    expect(emu.ctx.state.networks[id].description).toBeNull();
  });
});

describe("update", () => {
  it("changes only the fields given", async () => {
    const id = await createNetwork({ cidrBlock: "10.20.0.0/24", dnsServers: ["9.9.9.9"], description: "old" });
    const before = (await getNetwork(id)).body.data!;
    emu.advance(1000);
    const r = await emu.call<Network>("PUT", `/resource/networks/${id}`, {
      body: { description: "new", dhcpEndAddress: "10.20.0.99" },
    });
    expect(r.status).toBe(200);
    const after = (await getNetwork(id)).body.data!;
    expect(r.body.data).toEqual(after);
    expect(after).toEqual({
      ...before,
      description: "new",
      dhcpEndAddress: "10.20.0.99",
      allocationPools: [{ start: "10.20.0.2", end: "10.20.0.99" }],
      updatedAt: after.updatedAt,
    });
    expect(after.updatedAt > before.updatedAt).toBe(true);
  });

  it("validates the resulting combination", async () => {
    const id = await createNetwork({ cidrBlock: "10.30.0.0/24", dhcpStartAddress: "10.30.0.100" });
    const cidr = await emu.call("PUT", `/resource/networks/${id}`, { body: { cidrBlock: "10.31.0.0/24" } });
    expect(cidr.status).toBe(400);
    expect(issueFields(cidr.body)).toEqual(["dhcpStartAddress"]);
    const end = await emu.call("PUT", `/resource/networks/${id}`, { body: { dhcpEndAddress: "10.30.0.50" } });
    expect(end.status).toBe(400);
    expect(end.body.message).toContain("after its end");
    expect(emu.ctx.state.networks[id]).toMatchObject({ cidrBlock: "10.30.0.0/24", dhcpEndAddress: null });

    const both = await emu.call<Network>("PUT", `/resource/networks/${id}`, {
      body: { cidrBlock: "10.31.0.0/24", dhcpStartAddress: "10.31.0.100" },
    });
    expect(both.status).toBe(200);
    expect(both.body.data).toMatchObject({ gateway: "10.31.0.1", allocationPools: [{ start: "10.31.0.100" }] });
    expect(emu.ctx.state.networks[id].cidrBlock).toBe("10.31.0.0/24");
  });

  it("refuses a name taken by another network (409) but accepts its own", async () => {
    const taken = unique("taken");
    await createNetwork({ name: taken });
    const id = await createNetwork();
    const own = emu.ctx.state.networks[id].name;
    const r = await emu.call("PUT", `/resource/networks/${id}`, { body: { name: taken } });
    expect(r.status).toBe(409);
    expect(emu.ctx.state.networks[id].name).toBe(own);
    expect((await emu.call("PUT", `/resource/networks/${id}`, { body: { name: own } })).status).toBe(200);
  });

  it("refuses a CIDR change while VMs are connected (409), but other changes go through", async () => {
    const id = await createNetwork();
    const vm = addVm([id]);
    const r = await emu.call("PUT", `/resource/networks/${id}`, { body: { cidrBlock: "10.9.0.0/24" } });
    expect(r.status).toBe(409);
    expect(r.body.message).toContain(vm.name);
    expect(emu.ctx.state.networks[id].cidrBlock).toBe("10.0.0.0/24");
    const same = await emu.call("PUT", `/resource/networks/${id}`, {
      body: { cidrBlock: "10.0.0.0/24", description: "kept" },
    });
    expect(same.status).toBe(200);
    expect(emu.ctx.state.networks[id].description).toBe("kept");
  });
});

describe("delete", () => {
  it("deletes at once with 200", async () => {
    const id = await createNetwork();
    const r = await emu.call("DELETE", `/resource/networks/${id}`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ id, deleted: true });
    expect(emu.ctx.state.networks[id]).toBeUndefined();
    expect((await getNetwork(id)).status).toBe(404);
  });

  it("refuses while VMs are connected, naming them", async () => {
    const id = await createNetwork();
    const web = addVm([id], { name: unique("web") });
    const db = addVm([randomUUID(), id], { name: unique("db") });
    const r = await emu.call("DELETE", `/resource/networks/${id}`);
    expect(r.status).toBe(409);
    expect(r.body.error).toBe("CONFLICT");
    expect(r.body.message).toContain(web.name);
    expect(r.body.message).toContain(db.name);
    expect((r.body.data as { virtualMachines: unknown[] }).virtualMachines).toEqual([
      { id: web.id, name: web.name },
      { id: db.id, name: db.name },
    ]);
    expect(emu.ctx.state.networks[id]).toBeDefined();
    expect((await getNetwork(id)).body.data!.connectedVmCount).toBe(2);
  });

  it("refuses while the network is being created", async () => {
    const id = await createNetwork({}, "admin", slow);
    const r = await slow.call("DELETE", `/resource/networks/${id}`);
    expect(r.status).toBe(409);
    expect(r.body.message).toContain("being created");
    expect(slow.ctx.state.networks[id].status).toBe("Creating");
    slow.advance(60_000);
    expect((await slow.call("DELETE", `/resource/networks/${id}`)).status).toBe(200);
    expect(slow.ctx.state.networks[id]).toBeUndefined();
  });
});

describe("connected virtual machines", () => {
  it("lists each VM with its interface on the network", async () => {
    const id = await createNetwork();
    const other = await createNetwork({ cidrBlock: "10.5.0.0/24" });
    const first = addVm([id], { name: unique("a") });
    const second = addVm([other, id], { name: unique("b"), status: "Stopped" });
    addVm([other]);
    const r = await emu.call("GET", `/resource/networks/${id}/virtual-machines`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([
      { id: first.id, name: first.name, status: "Running", privateIp: "10.0.0.10", primary: true },
      { id: second.id, name: second.name, status: "Stopped", privateIp: "10.0.0.11", primary: false },
    ]);
    expect((await getNetwork(id)).body.data!.connectedVmCount).toBe(2);
    expect((await getNetwork(other)).body.data!.connectedVmCount).toBe(2);
  });
});

describe("cidr-details", () => {
  const details = async (cidr: string) => {
    const r = await emu.call<Record<string, unknown>>(
      "GET",
      `/resource/networks/cidr-details?cidr=${encodeURIComponent(cidr)}`,
    );
    expect(r.status).toBe(200);
    return r.body.data!;
  };

  it("describes a valid block", async () => {
    expect(await details("10.0.0.0/24")).toEqual({
      cidr: "10.0.0.0/24",
      valid: true,
      reason: null,
      prefixLength: 24,
      networkAddress: "10.0.0.0",
      broadcastAddress: "10.0.0.255",
      netmask: "255.255.255.0",
      firstUsable: "10.0.0.1",
      lastUsable: "10.0.0.254",
      usableAddresses: 254,
    });
    expect(await details("172.16.0.0/12")).toMatchObject({ netmask: "255.240.0.0", usableAddresses: 1048574 });
    expect(await details("0.0.0.0/0")).toMatchObject({ netmask: "0.0.0.0", usableAddresses: 2 ** 32 - 2 });
  });

  it("counts /31 as 2 and /32 as 1 usable addresses", async () => {
    expect(await details("10.0.0.2/31")).toMatchObject({
      valid: true,
      firstUsable: "10.0.0.2",
      lastUsable: "10.0.0.3",
      usableAddresses: 2,
    });
    expect(await details("10.0.0.7/32")).toMatchObject({
      valid: true,
      netmask: "255.255.255.255",
      firstUsable: "10.0.0.7",
      lastUsable: "10.0.0.7",
      usableAddresses: 1,
    });
  });

  it("answers valid false with a reason for malformed or misaligned blocks", async () => {
    for (const cidr of ["10.0.0.0", "10.0.0/24", "256.0.0.0/8", "10.0.0.0/33", "01.0.0.0/8", "10.0.0.0/024", "x"]) {
      const d = await details(cidr);
      expect(d, cidr).toMatchObject({
        cidr,
        valid: false,
        prefixLength: null,
        networkAddress: null,
        usableAddresses: 0,
      });
      expect(d.reason).toContain("not an IPv4 CIDR block");
    }
    const misaligned = await details("192.168.1.77/24");
    expect(misaligned).toMatchObject({ valid: false, usableAddresses: 0 });
    expect(misaligned.reason).toContain("use 192.168.1.0/24");
  });

  it("needs the cidr parameter", async () => {
    expect((await emu.call("GET", "/resource/networks/cidr-details")).status).toBe(400);
    expect((await emu.call("GET", "/resource/networks/cidr-details?cidr=10.0.0.0/8&mask=1")).status).toBe(400);
  });
});

describe("bulk delete", () => {
  it("refuses 0 and 51 ids", async () => {
    expect((await emu.call("POST", "/resource/networks/bulk/delete", { body: { ids: [] } })).status).toBe(400);
    const ids = Array.from({ length: 51 }, () => randomUUID());
    expect((await emu.call("POST", "/resource/networks/bulk/delete", { body: { ids } })).status).toBe(400);
  });

  it("deletes what it can and explains the rest, item by item", async () => {
    const free = await createNetwork();
    const busy = await createNetwork();
    const vm = addVm([busy]);
    const foreign = await createNetwork({}, "outsider");
    const missing = randomUUID();
    const r = await emu.call<Item[]>("POST", "/resource/networks/bulk/delete", {
      body: { ids: [free, busy, foreign, missing] },
    });
    expect(r.status).toBe(200);
    const [ok, refused, hidden, unknown] = r.body.data!;
    expect(ok).toEqual({ id: free, success: true, jobId: null, error: null });
    expect(refused).toMatchObject({ id: busy, success: false, jobId: null });
    expect(refused.error).toContain(vm.name);
    expect(hidden).toMatchObject({ id: foreign, success: false });
    expect(unknown).toMatchObject({ id: missing, success: false });
    expect(emu.ctx.state.networks[free]).toBeUndefined();
    expect(emu.ctx.state.networks[busy]).toBeDefined();
    expect(emu.ctx.state.networks[foreign]).toBeDefined();
  });
});
