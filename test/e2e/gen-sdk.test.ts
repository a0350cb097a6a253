/**
 * `pulumi package gen-sdk` on the plugin's schema, with the real CLI: the TypeScript SDK it generates compiles and
 * manages resources through the plugin (checked against the emulator); the Python and Go SDKs are generated (running
 * them needs those languages' own hosts).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { expect, it } from "vitest";
import { root, useLauncher } from "../plugin/launcher";
import { cliWorld, describeCli, type CliWorld } from "./helpers";

useLauncher();
const world: CliWorld = await cliWorld();
const [fra] = world.datacenters;
const schema = path.join(root, "provider", "plugin", "schema.json");
const version = (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }).version;

/** Runs `pulumi package gen-sdk` for one language into `<work>/sdk/<language>`, and returns that directory. */
function genSdk(language: string): string {
  const out = path.join(world.work, "sdk");
  execFileSync("pulumi", ["package", "gen-sdk", schema, "--language", language, "--out", out], {
    env: { ...process.env, PULUMI_HOME: path.join(world.work, "home"), PULUMI_SKIP_UPDATE_CHECK: "true" },
    stdio: "pipe",
  });
  return path.join(out, language);
}

/** The generated TypeScript SDK as a typed module (the parts used here). */
interface GeneratedSdk {
  Network: new (name: string, args: Record<string, unknown>) => { id: unknown; gateway: unknown };
  ResourceGroup: new (name: string, args: Record<string, unknown>) => { id: unknown; teamId: unknown };
}

describeCli("pulumi package gen-sdk on the plugin's schema", () => {
  it("generates Python and Go SDKs with a class per kind", () => {
    const python = genSdk("python");
    const pythonModule = path.join(python, "pulumi_cloudinfra");
    for (const file of ["network.py", "virtual_machine.py", "volume_attachment.py", "get_gpu_inventory.py"]) {
      expect(fs.existsSync(path.join(pythonModule, file)), file).toBe(true);
    }
    expect(fs.readFileSync(path.join(pythonModule, "network.py"), "utf8")).toContain(
      "class Network(pulumi.CustomResource)",
    );

    const go = genSdk("go");
    const network = fs.readFileSync(path.join(go, "cloudinfra", "network.go"), "utf8");
    expect(network).toContain("func NewNetwork(");
    expect(network).toContain('"cloudinfra:index:Network"');
  });

  it("generates a TypeScript SDK that compiles and manages resources through the plugin", async () => {
    const dir = genSdk("nodejs");
    // as a provider's release build does: the version in, tsc, the manifest beside the output
    const manifest = path.join(dir, "package.json");
    fs.writeFileSync(manifest, fs.readFileSync(manifest, "utf8").replace("${VERSION}", version));
    fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
    execFileSync(process.execPath, [path.join(root, "node_modules", "typescript", "bin", "tsc"), "-p", dir], {
      stdio: "pipe",
    });
    fs.copyFileSync(manifest, path.join(dir, "bin", "package.json"));
    const sdk = createRequire(__filename)(path.join(dir, "bin")) as GeneratedSdk;

    const stack = await world.stack("quickstart", async () => {
      const network = new sdk.Network("net", { name: "gen-net", datacenterId: fra.id, networkType: "standard" });
      const group = new sdk.ResourceGroup("group", { name: "gen-group" });
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
