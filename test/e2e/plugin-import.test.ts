/**
 * What only a real provider can do, through the real CLI: `pulumi import` of resources made through the API (and the
 * next `up` of a program declaring them changes nothing), `Resource.get` of an existing one, an explicit provider
 * acting in a child entity beside the default provider, and a slow job's progress lines shown by `up`.
 */
import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { cliWorld, describeCli } from "./helpers";
import { PluginProvider, PluginResource, pluginResources, resource, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
const admin = world.emulator.bootstrap.users.admin;

/** Resources made through the API, outside any stack. */
async function madeThroughTheApi(prefix: string) {
  const network = await world.api.createNetwork({
    body: { name: `${prefix}-net`, datacenterId: fra!.id, networkType: "custom", cidrBlock: "10.60.0.0/24" },
  });
  await world.api.jobs.wait(network.jobId);
  const [vmJob] = await world.api.createVm({
    body: {
      name: `${prefix}-vm`,
      datacenterId: fra!.id,
      imageId: 1,
      configurationId: 1,
      networkInterfaces: [{ networkId: network.id, primary: true }],
    },
  });
  const vmId = (await world.api.jobs.wait(vmJob!.id)).resourceId!;
  const sizes = await world.api.volumeSizes({ params: { id: fra!.id } });
  const type = sizes.volumeTypes[0]!;
  const size = type.availableSizes[0]!;
  const volume = await world.api.createVolume({
    body: {
      name: `${prefix}-vol`,
      datacenterId: fra!.id,
      volumeTypeId: type.id,
      volumeSizeId: size.id,
      sizeGb: size.sizeGb,
    },
  });
  await world.api.jobs.wait(volume.jobId);
  const { teamId } = await world.api.createTeam({ body: { name: `${prefix}-group` } });
  const user = await world.api.createUser({
    body: { email: `${prefix}@example.com`, firstName: "Grace", lastName: "Import" },
  });
  return {
    ids: { net: network.id, vm: vmId, vol: volume.id, group: String(teamId), user: user.id },
    /** The program that declares them as they are. */
    program: async () => {
      const net = resource("Network", "net", {
        name: `${prefix}-net`,
        datacenterId: fra!.id,
        networkType: "custom",
        cidrBlock: "10.60.0.0/24",
      });
      resource("VirtualMachine", "vm", {
        name: `${prefix}-vm`,
        datacenterId: fra!.id,
        imageId: 1,
        configurationId: 1,
        networkInterfaces: [{ networkId: net.id, primary: true }],
      });
      resource("Volume", "vol", {
        name: `${prefix}-vol`,
        datacenterId: fra!.id,
        volumeTypeId: type.id,
        sizeGb: size.sizeGb,
      });
      resource("ResourceGroup", "group", { name: `${prefix}-group` });
      resource("User", "user", { email: `${prefix}@example.com`, firstName: "Grace", lastName: "Import" });
    },
  };
}

describeCli("the provider plugin: import, get, explicit providers, progress (real CLI)", () => {
  it("`pulumi import` takes over a Network, VM, Volume, ResourceGroup and User; the next up changes nothing", async () => {
    const made = await madeThroughTheApi("imp");
    const stack = await world.stack("quickstart", made.program, world.config);
    const kinds = { net: "Network", vm: "VirtualMachine", vol: "Volume", group: "ResourceGroup", user: "User" };
    await stack.import({
      resources: Object.entries(kinds).map(([name, kind]) => ({
        type: `cloudinfra:index:${kind}`,
        name,
        id: made.ids[name as keyof typeof made.ids],
      })),
      protect: false,
      generateCode: false,
    });
    const imported = await pluginResources(stack);
    for (const [name, id] of Object.entries(made.ids)) {
      expect(imported.find((r) => r.urn.endsWith(`::${name}`))?.id).toBe(id);
    }

    const up = await stack.up({ color: "never" });
    expect(Object.keys(up.summary.resourceChanges ?? {}).sort()).toEqual(["same"]);
    expect((await world.api.getNetwork({ params: { id: made.ids.net } })).name).toBe("imp-net");
    expect((await world.api.getVm({ params: { id: made.ids.vm } })).status).toBe("Running");

    await stack.destroy({ color: "never" });
    const left = await world.api.listNetworks({ query: { search: "imp-net" } });
    expect(left.data).toEqual([]);
  });

  it("Resource.get reads an existing network without managing it", async () => {
    const made = await world.api.createNetwork({
      body: { name: "got-net", datacenterId: fra!.id, networkType: "standard", description: "seen, not owned" },
    });
    await world.api.jobs.wait(made.jobId);
    const stack = await world.stack("quickstart", async () => {
      const seen = new PluginResource(
        "cloudinfra:index:Network",
        "seen",
        { name: undefined, description: undefined, status: undefined },
        { id: made.id },
      ) as pulumi.CustomResource & Record<string, pulumi.Output<unknown>>;
      return { name: seen.name, description: seen.description, status: seen.status };
    });
    const up = await stack.up({ color: "never" });
    expect(up.outputs.name?.value).toBe("got-net");
    expect(up.outputs.description?.value).toBe("seen, not owned");
    expect((await pluginResources(stack)).find((r) => r.urn.endsWith("::seen"))?.external).toBe(true);
    await stack.destroy({ color: "never" });
    expect((await world.api.getNetwork({ params: { id: made.id } })).name).toBe("got-net");
  });

  describe("an explicit provider for a child entity beside the default provider", () => {
    const child = world.emulator.bootstrap.childEntityId;
    const inChild = new CloudClient({
      baseUrl: world.emulator.baseUrl,
      auth: { apiKey: admin.apiKey },
      entityId: child,
    });
    afterAll(() => inChild.close());
    let stack: Stack;

    it("creates each network in its provider's entity", async () => {
      stack = await world.stack("quickstart", async () => {
        const research = new PluginProvider("research", {
          baseUrl: world.emulator.baseUrl,
          apiKey: pulumi.secret(admin.apiKey),
          entityId: child,
          pollIntervalMs: "20",
        });
        const main = resource("Network", "main-net", {
          name: "ep-main",
          datacenterId: fra!.id,
          networkType: "standard",
        });
        const other = resource(
          "Network",
          "child-net",
          { name: "ep-child", datacenterId: fra!.id, networkType: "standard" },
          [],
          { provider: research },
        );
        return { main: main.id, child: other.id };
      });
      const up = await stack.up({ color: "never" });
      const inMain = (await world.api.listNetworks({ query: { search: "ep-" } })).data.map((n) => n.name);
      const inResearch = (await inChild.listNetworks({ query: { search: "ep-" } })).data.map((n) => n.name);
      expect(inMain).toEqual(["ep-main"]);
      expect(inResearch).toEqual(["ep-child"]);
      expect((await inChild.getNetwork({ params: { id: up.outputs.child!.value as string } })).name).toBe("ep-child");
      const provider = (await pluginResources(stack)).find((r) => r.urn.endsWith("::research"));
      expect(JSON.stringify(provider?.inputs?.apiKey)).toContain("1b47061264138c4ac30d75fd1eb44270");
    });

    it("refresh reads each through its own provider, and destroy deletes both", async () => {
      await stack.preview({ color: "never", expectNoChanges: true });
      const refreshed = await stack.refresh({ color: "never" });
      expect(refreshed.summary.resourceChanges).not.toHaveProperty("delete");
      await stack.destroy({ color: "never" });
      expect((await inChild.listNetworks({ query: { search: "ep-" } })).data).toEqual([]);
      expect((await world.api.listNetworks({ query: { search: "ep-" } })).data).toEqual([]);
    });
  });
});

describeCli("the provider plugin: a slow job's progress in `up` (real CLI)", () => {
  it("shows the job's start, its progress and its end, with the resource", async () => {
    const slow = await cliWorld({ jobDurationMs: 3000 });
    const [dc] = slow.datacenters;
    const stack = await slow.stack(
      "quickstart",
      async () => {
        resource("VirtualMachine", "slow-vm", {
          name: "slow-vm",
          datacenterId: dc!.id,
          imageId: 1,
          configurationId: 1,
        });
      },
      { ...slow.config, "cloudinfra:progressIntervalMs": "500" },
    );
    const up = await stack.up({ color: "never" });
    const lines = up.stdout.split("\n").filter((l) => l.includes("job "));
    expect(lines.some((l) => /Creating VM "slow-vm".*job \S+ started/.test(l))).toBe(true);
    expect(lines.some((l) => /job \S+ (pending|in progress|running).*\d+%/i.test(l))).toBe(true);
    expect(lines.some((l) => /job \S+ completed/.test(l))).toBe(true);
    expect(up.stdout).toMatch(/cloudinfra:index:VirtualMachine \(slow-vm\):/);
    await stack.destroy({ color: "never" });

    // customTimeouts reach the provider: a create job longer than the resource's timeout fails naming the limit, and
    // the VM is recorded (not orphaned).
    const bounded = await slow.stack("quickstart", async () => {
      resource(
        "VirtualMachine",
        "bounded-vm",
        { name: "bounded-vm", datacenterId: dc!.id, imageId: 1, configurationId: 1 },
        [],
        {
          customTimeouts: { create: "1s" },
        },
      );
    });
    const error = await bounded.up({ color: "never" }).then(
      () => undefined,
      (e: unknown) => String(e),
    );
    expect(error).toContain("within 1000 ms");
    const recorded = (await pluginResources(bounded)).find((r) => r.urn.endsWith("::bounded-vm"));
    expect(recorded?.id).toBeTruthy();
    expect((await slow.api.getVm({ params: { id: recorded!.id! } })).virtualMachine.name).toBe("bounded-vm");
    await bounded.destroy({ color: "never" });
  });
});
