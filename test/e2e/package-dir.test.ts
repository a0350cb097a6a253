/**
 * The package directory as the plugin source of every `pulumi package` command, through the real CLI: `get-schema`,
 * `gen-sdk` and `add` name the directory of the checkout, and of the package installed from its npm tarball in a
 * project. PulumiPlugin.yaml says `runtime: nodejs`, so the engine asks the Node.js language host to run the directory
 * as a plugin; the host's @pulumi/pulumi/cmd/run-plugin loads the package.json "main" (the plugin's entry). They
 * failed with "<dir> exited prematurely" while "main" was the resource classes, which load and exit.
 */
import { execFile, execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeCli } from "./helpers";

const root = path.resolve(__dirname, "../..");
const committed = JSON.parse(fs.readFileSync(path.join(root, "provider/plugin/schema.json"), "utf8")) as {
  language: { nodejs: { packageName: string } };
};

let work: string;
/**
 * The package directories: the checkout, and the package installed from its tarball in a project (set up below). The
 * CLI reads what follows an `@` in a plugin source as its version (`node_modules/@cloudinfra/pulumi` is taken for
 * `node_modules/` at version `cloudinfra/pulumi`), so the installed package is named through a symbolic link.
 */
const sources: Record<string, () => string> = {
  checkout: () => root,
  "installed package": () => path.join(work, "project", "cloudinfra"),
};

/** Runs `pulumi` in `cwd`, offline; resolves to its exit code and output (never rejects). */
function pulumi(cwd: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    PULUMI_HOME: path.join(work, "pulumi-home"),
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
  return new Promise((resolve) => {
    execFile("pulumi", args, { cwd, env, encoding: "utf8", maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

describeCli("the package directory as a plugin source of `pulumi package`", () => {
  beforeAll(() => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-package-dir-"));
    // The package as a user installs it: its npm tarball in a project, with the @pulumi/pulumi this repository uses.
    const packed = execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" });
    const tarball = path.join(work, (JSON.parse(packed) as { filename: string }[])[0]!.filename);
    const project = path.join(work, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "installed", dependencies: {} }));
    const pulumiVersion = (
      JSON.parse(fs.readFileSync(path.join(root, "node_modules/@pulumi/pulumi/package.json"), "utf8")) as {
        version: string;
      }
    ).version;
    execFileSync(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        tarball,
        `@pulumi/pulumi@${pulumiVersion}`,
      ],
      { cwd: project, stdio: ["ignore", "pipe", "pipe"] },
    );
    fs.symlinkSync(path.join("node_modules", "@cloudinfra", "pulumi"), path.join(project, "cloudinfra"), "dir");
  }, 300_000);

  afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

  // Each command on both directories at once: they share nothing (a project each, the plugin started per command).
  const names = Object.keys(sources);

  it.concurrent.each(names)("%s: pulumi package get-schema <dir> prints the committed schema", async (source) => {
    const result = await pulumi(work, "package", "get-schema", sources[source]!());
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(committed);
  });

  it.concurrent.each(names)("%s: pulumi package gen-sdk <dir> --language go writes a Go SDK", async (source) => {
    const out = fs.mkdtempSync(path.join(work, "go-"));
    const result = await pulumi(work, "package", "gen-sdk", sources[source]!(), "--language", "go", "--out", out);
    expect(result.code, result.stderr).toBe(0);
    const network = fs.readFileSync(path.join(out, "go", "cloudinfra", "network.go"), "utf8");
    expect(network).toContain("func NewNetwork(");
    expect(network).toContain('"cloudinfra:index:Network"');
    expect(fs.existsSync(path.join(out, "go", "cloudinfra", "getVolumeSizes.go"))).toBe(true);
  });

  // Not yet: the schema's Node.js package name, @cloudinfra/pulumi/plugin (the subpath the package ships its plugin SDK
  // at, which the code `pulumi import` writes imports), is not a valid npm package name, so the `npm install` that
  // `pulumi package add` runs after linking the generated SDK fails with EINVALIDPACKAGENAME (Pulumi's own Node.js host
  // links the same way). A valid name (e.g. @cloudinfra/pulumi-plugin) makes this pass but makes the imported code name
  // a package the tarball does not ship: a product decision, left open on the issue.
  it.todo("pulumi package add <dir> records the package in Pulumi.yaml, links the SDK it generates and installs it");
});
