import { isDeepStrictEqual } from "node:util";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { routes } from "../../provider/api";
import { configuration, handlerContext, type Configuration } from "../../provider/resources";
import { dataFunctions } from "../../provider/resources/lookups";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const { admin } = stack.emulator.bootstrap.users;
const [fra, ams] = stack.datacenters;
const fixtures = stack.emulator.bootstrap.fixtures;

let current: Configuration = configuration(() => undefined);
function useConfig(extra: Record<string, string>): void {
  const config: Record<string, string> = { "cloudinfra:baseUrl": stack.emulator.baseUrl, ...extra };
  current = configuration((key) => config[key], Object.keys(config));
}
const withApiKey = () => useConfig({ "cloudinfra:apiKey": admin.apiKey });

/** Calls a data function as a host does: arguments validated first, then the call. */
async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const fn = dataFunctions[name]!;
  const parsed = fn.args.safeParse(args);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  return (await fn.call(handlerContext({ configuration: current }), parsed.data as never)) as Record<string, unknown>;
}

const volumeType = async (datacenterId: string) => {
  const sizes = await stack.api.volumeSizes({ params: { id: datacenterId } });
  const type = sizes.volumeTypes[0]!;
  return { volumeTypeId: type.id, size: type.availableSizes[0]! };
};

describe("lookups", () => {
  it("finds one network by exact name and by id, with the outputs of a Network", async () => {
    withApiKey();
    const made = await stack.api.createNetwork({
      body: { name: "lk-net", datacenterId: fra!.id, networkType: "standard" },
    });
    await stack.api.createNetwork({ body: { name: "lk-net-2", datacenterId: fra!.id, networkType: "standard" } });
    const id = (made as { id: string }).id;
    const byName = await call("getNetwork", { name: "lk-net" });
    const live = await stack.api.getNetwork({ params: { id } });
    expect(byName).toMatchObject({ id, name: "lk-net", datacenterId: fra!.id, cidrBlock: live.cidrBlock });
    expect(await call("getNetwork", { id })).toMatchObject({ id, name: "lk-net", gateway: live.gateway });
  });

  it("validates the arguments before any request: exactly one of id and name", async () => {
    const mark = stack.mark();
    expect(dataFunctions.getNetwork!.args.safeParse({}).error?.issues[0]).toMatchObject({ path: ["name"] });
    const both = dataFunctions.getNetwork!.args.safeParse({ id: "x", name: "y" });
    expect(both.error?.issues[0]?.message).toMatch(/exactly one/);
    expect(dataFunctions.getUser!.args.safeParse({}).error?.issues[0]).toMatchObject({ path: ["email"] });
    expect(dataFunctions.getVolumes!.args.safeParse({ sizeGb: "big" }).success).toBe(false);
    expect(await stack.requests(mark)).toEqual([]);
  });

  it("fails on a name nobody has (naming the closest) and on a name two VMs share (listing them)", async () => {
    withApiKey();
    await expect(call("getNetwork", { name: "lk-ne" })).rejects.toThrow(
      /no network has the name "lk-ne" in the configured entity.*closest names found: "lk-net", "lk-net-2"/,
    );
    const body = {
      name: "lk-twin",
      datacenterId: fra!.id,
      imageId: fixtures.images[0]!.id,
      configurationId: fixtures.configurations[0]!.id,
    };
    const first = await stack.api.createVm({ body });
    const second = await stack.api.createVm({ body });
    const ids = [first, second].map((r) => (Array.isArray(r) ? r[0] : r) as { virtualMachineId?: string; id?: string });
    const error = await call("getVirtualMachine", { name: "lk-twin" }).catch((e: Error) => e);
    expect(String(error)).toMatch(/2 virtualMachines have the name "lk-twin".*look it up by `id` instead/);
    const vms = (await stack.api.listVms({ query: { search: "lk-twin" } })).data;
    for (const vm of vms) expect(String(error)).toContain(`${vm.id} (created ${vm.createdAt})`);
    expect(ids).toHaveLength(2);
  });

  it("lists every volume of a data center (every page, 100 each), sorted by name then id, as the API holds them", async () => {
    withApiKey();
    const { volumeTypeId, size } = await volumeType(ams!.id);
    const made = 230;
    for (let i = 0; i < made; i++) {
      await stack.api.createVolume({
        body: {
          name: `lk-vol-${String(made - i).padStart(3, "0")}`,
          datacenterId: ams!.id,
          volumeTypeId,
          volumeSizeId: size.id,
          sizeGb: size.sizeGb,
        },
      });
    }
    const held: string[] = [];
    for await (const v of stack.api.listAll("listVolumes", { "filter[datacenterId]": ams!.id })) held.push(v.id);
    const mark = stack.mark();
    const result = (await call("getVolumes", { datacenterId: ams!.id })) as {
      volumes: { id: string; name: string; datacenterId: string }[];
      count: number;
    };
    const lists = (await stack.requests(mark)).filter((r) => r.route === "listVolumes");
    expect(lists).toHaveLength(3);
    expect(result.count).toBe(held.length);
    expect(result.volumes.map((v) => v.id).sort()).toEqual([...held].sort());
    const sorted = [...result.volumes].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
    expect(result.volumes).toEqual(sorted);
    expect(result.volumes.every((v) => v.datacenterId === ams!.id)).toBe(true);
  });

  it("a volume's lookup says what its attachment changes (status, attached VM), which the resource leaves out", async () => {
    withApiKey();
    const { volumeTypeId, size } = await volumeType(fra!.id);
    const [vmJob] = await stack.api.createVm({
      body: { name: "lk-att-vm", datacenterId: fra!.id, imageId: 1, configurationId: 1 },
    });
    const vmId = (await stack.api.jobs.wait(vmJob!.id)).resourceId!;
    const made = await stack.api.createVolume({
      body: { name: "lk-att-vol", datacenterId: fra!.id, volumeTypeId, volumeSizeId: size.id, sizeGb: size.sizeGb },
    });
    await stack.api.jobs.wait(made.jobId);
    expect(await call("getVolume", { id: made.id })).toMatchObject({ status: "Available" });
    // `failed` is the resource's rule (the next up replaces it), not what the API reports: the lookup has its status.
    expect(await call("getVolume", { id: made.id })).not.toHaveProperty("failed");
    expect(dataFunctions.getVolume!.result.shape).not.toHaveProperty("failed");
    expect((await call("getVolume", { id: made.id })).virtualMachineId).toBeUndefined();

    const { jobId } = await stack.api.attachVolume({ params: { id: made.id }, body: { virtualMachineId: vmId } });
    await stack.api.jobs.wait(jobId);
    const held = await stack.api.getVolume({ params: { id: made.id } });
    expect(held).toMatchObject({ status: "In-use", virtualMachineId: vmId });
    expect(await call("getVolume", { name: "lk-att-vol" })).toMatchObject({ status: "In-use", virtualMachineId: vmId });
    const listed = (await call("getVolumes", { virtualMachineId: vmId })) as { volumes: Record<string, unknown>[] };
    expect(listed.volumes).toEqual([
      expect.objectContaining({ id: made.id, status: "In-use", virtualMachineId: vmId }),
    ]);
    // The result's schema declares them, described (the plugin's schema and SDKs take it from here).
    const shape = dataFunctions.getVolume!.result.shape as Record<string, { description?: string }>;
    expect(shape.status?.description).toMatch(/In-use/);
    expect(shape.virtualMachineId?.description).toMatch(/attached/);
  });

  it("lookups of one list in the same moment share its requests", async () => {
    withApiKey();
    const mark = stack.mark();
    const [a, b] = await Promise.all([
      call("getNetwork", { name: "lk-net" }),
      call("getNetwork", { name: "lk-net-2" }),
      call("getNetworks", { datacenterId: fra!.id }),
      call("getNetworks", { datacenterId: fra!.id }),
    ]);
    expect([a!.name, b!.name]).toEqual(["lk-net", "lk-net-2"]);
    const lists = (await stack.requests(mark)).filter((r) => r.route === "listNetworks");
    expect(lists).toHaveLength(2);
  });

  it("says who the caller is, signed in with an API key and with email, password and TOTP", async () => {
    withApiKey();
    const byKey = await call("getCaller", {});
    expect(byKey).toMatchObject({ userId: admin.id, email: admin.email, entityId: stack.emulator.bootstrap.entityId });
    useConfig({
      "cloudinfra:email": admin.email,
      "cloudinfra:password": admin.password,
      "cloudinfra:totpSecret": admin.totpSecret,
    });
    const bySession = await call("getCaller", {});
    expect(bySession).toEqual(byKey);
  });

  it("never returns a secret", async () => {
    withApiKey();
    const users = (await call("getUsers", {})) as { users: Record<string, unknown>[]; count: number };
    expect(users.count).toBeGreaterThan(0);
    for (const u of users.users) expect(u).not.toHaveProperty("password");
    const me = await call("getUser", { email: admin.email.toUpperCase() });
    expect(me).toMatchObject({ id: admin.id, email: admin.email });
  });
});

/** Each list function and the route it reads (as the spec names them). */
const listRoutes = {
  getNetworks: "listNetworks",
  getVolumes: "listVolumes",
  getVirtualMachines: "listVms",
  getGpuVirtualMachines: "listGpuVms",
  getResourceGroups: "listTeams",
  getUsers: "listUsers",
} as const;

/**
 * The argument a documented query parameter is: paging is none (every page is read); `filter[x]` is `x`, or `filterX`
 * where the query has an `x` of its own (`entityId`, the entity acted in); the others keep their names.
 */
function expectedArguments(query: z.ZodObject): Map<string, string> {
  const params = Object.keys(query.shape).filter((p) => p !== "page" && p !== "limit");
  return new Map(
    params.map((param) => {
      const inner = /^filter\[(.+)\]$/.exec(param)?.[1];
      if (inner === undefined) return [param, param];
      return [param, params.includes(inner) ? `filter${inner[0]!.toUpperCase()}${inner.slice(1)}` : inner];
    }),
  );
}

/** Values of every JSON type, the contract's enum values and near misses (`accepted`), valid and invalid ids. */
const pool: unknown[] = [
  undefined,
  null,
  0,
  1,
  -1,
  1.5,
  100,
  2 ** 40,
  true,
  false,
  "",
  "x",
  "1",
  "0",
  "true",
  "a".repeat(201),
  "3f0c6a52-6c4e-4d5e-9a0b-3b9e2f4c7d11",
  "not-a-uuid",
  "name:asc",
  "createdAt:desc",
  "name",
  "name:up",
  "standard",
  "custom",
  "exclude",
  "include",
  "only",
  "activated",
  "pending",
  "expired",
  "accepted",
  [],
  ["activated"],
  ["pending", "expired"],
  ["accepted"],
  ["activated", "accepted"],
  [1],
  {},
];

/** The value as the query string carries it: text, a list as the parameter repeated. */
const wire = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : [String(value)]);

describe("list functions: their arguments are their route's documented query", () => {
  it.each(Object.entries(listRoutes))(
    "%s: every documented parameter is an argument, and nothing else",
    (fn, route) => {
      const query = routes[route].query as z.ZodObject;
      const expected = expectedArguments(query);
      const args = dataFunctions[fn]!.argsShape.shape as Record<string, z.ZodType>;
      expect(Object.keys(args).sort()).toEqual([...expected.values()].sort());
      // Each described (the schema, the SDKs and the docs say what it selects).
      for (const name of Object.keys(args)) expect(args[name]!.description, name).toBeTruthy();
    },
  );

  it.each(Object.entries(listRoutes))(
    "%s: each argument takes exactly the values its parameter takes, and what it takes is sent as the API accepts it",
    (fn, route) => {
      const query = routes[route].query as z.ZodObject;
      const args = dataFunctions[fn]!.argsShape.shape as Record<string, z.ZodType>;
      for (const [param, name] of expectedArguments(query)) {
        const documented = query.shape[param] as z.ZodType;
        for (const value of pool) {
          // A typed value the parameter takes as it is (not text it would parse: `"1"` for an integer).
          const parsed = documented.safeParse(value);
          const takes = parsed.success && isDeepStrictEqual(parsed.data, value);
          expect(args[name]!.safeParse(value).success, `${fn} ${name} = ${JSON.stringify(value)}`).toBe(takes);
          if (takes && value !== undefined) {
            const sent = wire(value);
            expect(documented.safeParse(sent.length === 1 ? sent[0] : sent).success, `${param} on the wire`).toBe(true);
          }
        }
      }
      // A whole call: unknown arguments are refused, naming them and the ones there are.
      const unknown = dataFunctions[fn]!.args.safeParse({ colour: "red" });
      expect(unknown.error?.issues[0]?.message).toMatch(/unknown argument\(s\) `colour`: the arguments are .*`search`/);
    },
  );

  it("getUsers takes the contract's invite statuses (activated, pending, expired) and teamId 0 (no group)", () => {
    const args = dataFunctions.getUsers!.args;
    expect(args.safeParse({ inviteStatus: ["activated", "pending", "expired"] }).success).toBe(true);
    expect(args.safeParse({ inviteStatus: ["accepted"] }).error?.issues[0]).toMatchObject({
      path: ["inviteStatus", 0],
    });
    expect(args.safeParse({ teamId: 0 }).success).toBe(true);
    expect(args.safeParse({ excludeTeamId: 3, noTeam: true, noRole: false, sort: "email:asc" }).success).toBe(true);
    expect(args.safeParse({ sort: "email" }).success).toBe(false);
  });

  it("every argument is accepted by the API and sent as its documented parameter (the emulator's request log)", async () => {
    withApiKey();
    const entity = stack.emulator.bootstrap.entityId;
    const { teamId } = await stack.api.createTeam({ body: { name: "lk-args-group" } });
    // One value per documented parameter that the API takes: a new parameter needs one here.
    const samples: Record<string, unknown> = {
      entityId: entity,
      search: "lk",
      sort: "createdAt:asc",
      "filter[regionId]": 1,
      "filter[datacenterId]": fra!.id,
      "filter[networkType]": "custom",
      "filter[virtualMachineId]": "3f0c6a52-6c4e-4d5e-9a0b-3b9e2f4c7d11",
      "filter[status]": "Available",
      "filter[teamId]": teamId,
      "filter[volumeTypeId]": 1,
      "filter[volumeSizeId]": 1,
      "filter[sizeGb]": 10,
      "filter[configurationId]": 1,
      "filter[imageName]": "ubuntu-22.04",
      "filter[entityId]": entity,
      "filter[excludeTeamId]": teamId,
      inviteStatus: ["activated", "pending"],
      teamId: 0,
      roleId: "tenant-admin",
      noTeam: true,
      noRole: false,
      deletedFilter: "include",
    };
    for (const [fn, route] of Object.entries(listRoutes)) {
      const params = expectedArguments(routes[route].query as z.ZodObject);
      const args: Record<string, unknown> = {};
      for (const [param, name] of params) {
        expect(samples, `a sample value of ${route}'s ${param}`).toHaveProperty([param]);
        args[name] = samples[param];
      }
      const mark = stack.mark();
      const result = await call(fn, args);
      expect(result.count, fn).toBeTypeOf("number");
      const lists = (await stack.requests(mark)).filter((r) => r.route === route);
      expect(lists.map((r) => r.status)).toEqual([200]);
      const sent = new URLSearchParams(lists[0]!.query);
      for (const [param] of params) expect(sent.getAll(param), `${fn}: ${param}`).toEqual(wire(samples[param]));
      expect([sent.get("page"), sent.get("limit")]).toEqual(["1", "100"]);
      expect([...new Set(sent.keys())].sort()).toEqual([...params.keys(), "page", "limit"].sort());
    }
  });

  it("the filters select what the API selects: teamId 0, inviteStatus, excludeTeamId and volumeSizeId", async () => {
    withApiKey();
    const { teamId } = await stack.api.createTeam({ body: { name: "lk-filter-group" } });
    const grouped = await stack.api.createUser({ body: { email: "lk-grouped@acme.example", teamIds: [teamId] } });
    await stack.api.createUser({ body: { email: "lk-alone@acme.example" } });
    const everyone = (await stack.api.listUsers({ query: { limit: 100 } })).data;
    const ids = (result: Record<string, unknown>) => (result.users as { id: string }[]).map((u) => u.id).sort();
    const where = (test: (u: (typeof everyone)[number]) => boolean) =>
      everyone
        .filter(test)
        .map((u) => u.id)
        .sort();
    expect(ids(await call("getUsers", { teamId: 0 }))).toEqual(where((u) => u.teamIds.length === 0));
    expect(ids(await call("getUsers", { teamId }))).toEqual([grouped.id]);
    expect(ids(await call("getUsers", { excludeTeamId: teamId }))).toEqual(where((u) => u.id !== grouped.id));
    expect(ids(await call("getUsers", { inviteStatus: ["pending"] }))).toEqual(
      where((u) => u.inviteStatus === "pending"),
    );

    const { volumeTypeId, size } = await volumeType(fra!.id);
    const made = await stack.api.createVolume({
      body: { name: "lk-size-vol", datacenterId: fra!.id, volumeTypeId, volumeSizeId: size.id, sizeGb: size.sizeGb },
    });
    const bySize = (await call("getVolumes", { volumeSizeId: size.id, search: "lk-size" })) as {
      volumes: { id: string }[];
    };
    expect(bySize.volumes.map((v) => v.id)).toEqual([made.id]);
  });

  it("with `sort`, the result keeps the API's order", async () => {
    withApiKey();
    const byApi = (await stack.api.listUsers({ query: { sort: "email:desc", limit: 100 } })).data.map((u) => u.id);
    const result = (await call("getUsers", { sort: "email:desc" })) as { users: { id: string }[] };
    expect(result.users.map((u) => u.id)).toEqual(byApi);
  });
});

describe("single lookups return what the API reports", () => {
  it("getResourceGroup returns every member (all pages of GET /teams/{id}); the list's items leave members out", async () => {
    withApiKey();
    const { teamId } = await stack.api.createTeam({ body: { name: "lk-big-group" } });
    const userIds: string[] = [];
    for (let i = 0; i < 103; i++) {
      userIds.push((await stack.api.createUser({ body: { email: `lk-member-${i}@acme.example` } })).id);
    }
    for (let i = 0; i < userIds.length; i += 50) {
      await stack.api.bulkAddTeamMembers({ body: { userIds: userIds.slice(i, i + 50), teamIds: [teamId] } });
    }
    const mark = stack.mark();
    const found = await call("getResourceGroup", { name: "lk-big-group" });
    expect(found).toMatchObject({ id: String(teamId), teamId, name: "lk-big-group" });
    expect(found.members).toEqual([...userIds].sort());
    const pages = (await stack.requests(mark)).filter((r) => r.route === "getTeam");
    expect(pages.map((r) => new URLSearchParams(r.query).get("page"))).toEqual(["1", "2"]);
    expect((await call("getResourceGroup", { id: String(teamId) })).members).toEqual([...userIds].sort());

    const listed = (await call("getResourceGroups", { search: "lk-big" })) as { resourceGroups: object[] };
    expect(listed.resourceGroups).toEqual([expect.objectContaining({ id: String(teamId) })]);
    expect(listed.resourceGroups[0]).not.toHaveProperty("members");
  });

  it("getUser returns every role and group the API reports, with their types in the result schema", async () => {
    withApiKey();
    const { teamId } = await stack.api.createTeam({ body: { name: "lk-user-group" } });
    const made = await stack.api.createUser({
      body: { email: "lk-roles@acme.example", roleNames: ["vm-operator", "tenant-user"], teamIds: [teamId] },
    });
    const held = await stack.api.getUser({ params: { id: made.id } });
    for (const found of [
      await call("getUser", { email: "lk-roles@acme.example" }),
      await call("getUser", { id: made.id }),
    ]) {
      expect(found).toMatchObject({
        id: made.id,
        roleNames: [...held.roles].sort(),
        roles: held.roles,
        teamIds: [teamId],
        updatedAt: held.updatedAt,
      });
    }
    const listed = (await call("getUsers", { search: "lk-roles" })) as { users: Record<string, unknown>[] };
    expect(listed.users).toEqual([expect.objectContaining({ roleNames: [...held.roles].sort(), teamIds: [teamId] })]);
    const shape = dataFunctions.getUser!.result.shape as Record<string, z.ZodType>;
    expect(shape.roleNames!.safeParse(["tenant-user"]).success).toBe(true);
    expect(shape.roleNames!.safeParse(undefined).success).toBe(false);
    expect(shape.teamIds!.safeParse([1, 2]).success).toBe(true);
    expect(shape.teamIds!.safeParse(["1"]).success).toBe(false);
    expect(shape.roleNames!.description).not.toMatch(/manages/);
    expect(shape.teamIds!.description).not.toMatch(/manages/);
  });
});

describe("lookups against an API that sends only what the spec documents", async () => {
  const spec = await stackOnEmulator({ specFieldsOnly: true });
  const use = () => {
    const config: Record<string, string> = {
      "cloudinfra:baseUrl": spec.emulator.baseUrl,
      "cloudinfra:apiKey": spec.emulator.bootstrap.users.admin.apiKey,
    };
    current = configuration((key) => config[key], Object.keys(config));
  };

  it("finds and lists every kind, and says who the caller is", async () => {
    use();
    const dc = spec.datacenters[0]!;
    const net = (await spec.api.createNetwork({
      body: { name: "sf-net", datacenterId: dc.id, networkType: "standard" },
    })) as { id: string };
    await spec.api.createVm({
      body: { name: "sf-vm", datacenterId: dc.id, imageId: 1, configurationId: 1 },
    });
    const team = await spec.api.createTeam({ body: { name: "sf-group" } });
    expect(await call("getNetwork", { name: "sf-net" })).toMatchObject({ id: net.id, name: "sf-net" });
    const beforeLookup = spec.mark();
    const vm = await call("getVirtualMachine", { name: "sf-vm" });
    expect(vm).toMatchObject({ name: "sf-vm", datacenterId: dc.id });
    // A lookup never reads the key, nor reports a provider-side input (exposePrivateKey) the API does not hold.
    expect(vm).not.toHaveProperty("sshPrivateKey");
    expect(vm).not.toHaveProperty("exposePrivateKey");
    expect((await spec.requests(beforeLookup)).filter((r) => r.route === "getVmSshKey")).toEqual([]);
    expect(await call("getResourceGroup", { name: "sf-group" })).toMatchObject({ id: String(team.teamId) });
    const lists = await Promise.all(
      ["getNetworks", "getVolumes", "getVirtualMachines", "getGpuVirtualMachines", "getResourceGroups", "getUsers"].map(
        (name) => call(name, {}),
      ),
    );
    const users = (await spec.api.listUsers({ query: { limit: 100 } })).data;
    expect(users.length).toBeGreaterThan(0);
    expect(lists.map((l) => l.count)).toEqual([1, 0, 1, 0, 1, users.length]);
    expect((lists[5]!.users as { id: string }[]).map((u) => u.id).sort()).toEqual(users.map((u) => u.id).sort());
    expect(await call("getCaller", {})).toMatchObject({ email: spec.emulator.bootstrap.users.admin.email });
  });
});
