/**
 * The data functions of the read routes beyond the kinds, against the emulator: the VMs on a network and those a
 * volume can be attached to (by id or by name), the entity's API keys (never a secret), VM metrics, entity usage and
 * its months. Each returns what the API holds, and the request log shows the documented route and query.
 */
import { MockAgent } from "undici";
import { afterAll, describe, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { configuration, handlerContext, type Configuration, type HandlerContext } from "../../provider/resources";
import { dataFunctions } from "../../provider/resources/lookups";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const { admin } = stack.emulator.bootstrap.users;
const [fra, ams] = stack.datacenters;
const fixtures = stack.emulator.bootstrap.fixtures;
const entityId = stack.emulator.bootstrap.entityId;

const config: Record<string, string> = {
  "cloudinfra:baseUrl": stack.emulator.baseUrl,
  "cloudinfra:apiKey": admin.apiKey,
};
/** Keys are created by a signed-in session (API keys cannot create them). */
const session = new CloudClient({
  baseUrl: stack.emulator.baseUrl,
  auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
});
afterAll(() => session.close());
const current: Configuration = configuration((key) => config[key], Object.keys(config));

/** Calls a data function as a host does: arguments validated first, then the call. */
async function call(name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const fn = dataFunctions[name]!;
  const parsed = fn.args.safeParse(args);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return (await fn.call(handlerContext({ configuration: current }), parsed.data as never)) as Record<string, unknown>;
}

const routesSince = async (mark: number) =>
  (await stack.requests(mark)).map((r) => ({ route: r.route, path: r.path.replace(/^\/v1/, ""), query: r.query }));

async function network(name: string, datacenterId: string): Promise<string> {
  const made = await stack.api.createNetwork({ body: { name, datacenterId, networkType: "standard" } });
  await stack.api.waitForJob(made.jobId);
  return made.id;
}

async function vm(name: string, datacenterId: string, networkId?: string): Promise<string> {
  const jobs = await stack.api.createVm({
    body: {
      name,
      datacenterId,
      imageId: fixtures.images[0]!.id,
      configurationId: fixtures.configurations[0]!.id,
      ...(networkId ? { networkInterfaces: [{ networkId, primary: true }] } : {}),
    },
  });
  const job = await stack.api.waitForJob(jobs[0]!.id);
  return job.resourceId!;
}

describe("the VMs on a network and the VMs a volume can be attached to", () => {
  it("getNetworkVirtualMachines by name and by id: what GET /resource/networks/{id}/virtual-machines answers", async () => {
    const netId = await network("rl-net", fra!.id);
    await network("rl-net-2", fra!.id);
    const ids = [await vm("rl-vm-a", fra!.id, netId), await vm("rl-vm-b", fra!.id, netId)];
    await vm("rl-vm-off", fra!.id);
    const held = await stack.api.networkVms({ params: { id: netId } });
    expect(held.map((v) => v.id).sort()).toEqual([...ids].sort());

    let mark = stack.mark();
    const byName = await call("getNetworkVirtualMachines", { name: "rl-net" });
    expect(byName).toEqual({ networkId: netId, virtualMachines: held });
    const sent = await routesSince(mark);
    expect(sent.filter((r) => r.route === "networkVms")).toEqual([
      { route: "networkVms", path: `/resource/networks/${netId}/virtual-machines`, query: "" },
    ]);
    expect(sent.some((r) => r.route === "listNetworks")).toBe(true);

    mark = stack.mark();
    expect(await call("getNetworkVirtualMachines", { id: netId })).toEqual(byName);
    expect((await routesSince(mark)).map((r) => r.route)).toEqual(["networkVms"]);
  });

  it("getNetworkVirtualMachines: exactly one of id and name, and a name nobody has fails naming the closest", async () => {
    const mark = stack.mark();
    const fn = dataFunctions.getNetworkVirtualMachines!;
    expect(fn.args.safeParse({}).error?.issues[0]).toMatchObject({ path: ["name"] });
    expect(fn.args.safeParse({ id: "x" }).success).toBe(false);
    expect(fn.args.safeParse({ id: fra!.id, name: "y" }).error?.issues[0]?.message).toMatch(/exactly one/);
    expect(fn.args.safeParse({ id: fra!.id, networkId: "y" }).error?.issues[0]?.message).toMatch(
      /unknown argument\(s\) `networkId`: the arguments are `id`, `name`, `entityId`/,
    );
    expect(await stack.requests(mark)).toEqual([]);
    await expect(call("getNetworkVirtualMachines", { name: "rl-ne" })).rejects.toThrow(
      /no network has the name "rl-ne".*closest names found: "rl-net", "rl-net-2"/,
    );
  });

  it("getAttachableVirtualMachines by name and by id: the VMs of the volume's data center with their volume counts", async () => {
    const sizes = await stack.api.volumeSizes({ params: { id: ams!.id } });
    const type = sizes.volumeTypes[0]!;
    const size = type.availableSizes[0]!;
    const body = { datacenterId: ams!.id, volumeTypeId: type.id, volumeSizeId: size.id, sizeGb: size.sizeGb };
    const made = await stack.api.createVolume({ body: { name: "rl-vol", ...body } });
    await stack.api.waitForJob(made.jobId);
    const other = await stack.api.createVolume({ body: { name: "rl-vol-on", ...body } });
    await stack.api.waitForJob(other.jobId);
    const vmId = await vm("rl-ams-vm", ams!.id);
    const attach = await stack.api.attachVolume({ params: { id: other.id }, body: { virtualMachineId: vmId } });
    await stack.api.waitForJob(attach.jobId);

    const held = await stack.api.attachableVms({ params: { id: made.id } });
    const mine = held.find((v) => v.id === vmId)!;
    expect(mine).toMatchObject({ currentVolumeCount: 1, datacenterId: ams!.id });
    expect(mine.maxVolumeCount).toBeGreaterThan(1);

    let mark = stack.mark();
    const byName = await call("getAttachableVirtualMachines", { name: "rl-vol" });
    expect(byName).toEqual({ volumeId: made.id, virtualMachines: held });
    expect((await routesSince(mark)).filter((r) => r.route === "attachableVms")).toEqual([
      { route: "attachableVms", path: `/resource/volumes/${made.id}/available-virtual-machines`, query: "" },
    ]);
    mark = stack.mark();
    expect(await call("getAttachableVirtualMachines", { id: made.id })).toEqual(byName);
    expect((await routesSince(mark)).map((r) => r.route)).toEqual(["attachableVms"]);
  });
});

describe("the entity's API keys, never a secret", () => {
  it("getApiKeys: every key of the entity as the API lists it; status: Expiring selects the keys near expiry; no secret anywhere", async () => {
    const created = [
      await session.createApiKey({ body: { name: "rl-key-long", expiresInDays: 365 } }),
      await session.createApiKey({ body: { name: "rl-key-soon", expiresInDays: 10 } }),
      await session.createApiKey({ body: { name: "rl-key-soon-2", expiresInDays: 20, roleId: "tenant-user" } }),
    ];
    const secrets = [
      ...created.map((k) => k.key),
      ...Object.values(stack.emulator.bootstrap.users).map((u) => u.apiKey),
      ...Object.values(stack.emulator.ctx.state.apiKeys).map((k) => k.secretHash),
    ];
    const held = [];
    for await (const k of stack.api.listAll("listApiKeys", {})) held.push(k);

    let mark = stack.mark();
    const all = await call("getApiKeys");
    expect(all.count).toBe(held.length);
    const listed = all.apiKeys as Record<string, unknown>[];
    expect(listed.map((k) => k.id).sort()).toEqual(held.map((k) => k.id).sort());
    for (const key of listed) {
      const live = held.find((k) => k.id === key.id)!;
      expect(key).toMatchObject({
        name: live.name,
        start: live.start,
        status: live.status,
        expiresAt: live.expiresAt,
        createdAt: live.createdAt,
      });
      expect(key).not.toHaveProperty("key");
    }
    expect(listed.map((k) => k.name)).toEqual(
      [...listed.map((k) => String(k.name))].sort((a, b) => a.localeCompare(b)),
    );
    expect(listed.find((k) => k.name === "rl-key-soon-2")).toMatchObject({ roleId: "tenant-user", status: "Expiring" });
    const sent = (await routesSince(mark)).filter((r) => r.route === "listApiKeys");
    expect(sent.map((r) => r.path)).toEqual(["/auth/api-keys"]);

    mark = stack.mark();
    const expiring = await call("getApiKeys", { status: "Expiring", search: "rl-key" });
    expect((expiring.apiKeys as { name: string }[]).map((k) => k.name)).toEqual(["rl-key-soon", "rl-key-soon-2"]);
    const query = new URLSearchParams((await routesSince(mark)).find((r) => r.route === "listApiKeys")!.query);
    expect(query.get("search")).toBe("rl-key");
    expect(query.has("status")).toBe(false);

    const text = JSON.stringify([all, expiring]);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });

  it("getApiKey by name and by id; a name two keys share fails listing them, an unknown name naming the closest", async () => {
    const made = await session.createApiKey({ body: { name: "rl-one", expiresInDays: 90 } });
    const byName = await call("getApiKey", { name: "rl-one" });
    expect(byName).toMatchObject({ id: made.id, name: "rl-one", start: made.start, status: "Active" });
    expect(await call("getApiKey", { id: made.id })).toEqual(byName);
    expect(JSON.stringify(byName)).not.toContain(made.key);
    expect(byName).not.toHaveProperty("key");

    const twin = await session.createApiKey({ body: { name: "rl-one" } });
    const error = String(await call("getApiKey", { name: "rl-one" }).catch((e: unknown) => e));
    expect(error).toMatch(/2 API keys have the name "rl-one"/);
    expect(error).toContain(made.id);
    expect(error).toContain(twin.id);
    await expect(call("getApiKey", { name: "rl-on" })).rejects.toThrow(/no API key has the name "rl-on".*"rl-one"/);
    expect(dataFunctions.getApiKey!.args.safeParse({}).success).toBe(false);
  });
});

describe("metrics", () => {
  it("getVirtualMachineMetrics sends its documented query and returns what the API answers", async () => {
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
    const query = {
      currentPeriodStart: start,
      currentPeriodEnd: now.toISOString(),
      comparisonPeriodStart: new Date(Date.parse(start) - 30 * 86_400_000).toISOString(),
      comparisonPeriodEnd: start,
      datacenters: [fra!.id, ams!.id],
      includeVmNames: true,
    } as const;
    const held = await stack.api.vmMetrics({ query: { ...query, datacenters: [...query.datacenters] } });
    expect(held.summary.totalVms).toBeGreaterThan(0);

    const mark = stack.mark();
    const metrics = await call("getVirtualMachineMetrics", { ...query, datacenters: [...query.datacenters] });
    expect(metrics).toEqual(held);
    const [sent] = (await routesSince(mark)).filter((r) => r.route === "vmMetrics");
    expect(sent!.path).toBe("/metrics/virtual-machines");
    const params = new URLSearchParams(sent!.query);
    expect(params.get("currentPeriodStart")).toBe(start);
    expect(params.getAll("datacenters").flatMap((d) => d.split(","))).toEqual([fra!.id, ams!.id]);
    expect(params.get("includeVmNames")).toBe("true");
    expect(Object.keys(dataFunctions.getVirtualMachineMetrics!.argsShape.shape).sort()).toEqual(
      [
        "categories",
        "comparisonPeriodEnd",
        "comparisonPeriodStart",
        "currentPeriodEnd",
        "currentPeriodStart",
        "datacenters",
        "entityId",
        "includeVmNames",
      ].sort(),
    );
  });

  it("getEntityUsage and getUsageMonths default to the configured entity; `month` is sent as documented", async () => {
    const months = await stack.api.availableMonths({ params: { id: entityId } });
    let mark = stack.mark();
    expect(await call("getUsageMonths")).toEqual({ months });
    expect((await routesSince(mark)).filter((r) => r.route === "availableMonths").map((r) => r.path)).toEqual([
      `/metrics/entity/${entityId}/available-months`,
    ]);
    const last = months[1]!;
    const held = await stack.api.entityUsage({ params: { id: entityId }, query: { month: last } });
    mark = stack.mark();
    expect(await call("getEntityUsage", { month: last })).toEqual(held);
    const [sent] = (await routesSince(mark)).filter((r) => r.route === "entityUsage");
    expect(sent).toEqual({ route: "entityUsage", path: `/metrics/entity/${entityId}/usage`, query: `month=${last}` });
    // The current month's usage grows as time passes: by `id`, the default month is the current one.
    const now = await call("getEntityUsage", { id: entityId });
    expect(now).toMatchObject({ entityId, month: months[0] });
    expect(await call("getEntityUsage", { id: entityId, month: last })).toEqual(held);
    expect(dataFunctions.getEntityUsage!.args.safeParse({ month: "2026-13" }).success).toBe(false);
  });

  it("getApiKeyOptions signed in with a session: the roles and expiry choices the API offers, each read once", async () => {
    const signedIn: Record<string, string> = {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:email": admin.email,
      "cloudinfra:password": admin.password,
      "cloudinfra:totpSecret": admin.totpSecret,
    };
    const ctx = handlerContext({ configuration: configuration((key) => signedIn[key], Object.keys(signedIn)) });
    const mark = stack.mark();
    const options = (await dataFunctions.getApiKeyOptions!.call(ctx, {} as never)) as Record<string, unknown>;
    const roles = await session.apiKeyRoleOptions();
    const expirations = await session.apiKeyExpirationOptions();
    expect(roles.map((r) => r.id).sort()).toEqual(["tenant-admin", "tenant-user", "vm-operator"]);
    expect(expirations.length).toBeGreaterThan(0);
    expect(options).toEqual({ roles, expirations });
    const read = (await routesSince(mark)).map((r) => r.route);
    expect(read.filter((r) => r === "apiKeyRoleOptions")).toHaveLength(2); // the function's, and this test's
    expect(read.filter((r) => r === "apiKeyExpirationOptions")).toHaveLength(2);
    // Shared for the run: asked again, the function reads nothing.
    const again = stack.mark();
    expect(await dataFunctions.getApiKeyOptions!.call(ctx, {} as never)).toEqual(options);
    expect((await routesSince(again)).filter((r) => r.route?.startsWith("apiKey"))).toEqual([]);
    // No secret of the sign-in in the result.
    for (const secret of [admin.password, admin.totpSecret, admin.apiKey]) {
      expect(JSON.stringify(options)).not.toContain(secret);
    }
  });

  it("getApiKeyOptions with only an API key: one clear error saying a session sign-in is needed, before any request", async () => {
    const mark = stack.mark();
    const failure = await call("getApiKeyOptions").then(
      () => "resolved",
      (error: Error) => error.message,
    );
    expect(failure).toContain("getApiKeyOptions");
    expect(failure).toContain(
      "needs a signed-in session with two-factor authentication, and only an API key is configured",
    );
    for (const setting of [
      "cloudinfra:email",
      "cloudinfra:password",
      "cloudinfra:totpSecret",
      "cloudinfra:sessionToken",
    ]) {
      expect(failure).toContain(setting);
    }
    expect(failure).not.toContain(admin.apiKey);
    expect(await stack.requests(mark)).toEqual([]);
    expect(dataFunctions.getApiKeyOptions!.args.safeParse({ entityId: entityId }).success).toBe(false);
  });
});

describe("an API that sends more than the contract names", () => {
  const ORIGIN = "http://api.example.test";
  const vmId = "7d2b7a3e-3f1f-4a57-9d53-2f0a3c1f6b10";
  const netId = "0b7f6a0e-1c8e-4b8f-a9f7-6a2c1f3e5d42";
  const secret = "svc_Zy9XwVuTsRqPoNmLkJiHgFeDcBa8";

  function mocked(answers: Record<string, unknown>): { ctx: HandlerContext; close(): Promise<void> } {
    const agent = new MockAgent();
    agent.disableNetConnect();
    for (const [prefix, data] of Object.entries(answers)) {
      agent
        .get(ORIGIN)
        .intercept({ path: (p) => p.startsWith(`/v1${prefix}`), method: "GET" })
        .reply(200, { success: true, data, ...(Array.isArray(data) ? { meta: page(data.length) } : {}) })
        .persist();
    }
    const api = new CloudClient({ baseUrl: `${ORIGIN}/v1`, auth: { apiKey: secret }, dispatcher: agent });
    return {
      ctx: { api } as unknown as HandlerContext,
      close: async () => {
        await api.close();
        await agent.close();
      },
    };
  }
  const page = (n: number) => ({
    total: n,
    page: 1,
    pageSize: 100,
    totalPages: 1,
    hasNextPage: false,
    hasPreviousPage: false,
  });

  it("the fields the spec does not name come back under `other`; a key's secret never does", async () => {
    const key = {
      id: "k1",
      name: "ci",
      start: "svc_Zy9X",
      status: "Active",
      expiresAt: "2027-01-01T00:00:00.000Z",
      createdAt: "2026-01-01T00:00:00.000Z",
      key: secret,
      secretHash: "f".repeat(64),
    };
    const vmsOnNet = [{ id: vmId, name: "a", status: "Running", privateIp: "10.0.0.5", primary: true, mac: "02:00" }];
    const { ctx, close } = mocked({
      [`/resource/networks/${netId}/virtual-machines`]: vmsOnNet,
      "/auth/api-keys": [key],
    });
    try {
      const onNet = await dataFunctions.getNetworkVirtualMachines!.call(ctx, { id: netId } as never);
      expect(onNet).toEqual({
        networkId: netId,
        virtualMachines: [
          { id: vmId, name: "a", status: "Running", privateIp: "10.0.0.5", primary: true, other: { mac: "02:00" } },
        ],
      });
      const keys = await dataFunctions.getApiKeys!.call(ctx, {} as never);
      const one = await dataFunctions.getApiKey!.call(ctx, { name: "ci" } as never);
      expect(one).toEqual({
        id: "k1",
        name: "ci",
        start: "svc_Zy9X",
        status: "Active",
        expiresAt: key.expiresAt,
        createdAt: key.createdAt,
      });
      expect(keys).toEqual({ apiKeys: [one], count: 1 });
      for (const text of [JSON.stringify(keys), JSON.stringify(one)]) {
        expect(text).not.toContain(secret);
        expect(text).not.toContain(key.secretHash);
      }
    } finally {
      await close();
    }
  });
});
