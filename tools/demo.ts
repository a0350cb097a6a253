/**
 * `npm run demo`: the quickstart example (examples/quickstart) taken through a whole life against the embedded
 * emulator — up, its outputs, a change made behind the stack's back, refresh showing the drift, up repairing it,
 * destroy — with a short summary of each step, checked against what the API holds.
 *
 * With a `pulumi` CLI (on PATH, or built by `npm run cli`) the stack is run by the real CLI (Automation API on a copy
 * of the example's project, local file backend, passphrase secrets, and the policy pack of examples/policy-pack when
 * present); otherwise by the test host (tools/harness), which
 * drives Pulumi's real dynamic-provider host. Exit code 0 when every step did what the summary says, 1 otherwise.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ApiError, CloudClient } from "@cloudinfra/pulumi/client";
import { startEmulator, type RunningEmulator } from "@cloudinfra/pulumi/emulator";
import { quickstart } from "../examples/quickstart/program";
import * as harness from "./harness";
import { cliStack, prepareProject, repositoryRoot, usePulumiCli, type PlainConfig } from "./pulumi-cli";

const SIG_KEY = "4dabf18193072939515e22adb298388d";
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const DYNAMIC_TYPE_PREFIX = "pulumi-nodejs:dynamic";
/** Outputs that change on every write (timestamps): left out of the drift and repair lines. */
const BOOKKEEPING = new Set(["createdAt", "updatedAt"]);
const DRIFTED_DESCRIPTION = "edited by hand in the console";

/** One resource of the stack as the state holds it, secrets masked. */
interface StackResource {
  urn: string;
  name: string;
  kind: string;
  id: string;
  outputs: Record<string, unknown>;
}

/** How the stack is run: the real CLI or the test host. */
interface Backend {
  /** One line saying what runs the stack. */
  readonly description: string;
  /** Whether `up` runs a policy pack (whose findings it returns). */
  readonly policyPack: boolean;
  /** `pulumi up`: the stack outputs (secrets masked) and the policy pack's findings. */
  up(): Promise<{ outputs: Record<string, unknown>; policy: string[] }>;
  refresh(): Promise<void>;
  destroy(): Promise<void>;
  /** The stack's resources now (what the state holds). */
  resources(): Promise<StackResource[]>;
}

/** A step of the story that did not do what the summary is about to claim. */
class DemoError extends Error {
  override name = "DemoError";
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new DemoError(message);
}

const say = (line = ""): void => void process.stdout.write(`${line}\n`);

function masked(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(masked);
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    if (record[SIG_KEY] === SECRET_SIG) return "[secret]";
    return Object.fromEntries(
      Object.entries(record)
        .filter(([k]) => k !== "__provider")
        .map(([k, v]) => [k, masked(v)]),
    );
  }
  return value;
}

function show(value: unknown): string {
  const text = value === undefined ? "(none)" : JSON.stringify(value);
  return text.length > 90 ? `${text.slice(0, 87)}...` : text;
}

function resourcesOf(list: { urn: string; type: string; id?: string; outputs?: Record<string, unknown> }[]) {
  return list
    .filter((r) => r.type.startsWith(DYNAMIC_TYPE_PREFIX))
    .map((r) => ({
      urn: r.urn,
      name: r.urn.slice(r.urn.lastIndexOf("::") + 2),
      kind: r.type.slice(r.type.lastIndexOf(":") + 1),
      id: r.id ?? "",
      outputs: masked(r.outputs ?? {}) as Record<string, unknown>,
    }));
}

interface Change {
  op: "+" | "~" | "-" | "+-";
  resource: StackResource;
  /** For `~`: the outputs that changed, old and new. */
  changed: { key: string; from: unknown; to: unknown }[];
}

/** What a run changed in the stack, from the state before and after it. */
function changes(before: StackResource[], after: StackResource[]): Change[] {
  const result: Change[] = [];
  const old = new Map(before.map((r) => [r.urn, r]));
  for (const now of after) {
    const was = old.get(now.urn);
    if (was === undefined) result.push({ op: "+", resource: now, changed: [] });
    else if (was.id !== now.id) result.push({ op: "+-", resource: now, changed: [] });
    else {
      const keys = [...new Set([...Object.keys(was.outputs), ...Object.keys(now.outputs)])].filter(
        (k) => !BOOKKEEPING.has(k) && JSON.stringify(was.outputs[k]) !== JSON.stringify(now.outputs[k]),
      );
      if (keys.length > 0) {
        result.push({
          op: "~",
          resource: now,
          changed: keys.map((key) => ({ key, from: was.outputs[key], to: now.outputs[key] })),
        });
      }
    }
  }
  const kept = new Set(after.map((r) => r.urn));
  // Deletions in the order they happen: dependents first (the state lists resources in dependency order).
  for (const was of [...before].reverse()) if (!kept.has(was.urn)) result.push({ op: "-", resource: was, changed: [] });
  return result;
}

function printChanges(list: Change[]): void {
  const width = Math.max(0, ...list.map((c) => c.resource.name.length));
  for (const { op, resource, changed } of list) {
    const head = `   ${op.padEnd(2)} ${resource.name.padEnd(width)}  ${resource.kind.padEnd(16)}`;
    if (op !== "~") say(`${head}  ${resource.id}`);
    else say(`${head}  ${changed.map((c) => `${c.key}: ${show(c.from)} → ${show(c.to)}`).join(", ")}`);
  }
  if (list.length === 0) say("   (no changes)");
}

// ---------------------------------------------------------------- the two ways of running the stack

/** The test host: the real dynamic-provider host, driven without the Pulumi engine (tools/harness). */
async function testHostBackend(work: string, config: PlainConfig): Promise<Backend> {
  const options = { stateFile: path.join(work, "state.json"), project: "quickstart", stack: "demo", config };
  return {
    description:
      "No `pulumi` CLI on PATH, and none built by `npm run cli` (it needs Go: it builds the pinned CLI from its Go " +
      "modules): running through the test host (tools/harness), which drives Pulumi's real dynamic-provider host " +
      "without the engine.",
    policyPack: false,
    async up() {
      const result = await harness.up(quickstart, options);
      const outputs = Object.fromEntries(
        Object.entries(result.outputs).map(([k, v]) => [k, result.secretOutputs.includes(k) ? "[secret]" : v]),
      );
      return { outputs, policy: [] };
    },
    async refresh() {
      await harness.refresh(options);
    },
    async destroy() {
      await harness.destroy(options);
    },
    async resources() {
      if (!fs.existsSync(options.stateFile)) return [];
      return resourcesOf(harness.readStateFile(options.stateFile).resources);
    },
  };
}

/** The real `pulumi` CLI through the Automation API: local file backend, passphrase secrets, the policy pack. */
async function cliBackend(work: string, version: string, config: PlainConfig): Promise<Backend> {
  const root = repositoryRoot();
  const projectDir = prepareProject(path.join(root, "examples", "quickstart"), work);
  const packSource = path.join(root, "examples", "policy-pack");
  const policyPacks = fs.existsSync(path.join(packSource, "PulumiPolicy.yaml"))
    ? [prepareProject(packSource, work)]
    : [];
  const stack = await cliStack({ projectDir, backendDir: path.join(work, "backend"), stackName: "demo", config });
  return {
    description:
      `Running the real Pulumi CLI (${version}) on a copy of examples/quickstart, with a local file backend` +
      (policyPacks.length > 0 ? " and the policy pack of examples/policy-pack." : "."),
    policyPack: policyPacks.length > 0,
    async up() {
      const policy: string[] = [];
      const result = await stack.up({
        color: "never",
        policyPacks,
        onEvent: (event) => {
          const found = event.policyEvent;
          if (found !== undefined) {
            const where = found.resourceUrn === undefined ? "" : ` (${found.resourceUrn.split("::").pop()})`;
            const level = found.enforcementLevel === "warning" ? "advisory" : found.enforcementLevel;
            policy.push(`${level} ${found.policyName}${where}: ${found.message.trim()}`);
          }
        },
      });
      const outputs = Object.fromEntries(
        Object.entries(result.outputs).map(([k, v]) => [k, v.secret ? "[secret]" : v.value]),
      );
      return { outputs, policy };
    },
    async refresh() {
      await stack.refresh({ color: "never" });
    },
    async destroy() {
      await stack.destroy({ color: "never" });
    },
    async resources() {
      const exported = await stack.exportStack();
      return resourcesOf((exported.deployment as { resources?: [] }).resources ?? []);
    },
  };
}

// ---------------------------------------------------------------- the story

async function gone(read: () => Promise<unknown>): Promise<boolean> {
  try {
    await read();
    return false;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return true;
    throw error;
  }
}

async function story(emulator: RunningEmulator, backend: Backend): Promise<void> {
  const admin = emulator.bootstrap.users.admin;
  const api = new CloudClient({ baseUrl: emulator.baseUrl, auth: { apiKey: admin.apiKey } });
  try {
    // 1. up
    say("1. up — create the quickstart: a network, a VM on it, a volume attached to the VM");
    const created = await backend.up();
    const afterUp = await backend.resources();
    const creates = changes([], afterUp);
    printChanges(creates);
    check(
      creates.length === 4 && creates.every((c) => c.op === "+"),
      `expected 4 resources created, found ${creates.length}`,
    );
    const outputs = created.outputs as Record<string, unknown> & { networkId: string; vmId: string; volumeId: string };
    say("   stack outputs:");
    const width = Math.max(...Object.keys(outputs).map((k) => k.length));
    for (const [key, value] of Object.entries(outputs)) say(`     ${key.padEnd(width)} = ${show(value)}`);
    for (const finding of created.policy) say(`   policy pack: ${finding}`);
    if (created.policy.length === 0 && backend.policyPack) say("   policy pack: no findings");
    const net = await api.getNetwork({ params: { id: outputs.networkId } });
    const vm = await api.getVm({ params: { id: outputs.vmId } });
    const volume = await api.getVolume({ params: { id: outputs.volumeId } });
    say(
      `   the API holds: network ${net.name} (${net.status}), VM ${vm.virtualMachine.name} (${vm.status}), ` +
        `volume ${volume.name} (${volume.sizeGb} GB, ${volume.status} on ${volume.virtualMachineName})`,
    );
    check(
      vm.status === "Running" && volume.virtualMachineId === outputs.vmId,
      "the VM should run with the volume on it",
    );
    const declaredDescription = net.description;

    // 2. a change behind the stack's back
    say();
    say("2. A change behind Pulumi's back — someone uses the API directly:");
    await api.updateNetwork({ params: { id: outputs.networkId }, body: { description: DRIFTED_DESCRIPTION } });
    say(`   network ${net.name}: description set to ${show(DRIFTED_DESCRIPTION)}`);
    await api.stopVm({ params: { id: outputs.vmId } });
    say(`   VM ${vm.virtualMachine.name}: stopped`);

    // 3. refresh
    say();
    say("3. refresh — read every resource back from the API; the stack now records the drift:");
    await backend.refresh();
    const afterRefresh = await backend.resources();
    const drift = changes(afterUp, afterRefresh);
    printChanges(drift);
    const drifted = new Set(drift.map((c) => c.resource.kind));
    check(
      drifted.has("Network") && drifted.has("VirtualMachine"),
      "refresh should show the network and the VM drifted",
    );

    // 4. up repairs
    say();
    say("4. up — the program still declares the original settings, so up puts them back:");
    await backend.up();
    const afterRepair = await backend.resources();
    const repairs = changes(afterRefresh, afterRepair);
    printChanges(repairs);
    const repairedNet = await api.getNetwork({ params: { id: outputs.networkId } });
    const repairedVm = await api.getVm({ params: { id: outputs.vmId } });
    say(`   the API holds: network description ${show(repairedNet.description)}, VM ${repairedVm.status}`);
    check(
      repairedNet.description === declaredDescription && repairedVm.status === "Running",
      "up should restore the network's description and start the VM",
    );
    check(
      repairs.every((c) => c.op === "~"),
      "the repair should change resources in place, not replace them",
    );

    // 5. destroy
    say();
    say("5. destroy — delete everything the stack holds:");
    await backend.destroy();
    const afterDestroy = await backend.resources();
    const deletes = changes(afterRepair, afterDestroy);
    printChanges(deletes);
    const left = await Promise.all([
      gone(() => api.getNetwork({ params: { id: outputs.networkId } })),
      gone(() => api.getVm({ params: { id: outputs.vmId } })),
      gone(() => api.getVolume({ params: { id: outputs.volumeId } })),
    ]);
    check(afterDestroy.length === 0 && left.every(Boolean), "destroy should leave nothing in the stack or the API");
    say("   the API holds: none of them (network, VM and volume answer 404)");

    say();
    say(
      `Summary: created ${creates.length}, drift found on ${drift.length} by refresh, ` +
        `repaired ${repairs.length} in place, destroyed ${deletes.length}.`,
    );
  } finally {
    await api.close();
  }
}

async function main(): Promise<number> {
  const started = Date.now();
  say("cloudinfra demo: examples/quickstart against the embedded emulator");
  const emulator = await startEmulator({ port: 0, jobDurationMs: 1000 });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-demo-"));
  try {
    say(`Emulator: ${emulator.baseUrl} (in-process, jobs shortened: the longest takes 1 s)`);
    const admin = emulator.bootstrap.users.admin;
    const config = {
      "cloudinfra:baseUrl": emulator.baseUrl,
      "cloudinfra:apiKey": { secret: admin.apiKey },
      "cloudinfra:pollIntervalMs": "100",
    };
    const version = usePulumiCli({ build: true });
    const backend =
      version === undefined ? await testHostBackend(work, config) : await cliBackend(work, version, config);
    say(backend.description);
    say();
    await story(emulator, backend);
    say(`Done in ${((Date.now() - started) / 1000).toFixed(1)} s.`);
    return 0;
  } catch (error) {
    process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await emulator.close();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

void main().then((code) => {
  process.exitCode = code;
  // Should anything still hold the event loop (a provider host that did not stop after a failure), do not hang.
  setTimeout(() => process.exit(code), 10_000).unref();
});
