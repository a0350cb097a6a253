/**
 * The real `pulumi` CLI for the end-to-end suites: which CLI is on PATH, a fresh stack of it on an emulator, and
 * readings of its state. With `CLOUDINFRA_REQUIRE_CLI=1` (set by .ci/run) a missing CLI fails the suites instead of
 * skipping them.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { EngineEvent, LocalWorkspace, PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect } from "vitest";
import type { EmulatorOptions } from "../../emulator/context";
import { ApiError, CloudClient } from "../../provider/client";
import { cliStack, prepareProject, usePulumiCli, type PlainConfig } from "../../tools/pulumi-cli";
import { stackOnEmulator, type Stack as EmulatorStack } from "../resources/helpers";

const root = path.resolve(__dirname, "../..");

/** The version of the `pulumi` CLI the suites run (on PATH, or built by `npm run cli`), if any. */
export const cliVersion = usePulumiCli();

const skipReason = "no `pulumi` CLI on PATH and none built: build it with `npm run cli` (needs Go; .ci/run does)";

if (cliVersion !== undefined) console.log(`CLI suite: the real Pulumi CLI ${cliVersion}`);
if (cliVersion === undefined) {
  if (process.env.CLOUDINFRA_REQUIRE_CLI === "1") {
    throw new Error(`CLOUDINFRA_REQUIRE_CLI=1 but ${skipReason}`);
  }
  console.log(`CLI end-to-end suites skipped: ${skipReason}`);
}

/** A describe block that runs through the real CLI, named with its version; skipped (and saying why) without it. */
export function describeCli(name: string, body: () => void): void {
  describe.skipIf(cliVersion === undefined)(
    cliVersion === undefined ? `${name} — skipped: ${skipReason}` : `${name} (pulumi ${cliVersion})`,
    body,
  );
}

/** A CLI run of a stack of {@link cliWorld}: the command line, and what it printed (stdout, then stderr). */
export interface CliRun {
  command: string;
  output: string;
}

/** Every CLI run of this test file's stacks, in order (the Automation API's commands included). */
export const cliRuns: CliRun[] = [];

/** A stack frame as Node.js prints one (`    at fn (/path/file.ts:12:3)`): never part of what the CLI shows a user. */
export const STACK_FRAME = /\n\s+at .+:\d+:\d+\)?/;

type PulumiRun = (args: string[], ...rest: unknown[]) => Promise<{ stdout: string; stderr: string }>;
const recorded = new WeakSet<object>();

/** Records every CLI run of `stack` in {@link cliRuns} (a failed run's CommandError holds both outputs). */
export function recordRuns(stack: Stack): void {
  const command = (stack.workspace as LocalWorkspace).pulumiCommand as unknown as { run: PulumiRun };
  if (recorded.has(command)) return;
  recorded.add(command);
  const run = command.run.bind(command);
  command.run = async (args, ...rest) => {
    const line = `pulumi ${args.join(" ")}`;
    try {
      const result = await run(args, ...rest);
      cliRuns.push({ command: line, output: `${result.stdout}\n${result.stderr}` });
      return result;
    } catch (error) {
      cliRuns.push({ command: line, output: String(error) });
      throw error;
    }
  };
}

/** The recorded runs whose output shows a stack frame, each as its command and the lines around the first frame. */
export function runsWithStackFrames(runs: readonly CliRun[] = cliRuns): string[] {
  return runs.flatMap(({ command, output }) => {
    const at = STACK_FRAME.exec(output)?.index;
    return at === undefined ? [] : [`${command}:\n${output.slice(Math.max(0, at - 300), at + 300)}`];
  });
}

/** A resource of an exported deployment (the parts read here). */
export interface StateResource {
  urn: string;
  type: string;
  id?: string;
  custom?: boolean;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  initErrors?: string[];
  pendingReplacement?: boolean;
}

export const DYNAMIC_TYPE = "pulumi-nodejs:dynamic/cloudinfra:";

/** The cloudinfra resources of a stack, as the CLI's state holds them. */
export async function stateResources(stack: Stack): Promise<StateResource[]> {
  const deployment = (await stack.exportStack()).deployment as { resources?: StateResource[] };
  return (deployment.resources ?? []).filter((r) => r.type.startsWith(DYNAMIC_TYPE));
}

/** The resource of a stack with the given name (the last part of its URN). */
export async function stateResource(stack: Stack, name: string): Promise<StateResource | undefined> {
  return (await stateResources(stack)).find((r) => r.urn.endsWith(`::${name}`));
}

export interface CliWorld extends EmulatorStack {
  /** A scratch directory for this test file, removed after it. */
  work: string;
  /** Stack config with the emulator's base URL and the admin's API key (a secret). */
  config: PlainConfig;
  /** Stack config that signs the admin in (email, password, TOTP secret): what an ApiKey needs; no API key. */
  signIn: PlainConfig;
  /**
   * A new stack of the real CLI in a copy of the project directory `project` (an example's name, or a directory),
   * with `config` (default {@link CliWorld.config}): running the project's own program, or `program` inline.
   */
  stack(project: string, program?: PulumiFn, config?: PlainConfig, stackName?: string): Promise<Stack>;
  /** Whether the API accepts `secret` as an API key. */
  accepted(secret: string): Promise<boolean>;
  /** The names (emails of users, lower-case group names) of every kind's records starting with `prefix`. */
  namesInApi(prefix: string): Promise<Record<string, string[]>>;
}

/** An emulator for one test file (fast jobs, no rate limit unless asked) and real-CLI stacks on it. */
export async function cliWorld(options: EmulatorOptions = {}): Promise<CliWorld> {
  const world = await stackOnEmulator(options);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-cli-"));
  const stacks: Stack[] = [];
  afterAll(async () => {
    for (const stack of stacks) await stack.workspace.removeStack(stack.name, { force: true }).catch(() => undefined);
    fs.rmSync(work, { recursive: true, force: true });
  });
  // Errors meant for the user print as their message: no CLI output of the suite shows a stack frame.
  afterAll(() => {
    expect(runsWithStackFrames(), "CLI output with a stack trace").toEqual([]);
  });
  const config: PlainConfig = {
    "cloudinfra:baseUrl": world.emulator.baseUrl,
    "cloudinfra:apiKey": { secret: world.emulator.bootstrap.users.admin.apiKey },
    "cloudinfra:pollIntervalMs": "20",
  };
  const admin = world.emulator.bootstrap.users.admin;
  const signIn: PlainConfig = {
    "cloudinfra:baseUrl": world.emulator.baseUrl,
    "cloudinfra:email": admin.email,
    "cloudinfra:password": { secret: admin.password },
    "cloudinfra:totpSecret": { secret: admin.totpSecret },
    "cloudinfra:pollIntervalMs": "20",
  };
  let count = 0;
  const api = world.api;
  return Object.assign(world, {
    work,
    config,
    signIn,
    async accepted(secret: string) {
      const probe = new CloudClient({
        baseUrl: world.emulator.baseUrl,
        auth: { apiKey: secret },
        retry: { retries: 0 },
      });
      try {
        await probe.check();
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) return false;
        throw error;
      } finally {
        await probe.close();
      }
    },
    async namesInApi(prefix: string) {
      const named = <T>(items: T[], name: (item: T) => string) => items.map(name).filter((n) => n.startsWith(prefix));
      const query = { search: prefix, limit: 100 };
      return {
        networks: named((await api.listNetworks({ query })).data, (n) => n.name),
        vms: named((await api.listVms({ query })).data, (v) => v.name),
        gpus: named((await api.listGpuVms({ query })).data, (g) => g.name),
        volumes: named((await api.listVolumes({ query })).data, (v) => v.name),
        groups: named((await api.listTeams({ query })).data, (t) => t.name.toLowerCase()),
        users: named((await api.listUsers({ query })).data, (u) => u.email),
        keys: named((await api.listApiKeys({ query })).data, (k) => k.name),
      };
    },
    async stack(project: string, program?: PulumiFn, stackConfig: PlainConfig = config, stackName?: string) {
      const source = path.isAbsolute(project) ? project : path.join(root, "examples", project);
      const parent = fs.mkdtempSync(path.join(work, `${++count}-`));
      const projectDir = prepareProject(source, parent, root);
      const stack = await cliStack({
        projectDir,
        backendDir: path.join(work, "backend"),
        stackName: stackName ?? `s${count}`,
        program,
        config: stackConfig,
      });
      recordRuns(stack);
      stacks.push(stack);
      return stack;
    },
  });
}

/** A copy of a policy pack project (default examples/policy-pack) with its node_modules, for `policyPacks`. */
export function policyPack(world: CliWorld, source = path.join(root, "examples", "policy-pack")): string {
  return prepareProject(source, fs.mkdtempSync(path.join(world.work, "pack-")), root);
}

/** Whether a read of the API answers 404 (the resource is gone). */
export async function gone(read: () => Promise<unknown>): Promise<boolean> {
  const error = await read().then(
    () => undefined,
    (e: unknown) => e,
  );
  return (error as { status?: number } | undefined)?.status === 404;
}

/**
 * The policy events of a run, as `level policy-name`; a remediation as `remediated policy-name` (the CLI's
 * `policyRemediationEvent`, which the Automation API's types do not name yet but pass on).
 */
export function policyRecorder(): { onEvent: (event: EngineEvent) => void; events: string[] } {
  const events: string[] = [];
  return {
    events,
    onEvent(event) {
      const found = event.policyEvent;
      if (found !== undefined) events.push(`${found.enforcementLevel} ${found.policyName}`);
      const remediated = (event as { policyRemediationEvent?: { policyName: string } }).policyRemediationEvent;
      if (remediated !== undefined) events.push(`remediated ${remediated.policyName}`);
    },
  };
}
