/**
 * The package directory as the plugin source of every `pulumi package` command, through the real CLI: `get-schema`,
 * `gen-sdk` and `add` name the directory of the checkout, and of the package installed from its npm tarball in a
 * project. PulumiPlugin.yaml says `runtime: nodejs`, so the engine asks the Node.js language host to run the directory
 * as a plugin; the host's @pulumi/pulumi/cmd/run-plugin loads the package.json "main" (the plugin's entry). They
 * failed with "<dir> exited prematurely" while "main" was the resource classes, which load and exit. `add` links the
 * SDK it generates under the schema's Node.js package name (@cloudinfra/pulumi-plugin, the name the code `pulumi
 * import` writes imports): a program on it runs against the emulator, and that code compiles in the project.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { cliEnvironment } from "../../tools/pulumi-cli";
import { packed } from "../helpers/packed";
import { cliWorld, describeCli } from "./helpers";

const root = path.resolve(__dirname, "../..");
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
const committed = readJson(path.join(root, "provider/plugin/schema.json")) as {
  version: string;
  language: { nodejs: { packageName: string } };
};
/** The npm name `pulumi package add` installs the generated SDK under. */
const sdkName = committed.language.nodejs.packageName;
/** The @pulumi/pulumi this repository uses, as a user's project depends on it. */
const pulumiVersion = (readJson(path.join(root, "node_modules/@pulumi/pulumi/package.json")) as { version: string })
  .version;
const world = await cliWorld();
const [fra] = world.datacenters;

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

/**
 * Runs `pulumi` in `cwd`, offline (with `stackEnv` for commands on a stack); resolves to its exit code and output
 * (never rejects).
 */
function pulumi(
  cwd: string,
  args: string[],
  stackEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    PULUMI_HOME: path.join(work, "pulumi-home"),
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    ...stackEnv,
  };
  return new Promise((resolve) => {
    execFile("pulumi", args, { cwd, env, encoding: "utf8", maxBuffer: 64 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr }),
    );
  });
}

/** A new project of a user in `dir`: a package.json depending on @pulumi/pulumi (installed by `pulumi package add`). */
function userProject(dir: string): string {
  fs.mkdirSync(dir);
  const manifest = { name: path.basename(dir), main: "index.ts", dependencies: { "@pulumi/pulumi": pulumiVersion } };
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest));
  return dir;
}

describeCli("the package directory as a plugin source of `pulumi package`", () => {
  beforeAll(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-package-dir-"));
    // The package as a user installs it: its npm tarball in a project, with the @pulumi/pulumi this repository uses.
    // The package and its plugin SDK (@cloudinfra/pulumi-plugin, which @cloudinfra/pulumi/plugin re-exports).
    // Packed once for every suite (test/helpers/packed.ts).
    const tarballs = (await packed()).tarballs.map((p) => p.file);
    const project = path.join(work, "project");
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "installed", dependencies: {} }));
    execFileSync(
      "npm",
      [
        "install",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        ...tarballs,
        `@pulumi/pulumi@${pulumiVersion}`,
      ],
      { cwd: project, stdio: ["ignore", "pipe", "pipe"] },
    );
    fs.symlinkSync(path.join("node_modules", "@cloudinfra", "pulumi"), path.join(project, "cloudinfra"), "dir");
  }, 300_000);

  // Two projects with their node_modules (`add` installs a few hundred packages): longer than the default 60 s.
  afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 300_000);

  // Each command on both directories at once: they share nothing (a project each, the plugin started per command).
  const names = Object.keys(sources);

  it.concurrent.each(names)("%s: pulumi package get-schema <dir> prints the committed schema", async (source) => {
    const result = await pulumi(work, ["package", "get-schema", sources[source]!()]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual(committed);
  });

  it.concurrent.each(names)("%s: pulumi package gen-sdk <dir> --language go writes a Go SDK", async (source) => {
    const out = fs.mkdtempSync(path.join(work, "go-"));
    const result = await pulumi(work, ["package", "gen-sdk", sources[source]!(), "--language", "go", "--out", out]);
    expect(result.code, result.stderr).toBe(0);
    const network = fs.readFileSync(path.join(out, "go", "cloudinfra", "network.go"), "utf8");
    expect(network).toContain("func NewNetwork(");
    expect(network).toContain('"cloudinfra:index:Network"');
    expect(fs.existsSync(path.join(out, "go", "cloudinfra", "getVolumeSizes.go"))).toBe(true);
  });

  // After the commands above: `add` installs into the project the installed package's commands read from.
  describe("pulumi package add <dir>", () => {
    it.concurrent.each(names)(
      "%s: records the package in Pulumi.yaml, links the SDK it generates and installs it; a program on it runs up against the emulator, and `pulumi import` code compiles beside it",
      async (source) => {
        const dir = sources[source]!();
        const name = `added-${source.replace(/ /g, "-")}`;
        const project = source === "checkout" ? userProject(path.join(work, name)) : path.join(work, "project");
        fs.writeFileSync(path.join(project, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\n`);

        const added = await pulumi(project, ["package", "add", dir]);
        expect(added.code, added.stdout + added.stderr).toBe(0);
        expect(added.stdout).toContain(`import * as cloudinfra from "${sdkName}";`);
        const recorded = parse(fs.readFileSync(path.join(project, "Pulumi.yaml"), "utf8")) as unknown;
        expect(recorded).toMatchObject({ packages: { cloudinfra: dir } });
        expect(readJson(path.join(project, "sdks", "cloudinfra", "package.json"))).toMatchObject({
          name: sdkName,
          pulumi: { resource: true, name: "cloudinfra", version: committed.version },
        });
        expect(readJson(path.join(project, "package.json")).dependencies).toMatchObject({
          [sdkName]: "file:sdks/cloudinfra",
        });
        // Installed, and compiled by its postinstall script.
        expect(fs.existsSync(path.join(project, "node_modules", sdkName, "bin", "index.d.ts"))).toBe(true);

        // A program on the linked SDK: the engine starts the plugin from the package directory Pulumi.yaml records
        // (no `plugins:` entry, no plugin on PATH).
        fs.writeFileSync(
          path.join(project, "index.ts"),
          `import * as cloudinfra from "${sdkName}";\n` +
            `const network = new cloudinfra.Network("net", ` +
            `{ name: "${name}-net", datacenterId: "${fra!.id}", networkType: "standard" });\n` +
            "export const gateway = network.gateway;\n",
        );
        const env = cliEnvironment(path.join(work, `backend-${name}`), project);
        const run = async (...args: string[]) => {
          const result = await pulumi(project, args, env);
          expect(result.code, `pulumi ${args.join(" ")}\n${result.stdout}\n${result.stderr}`).toBe(0);
          return result;
        };
        await run("stack", "init", "dev");
        await run(
          "config",
          "set-all",
          "--plaintext",
          `cloudinfra:baseUrl=${world.emulator.baseUrl}`,
          "--plaintext",
          "cloudinfra:pollIntervalMs=20",
          "--secret",
          `cloudinfra:apiKey=${world.emulator.bootstrap.users.admin.apiKey}`,
        );
        const up = await run("up", "--yes", "--skip-preview", "--color", "never");
        const [network] = (await world.api.listNetworks({ query: { search: `${name}-net` } })).data;
        expect(network?.name).toBe(`${name}-net`);
        expect(up.stdout).toContain(`gateway: "${network?.gateway}"`);

        // `pulumi import` of a network made through the API writes code on the linked SDK that compiles here.
        const made = await world.api.createNetwork({
          body: { name: `${name}-imp`, datacenterId: fra!.id, networkType: "standard" },
        });
        await world.api.jobs.wait(made.jobId);
        await run(
          "import",
          "cloudinfra:index:Network",
          "imported",
          made.id,
          "--yes",
          "--protect=false",
          "--out",
          "imported.ts",
        );
        const code = fs.readFileSync(path.join(project, "imported.ts"), "utf8");
        expect(code).toContain(`import * as cloudinfra from "${sdkName}";`);
        expect(code).toContain('new cloudinfra.Network("imported", {');
        const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
        const options = ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--module", "node16"];
        const checked = spawnSync(process.execPath, [tsc, ...options, "index.ts", "imported.ts"], {
          cwd: project,
          encoding: "utf8",
        });
        expect(checked.stdout + checked.stderr, "tsc index.ts imported.ts").toBe("");

        await run("destroy", "--yes", "--skip-preview", "--color", "never");
        expect((await world.api.listNetworks({ query: { search: name } })).data).toEqual([]);
      },
      600_000,
    );
  });
});
