/**
 * The usage report stacks, examples/usage-report (TypeScript, dynamic SDK) and examples/yaml-usage-report (Pulumi's
 * YAML host, the plugin), through the real CLI against one emulator: each exports last month's usage, this month's VM
 * metrics by category, the VMs on a network, the VMs a volume can be attached to, and the entity's keys with their
 * statuses. Every exported value is what the API holds (read here through the API client), and no secret (a key's,
 * the sign-in password or TOTP secret, the configured API key) is in the outputs or in `pulumi stack export`.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { beforeAll, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import type { PlainConfig } from "../../tools/pulumi-cli";
import { cliWorld, describeCli } from "./helpers";
import { describeYaml, root, yamlProject } from "./yaml-host";

// Only the project's plugin entry may serve cloudinfra (the YAML stack).
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
const world = await cliWorld();
const [fra] = world.datacenters;
const { admin } = world.emulator.bootstrap.users;
const entityId = world.emulator.bootstrap.entityId;

// What the report is about: a network with a VM on it, a volume of the same data center, two keys of the entity.
const net = await world.api.createNetwork({ body: { name: "ur-net", datacenterId: fra!.id, networkType: "standard" } });
await world.api.waitForJob(net.jobId);
const madeVm = await world.api.createVm({
  body: {
    name: "ur-vm",
    datacenterId: fra!.id,
    imageId: 1,
    configurationId: 1,
    networkInterfaces: [{ networkId: net.id, primary: true }],
  },
});
const vmId = (await world.api.waitForJob(madeVm[0]!.id)).resourceId!;
const volumeType = (await world.api.volumeSizes({ params: { id: fra!.id } })).volumeTypes[0]!;
const vol = await world.api.createVolume({
  body: {
    name: "ur-vol",
    datacenterId: fra!.id,
    volumeTypeId: volumeType.id,
    volumeSizeId: volumeType.availableSizes[0]!.id,
    sizeGb: volumeType.availableSizes[0]!.sizeGb,
  },
});
await world.api.waitForJob(vol.jobId);
const session = new CloudClient({
  baseUrl: world.emulator.baseUrl,
  auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
});
const createdKeys = [
  await session.createApiKey({ body: { name: "ur-ci", expiresInDays: 365 } }),
  await session.createApiKey({ body: { name: "ur-soon", expiresInDays: 10 } }),
];
await session.close();

/** Every secret there is: the keys' (made above and seeded), their stored hashes, the sign-in's. */
const secrets = [
  ...createdKeys.map((k) => k.key),
  ...Object.values(world.emulator.bootstrap.users).flatMap((u) => [u.apiKey, u.password, u.totpSecret]),
  ...Object.values(world.emulator.ctx.state.apiKeys).map((k) => k.secretHash),
];

/** The API key for the reads, and the sign-in beside it (as a team's CI config may hold both): all secrets. */
const config: PlainConfig = {
  ...world.config,
  "cloudinfra:email": admin.email,
  "cloudinfra:password": { secret: admin.password },
  "cloudinfra:totpSecret": { secret: admin.totpSecret },
  networkName: "ur-net",
  volumeName: "ur-vol",
};

/** `pulumi stack export` as a user runs it (no `--show-secrets`). */
function exported(stack: Stack): string {
  const envVars = (stack.workspace as unknown as { envVars: Record<string, string> }).envVars;
  return execFileSync("pulumi", ["stack", "export", "--stack", stack.name], {
    cwd: stack.workspace.workDir,
    env: { ...process.env, ...envVars },
    encoding: "utf8",
  });
}

const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);

/** Runs the report; checks each output against the API and that no secret is in the outputs or the export. */
async function expectReportOfTheApi(stack: Stack, keysOf: (exported: unknown) => { name: string; status: string }[]) {
  const up = await stack.up({ color: "never" });
  expect(up.summary.result).toBe("succeeded");
  const out = Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value])) as Record<string, unknown>;
  expect(Object.values(up.outputs).filter((o) => o.secret)).toEqual([]);

  const months = await world.api.availableMonths({ params: { id: entityId } });
  expect(out.month).toBe(months[1]);
  expect(out.usage).toEqual(await world.api.entityUsage({ params: { id: entityId }, query: { month: months[1] } }));
  expect(out.vmMetricsByCategory).toEqual((await world.api.vmMetrics()).categories);
  const onNetwork = await world.api.networkVms({ params: { id: net.id } });
  expect(onNetwork.map((v) => v.id)).toEqual([vmId]);
  expect(out.networkVms).toEqual(onNetwork);
  const attachable = await world.api.attachableVms({ params: { id: vol.id } });
  expect(attachable.map((v) => v.id)).toContain(vmId);
  expect(out.attachableVms).toEqual(attachable);
  const held = [];
  for await (const k of world.api.listAll("listApiKeys", {})) held.push({ name: k.name, status: k.status });
  const keys = keysOf(out.apiKeys);
  expect([...keys].sort(byName)).toEqual(held.sort(byName));
  expect(keys).toContainEqual({ name: "ur-ci", status: "Active" });
  expect(keys).toContainEqual({ name: "ur-soon", status: "Expiring" });

  const outputs = JSON.stringify(up.outputs);
  const state = exported(stack);
  expect(state).toContain('"ur-soon"'); // the export holds the report
  for (const secret of secrets) {
    expect(outputs).not.toContain(secret);
    expect(state).not.toContain(secret);
  }
  // A report creates nothing: the next run has nothing to change.
  await stack.preview({ color: "never", expectNoChanges: true });
}

describeCli("examples/usage-report through the real CLI", () => {
  it("exports last month's usage, this month's metrics, the network's and volume's VMs and the keys: as the API holds them, no secret", async () => {
    const stack = await world.stack("usage-report", undefined, config);
    await expectReportOfTheApi(stack, (keys) => keys as { name: string; status: string }[]);
    await stack.destroy({ color: "never" });
  });
});

describeYaml("examples/yaml-usage-report through the real CLI", () => {
  let stack: Stack;
  beforeAll(async () => {
    const source = fs.readFileSync(path.join(root, "examples", "yaml-usage-report", "Pulumi.yaml"), "utf8");
    stack = await world.stack(yamlProject(world, source), undefined, config);
  });

  it("exports the same report through the plugin: as the API holds it, the keys without a secret", async () => {
    await expectReportOfTheApi(stack, (keys) => {
      // YAML exports each key as getApiKeys lists it: its summary, never a secret member.
      const summaries = keys as Record<string, unknown>[];
      for (const key of summaries) expect(Object.keys(key)).not.toContain("key");
      return summaries.map((k) => ({ name: k.name as string, status: k.status as string }));
    });
    await stack.destroy({ color: "never" });
  });
});
