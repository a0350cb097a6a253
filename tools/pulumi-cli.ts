/**
 * Running this repository's example projects with the real `pulumi` CLI (through the Automation API), without
 * installing anything: shared by `npm run demo` and the CLI end-to-end suites (test/e2e). The CLI is the one
 * `npm run cli` builds (put its directory on PATH: `PATH="$(npm run --silent cli | tail -1):$PATH"`).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { LocalWorkspace, type PulumiFn, type Stack } from "@pulumi/pulumi/automation";

/** The repository root (the directory holding this package's package.json and node_modules). */
export function repositoryRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "node_modules"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`cannot find the repository root above ${from}`);
  }
}

/** The `pulumi` CLI's version when one is on PATH, else undefined. */
export function pulumiCliVersion(): string | undefined {
  const found = spawnSync("pulumi", ["version"], { encoding: "utf8", timeout: 30_000 });
  return found.status === 0 ? found.stdout.trim() : undefined;
}

/**
 * The directory where `npm run cli` (cli/build.sh) puts the pinned CLI, the language host and the launcher: the same
 * cache, keyed by the version that cli/go.mod pins.
 */
export function builtCliDirectory(root: string = repositoryRoot()): string {
  const goMod = fs.readFileSync(path.join(root, "cli", "go.mod"), "utf8");
  const version = /github\.com\/pulumi\/pulumi\/pkg\/v3 (v\S+)/.exec(goMod)?.[1];
  if (version === undefined) throw new Error("cli/go.mod pins no github.com/pulumi/pulumi/pkg/v3");
  const cache =
    process.env.CLOUDINFRA_CLI_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "cloudinfra", "pulumi-cli");
  return path.join(cache, version);
}

/**
 * The `pulumi` CLI to use: the one on PATH, else the one `npm run cli` built (its directory is then put first on this
 * process's PATH, for the Automation API and the plugins it starts). With `build`, a machine with Go but no CLI
 * builds it first (cli/build.sh, a few minutes the first time). Its version, or undefined when there is none.
 */
export function usePulumiCli(options: { build?: boolean } = {}): string | undefined {
  const onPath = pulumiCliVersion();
  if (onPath !== undefined) return onPath;
  const root = repositoryRoot();
  const built = builtCliDirectory(root);
  if (!fs.existsSync(path.join(built, "pulumi")) && options.build === true && hasGo()) {
    const build = spawnSync("bash", [path.join(root, "cli", "build.sh")], { stdio: ["ignore", "ignore", "inherit"] });
    if (build.status !== 0) return undefined;
  }
  if (!fs.existsSync(path.join(built, "pulumi"))) return undefined;
  process.env.PATH = `${built}${path.delimiter}${process.env.PATH ?? ""}`;
  return pulumiCliVersion();
}

function hasGo(): boolean {
  return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

/**
 * Copies a project directory (a Pulumi program or a policy pack: every file, not its node_modules) into `parent`,
 * and gives it the node_modules an `npm install` would: this package (`@cloudinfra/pulumi`, its `dist/` linked, as
 * the examples' `file:../..` dependency links it) and every package of the repository's own node_modules, linked.
 * With `install: "copy"`, this package's `dist/` and `@pulumi/pulumi` are copied instead, as an install from the
 * registry lays them out: their real paths go through node_modules (what Pulumi's closure serializer looks at to
 * write a module's exports as a `require` by package name). Returns the copy's directory.
 */
export function prepareProject(
  source: string,
  parent: string,
  root: string = repositoryRoot(),
  options: { install?: "link" | "copy" } = {},
): string {
  const copy = options.install === "copy";
  const dir = path.join(parent, path.basename(source));
  fs.cpSync(source, dir, { recursive: true, filter: (file) => path.basename(file) !== "node_modules" });
  const modules = path.join(dir, "node_modules");
  fs.mkdirSync(modules);
  const installed = path.join(root, "node_modules");
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { name: string };
  const [scope] = manifest.name.split("/");
  for (const entry of fs.readdirSync(installed)) {
    if (entry.startsWith(".") || entry === scope) continue;
    if (copy && entry === "@pulumi") {
      fs.mkdirSync(path.join(modules, entry));
      for (const inner of fs.readdirSync(path.join(installed, entry))) {
        const from = path.join(installed, entry, inner);
        const to = path.join(modules, entry, inner);
        if (inner === "pulumi") fs.cpSync(from, to, { recursive: true });
        else fs.symlinkSync(from, to, "dir");
      }
    } else fs.symlinkSync(path.join(installed, entry), path.join(modules, entry), "dir");
  }
  // The package itself: its manifest (for the `exports` map) and its build. Only dist/ is linked, not the repository,
  // so the CLI's scan of node_modules does not walk into the repository's own node_modules.
  const self = path.join(modules, ...manifest.name.split("/"));
  fs.mkdirSync(self, { recursive: true });
  fs.copyFileSync(path.join(root, "package.json"), path.join(self, "package.json"));
  if (copy) fs.cpSync(path.join(root, "dist"), path.join(self, "dist"), { recursive: true });
  else fs.symlinkSync(path.join(root, "dist"), path.join(self, "dist"), "dir");
  // The repository's other packages in the scope (its workspaces, e.g. @cloudinfra/pulumi-plugin), linked or copied
  // alike: a copied SDK must load the copied @pulumi/pulumi, the one the program's resources register with.
  for (const entry of fs.readdirSync(path.join(installed, scope!))) {
    const workspace = fs.realpathSync(path.join(installed, scope!, entry));
    const to = path.join(modules, scope!, entry);
    if (to === self) continue;
    if (copy) fs.cpSync(workspace, to, { recursive: true, filter: (file) => path.basename(file) !== "node_modules" });
    else fs.symlinkSync(workspace, to, "dir");
  }
  return dir;
}

/**
 * Environment for the CLI, offline: a local file backend in `backendDir`, the passphrase secrets provider, a
 * `PULUMI_HOME` of its own beside the backend, no update check, no plugin downloads (the plugins are next to the
 * CLI), and the project's node_modules on NODE_PATH (the dynamic-provider host loads the provider code recorded in
 * the state from a string, which resolves packages from the host's working directory only). TypeScript programs are
 * transpiled without type checking: they are type-checked by this repository's build, and the ts-node Pulumi falls
 * back to is older than the TypeScript installed here.
 */
export function cliEnvironment(
  backendDir: string,
  projectDir: string,
  passphrase = "cloudinfra-local",
): Record<string, string> {
  fs.mkdirSync(backendDir, { recursive: true });
  return {
    NODE_PATH: path.join(projectDir, "node_modules"),
    PULUMI_BACKEND_URL: `file://${backendDir}`,
    PULUMI_CONFIG_PASSPHRASE: passphrase,
    PULUMI_HOME: `${backendDir}-home`,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
  };
}

/** The project name in a project directory's Pulumi.yaml (`name: ...`). */
export function projectName(projectDir: string): string {
  const yaml = fs.readFileSync(path.join(projectDir, "Pulumi.yaml"), "utf8");
  const name = /^name:\s*(\S+)\s*$/m.exec(yaml)?.[1];
  if (name === undefined) throw new Error(`${projectDir}/Pulumi.yaml names no project`);
  return name;
}

/** Stack config as the harness and the demo write it: a string, or `{ secret }` for a secret value. */
export type PlainConfig = Record<string, string | { secret: string }>;

/**
 * A stack of the real CLI in the project directory `projectDir` (prepared by {@link prepareProject}), with a local
 * file backend in `backendDir`, passphrase secrets and the given config. Without `program` the CLI runs the project's
 * own program (`pulumi up` in that directory, through the language host `npm run cli` builds); with `program` it runs
 * that function as an Automation API inline program, in this process, for tests that write their program in place.
 */
export async function cliStack(options: {
  projectDir: string;
  backendDir: string;
  stackName: string;
  program?: PulumiFn;
  config?: PlainConfig;
}): Promise<Stack> {
  const { projectDir, backendDir, stackName, program } = options;
  const workspace = {
    workDir: projectDir,
    envVars: cliEnvironment(backendDir, projectDir),
    secretsProvider: "passphrase",
  };
  const stack =
    program === undefined
      ? await LocalWorkspace.createOrSelectStack({ stackName, workDir: projectDir }, workspace)
      : await LocalWorkspace.createOrSelectStack(
          { stackName, projectName: projectName(projectDir), program },
          workspace,
        );
  if (options.config !== undefined) {
    await stack.setAllConfig(
      Object.fromEntries(
        Object.entries(options.config).map(([key, value]) => [
          key,
          typeof value === "string" ? { value } : { value: value.secret, secret: true },
        ]),
      ),
    );
  }
  return stack;
}

/**
 * The version of Pulumi's YAML language host that the CLI on PATH runs YAML programs with (`pulumi-language-yaml`,
 * which `npm run cli` builds next to the CLI), read from the module versions Go records in the binary; undefined when
 * there is none on PATH.
 */
export function yamlHostVersion(): string | undefined {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const binary = path.join(dir, "pulumi-language-yaml");
    if (dir === "" || !fs.existsSync(binary)) continue;
    const content = fs.readFileSync(binary);
    const at = content.indexOf("\tgithub.com/pulumi/pulumi-yaml\t");
    if (at < 0) return "(version not recorded)";
    return /^\tgithub\.com\/pulumi\/pulumi-yaml\t(\S+)/.exec(content.subarray(at, at + 100).toString("latin1"))?.[1];
  }
  return undefined;
}
