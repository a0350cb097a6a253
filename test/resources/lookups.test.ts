import { describe, expect, it } from "vitest";
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
