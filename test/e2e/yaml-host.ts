/**
 * Pulumi YAML programs through the real CLI and Pulumi's own YAML language host (`pulumi-language-yaml`, built by
 * `npm run cli`): the host's version, a describe block named with it, and YAML projects whose `plugins: providers:`
 * entry names this package's directory. With `CLOUDINFRA_REQUIRE_CLI=1` a missing YAML host fails the suites.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe } from "vitest";
import { yamlHostVersion } from "../../tools/pulumi-cli";
import { cliVersion, type CliWorld } from "./helpers";

/** The repository root: the package directory the YAML projects take the plugin from. */
export const root = path.resolve(__dirname, "../..");

/** The version of the YAML language host next to the CLI, if any (none without a CLI). */
export const yamlVersion = cliVersion === undefined ? undefined : yamlHostVersion();

const skipReason =
  cliVersion === undefined
    ? "no `pulumi` CLI on PATH and none built: build it with `npm run cli` (needs Go; .ci/run does)"
    : "no `pulumi-language-yaml` next to the CLI: `npm run cli` builds it";

if (yamlVersion === undefined && process.env.CLOUDINFRA_REQUIRE_CLI === "1") {
  throw new Error(`CLOUDINFRA_REQUIRE_CLI=1 but ${skipReason}`);
}

/** A describe block run by Pulumi's YAML host, named with the CLI's and the host's versions; skipped without them. */
export function describeYaml(name: string, body: () => void): void {
  describe.skipIf(yamlVersion === undefined)(
    yamlVersion === undefined
      ? `${name} — skipped: ${skipReason}`
      : `${name} (pulumi ${cliVersion}, pulumi-language-yaml ${yamlVersion})`,
    body,
  );
}

/**
 * A directory in the world's scratch space holding `Pulumi.yaml` (the text given), with its `plugins: providers:`
 * entry's `path:` set to `pluginDir` (default: this package's directory), for {@link CliWorld.stack}.
 */
export function yamlProject(world: CliWorld, pulumiYaml: string, pluginDir: string = root): string {
  if (!/^\s+path: .*$/m.test(pulumiYaml)) throw new Error("the YAML project names no plugin `path:`");
  const dir = fs.mkdtempSync(path.join(world.work, "yaml-"));
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), pulumiYaml.replace(/^(\s+path:) .*$/m, `$1 ${pluginDir}`));
  return dir;
}
