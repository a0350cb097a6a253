/**
 * What only a real provider can do, through the real CLI: `pulumi import` of resources made through the API (and the
 * next `up` of a program declaring them changes nothing), `Resource.get` of an existing one, an explicit provider
 * acting in a child entity beside the default provider, and a slow job's progress lines shown by `up`.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as cloudinfra from "@cloudinfra/pulumi/plugin";
import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { cliWorld, describeCli } from "./helpers";
import { pluginResources, resource, root, useLauncher } from "../plugin/launcher";

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
  return { net: network.id, vm: vmId, vol: volume.id, group: String(teamId), user: user.id };
}

/** Type-checks a program as its project would (strict), against the packages in its node_modules. */
function typeCheck(dir: string, file: string): void {
  const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
  const options = ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2022"];
  const checked = spawnSync(process.execPath, [tsc, ...options, "--module", "node16", file], {
    cwd: dir,
    encoding: "utf8",
  });
  expect(checked.stdout + checked.stderr, `tsc ${file}`).toBe("");
}

describeCli("the provider plugin: import, get, explicit providers, progress (real CLI)", () => {
  it("`pulumi import` takes over a Network, VM, Volume, ResourceGroup and User; its code is the program: the next up changes nothing", async () => {
    const made = await madeThroughTheApi("imp");
    // A user's project, its program still empty: `pulumi import` writes the program for what it imports.
    const project = fs.mkdtempSync(path.join(world.work, "import-"));
    fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: imported\nruntime: nodejs\n");
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "imported", main: "index.ts" }));
    fs.writeFileSync(path.join(project, "index.ts"), "export {};\n");
    const stack = await world.stack(project);
    const kinds = { net: "Network", vm: "VirtualMachine", vol: "Volume", group: "ResourceGroup", user: "User" };
    const sinceImport = world.mark();
    const result = await stack.import({
      resources: Object.entries(kinds).map(([name, kind]) => ({
        type: `cloudinfra:index:${kind}`,
        name,
        id: made[name as keyof typeof made],
      })),
      protect: false,
      generateCode: true,
    });
    const imported = await pluginResources(stack);
    for (const [name, id] of Object.entries(made)) {
      expect(imported.find((r) => r.urn.endsWith(`::${name}`))?.id).toBe(id);
    }

    // The code imports the plugin's SDK under the name `pulumi package add` installs it as (the schema's Node.js
    // package name), and declares each resource with the values the API holds.
    const code = result.generatedCode;
    expect(code).toContain('import * as cloudinfra from "@cloudinfra/pulumi-plugin";');
    for (const [name, kind] of Object.entries(kinds)) expect(code).toContain(`new cloudinfra.${kind}("${name}", {`);
    expect(code).toContain('name: "imp-net"');
    // The VM's interface as its input declares it (the API's NIC also has an id and an address), on the imported network.
    expect(code).toMatch(/networkInterfaces: \[\{\s*networkId: net\.id,\s*primary: true,?\s*\}\]/);
    // The project has the packages installed (@cloudinfra/pulumi-plugin beside @cloudinfra/pulumi; from their
    // tarballs in test/e2e/plugin-sdk-package.test.ts): the code, unchanged, is the program, and type-checks.
    const dir = stack.workspace.workDir;
    fs.writeFileSync(path.join(dir, "index.ts"), code);
    typeCheck(dir, "index.ts");

    await stack.preview({ color: "never", expectNoChanges: true });
    const up = await stack.up({ color: "never" });
    expect(Object.keys(up.summary.resourceChanges ?? {}).sort()).toEqual(["same"]);
    // Imported inputs carry no exposePrivateKey: the VM's SSH key is never read (issue 18).
    expect((await world.requests(sinceImport)).filter((r) => r.route === "getVmSshKey")).toEqual([]);
    expect((await world.api.getNetwork({ params: { id: made.net } })).name).toBe("imp-net");
    expect((await world.api.getVm({ params: { id: made.vm } })).status).toBe("Running");

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
      const seen = cloudinfra.Network.get("seen", made.id);
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
        const research = new cloudinfra.Provider("research", {
          baseUrl: world.emulator.baseUrl,
          apiKey: pulumi.secret(admin.apiKey),
          entityId: child,
          pollIntervalMs: 20,
        });
        const main = new cloudinfra.Network("main-net", {
          name: "ep-main",
          datacenterId: fra!.id,
          networkType: "standard",
        });
        const other = new cloudinfra.Network(
          "child-net",
          { name: "ep-child", datacenterId: fra!.id, networkType: "standard" },
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
