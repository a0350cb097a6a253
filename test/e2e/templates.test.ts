/**
 * The `pulumi new` templates (templates/typescript, templates/yaml) through the real CLI, as a user takes them: the
 * commands of each template's README run as written (`pulumi new <template dir> --yes`, the base URL on the command
 * line, the package and its plugin SDK installed from the packed tarballs of this build, the API key set as a secret) but for the final
 * `pulumi up`, which the test runs, then `pulumi destroy`, each checked against what the emulator holds.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { beforeAll, expect, it } from "vitest";
import { cliEnvironment } from "../../tools/pulumi-cli";
import { codeBlocks } from "../readme/blocks";
import { packed, tarballOf } from "../helpers/packed";
import { cliWorld, describeCli, gone, recordRuns } from "./helpers";
import { yamlVersion } from "./yaml-host";

const root = path.resolve(__dirname, "../..");
const world = await cliWorld();
const backend = path.join(world.work, "backend");
// Only the project's plugin entry may serve cloudinfra (the YAML template's `plugins: providers: path:`).
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";

/** The version of a package the repository has installed, so that npm finds it in its cache. */
const installed = (name: string) =>
  (JSON.parse(fs.readFileSync(path.join(root, "node_modules", name, "package.json"), "utf8")) as { version: string })
    .version;

/** npm, offline as far as its cache allows, quiet. */
const npmEnv = { npm_config_prefer_offline: "true", npm_config_audit: "false", npm_config_fund: "false" };

let tarballs: { main: string; pluginSdk: string };

beforeAll(async () => {
  // The package and its plugin SDK as the README has a user make them: `npm run pack-all` of the build (dist/ is this
  // worktree's `npm run build`), packed once for every suite (test/helpers/packed.ts).
  const pack = await packed();
  tarballs = {
    main: tarballOf(pack, "@cloudinfra/pulumi").file,
    pluginSdk: tarballOf(pack, "@cloudinfra/pulumi-plugin").file,
  };
}, 120_000);

/**
 * Runs the commands of a template's README (its `sh` block with `pulumi new`) but the last, `pulumi up`, in
 * the scratch directory: with this checkout, the packed tarballs, the emulator's URL and the admin's API key for the
 * placeholders, `project` for `my-app`, and `@pulumi/pulumi` at the version this repository has (in npm's cache).
 * Returns the new project's directory.
 */
function runReadme(template: string, project: string): string {
  const readme = fs.readFileSync(path.join(root, "templates", template, "README.md"), "utf8");
  const block = codeBlocks(readme).find((b) => b.lang === "sh" && /^pulumi new /m.test(b.code));
  if (block === undefined) throw new Error(`templates/${template}/README.md has no \`sh\` block with pulumi new`);
  const lines = block.code.split("\n").filter((l) => l.trim() !== "");
  expect(lines.at(-1)).toBe("pulumi up");
  const placeholders: [string | RegExp, string][] = [
    ["/path/to/pulumi-cloudinfra", root],
    ["/path/to/cloudinfra-pulumi-0.1.0.tgz", tarballs.main],
    ["/path/to/cloudinfra-pulumi-plugin-0.1.0.tgz", tarballs.pluginSdk],
    ["https://api.example.com/v1", world.emulator.baseUrl],
    ["svc_...", world.emulator.bootstrap.users.admin.apiKey],
    ["my-app", project],
    [/@pulumi\/pulumi(?=\s|$)/, `@pulumi/pulumi@${installed("@pulumi/pulumi")}`],
  ];
  let script = lines.slice(0, -1).join("\n");
  for (const [placeholder, value] of placeholders) {
    if (typeof placeholder === "string") {
      expect(script, `templates/${template}/README.md`).toContain(placeholder);
      script = script.replaceAll(placeholder, value);
    } else script = script.replace(new RegExp(placeholder, "g"), value);
  }
  const dir = path.join(world.work, project);
  const result = spawnSync("bash", ["-eo", "pipefail", "-c", script], {
    cwd: world.work,
    env: { ...process.env, ...cliEnvironment(backend, dir), ...npmEnv },
    encoding: "utf8",
    timeout: 600_000,
  });
  expect(result.status, `templates/${template}/README.md:\n${script}\n${result.stdout}\n${result.stderr}`).toBe(0);
  return dir;
}

/** The new project's stack `dev` through the Automation API, with the CLI's environment. */
async function devStack(dir: string): Promise<Stack> {
  const stack = await LocalWorkspace.selectStack(
    { stackName: "dev", workDir: dir },
    { workDir: dir, envVars: cliEnvironment(backend, dir) },
  );
  recordRuns(stack);
  return stack;
}

/** What the README's commands made: the template's files with the project's name, the settings in the stack's config. */
function expectNewProject(dir: string, project: string): void {
  const pulumiYaml = fs.readFileSync(path.join(dir, "Pulumi.yaml"), "utf8");
  expect(pulumiYaml).toMatch(new RegExp(`^name: ${project}$`, "m"));
  expect(pulumiYaml).not.toMatch(/^template:/m); // the prompts are the template's, not the project's
  expect(pulumiYaml).not.toContain("${PROJECT}");
  const stackYaml = fs.readFileSync(path.join(dir, "Pulumi.dev.yaml"), "utf8");
  expect(stackYaml).toContain(`cloudinfra:baseUrl: ${world.emulator.baseUrl}`);
  // The API key is stored encrypted, never in clear.
  expect(stackYaml).toMatch(/cloudinfra:apiKey:\s+secure: /);
  expect(stackYaml).not.toContain(world.emulator.bootstrap.users.admin.apiKey);
}

describeCli("`pulumi new` from the templates, then up and destroy", () => {
  it("typescript: a network and a VM on it, in the API after up, gone after destroy", async () => {
    const project = "tpl-ts";
    try {
      const dir = runReadme("typescript", project);
      expectNewProject(dir, project);
      // `pulumi new` installed the template's own dependencies (Pulumi), the README's `npm install` the package.
      expect(fs.existsSync(path.join(dir, "node_modules", "@pulumi", "pulumi", "package.json"))).toBe(true);
      expect(fs.existsSync(path.join(dir, "node_modules", "@cloudinfra", "pulumi", "package.json"))).toBe(true);
      // The program type-checks against the installed package, as `pulumi up` would compile it.
      const tsc = spawnSync(
        process.execPath,
        [path.join(dir, "node_modules", "typescript", "bin", "tsc"), "--noEmit"],
        {
          cwd: dir,
          encoding: "utf8",
        },
      );
      expect(tsc.stdout + tsc.stderr).toBe("");

      const stack = await devStack(dir);
      const up = await stack.up({ color: "never" });
      expect(up.summary.result).toBe("succeeded");
      expect(up.summary.resourceChanges).toEqual({ create: 3 }); // the stack, the network, the VM (dynamic resources)
      const network = await world.api.getNetwork({ params: { id: up.outputs.networkId!.value as string } });
      expect(network).toMatchObject({ name: `${project}-net`, status: "Active", gateway: up.outputs.gateway!.value });
      const vm = await world.api.getVm({ params: { id: up.outputs.vmId!.value as string } });
      expect(vm).toMatchObject({ status: "Running", virtualMachine: { name: `${project}-vm` } });

      const destroyed = await stack.destroy({ color: "never" });
      expect(destroyed.summary.result).toBe("succeeded");
      expect(await gone(() => world.api.getNetwork({ params: { id: network.id } }))).toBe(true);
      expect(await gone(() => world.api.getVm({ params: { id: vm.virtualMachine.id } }))).toBe(true);
    } finally {
      // Its node_modules is large: removed here, within the test's time, not by the suite's last hook.
      fs.rmSync(path.join(world.work, project), { recursive: true, force: true });
    }
  }, 600_000);

  it.skipIf(yamlVersion === undefined)(
    "yaml: a network and a volume of a size the lookup found, in the API after up, gone after destroy",
    async () => {
      const project = "tpl-yaml";
      try {
        const dir = runReadme("yaml", project);
        expectNewProject(dir, project);
        expect(fs.existsSync(path.join(dir, "node_modules", "@cloudinfra", "pulumi", "PulumiPlugin.yaml"))).toBe(true);

        const stack = await devStack(dir);
        const up = await stack.up({ color: "never" });
        expect(up.summary.result).toBe("succeeded");
        const network = await world.api.getNetwork({ params: { id: up.outputs.networkId!.value as string } });
        expect(network).toMatchObject({ name: `${project}-net`, status: "Active", gateway: up.outputs.gateway!.value });
        const [fra] = world.datacenters;
        const [firstType] = (await world.api.volumeSizes({ params: { id: fra!.id } })).volumeTypes;
        const volume = await world.api.getVolume({ params: { id: up.outputs.volumeId!.value as string } });
        expect(volume).toMatchObject({ name: `${project}-data`, sizeGb: firstType!.availableSizes[0]!.sizeGb });

        const destroyed = await stack.destroy({ color: "never" });
        expect(destroyed.summary.result).toBe("succeeded");
        expect(await gone(() => world.api.getNetwork({ params: { id: network.id } }))).toBe(true);
        expect(await gone(() => world.api.getVolume({ params: { id: volume.id } }))).toBe(true);
      } finally {
        fs.rmSync(path.join(world.work, project), { recursive: true, force: true });
      }
    },
    600_000,
  );
});
