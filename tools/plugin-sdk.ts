/**
 * `npm run plugin-sdk`: the SDKs of the provider plugin made by `pulumi package gen-sdk` from
 * provider/plugin/schema.json with the real CLI, as every Pulumi provider makes its SDKs: the TypeScript one,
 * `@cloudinfra/pulumi/plugin` (`sdk/plugin`), and the Go module `sdk/go` (the schema's `language.go.modulePath`, with
 * its go.mod and go.sum). They are committed (the package builds without the CLI; a Go user gets the module from this
 * repository) and never edited by hand: the gen-sdk and go-sdk suites regenerate them and fail when the committed copy
 * differs. Run after `npm run schema` whenever the schema changes.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { goRun } from "./go";
import { repositoryRoot, usePulumiCli } from "./pulumi-cli";

/** Where the committed SDK lives. */
export const pluginSdkDirectory = (root: string = repositoryRoot()) => path.join(root, "sdk", "plugin");

/** Generated files that are not part of the SDK: gen-sdk's own project files (the package's build compiles it). */
const projectFiles = new Set(["README.md", "tsconfig.json", "package.json"]);

/**
 * Runs `pulumi package gen-sdk --language <language>` on the plugin's schema into a new directory under `work`, and
 * returns the directory holding that language's SDK. The CLI must be on PATH.
 */
export function genSdk(language: string, work: string, root: string = repositoryRoot()): string {
  const out = fs.mkdtempSync(path.join(work, "sdk-"));
  execFileSync(
    "pulumi",
    ["package", "gen-sdk", path.join(root, "provider", "plugin", "schema.json"), "--language", language, "--out", out],
    {
      env: { ...process.env, PULUMI_HOME: path.join(out, ".pulumi"), PULUMI_SKIP_UPDATE_CHECK: "true" },
      stdio: "pipe",
    },
  );
  return path.join(out, language);
}

/**
 * The files of `sdk/plugin` as gen-sdk makes them now (relative path → content): the TypeScript sources, and a
 * package.json holding only the version its `utilities.getVersion()` reads, the package's own (so resources ask the
 * engine for the plugin of this package's version).
 */
export function pluginSdkFiles(work: string, root: string = repositoryRoot()): Map<string, string> {
  const files = filesUnder(genSdk("nodejs", work, root));
  for (const file of projectFiles) files.delete(file);
  const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
  files.set("package.json", JSON.stringify({ private: true, version }, null, 2) + "\n");
  return files;
}

/** Where the committed Go SDK (a Go module) lives. */
export const goSdkDirectory = (root: string = repositoryRoot()) => path.join(root, "sdk", "go");

/** The Go module path the schema gives the Go SDK (`language.go.modulePath`). */
export function goModulePath(root: string = repositoryRoot()): string {
  const schema = JSON.parse(fs.readFileSync(path.join(root, "provider", "plugin", "schema.json"), "utf8")) as {
    language?: { go?: { modulePath?: string } };
  };
  const modulePath = schema.language?.go?.modulePath;
  if (modulePath === undefined) throw new Error("provider/plugin/schema.json has no language.go.modulePath");
  return modulePath;
}

/** The version of github.com/pulumi/pulumi/sdk/v3 that cli/go.mod pins: the CLI's, which the Go SDK requires. */
export function pulumiGoSdkVersion(root: string = repositoryRoot()): string {
  const goMod = fs.readFileSync(path.join(root, "cli", "go.mod"), "utf8");
  const version = /github\.com\/pulumi\/pulumi\/sdk\/v3 (v\S+)/.exec(goMod)?.[1];
  if (version === undefined) throw new Error("cli/go.mod pins no github.com/pulumi/pulumi/sdk/v3");
  return version;
}

/**
 * The files of `sdk/go` as they are made now (relative path → content): gen-sdk's Go SDK, and a go.mod of the
 * schema's module path requiring the Pulumi Go SDK of the CLI's version, completed with its go.sum by `go mod tidy`
 * (modules from GOPROXY, as the environment says).
 */
export function goSdkFiles(work: string, root: string = repositoryRoot()): Map<string, string> {
  const dir = genSdk("go", work, root);
  fs.writeFileSync(
    path.join(dir, "go.mod"),
    `module ${goModulePath(root)}\n\ngo 1.25\n\nrequire github.com/pulumi/pulumi/sdk/v3 ${pulumiGoSdkVersion(root)}\n`,
  );
  goRun(dir, ["mod", "tidy"]);
  return filesUnder(dir);
}

/** The files under `dir` (relative path → content). */
export function filesUnder(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const relative of fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const file = path.join(dir, relative);
    if (fs.statSync(file).isFile()) files.set(relative, fs.readFileSync(file, "utf8"));
  }
  return files;
}

function main(): void {
  if (usePulumiCli({ build: true }) === undefined) {
    throw new Error("npm run plugin-sdk needs the pulumi CLI: run `npm run cli` (needs Go) or put pulumi on PATH");
  }
  const root = repositoryRoot();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-plugin-sdk-"));
  try {
    const files = pluginSdkFiles(work, root);
    const target = pluginSdkDirectory(root);
    fs.rmSync(target, { recursive: true, force: true });
    for (const [relative, content] of files) {
      fs.mkdirSync(path.dirname(path.join(target, relative)), { recursive: true });
      fs.writeFileSync(path.join(target, relative), content);
    }
    process.stdout.write(`wrote ${path.relative(root, target)} (${files.size} files)\n`);
    const goFiles = goSdkFiles(work, root);
    const goTarget = goSdkDirectory(root);
    fs.rmSync(goTarget, { recursive: true, force: true });
    for (const [relative, content] of goFiles) {
      fs.mkdirSync(path.dirname(path.join(goTarget, relative)), { recursive: true });
      fs.writeFileSync(path.join(goTarget, relative), content);
    }
    process.stdout.write(`wrote ${path.relative(root, goTarget)} (${goFiles.size} files)\n`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) main();
