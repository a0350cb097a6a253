/**
 * The Go SDK in the repository (sdk/go, the module github.com/cloudinfra/pulumi-cloudinfra/sdk/go) is what
 * `npm run plugin-sdk` makes now: gen-sdk's Go SDK of the schema, with a go.mod requiring the Pulumi Go SDK of the
 * CLI's version and its go.sum. Regenerated here with the real CLI and compared file by file; and its resources ask the
 * engine for the plugin of the package's version.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { expect, it } from "vitest";
import { filesUnder, goModulePath, goSdkDirectory, goSdkFiles, pulumiGoSdkVersion } from "../../tools/plugin-sdk";
import { cliWorld, describeCli } from "./helpers";

const world = await cliWorld();
const root = path.resolve(__dirname, "../..");

describeCli("sdk/go, the Go SDK of the plugin's schema", () => {
  it("is what npm run plugin-sdk makes of the schema now (gen-sdk, go.mod, go.sum)", () => {
    const committed = filesUnder(goSdkDirectory());
    const generated = goSdkFiles(world.work);
    expect([...committed.keys()].sort()).toEqual([...generated.keys()].sort());
    for (const [file, content] of generated) expect(committed.get(file), `sdk/go/${file}`).toBe(content);
  });

  it("is the module the schema names, on the CLI's Pulumi Go SDK, asking for the plugin of this package's version", () => {
    const goMod = fs.readFileSync(path.join(goSdkDirectory(), "go.mod"), "utf8");
    expect(goMod).toMatch(new RegExp(`^module ${goModulePath().replaceAll(".", "\\.")}$`, "m"));
    expect(goMod).toContain(`github.com/pulumi/pulumi/sdk/v3 ${pulumiGoSdkVersion()}\n`);
    const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
    const plugin = JSON.parse(fs.readFileSync(path.join(goSdkDirectory(), "cloudinfra", "pulumi-plugin.json"), "utf8"));
    expect(plugin).toEqual({ resource: true, name: "cloudinfra", version });
    const utilities = fs.readFileSync(
      path.join(goSdkDirectory(), "cloudinfra", "internal", "pulumiUtilities.go"),
      "utf8",
    );
    expect(utilities).toContain(`version := semver.MustParse("${version}")`);
  });
});
