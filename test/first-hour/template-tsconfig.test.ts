/**
 * Issue 8, item 1: a standard Pulumi TypeScript project (the tsconfig.json of Pulumi's own `typescript` template: no
 * `skipLibCheck`, no `esModuleInterop`) failed `tsc` with 63 errors in zod's declarations, because the main entry's
 * declarations reached the zod contract. This installs the packed tarball (test/helpers/packed.ts: packed once for
 * every suite) into a fresh project with exactly that tsconfig, and type-checks a program; with the real CLI, that
 * project runs `preview` and `up`.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { createInterface } from "node:readline";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator } from "../../emulator/server";
import { CloudClient } from "../../provider/client";
import { cliEnvironment } from "../../tools/pulumi-cli";
import { cliVersion, describeCli } from "../e2e/helpers";
import { packed } from "../helpers/packed";

const root = path.resolve(__dirname, "../..");

/** Pulumi's `typescript` template, tsconfig.json, verbatim. */
const templateTsconfig = {
  compilerOptions: {
    strict: true,
    outDir: "bin",
    target: "es2020",
    module: "commonjs",
    moduleResolution: "node",
    sourceMap: true,
    experimentalDecorators: true,
    pretty: true,
    noFallthroughCasesInSwitch: true,
    noImplicitReturns: true,
    forceConsistentCasingInFileNames: true,
  },
  files: ["index.ts"],
};

/** The README's program, plus what a first program also does: a VM in a resource group, an error class. */
const program = `import * as cloudinfra from "@cloudinfra/pulumi";
import type * as plugin from "@cloudinfra/pulumi/plugin";

const fra1 = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";

const group = new cloudinfra.ResourceGroup("team", { name: "team" });

const net = new cloudinfra.Network("app", {
  name: "app",
  datacenterId: fra1,
  networkType: "standard",
});

const vm = new cloudinfra.VirtualMachine("web", {
  name: "web-1",
  datacenterId: fra1,
  imageId: 1,
  configurationId: 1,
  teamId: group.id,
  networkInterfaces: [{ networkId: net.id }],
});

const data = new cloudinfra.Volume("data", {
  name: "data",
  datacenterId: fra1,
  volumeTypeId: 1,
  sizeGb: 100,
  teamId: group.teamId,
});

export const isApiError = (e: unknown) => e instanceof cloudinfra.ApiError;
export const gateway = net.gateway;
export const privateIp = vm.privateIp;
export const volume = data.id;
// The plugin's SDK (what \`pulumi import\` writes code for) resolves too, though this resolution ignores "exports".
export type PluginNetworkArgs = plugin.NetworkArgs;
`;

function version(pkg: string): string {
  return (
    JSON.parse(fs.readFileSync(path.join(root, "node_modules", pkg, "package.json"), "utf8")) as {
      version: string;
    }
  ).version;
}

let dir: string;
let tarballs: string[];

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-template-"));
  // The package and its plugin SDK (@cloudinfra/pulumi-plugin, which @cloudinfra/pulumi/plugin re-exports), packed
  // once for every suite (test/helpers/packed.ts).
  tarballs = (await packed()).tarballs.map((p) => p.file);
  const project = path.join(dir, "project");
  fs.mkdirSync(project);
  fs.writeFileSync(
    path.join(project, "package.json"),
    JSON.stringify({ name: "first-hour", main: "index.ts", devDependencies: {}, dependencies: {} }, null, 2),
  );
  fs.writeFileSync(path.join(project, "tsconfig.json"), JSON.stringify(templateTsconfig, null, 4));
  fs.writeFileSync(path.join(project, "index.ts"), program);
  // The versions this repository already has, so npm finds them in its cache (no network when it is warm).
  execFileSync(
    "npm",
    [
      "install",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      ...tarballs,
      `@pulumi/pulumi@${version("@pulumi/pulumi")}`,
      `@types/node@${version("@types/node")}`,
    ],
    { cwd: project, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
  );
}, 300_000);

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("a Pulumi project with the template's tsconfig", () => {
  it("zod's declarations failed tsc (TS1259) without skipLibCheck/esModuleInterop: the packed tarball now type-checks", () => {
    const project = path.join(dir, "project");
    const tsc = path.join(root, "node_modules", "typescript", "bin", "tsc");
    let output = "";
    try {
      output = execFileSync(process.execPath, [tsc, "--noEmit", "--pretty", "false", "--listFiles"], {
        cwd: project,
        encoding: "utf8",
      });
    } catch (error) {
      output = String((error as { stdout?: string }).stdout ?? error);
    }
    expect(output.split("\n").filter((l) => l.includes("error TS"))).toEqual([]);
    // The program's declarations were really loaded from the installed tarball, and none of zod's.
    const files = output.split("\n").filter((l) => l.includes("node_modules/"));
    expect(files.some((f) => f.includes("node_modules/@cloudinfra/pulumi/dist/sdk/index.d.ts"))).toBe(true);
    expect(files.some((f) => f.includes("node_modules/@cloudinfra/pulumi/dist/sdk/plugin-sdk.d.ts"))).toBe(true);
    expect(files.some((f) => f.includes("node_modules/@cloudinfra/pulumi-plugin/bin/index.d.ts"))).toBe(true);
    expect(files.filter((f) => f.includes("node_modules/zod/"))).toEqual([]);
  });

  it("the emulator could only be started from a checkout: the installed package's cloudinfra-emulator bin starts it", async () => {
    const project = path.join(dir, "project");
    const bin = path.join(project, "node_modules", ".bin", "cloudinfra-emulator");
    expect(fs.existsSync(bin)).toBe(true);
    const child = spawn(bin, ["--port", "0", "--json", "--rate-limit", "0"], {
      cwd: project,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`exited ${code}`)));
      });
      const bootstrap = JSON.parse(first) as { baseUrl: string; users: { admin: { apiKey: string } } };
      const check = await fetch(`${bootstrap.baseUrl}/auth/check`, {
        headers: { "x-api-key": bootstrap.users.admin.apiKey },
      });
      expect(check.status).toBe(200);
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describeCli("the tarball project through the real CLI", () => {
  /** Runs `pulumi` in the project; resolves to its exit code and everything it printed (never rejects). */
  function pulumi(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; out: string }> {
    return new Promise((resolve) => {
      execFile("pulumi", args, { cwd: path.join(dir, "project"), env, encoding: "utf8" }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : Number(error.code ?? 1), out: stdout + stderr }),
      );
    });
  }

  it(`preview fails on a wrong key naming cloudinfra:apiKey; with the right one preview and up work (pulumi ${cliVersion})`, async () => {
    const emulator = await startEmulator({ port: 0, jobDurationMs: 300, rateLimit: 0 });
    const apiKey = emulator.bootstrap.users.admin.apiKey;
    const api = new CloudClient({ baseUrl: emulator.baseUrl, auth: { apiKey } });
    try {
      const project = path.join(dir, "project");
      fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: first-hour\nruntime: nodejs\n");
      const env = { ...process.env, ...cliEnvironment(path.join(dir, "backend"), project) };
      delete env.PULUMI_NODEJS_TRANSPILE_ONLY; // a user's program is type-checked as it runs
      expect((await pulumi(env, "stack", "init", "dev")).code).toBe(0);
      await pulumi(env, "config", "set", "cloudinfra:baseUrl", emulator.baseUrl);
      await pulumi(env, "config", "set", "--secret", "cloudinfra:apiKey", `svc_${"x".repeat(28)}`);

      const refused = await pulumi(env, "preview", "--non-interactive");
      expect(refused.code).not.toBe(0);
      expect(refused.out).toContain("cloudinfra:apiKey");
      expect(refused.out).not.toContain(`svc_${"x".repeat(28)}`);

      await pulumi(env, "config", "set", "--secret", "cloudinfra:apiKey", apiKey);
      const previewed = await pulumi(env, "preview", "--non-interactive");
      expect(previewed.code, previewed.out).toBe(0);
      const created = await pulumi(env, "up", "--yes", "--non-interactive");
      expect(created.code, created.out).toBe(0);
      const [network] = (await api.listNetworks({ query: { search: "app" } })).data;
      expect(network).toMatchObject({ name: "app", status: "Active" });
      expect((await api.listVms({ query: { search: "web-1" } })).data).toHaveLength(1);

      const destroyed = await pulumi(env, "destroy", "--yes", "--non-interactive");
      expect(destroyed.code, destroyed.out).toBe(0);
      expect((await api.listNetworks({ query: { search: "app" } })).data).toEqual([]);
    } finally {
      await api.close();
      await emulator.close();
    }
  });
});
