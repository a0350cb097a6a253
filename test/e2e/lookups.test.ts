/**
 * The lookups through the real CLI: stack A (plugin SDK) makes the network `shared-net`; stack B (dynamic SDK) finds it
 * with getNetwork({ name }) and puts a VM on it, stack C (plugin SDK) the same with getNetworkOutput; both then preview
 * without changes. A name nobody has and a name two VMs share fail `preview` with their messages, and nothing is
 * written. getVolumes reads every page; getUsers({ inviteStatus: ["activated"] }) returns exactly the activated users
 * the emulator holds. getCaller names the user and entity signed in with an API key and with email, password and TOTP.
 * One stack exports last month's usage, this month's VM metrics, the VMs on its network, the VMs its volume can be
 * attached to and the names and statuses of the entity's keys: what the API holds, and no key secret in the outputs or
 * the exported state.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as plugin from "@cloudinfra/pulumi/plugin";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import * as dynamic from "../../sdk";
import { CloudClient } from "../../provider/client";
import { cliRuns, cliWorld, describeCli } from "./helpers";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
const { admin } = world.emulator.bootstrap.users;
const vmArgs = { datacenterId: fra!.id, imageId: 1, configurationId: 1 };

/** The stack's state file as the file backend stores it (secrets encrypted). */
function storedState(stackName: string): string {
  const find = (dir: string): string[] =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) return e.name === ".history" || e.name === "backups" ? [] : find(full);
      return e.name === `${stackName.split("/").pop()}.json` ? [full] : [];
    });
  const [file, ...more] = find(path.join(world.work, "backend", ".pulumi", "stacks"));
  expect(more).toEqual([]);
  return fs.readFileSync(file!, "utf8");
}

const failureOf = (error: unknown) => String((error as { stderr?: string; stdout?: string }).stderr ?? error);
const writes = async (mark: number) => (await world.requests(mark)).filter((r) => r.method !== "GET");

describeCli("lookups through the real CLI", () => {
  describe("one stack finds another's network by name", () => {
    let networkId: string;

    it("stack A (plugin SDK) makes shared-net", async () => {
      const a = await world.stack("quickstart", async () => {
        const net = new plugin.Network("shared", {
          name: "shared-net",
          datacenterId: fra!.id,
          networkType: "standard",
        });
        return { id: net.id };
      });
      networkId = (await a.up({ color: "never" })).outputs.id!.value as string;
      expect((await world.api.getNetwork({ params: { id: networkId } })).name).toBe("shared-net");
    });

    it.concurrent.each(["dynamic", "plugin"] as const)(
      "%s SDK: a VM on the network found by name, then a preview without changes",
      async (sdk) => {
        const stack = await world.stack("quickstart", async () => {
          if (sdk === "dynamic") {
            const shared = await dynamic.getNetwork({ name: "shared-net" });
            const vm = new dynamic.VirtualMachine("vm", {
              ...vmArgs,
              name: "lk-b-vm",
              networkInterfaces: [{ networkId: shared.id, primary: true }],
            });
            return { id: vm.id, networkId: shared.id, cidr: shared.cidrBlock };
          }
          const shared = plugin.getNetworkOutput({ name: "shared-net" });
          const vm = new plugin.VirtualMachine("vm", {
            ...vmArgs,
            name: "lk-c-vm",
            networkInterfaces: [{ networkId: shared.id, primary: true }],
          });
          return { id: vm.id, networkId: shared.id, cidr: shared.cidrBlock };
        });
        const up = await stack.up({ color: "never" });
        const vmId = up.outputs.id!.value as string;
        expect(up.outputs.networkId!.value).toBe(networkId);
        const live = await world.api.getNetwork({ params: { id: networkId } });
        expect(up.outputs.cidr!.value).toBe(live.cidrBlock);
        const detail = await world.api.getVm({ params: { id: vmId } });
        expect(detail.virtualMachine.networkInterfaces?.map((n) => n.networkId)).toEqual([networkId]);
        await stack.preview({ color: "never", expectNoChanges: true });
        const again = await stack.up({ color: "never" });
        expect(again.summary.resourceChanges).not.toHaveProperty("update");
        expect(again.summary.resourceChanges).not.toHaveProperty("replace");
        await stack.preview({ color: "never", expectNoChanges: true });
      },
    );
  });

  it("a name nobody has and a name two VMs share fail preview with their messages, before any write", async () => {
    for (let i = 0; i < 2; i++) await world.api.createVm({ body: { ...vmArgs, name: "lk-twin" } });
    const twins = (await world.api.listVms({ query: { search: "lk-twin" } })).data.filter((v) => v.name === "lk-twin");
    expect(twins).toHaveLength(2);

    const missing = await world.stack("quickstart", async () => {
      const shared = plugin.getNetworkOutput({ name: "shared-ne" });
      new plugin.Network("other", { name: "lk-other", datacenterId: fra!.id, networkType: "standard" });
      return { id: shared.id };
    });
    let mark = world.mark();
    const noMatch = failureOf(await missing.preview({ color: "never" }).catch((e: unknown) => e));
    expect(noMatch).toMatch(/no network has the name "shared-ne" in the configured entity/);
    expect(noMatch).toMatch(/closest names found: "shared-net"/);
    expect(await writes(mark)).toEqual([]);
    // A generated SDK's failed invoke is a plain Error, which the Node.js runtime prints with its stack (whatever
    // the provider): that run is left out of the suite's check for stack frames; the dynamic SDK's below is not.
    const run = cliRuns.findLastIndex((r) => r.output.includes('"shared-ne"'));
    expect(run).toBeGreaterThanOrEqual(0);
    cliRuns.splice(run, 1);

    const twin = await world.stack("quickstart", async () => {
      const vm = await dynamic.getVirtualMachine({ name: "lk-twin" });
      new dynamic.Network("other", { name: "lk-other-2", datacenterId: fra!.id, networkType: "standard" });
      return { id: vm.id };
    });
    mark = world.mark();
    const several = failureOf(await twin.preview({ color: "never" }).catch((e: unknown) => e));
    expect(several).toMatch(/2 virtualMachines have the name "lk-twin"/);
    for (const vm of twins) expect(several).toContain(`${vm.id} (created ${vm.createdAt})`);
    expect(several).toMatch(/look it up by `id` instead/);
    expect(several).toContain(" [LOOKUP_AMBIGUOUS]");
    expect(await writes(mark)).toEqual([]);

    // Arguments that cannot be right fail before any request, naming the argument and the fix.
    const invalid = await world.stack("quickstart", async () => {
      const both = await dynamic.getNetwork({ id: "x", name: "shared-net" });
      return { id: both.id };
    });
    mark = world.mark();
    const bad = failureOf(await invalid.preview({ color: "never" }).catch((e: unknown) => e));
    expect(bad).toContain("getNetwork: `id` and `name` were both given: give exactly one of them");
    expect(await world.requests(mark)).toEqual([]);
  });

  it('getVolumes over 230 volumes made through the API: exactly what the API holds, in 3 list requests; getUsers({ inviteStatus: ["activated"] }) exactly the activated users the emulator holds', async () => {
    const dc = world.datacenters[1]!;
    const type = (await world.api.volumeSizes({ params: { id: dc.id } })).volumeTypes[0]!;
    const size = type.availableSizes[0]!;
    for (let i = 0; i < 230; i++) {
      await world.api.createVolume({
        body: {
          name: `lk-vol-${String(i).padStart(3, "0")}`,
          datacenterId: dc.id,
          volumeTypeId: type.id,
          volumeSizeId: size.id,
          sizeGb: size.sizeGb,
        },
      });
    }
    const held: string[] = [];
    for await (const v of world.api.listAll("listVolumes", { "filter[datacenterId]": dc.id })) held.push(v.id);
    expect(held).toHaveLength(230);
    // Users of every invite status beside the seeded (activated) ones: invited (pending), registered (activated),
    // and a registered one deleted since (left out by default).
    for (const name of ["ann", "bob"]) await world.api.createUser({ body: { email: `lk-${name}@acme.example` } });
    const password = "Lookup-Passw0rd!";
    await world.api.createUser({ body: { email: "lk-cy@acme.example", action: "register", password } });
    const gone = await world.api.createUser({ body: { email: "lk-dee@acme.example", action: "register", password } });
    await world.api.deleteUser({ params: { id: gone.id } });
    const stack = await world.stack("quickstart", async () => {
      const found = plugin.getVolumesOutput({ datacenterId: dc.id });
      const activated = plugin.getUsersOutput({ inviteStatus: ["activated"] });
      const viaDynamic = await dynamic.getUsers({ inviteStatus: ["activated"] });
      return {
        ids: found.volumes.apply((vs) => vs.map((v) => v.id)),
        count: found.count,
        activated: activated.users.apply((us) => us.map((u) => u.id)),
        activatedDynamic: viaDynamic.users.map((u) => u.id),
      };
    });
    const mark = world.mark();
    const up = await stack.up({ color: "never" });
    expect(up.outputs.count!.value).toBe(230);
    expect([...(up.outputs.ids!.value as string[])].sort()).toEqual([...held].sort());
    const lists = (await world.requests(mark)).filter((r) => r.route === "listVolumes");
    expect(lists).toHaveLength(3);
    // What the emulator holds: the live users of the entity whose invitation is activated.
    const entityId = world.emulator.bootstrap.entityId;
    const activated = Object.values(world.emulator.ctx.state.users)
      .filter((u) => u.entityId === entityId && u.deletedAt === null && u.inviteStatus === "activated")
      .map((u) => u.id)
      .sort();
    expect(activated.length).toBeGreaterThanOrEqual(3);
    expect([...(up.outputs.activated!.value as string[])].sort()).toEqual(activated);
    expect([...(up.outputs.activatedDynamic!.value as string[])].sort()).toEqual(activated);
    const sent = (await world.requests(mark)).filter((r) => r.route === "listUsers");
    expect(sent.map((r) => new URLSearchParams(r.query).getAll("inviteStatus"))).toEqual([
      ["activated"],
      ["activated"],
    ]);
  });

  it("usage, metrics, a network's VMs, a volume's attachable VMs and the entity's keys: what the API holds, and no key secret in the outputs or the state", async () => {
    const net = await world.api.createNetwork({
      body: { name: "lk-m-net", datacenterId: fra!.id, networkType: "standard" },
    });
    await world.api.waitForJob(net.jobId);
    const made = await world.api.createVm({
      body: { ...vmArgs, name: "lk-m-vm", networkInterfaces: [{ networkId: net.id, primary: true }] },
    });
    const vmId = (await world.api.waitForJob(made[0]!.id)).resourceId!;
    const type = (await world.api.volumeSizes({ params: { id: fra!.id } })).volumeTypes[0]!;
    const size = type.availableSizes[0]!;
    const vol = await world.api.createVolume({
      body: {
        name: "lk-m-vol",
        datacenterId: fra!.id,
        volumeTypeId: type.id,
        volumeSizeId: size.id,
        sizeGb: size.sizeGb,
      },
    });
    await world.api.waitForJob(vol.jobId);
    // Keys are made by a signed-in session; their secrets must appear nowhere below.
    const session = new CloudClient({
      baseUrl: world.emulator.baseUrl,
      auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
    });
    const keys = [
      await session.createApiKey({ body: { name: "lk-m-ci", expiresInDays: 365 } }),
      await session.createApiKey({ body: { name: "lk-m-soon", expiresInDays: 10 } }),
    ];
    await session.close();
    const entityId = world.emulator.bootstrap.entityId;
    const months = await world.api.availableMonths({ params: { id: entityId } });
    const lastMonth = months[1]!;

    const stack = await world.stack("quickstart", async () => {
      const usage = await dynamic.getEntityUsage({ month: lastMonth });
      const metrics = plugin.getVirtualMachineMetricsOutput({});
      const onNetwork = plugin.getNetworkVirtualMachinesOutput({ name: "lk-m-net" });
      const attachable = await dynamic.getAttachableVirtualMachines({ name: "lk-m-vol" });
      const all = await dynamic.getApiKeys();
      const expiring = plugin.getApiKeysOutput({ status: "Expiring" });
      return {
        usage,
        metrics: { summary: metrics.summary, categories: metrics.categories },
        networkVms: onNetwork.virtualMachines,
        attachable: attachable.virtualMachines,
        keys: all.apiKeys.map((k) => ({ name: k.name, status: k.status })),
        expiring: expiring.apiKeys.apply((ks) => ks.map((k) => k.name)),
      };
    });
    const up = await stack.up({ color: "never" });
    const out = (key: string) => up.outputs[key]!.value as unknown;

    expect(out("usage")).toEqual(
      await world.api.entityUsage({ params: { id: entityId }, query: { month: lastMonth } }),
    );
    const metrics = await world.api.vmMetrics();
    expect(out("metrics")).toEqual({ summary: metrics.summary, categories: metrics.categories });
    const onNetwork = await world.api.networkVms({ params: { id: net.id } });
    expect(onNetwork.map((v) => v.id)).toEqual([vmId]);
    expect(out("networkVms")).toEqual(onNetwork);
    const attachable = await world.api.attachableVms({ params: { id: vol.id } });
    expect(attachable.map((v) => v.id)).toContain(vmId);
    expect(out("attachable")).toEqual(attachable);
    const held = [];
    for await (const k of world.api.listAll("listApiKeys", {})) held.push(k);
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect([...(out("keys") as { name: string }[])].sort(byName)).toEqual(
      held.map((k) => ({ name: k.name, status: k.status })).sort(byName),
    );
    expect(out("keys")).toContainEqual({ name: "lk-m-ci", status: "Active" });
    expect(out("expiring")).toEqual(
      held
        .filter((k) => k.status === "Expiring")
        .map((k) => k.name)
        .sort(),
    );
    expect(out("expiring")).toContain("lk-m-soon");

    // No key secret (nor any stored hash) in the outputs or in the state as the backend stores it; the decrypted
    // export holds the provider's own API key (its configuration, a Pulumi secret) and nothing else of them.
    const created = keys.map((k) => k.key);
    const hashes = Object.values(world.emulator.ctx.state.apiKeys).map((k) => k.secretHash);
    const seeded = Object.values(world.emulator.bootstrap.users).map((u) => u.apiKey);
    const outputs = JSON.stringify(up.outputs);
    const stored = storedState(stack.name);
    const exported = JSON.stringify(await stack.exportStack());
    expect(stored).toContain('"lk-m-soon"');
    for (const secret of [...created, ...hashes, ...seeded]) {
      expect(outputs).not.toContain(secret);
      expect(stored).not.toContain(secret);
    }
    for (const secret of [...created, ...hashes]) expect(exported).not.toContain(secret);
  });

  it.concurrent.each([
    ["an API key", "apiKey"],
    ["email, password and TOTP", "signIn"],
  ] as const)("getCaller signed in with %s names the user and the entity", async (_label, how) => {
    const stack = await world.stack(
      "quickstart",
      async () => {
        const dyn = await dynamic.getCaller();
        const viaPlugin = plugin.getCallerOutput();
        return { dynamic: dyn, plugin: pulumi.output(viaPlugin) };
      },
      how === "apiKey" ? world.config : world.signIn,
    );
    const up = await stack.up({ color: "never" });
    const entity = world.emulator.bootstrap.entityId;
    for (const key of ["dynamic", "plugin"]) {
      expect(up.outputs[key]!.value).toMatchObject({ userId: admin.id, email: admin.email, entityId: entity });
    }
  });

  it("getApiKeyOptions signed in with a session: the API's roles and expiry choices; with only an API key, one clear error and no request", async () => {
    const program = async () => ({
      dynamic: await dynamic.getApiKeyOptions(),
      plugin: pulumi.output(plugin.getApiKeyOptionsOutput()),
    });
    const signedIn = await world.stack("quickstart", program, world.signIn);
    const up = await signedIn.up({ color: "never" });
    const session = new CloudClient({
      baseUrl: world.emulator.baseUrl,
      auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
    });
    const held = {
      roles: await session.apiKeyRoleOptions(),
      expirations: await session.apiKeyExpirationOptions(),
    };
    await session.close();
    expect(held.roles.map((r) => r.id).sort()).toEqual(["tenant-admin", "tenant-user", "vm-operator"]);
    expect(up.outputs.dynamic!.value).toEqual(held);
    expect(up.outputs.plugin!.value).toEqual(held);

    const keyOnly = await world.stack("quickstart", program, world.config);
    const mark = world.mark();
    const failure = failureOf(await keyOnly.up({ color: "never" }).catch((e: unknown) => e));
    expect(failure).toContain("getApiKeyOptions");
    expect(failure).toContain("needs a signed-in session with two-factor authentication");
    expect(failure).toContain("cloudinfra:totpSecret");
    expect((await world.requests(mark)).filter((r) => r.route?.startsWith("apiKey"))).toEqual([]);
  });
});
