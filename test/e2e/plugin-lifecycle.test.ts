/**
 * The provider plugin through the real CLI, beside the lifecycle table (test/lifecycle/cli-plugin.test.ts: every kind
 * created, unchanged, refreshed, changed, replaced, destroyed): secrets encrypted in the state, `preview --diff` shows
 * property-level changes with replace markers, a wrong key fails preview naming cloudinfra:apiKey.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { CommandError, type Stack } from "@pulumi/pulumi/automation";
import { beforeAll, describe, expect, it } from "vitest";
import { cliWorld, describeCli, gone } from "./helpers";
import { pluginResources, resource, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
/** A GPU combination the emulator offers now. */
const gpuOffer = (await world.api.gpuInventory({ query: {} })).flatMap((s) =>
  s.availability.flatMap((a) =>
    ([1, 2, 4, 8] as const)
      .filter((n) => a.gpuCounts[n].available)
      .map((n) => ({ seriesId: s.seriesId, datacenterId: a.datacenterId, gpuCount: n })),
  ),
)[0]!;

/** Every kind, wired as a user would: network → VM → volume + attachment, group → user, API key. */
async function everyKind() {
  const config = new pulumi.Config("app");
  const prefix = config.require("prefix");
  const network = resource("Network", "net", {
    name: `${prefix}-net`,
    datacenterId: fra!.id,
    networkType: "custom",
    cidrBlock: "10.50.0.0/24",
    description: config.get("description") ?? "plugin",
  });
  const vm = resource("VirtualMachine", "vm", {
    name: `${prefix}-vm`,
    datacenterId: fra!.id,
    imageId: config.getNumber("imageId") ?? 1,
    configurationId: 1,
    networkInterfaces: [{ networkId: network.id, primary: true }],
    exposePrivateKey: true,
  });
  // No `exposePrivateKey`: its key is not read.
  const gpu = resource("GpuVirtualMachine", "gpu", { name: `${prefix}-gpu`, ...gpuOffer });
  const volume = resource("Volume", "vol", {
    name: `${prefix}-vol`,
    datacenterId: fra!.id,
    volumeTypeId: 1,
    sizeGb: 50,
  });
  const attachment = resource("VolumeAttachment", "att", { volumeId: volume.id, virtualMachineId: vm.id });
  const group = resource("ResourceGroup", "group", { name: `${prefix}-group` });
  const user = resource("User", "user", { email: `${prefix}@example.com`, firstName: "Ada", lastName: "Plugin" });
  const key = resource("ApiKey", "key", { name: `${prefix}-key`, expiresInDays: 30 }, ["key"]);
  return {
    networkId: network.id,
    vmId: vm.id,
    gpuId: gpu.id,
    volumeId: volume.id,
    attachmentId: attachment.id,
    groupId: group.id,
    userId: user.id,
    keyId: key.id,
    key: key.key,
  };
}

describeCli("the provider plugin through the real CLI", () => {
  describe("every kind: up, preview, refresh, destroy", () => {
    let stack: Stack;
    let ids: Record<string, string>;
    let sinceUp: number;

    beforeAll(async () => {
      stack = await world.stack("quickstart", everyKind, {
        ...world.config,
        // An API key is created by a signed-in user: the sign-in settings sit beside the API key.
        ...world.signIn,
        "app:prefix": "pl",
      });
      sinceUp = world.mark();
      const result = await stack.up({ color: "never" });
      ids = Object.fromEntries(Object.entries(result.outputs).map(([k, v]) => [k, v.value as string]));
    });

    it("keeps the API key's secret and the provider's apiKey encrypted in the state", async () => {
      const resources = await pluginResources(stack);
      const secret = (value: unknown) => JSON.stringify(value).includes("1b47061264138c4ac30d75fd1eb44270");
      expect(secret(resources.find((r) => r.type === "pulumi:providers:cloudinfra")?.inputs?.apiKey)).toBe(true);
      expect(secret(resources.find((r) => r.type === "cloudinfra:index:ApiKey")?.outputs?.key)).toBe(true);
      expect(secret(resources.find((r) => r.type === "cloudinfra:index:VirtualMachine")?.outputs?.sshPrivateKey)).toBe(
        true,
      );
      // The VM asks for its key (exposePrivateKey), the GPU VM does not: one ssh-key request, none for the GPU VM.
      expect(resources.find((r) => r.type === "cloudinfra:index:GpuVirtualMachine")?.outputs).not.toHaveProperty(
        "sshPrivateKey",
      );
      const keyReads = (await world.requests(sinceUp)).filter((r) => r.path.endsWith("/ssh-key")).map((r) => r.route);
      expect(keyReads).toEqual(["getVmSshKey"]);
      // The backend's own file holds them encrypted only.
      const files = fs.readdirSync(path.join(world.work, "backend"), { recursive: true, encoding: "utf8" });
      const state = files
        .filter((f) => f.endsWith(".json"))
        .map((f) => fs.readFileSync(path.join(world.work, "backend", f), "utf8"))
        .join("\n");
      expect(state).toContain("cloudinfra:index:ApiKey");
      expect(state).not.toContain(world.emulator.bootstrap.users.admin.apiKey);
      expect(state).not.toContain(world.emulator.bootstrap.users.admin.totpSecret);
    });

    it("preview --diff shows the property changes and marks the replacement", async () => {
      await stack.setConfig("app:description", { value: "changed" });
      await stack.setConfig("app:imageId", { value: "2" });
      const preview = await stack.preview({ color: "never", diff: true });
      // The VM is replaced, and with it the attachment that names it.
      expect(preview.changeSummary).toMatchObject({ update: 1, replace: 2 });
      expect(preview.stdout).toMatch(/~ description\s*:\s*"plugin" => "changed"/);
      expect(preview.stdout).toMatch(/~ imageId\s*:\s*1 => 2/);
      expect(preview.stdout).toMatch(/\+-.*cloudinfra:index:VirtualMachine/);
      expect((await world.api.getNetwork({ params: { id: ids.networkId! } })).description).toBe("plugin");
      await stack.removeConfig("app:description");
      await stack.removeConfig("app:imageId");
    });

    it("destroy deletes everything from the API", async () => {
      await stack.destroy({ color: "never" });
      expect(await gone(() => world.api.getNetwork({ params: { id: ids.networkId! } }))).toBe(true);
      expect(await gone(() => world.api.getVm({ params: { id: ids.vmId! } }))).toBe(true);
      expect(await gone(() => world.api.getVolume({ params: { id: ids.volumeId! } }))).toBe(true);
      expect(await pluginResources(stack).then((r) => r.filter((x) => x.type.startsWith("cloudinfra:")))).toEqual([]);
    });
  });

  it("preview fails on a refused key, naming cloudinfra:apiKey, and creates nothing", async () => {
    const stack = await world.stack(
      "quickstart",
      async () => {
        resource("Network", "net", { name: "refused-net", datacenterId: fra!.id, networkType: "standard" });
      },
      { ...world.config, "cloudinfra:apiKey": { secret: "svc_00000000000000000000000000000000" } },
    );
    const error = await stack.preview({ color: "never" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CommandError);
    expect(String(error)).toContain("cloudinfra:apiKey");
    expect(String(error)).not.toContain("svc_00000000000000000000000000000000");
    const networks = await world.api.listNetworks({ query: { search: "refused-net" } });
    expect(networks.data).toEqual([]);
  });
});
