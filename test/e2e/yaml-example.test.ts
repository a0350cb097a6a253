/**
 * examples/yaml through the real CLI and Pulumi's YAML language host, with the plugin taken from this package's
 * directory (`plugins: providers: path:`): up, preview and refresh with no changes, destroy, each checked against the
 * emulator. The program's lookup (cloudinfra:index:getVolumeSizes) sizes the volume; an explicit provider signed in
 * as the CI user makes the API key.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { beforeAll, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { pluginResources } from "../plugin/launcher";
import { cliWorld, gone } from "./helpers";
import { describeYaml, root, yamlProject } from "./yaml-host";

// Only the project's plugin entry may serve cloudinfra.
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
const world = await cliWorld();
const admin = world.emulator.bootstrap.users.admin;
const [fra] = world.datacenters;
const [firstType] = (await world.api.volumeSizes({ params: { id: fra!.id } })).volumeTypes;

describeYaml("examples/yaml through the real CLI", () => {
  let stack: Stack;
  let outputs: Record<string, unknown>;

  beforeAll(async () => {
    const project = yamlProject(world, fs.readFileSync(path.join(root, "examples", "yaml", "Pulumi.yaml"), "utf8"));
    stack = await world.stack(project, undefined, {
      ...world.config,
      name: "yx",
      datacenterId: fra!.id,
      ciEmail: admin.email,
      ciPassword: { secret: admin.password },
      ciTotpSecret: { secret: admin.totpSecret },
    });
  });

  it("up creates the network, the VM, the volume (a size the lookup found), the attachment and the CI key", async () => {
    const created = await stack.up({ color: "never" });
    expect(created.summary.result).toBe("succeeded");
    outputs = Object.fromEntries(Object.entries(created.outputs).map(([k, v]) => [k, v.value]));

    const network = await world.api.getNetwork({ params: { id: outputs.networkId as string } });
    expect(network).toMatchObject({ name: "yx-net", status: "Active", gateway: outputs.gateway });
    const vm = await world.api.getVm({ params: { id: outputs.vmId as string } });
    expect(vm).toMatchObject({ status: "Running", virtualMachine: { name: "yx-vm" } });
    const volume = await world.api.getVolume({ params: { id: outputs.volumeId as string } });
    expect(volume).toMatchObject({
      name: "yx-data",
      status: "In-use",
      virtualMachineId: outputs.vmId,
      sizeGb: firstType!.availableSizes[0]!.sizeGb,
    });
    expect(outputs.attachmentId).toBe(`${volume.id}:${outputs.vmId as string}`);

    // The key works, and belongs to the signed-in CI user; its secret is a secret output.
    expect(created.outputs.ciKey!.secret).toBe(true);
    const key = (await world.api.listApiKeys({ query: { limit: 100 } })).data.find((k) => k.id === outputs.ciKeyId);
    expect(key).toMatchObject({ name: "yx-ci", status: "Active", userId: admin.id });
    const probe = new CloudClient({ baseUrl: world.emulator.baseUrl, auth: { apiKey: outputs.ciKey as string } });
    await expect(probe.check()).resolves.toBeDefined();
    await probe.close();

    const resources = await pluginResources(stack);
    expect(resources.map((r) => r.type).sort()).toEqual(
      [
        "cloudinfra:index:ApiKey",
        "cloudinfra:index:Network",
        "cloudinfra:index:VirtualMachine",
        "cloudinfra:index:Volume",
        "cloudinfra:index:VolumeAttachment",
        "pulumi:providers:cloudinfra", // the default provider
        "pulumi:providers:cloudinfra", // ciUser
      ].sort(),
    );
    expect(resources.find((r) => r.type === "cloudinfra:index:ApiKey")?.provider).toMatch(
      /::pulumi:providers:cloudinfra::ciUser::/,
    );
  });

  it("preview and refresh find nothing to change, and refresh leaves the API as it was", async () => {
    const preview = await stack.preview({ color: "never", expectNoChanges: true });
    expect(Object.keys(preview.changeSummary)).toEqual(["same"]);
    const mark = world.mark();
    const refreshed = await stack.refresh({ color: "never", expectNoChanges: true });
    expect(refreshed.summary.result).toBe("succeeded");
    const writes = (await world.requests(mark)).filter((r) => r.method !== "GET" && r.route !== "queryJobs");
    // Only the explicit provider's sign-in (its session) writes; everything else is reads.
    expect(writes.map((r) => r.route).filter((r) => !["signIn", "verifyTotp", "signOut"].includes(r!))).toEqual([]);
  });

  it("destroy deletes everything from the API", async () => {
    const destroyed = await stack.destroy({ color: "never" });
    expect(Object.keys(destroyed.summary.resourceChanges ?? {})).toEqual(["delete"]);
    expect(await gone(() => world.api.getNetwork({ params: { id: outputs.networkId as string } }))).toBe(true);
    expect(await gone(() => world.api.getVm({ params: { id: outputs.vmId as string } }))).toBe(true);
    expect(await gone(() => world.api.getVolume({ params: { id: outputs.volumeId as string } }))).toBe(true);
    const keys = (await world.api.listApiKeys({ query: { limit: 100 } })).data;
    expect(keys.filter((k) => k.id === outputs.ciKeyId && k.status === "Active")).toEqual([]);
    expect((await pluginResources(stack)).filter((r) => r.type.startsWith("cloudinfra:"))).toEqual([]);
  });
});
