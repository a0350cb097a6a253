/**
 * A program that only declares resources loads nothing of the provider's implementation (the kinds, the zod contract,
 * the client, undici): `require("@cloudinfra/pulumi")` loads the SDK's classes, the module that picks each kind's
 * dynamic provider, and the error classes a program catches. The data functions load the rest at their first call,
 * and answer what the API holds. A fresh `node` runs the build's output (npm test builds first), as a program does.
 */
import { execFile } from "node:child_process";
import * as path from "node:path";
import { expect, it } from "vitest";
import { stackOnEmulator } from "../resources/helpers";

const root = path.resolve(__dirname, "../..");
const stack = await stackOnEmulator({ jobDurationMs: 50 });
const [fra] = stack.datacenters;

/** The program: loads the SDK, lists the repository's modules loaded, calls two data functions, lists them again. */
const program = `
const loaded = () => Object.keys(require.cache)
  // The repository's own modules, and zod or undici wherever they are installed.
  .filter((file) => /[\\\\/]node_modules[\\\\/]/.test(file)
    ? /[\\\\/]node_modules[\\\\/](zod|undici)[\\\\/]/.test(file)
    : file.startsWith(${JSON.stringify(root + path.sep)}))
  .map((file) => path.relative(${JSON.stringify(root)}, file).split(path.sep).join("/"));
const path = require("node:path");
require("@pulumi/pulumi");
const sdk = require(${JSON.stringify(path.join(root, "dist", "sdk", "index.js"))});
const declared = loaded();
(async () => {
  const network = await sdk.getNetwork({ name: process.argv[1] });
  const inventory = await sdk.getGpuInventory();
  process.stdout.write(JSON.stringify({ declared, network, inventory, called: loaded() }));
  process.exit(0);
})().catch((error) => { console.error(error); process.exit(1); });
`;

it("loading the SDK loads none of the provider; a data function loads it and answers what the API holds", async () => {
  const created = await stack.api.createNetwork({
    body: { name: "lean-net", datacenterId: fra!.id, networkType: "custom", cidrBlock: "10.61.0.0/24" },
  });
  await stack.api.jobs.wait(created.jobId);
  // Asynchronously: the emulator answers from this process.
  const run = await new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CLOUDINFRA_BASE_URL: stack.emulator.baseUrl,
      CLOUDINFRA_API_KEY: stack.emulator.bootstrap.users.admin.apiKey,
    };
    execFile(process.execPath, ["-e", program, "lean-net"], { cwd: root, env }, (error, stdout, stderr) =>
      resolve({ status: error ? 1 : 0, stdout, stderr }),
    );
  });
  expect(run.stderr).toBe("");
  expect(run.status).toBe(0);
  const out = JSON.parse(run.stdout) as {
    declared: string[];
    called: string[];
    network: { id: string; name: string; cidrBlock: string };
    inventory: { series: { seriesId: number }[] };
  };

  // Declaring resources: the SDK, the provider picker, the error classes; nothing of the kinds, contract or client.
  const provider = out.declared.filter((file) => !file.startsWith("dist/sdk/"));
  expect(provider.sort()).toEqual([
    "dist/provider/client/error-codes.js",
    "dist/provider/client/errors.js",
    "dist/provider/client/redact.js",
    "dist/provider/dynamic-providers/of-kind.js",
    "dist/provider/dynamic-providers/provider.js",
  ]);
  expect(out.declared).toContain("dist/sdk/network.js");

  // The data functions ran on the provider they loaded, and answered what the emulator holds.
  expect(out.called).toEqual(
    expect.arrayContaining(["dist/provider/resources/index.js", "dist/provider/client/index.js"]),
  );
  expect(out.called.some((file) => /(^|\/)node_modules\/zod\//.test(file))).toBe(true);
  expect(out.network).toMatchObject({ id: created.id, name: "lean-net", cidrBlock: "10.61.0.0/24" });
  const inventory = await stack.api.gpuInventory({ query: {} });
  expect(out.inventory.series.map((s) => s.seriesId)).toEqual(inventory.map((s) => s.seriesId));
});
