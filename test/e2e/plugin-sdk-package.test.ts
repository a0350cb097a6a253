/**
 * The plugin's SDK as a user gets it, through the real CLI: `@cloudinfra/pulumi-plugin` packed beside
 * `@cloudinfra/pulumi` (`npm pack --workspaces --include-workspace-root`, two tarballs), both installed into a new
 * project as docs/guides/plugin-sdk.md says, the plugin named in Pulumi.yaml by the installed package's directory (no
 * plugin on PATH). `pulumi import` of a VM and its network made through the API writes code importing
 * `@cloudinfra/pulumi-plugin` (the schema's Node.js package name): unchanged, it type-checks with `tsc --strict`, and as
 * the program it previews with no changes and no write sent.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { beforeAll, expect, it } from "vitest";
import { cliEnvironment, cliStack } from "../../tools/pulumi-cli";
import { packed as packedTarballs } from "../helpers/packed";
import { cliWorld, describeCli } from "./helpers";

const root = path.resolve(__dirname, "../..");
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
const main = readJson(path.join(root, "package.json")) as { name: string; version: string };
const sdk = readJson(path.join(root, "sdk", "plugin", "package.json")) as { name: string; version: string };
/** The @pulumi/pulumi this repository uses, as the user's project installs it. */
const pulumiVersion = (readJson(path.join(root, "node_modules/@pulumi/pulumi/package.json")) as { version: string })
  .version;
const world = await cliWorld();
const [fra] = world.datacenters;

let project: string;
let tarballs: Record<string, string[]>;

describeCli(
  "@cloudinfra/pulumi-plugin installed from its tarball: pulumi import, tsc --strict, preview (real CLI)",
  () => {
    beforeAll(async () => {
      // `npm pack --workspaces --include-workspace-root` of this checkout, once for every suite (test/helpers/packed.ts).
      const { tarballs: packed } = await packedTarballs();
      tarballs = Object.fromEntries(packed.map((p) => [p.name, p.files.map((f) => f.path)]));
      project = path.join(world.work, "user-project");
      fs.mkdirSync(project);
      fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "imported", main: "index.ts" }));
      fs.writeFileSync(
        path.join(project, "Pulumi.yaml"),
        "name: imported\nruntime: nodejs\nplugins:\n  providers:\n    - name: cloudinfra\n      path: node_modules/@cloudinfra/pulumi\n",
      );
      fs.writeFileSync(path.join(project, "index.ts"), "export {};\n");
      // The docs' install: the two tarballs and @pulumi/pulumi (the version this repository has, in npm's cache).
      execFileSync(
        "npm",
        [
          "install",
          "--prefer-offline",
          "--no-audit",
          "--no-fund",
          "--loglevel=error",
          ...packed.map((p) => p.file),
          `@pulumi/pulumi@${pulumiVersion}`,
        ],
        { cwd: project, stdio: ["ignore", "pipe", "pipe"] },
      );
    }, 300_000);

    it("the two tarballs: the SDK's compiled files and its manifest, the main package re-exporting it at /plugin", () => {
      expect(Object.keys(tarballs).sort()).toEqual([main.name, sdk.name].sort());
      expect(sdk.version).toBe(main.version);
      const sdkFiles = tarballs[sdk.name]!;
      for (const file of ["package.json", "bin/package.json", "bin/index.js", "bin/index.d.ts", "bin/network.js"]) {
        expect(sdkFiles).toContain(file);
      }
      expect(sdkFiles.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
      // The main package no longer carries a second copy of the SDK.
      expect(
        tarballs[main.name]!.filter((f) => f.startsWith("sdk/plugin/") || f.startsWith("dist/sdk/plugin/")),
      ).toEqual([]);
      expect(readJson(path.join(project, "node_modules", sdk.name, "package.json"))).toMatchObject({
        name: sdk.name,
        version: main.version,
        peerDependencies: { "@pulumi/pulumi": expect.any(String) },
        pulumi: { resource: true, name: "cloudinfra", version: main.version },
      });
      // One SDK in the project: the subpath is the package's classes, not a copy of them.
      const same = spawnSync(
        process.execPath,
        ["-e", `process.exit(require("${main.name}/plugin").Network === require("${sdk.name}").Network ? 0 : 1)`],
        { cwd: project, encoding: "utf8" },
      );
      expect(same.status, same.stderr).toBe(0);
    });

    it("`pulumi import` of a VM and its network writes code that compiles unchanged (tsc --strict) and previews with no changes", async () => {
      const network = await world.api.createNetwork({
        body: { name: "pkg-net", datacenterId: fra!.id, networkType: "custom", cidrBlock: "10.61.0.0/24" },
      });
      await world.api.jobs.wait(network.jobId);
      const [vmJob] = await world.api.createVm({
        body: {
          name: "pkg-vm",
          datacenterId: fra!.id,
          imageId: 1,
          configurationId: 1,
          networkInterfaces: [{ networkId: network.id, primary: true }],
        },
      });
      const vmId = (await world.api.jobs.wait(vmJob!.id)).resourceId!;

      const backend = path.join(world.work, "backend");
      const stack = await cliStack({
        projectDir: project,
        backendDir: backend,
        stackName: "dev",
        config: world.config,
      });
      // As a user runs it: the CLI itself, a file naming the resources, the code written with --out.
      fs.writeFileSync(
        path.join(project, "import.json"),
        JSON.stringify({
          resources: [
            { type: "cloudinfra:index:Network", name: "net", id: network.id },
            { type: "cloudinfra:index:VirtualMachine", name: "vm", id: vmId },
          ],
        }),
      );
      const env = { ...process.env, ...cliEnvironment(backend, project) };
      const pulumi = (...args: string[]) =>
        promisify(execFile)("pulumi", [...args, "--yes", "--stack", "dev", "--non-interactive"], { cwd: project, env });
      await pulumi("import", "--file", "import.json", "--out", "imported.ts", "--color", "never");

      const code = fs.readFileSync(path.join(project, "imported.ts"), "utf8");
      expect(code).toContain(`import * as cloudinfra from "${sdk.name}";`);
      expect(code).toContain('new cloudinfra.Network("net", {');
      expect(code).toContain('new cloudinfra.VirtualMachine("vm", {');
      expect(code).toMatch(/networkInterfaces: \[\{\s*networkId: net\.id,\s*primary: true,?\s*\}\]/);
      // `pulumi import` protects what it imports (the code says so): a later destroy must be asked for.
      expect(code.match(/protect: true/g)).toHaveLength(2);

      // The program is the imported code, unchanged; it type-checks against the installed packages only.
      fs.writeFileSync(path.join(project, "index.ts"), code);
      const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
      const options = ["--noEmit", "--strict", "--skipLibCheck", "--target", "es2022", "--module", "node16"];
      const checked = spawnSync(process.execPath, [tsc, ...options, "index.ts"], { cwd: project, encoding: "utf8" });
      expect(checked.stdout + checked.stderr, "tsc --strict index.ts").toBe("");
      expect(checked.status).toBe(0);

      const sincePreview = world.mark();
      await stack.preview({ color: "never", expectNoChanges: true });
      const writes = (await world.requests(sincePreview)).filter(
        (r) => r.method !== "GET" && !r.path.endsWith("/jobs"),
      );
      expect(writes).toEqual([]);
      expect((await world.api.getNetwork({ params: { id: network.id } })).name).toBe("pkg-net");
      expect((await world.api.getVm({ params: { id: vmId } })).virtualMachine.name).toBe("pkg-vm");

      await pulumi("state", "unprotect", "--all");
      await stack.destroy({ color: "never" });
      expect((await world.api.listNetworks({ query: { search: "pkg-net" } })).data).toEqual([]);
    });
  },
);
