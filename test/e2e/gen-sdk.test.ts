/**
 * `pulumi package gen-sdk` on the plugin's schema, with the real CLI: the TypeScript SDK it generates is the package
 * `@cloudinfra/pulumi-plugin` (the workspace sdk/plugin, re-exported as `@cloudinfra/pulumi/plugin`; the committed copy,
 * package.json included, must be what gen-sdk makes now), and it manages
 * resources through the plugin (checked against the emulator); the Python and Go SDKs are generated (running them
 * needs those languages' own hosts).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as cloudinfra from "@cloudinfra/pulumi/plugin";
import { expect, it } from "vitest";
import { filesUnder, genSdk, pluginSdkDirectory, pluginSdkFiles } from "../../tools/plugin-sdk";
import { useLauncher } from "../plugin/launcher";
import { cliWorld, describeCli, type CliWorld } from "./helpers";

useLauncher();
const world: CliWorld = await cliWorld();
const [fra] = world.datacenters;

describeCli("pulumi package gen-sdk on the plugin's schema", () => {
  it("generates Python and Go SDKs with a class per kind", () => {
    const python = genSdk("python", world.work);
    const pythonModule = path.join(python, "pulumi_cloudinfra");
    for (const file of ["network.py", "virtual_machine.py", "volume_attachment.py", "get_gpu_inventory.py"]) {
      expect(fs.existsSync(path.join(pythonModule, file)), file).toBe(true);
    }
    expect(fs.readFileSync(path.join(pythonModule, "network.py"), "utf8")).toContain(
      "class Network(pulumi.CustomResource)",
    );

    const go = genSdk("go", world.work);
    const network = fs.readFileSync(path.join(go, "cloudinfra", "network.go"), "utf8");
    expect(network).toContain("func NewNetwork(");
    expect(network).toContain('"cloudinfra:index:Network"');
  });

  it("the shipped @cloudinfra/pulumi-plugin is what gen-sdk makes of the schema now (npm run plugin-sdk)", () => {
    const committed = filesUnder(pluginSdkDirectory());
    const generated = pluginSdkFiles(world.work);
    expect([...committed.keys()].sort()).toEqual([...generated.keys()].sort());
    for (const [file, content] of generated) expect(committed.get(file), `sdk/plugin/${file}`).toBe(content);
  });

  it("the shipped TypeScript SDK manages resources through the plugin", async () => {
    const stack = await world.stack("quickstart", async () => {
      const network = new cloudinfra.Network("net", { name: "gen-net", datacenterId: fra.id, networkType: "standard" });
      const group = new cloudinfra.ResourceGroup("group", { name: "gen-group" });
      return { networkId: network.id, gateway: network.gateway, teamId: group.teamId };
    });
    const created = await stack.up({ color: "never" });
    const networkId = created.outputs.networkId.value as string;
    const network = await world.api.getNetwork({ params: { id: networkId } });
    expect(network.name).toBe("gen-net");
    expect(created.outputs.gateway.value).toBe(network.gateway);
    const group = await world.api.getTeam({ params: { id: created.outputs.teamId.value as number } });
    expect(group.name).toBe("gen-group");
    await stack.preview({ color: "never", expectNoChanges: true });

    await stack.destroy({ color: "never" });
    await expect(world.api.getNetwork({ params: { id: networkId } })).rejects.toMatchObject({ status: 404 });
  });
});
