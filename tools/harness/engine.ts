import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import * as resourceProto from "@pulumi/pulumi/proto/resource_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { HostError, ProviderHost, type DiffResult, type HostConfigValue } from "./host";
import {
  STACK_TYPE,
  deletionWaves,
  dependencyOrder,
  emptyState,
  loadState,
  providerOf,
  saveState,
  type ResourceOptions,
  type StackState,
  type StateResource,
} from "./state";
import {
  PROVIDER_KEY,
  annotateSecrets,
  changedKeys,
  deepEqual,
  flattenReferences,
  markSecret,
  reveal,
  revealMap,
  secretPaths,
  withoutProvider,
  type WireMap,
} from "./wire";

/** Type tokens of dynamic resources start with this (`pulumi-nodejs:dynamic/<module>:<Type>`). */
export const DYNAMIC_TYPE_PREFIX = "pulumi-nodejs:dynamic";

/** A stack configuration value: a string, or `{ secret }` for a secret one. */
export type ConfigValue = string | { secret: string };

export interface RunOptions {
  /** JSON state file carried from run to run; created when missing. */
  stateFile: string;
  /** Stack configuration, `namespace:key` → value (a key without namespace gets the project's). */
  config?: Record<string, ConfigValue>;
  /** Project name (default `cloudinfra-test`). */
  project?: string;
  /** Stack name (default `test`). */
  stack?: string;
  /** Extra environment variables for the provider host process. */
  env?: Record<string, string | undefined>;
  /** Working directory of the host (default: the repository root). */
  cwd?: string;
  /** Throw a {@link RunError} when the run reports errors (default true), as the Automation API does. */
  throwOnError?: boolean;
}

/** A Pulumi program: registers resources and may return the stack outputs. */
export type Program = () => unknown;

export type Operation = "create" | "update" | "replace" | "delete" | "same" | "read";

export interface DiffDetails {
  /** What the provider's Diff said ("unknown" becomes the engine's own comparison of old and new inputs). */
  changes: "some" | "none";
  /** Top-level inputs that changed (the provider's list, else the engine's comparison). */
  changedKeys: string[];
  /** Properties that force a replacement. */
  replaces: string[];
  deleteBeforeReplace: boolean;
}

/** What happened to one resource. Values are plain (secrets revealed); `secretOutputs` says which were secret. */
export interface StepResult {
  urn: string;
  name: string;
  type: string;
  custom: boolean;
  op: Operation;
  /** Id after the step (the new one for a replace, the deleted one for a delete); "" when not known yet. */
  id: string;
  /** The replaced resource's id. */
  oldId?: string;
  diff?: DiffDetails;
  /** Inputs after Check, without `__provider`. */
  inputs: Record<string, unknown>;
  /** Outputs after the step, without `__provider`; during a preview unknown values are the sentinel. */
  outputs: Record<string, unknown>;
  /** Paths (`password`, `auth.token`) of the outputs that are secret. */
  secretOutputs: string[];
  /** Replacement done delete-first. */
  deleteBeforeReplace?: boolean;
  /** Refresh only: whether Read found the resource as recorded, different, or gone. */
  refresh?: "same" | "changed" | "gone";
  initErrors?: string[];
  error?: string;
}

export interface RunErrorEntry {
  urn?: string;
  message: string;
}

export interface RunResult {
  kind: "up" | "preview" | "refresh" | "destroy";
  ok: boolean;
  /** One entry per resource touched (for a preview: planned), in completion order. */
  steps: StepResult[];
  /** Count of steps per operation, as `pulumi` prints at the end. */
  summary: Partial<Record<Operation, number>>;
  /** Stack outputs, plain. */
  outputs: Record<string, unknown>;
  /** Paths of the stack outputs that are secret. */
  secretOutputs: string[];
  errors: RunErrorEntry[];
  warnings: string[];
  /** The stack after the run (what the state file now holds; unchanged by a preview). */
  state: StackState;
  /** Everything the provider host wrote (providers log with console.error). */
  hostLog: string;
  /** The step of the resource named `name` (and of `type`, when names repeat). Throws when there is none. */
  step(name: string, type?: string): StepResult;
}

/** A run that reported errors (thrown unless `throwOnError: false`). */
export class RunError extends Error {
  constructor(readonly result: RunResult) {
    const lines = result.errors.map((e) => `  ${e.urn === undefined ? "" : `${nameOfUrn(e.urn)}: `}${e.message}`);
    const log = result.hostLog.trim();
    super(
      `${result.kind} failed:\n${lines.join("\n")}${log === "" ? "" : `\nprovider host log:\n${log.slice(-4000)}`}`,
    );
    this.name = "RunError";
  }
}

/** Creates or updates the program's resources, then deletes what the program no longer declares. */
export function up(program: Program, options: RunOptions): Promise<RunResult> {
  return exclusive(() => run("up", options, program));
}

/** Runs the program as a preview: Check and Diff only; reports the planned steps; changes nothing. */
export function preview(program: Program, options: RunOptions): Promise<RunResult> {
  return exclusive(() => run("preview", options, program));
}

/** Reads every resource of the state back from its provider; an empty id drops it. Does not run a program. */
export function refresh(options: RunOptions): Promise<RunResult> {
  return exclusive(() => run("refresh", options));
}

/** Deletes every resource of the state, dependents first. */
export function destroy(options: RunOptions): Promise<RunResult> {
  return exclusive(() => run("destroy", options));
}

// The Pulumi runtime keeps its settings in one process-wide store, so runs in one process take turns.
let queue: Promise<unknown> = Promise.resolve();
function exclusive<T>(task: () => Promise<T>): Promise<T> {
  const next = queue.then(task, task);
  queue = next.catch(() => undefined);
  return next;
}

const SKIPPED = "not started: the deployment stopped after an earlier error";

interface Resolved {
  stateFile: string;
  project: string;
  stack: string;
  cwd: string;
  env: Record<string, string | undefined>;
  config: Record<string, HostConfigValue>;
}

function resolveOptions(options: RunOptions): Resolved {
  const project = options.project ?? "cloudinfra-test";
  const config: Record<string, HostConfigValue> = {};
  for (const [key, value] of Object.entries(options.config ?? {})) {
    const fullKey = key.includes(":") ? key : `${project}:${key}`;
    config[fullKey] = typeof value === "string" ? { value, secret: false } : { value: value.secret, secret: true };
  }
  return {
    stateFile: path.resolve(options.stateFile),
    project,
    stack: options.stack ?? "test",
    cwd: options.cwd ?? repositoryRoot(),
    env: options.env ?? {},
    config,
  };
}

/** The repository's root: the first directory above this file with package.json and node_modules (also from dist/). */
export function repositoryRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "package.json")) && fs.existsSync(path.join(dir, "node_modules"))) return dir;
    if (path.dirname(dir) === dir) throw new Error("cannot find the repository root above " + __dirname);
  }
}

async function run(kind: RunResult["kind"], options: RunOptions, program?: Program): Promise<RunResult> {
  const resolved = resolveOptions(options);
  const old = loadState(resolved.stateFile, resolved.project, resolved.stack);
  const deployment = new Deployment(kind, resolved, old);
  try {
    switch (kind) {
      case "up":
      case "preview":
        if (await deployment.deletePending()) {
          await runProgram(deployment, program!, resolved);
          await deployment.deleteUnwanted();
        }
        break;
      case "refresh":
        await deployment.refreshAll();
        break;
      case "destroy":
        await deployment.destroyAll();
        break;
    }
  } finally {
    await deployment.closeHost();
  }
  const state = deployment.finalState();
  if (kind !== "preview") saveState(resolved.stateFile, state);
  const result = deployment.result(state);
  if (!result.ok && options.throwOnError !== false) throw new RunError(result);
  return result;
}

interface MonitorOverrides {
  registerResource(
    req: resourceProto.RegisterResourceRequest,
    callback: (err: Error | null, resp?: unknown) => void,
  ): void;
  registerResourceOutputs(
    req: resourceProto.RegisterResourceOutputsRequest,
    callback: (err: Error | null, resp?: unknown) => void,
  ): void;
  readResource(req: unknown, callback: (err: Error | null, resp?: unknown) => void): void;
}

/**
 * Runs the program under `pulumi.runtime.setMocks`, with the mock monitor's registration calls taken over: the
 * mocks' `newResource` only sees deserialized inputs, while the engine needs the whole request (the raw property
 * struct with unknowns and secrets, dependencies, options).
 */
async function runProgram(deployment: Deployment, program: Program, options: Resolved): Promise<void> {
  const values: Record<string, string> = {};
  const secretKeys: string[] = [];
  for (const [key, { value, secret }] of Object.entries(options.config)) {
    values[key] = value;
    if (secret) secretKeys.push(key);
  }
  pulumi.runtime.setAllConfig(values, secretKeys);
  await pulumi.runtime.setMocks(
    {
      newResource: () => {
        throw new Error("unreachable: the test host handles registrations itself");
      },
      call: (args) => {
        throw new Error(`the test host does not run invokes (${args.token})`);
      },
    },
    options.project,
    options.stack,
    deployment.preview,
  );
  const monitor = pulumi.runtime.getMonitor() as unknown as MonitorOverrides;
  monitor.registerResource = (req, callback) => {
    deployment.register(req).then(
      ({ urn, id, object }) => {
        const resp = new resourceProto.RegisterResourceResponse();
        resp.setUrn(urn).setId(id).setObject(Struct.fromJavaScript(object));
        resp.setResult(resourceProto.Result.SUCCESS);
        callback(null, resp);
      },
      // A plain Error: the SDK treats gRPC codes such as UNAVAILABLE as "the engine is gone" for the whole process.
      (err: unknown) => callback(new Error(messageOf(err))),
    );
  };
  monitor.registerResourceOutputs = (req, callback) => {
    deployment.registerOutputs(req.getUrn(), (req.getOutputs()?.toJavaScript() ?? {}) as WireMap);
    callback(null, {});
  };
  monitor.readResource = (_req, callback) =>
    callback(new Error("the test host cannot read existing resources (Resource.get does not work for dynamic ones)"));

  const rejections = captureUnhandledRejections();
  try {
    try {
      await pulumi.runtime.runInPulumiStack(async () => (await program()) ?? undefined);
    } catch (err) {
      deployment.programError(err);
    }
    await (pulumi.runtime as unknown as { waitForRPCs(): Promise<void> }).waitForRPCs();
    await deployment.drain();
  } finally {
    for (const reason of await rejections.release()) deployment.programError(reason);
  }
}

/**
 * The language host turns unhandled rejections (a failed registration rejects every output of the resource) into
 * program errors; during a run they are collected here instead of reaching the test runner.
 */
function captureUnhandledRejections(): { release(): Promise<unknown[]> } {
  const saved = process.listeners("unhandledRejection");
  const captured: unknown[] = [];
  const listener = (reason: unknown): void => {
    captured.push(reason);
  };
  process.removeAllListeners("unhandledRejection");
  process.on("unhandledRejection", listener);
  return {
    async release() {
      for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
      process.off("unhandledRejection", listener);
      for (const original of saved) process.on("unhandledRejection", original);
      return captured;
    },
  };
}

interface Goal {
  urn: string;
  type: string;
  name: string;
  parent: string;
  custom: boolean;
  inputs: WireMap;
  dependencies: string[];
  propertyDependencies: Record<string, string[]>;
  options: ResourceOptions;
  ignoreChanges: string[];
  replaceOnChanges: string[];
  importId: string;
}

interface Registered {
  urn: string;
  id: string;
  object: WireMap;
}

/** One run: the old state, what the program registers, the steps taken and the new state. */
class Deployment {
  readonly preview: boolean;
  private readonly steps: StepResult[] = [];
  private readonly errors: RunErrorEntry[] = [];
  private readonly warnings: string[] = [];
  /** Old resources by URN (without those waiting for deletion). */
  private readonly live = new Map<string, StateResource>();
  /** New records, in completion order. */
  private readonly records: StateResource[] = [];
  private readonly seen = new Set<string>();
  /** Old entries deleted during this run. */
  private readonly gone = new Set<StateResource>();
  /** Old entries replaced create-first: deleted at the end of the run. */
  private readonly replaced: StateResource[] = [];
  /** Old entries refreshed: old → new. */
  private readonly refreshed = new Map<StateResource, StateResource>();
  private readonly inflight = new Set<Promise<unknown>>();
  private stopped = false;
  private hostStart: Promise<ProviderHost> | undefined;
  private hostLog = "";

  constructor(
    readonly kind: RunResult["kind"],
    private readonly options: Resolved,
    private readonly old: StackState,
  ) {
    this.preview = kind === "preview";
    for (const r of old.resources) if (!r.pendingDelete) this.live.set(r.urn, r);
    if (kind === "up" || kind === "preview") void this.host().catch(() => undefined);
  }

  /** The host, started and configured once per run (as `pulumi` starts one per deployment). */
  private host(): Promise<ProviderHost> {
    this.hostStart ??= ProviderHost.start(this.options).then(async (host) => {
      try {
        await host.configure(this.options.config);
      } catch (err) {
        await host.close();
        throw new Error(`Configure failed: ${messageOf(err)}\n${host.log}`, { cause: err });
      }
      return host;
    });
    return this.hostStart;
  }

  async closeHost(): Promise<void> {
    if (this.hostStart === undefined) return;
    const host = await this.hostStart.catch(() => undefined);
    if (host === undefined) return;
    await host.close();
    this.hostLog = host.log;
  }

  /** Waits for every registration still being processed. */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]);
  }

  // ---- registration (up / preview) ----

  register(req: resourceProto.RegisterResourceRequest): Promise<Registered> {
    const work = Promise.resolve().then(() => this.registerGoal(goalOf(req, this.options)));
    this.inflight.add(work);
    void work.finally(() => this.inflight.delete(work)).catch(() => undefined);
    return work;
  }

  registerOutputs(urn: string, outputs: WireMap): void {
    const record = this.records.find((r) => r.urn === urn);
    if (record === undefined) return;
    record.outputs = flattenReferences(outputs) as WireMap;
    const step = this.steps.find((s) => s.urn === urn);
    if (step !== undefined) Object.assign(step, plainOutputs(record.outputs));
  }

  private async registerGoal(goal: Goal): Promise<Registered> {
    if (this.seen.has(goal.urn)) {
      throw this.fail(goal.urn, `duplicate resource URN ${goal.urn}: resource names must be unique per type`);
    }
    this.seen.add(goal.urn);
    if (!goal.custom) return this.registerComponent(goal);
    if (!goal.type.startsWith(DYNAMIC_TYPE_PREFIX)) {
      throw this.fail(
        goal.urn,
        `the test host only runs dynamic resources (${DYNAMIC_TYPE_PREFIX}...), not ${goal.type}`,
      );
    }
    if (goal.importId !== "") throw this.fail(goal.urn, "import is not supported for dynamic resources");
    if (this.stopped) throw new Error(SKIPPED);
    const old = this.live.get(goal.urn);
    const step = newStep(goal, old === undefined ? "create" : "same");
    try {
      return old === undefined ? await this.createNew(goal, step) : await this.changeExisting(goal, old, step);
    } catch (err) {
      step.error = messageOf(err);
      throw this.fail(goal.urn, step.error);
    } finally {
      this.steps.push(step);
    }
  }

  private registerComponent(goal: Goal): Registered {
    const old = this.live.get(goal.urn);
    const record = this.record(goal, "", goal.inputs, old?.outputs ?? {});
    this.steps.push({ ...newStep(goal, old === undefined ? "create" : "same"), ...plainOutputs(record.outputs) });
    return { urn: goal.urn, id: "", object: {} };
  }

  private async createNew(goal: Goal, step: StepResult): Promise<Registered> {
    const inputs = await this.check(goal, goal.inputs, {});
    step.inputs = plain(inputs);
    if (this.preview) return this.planned(step, goal, "", inputs);
    const record = await this.createResource(goal, inputs, step);
    return { urn: goal.urn, id: record.id, object: record.outputs };
  }

  /** During a preview a provider without preview support gets no Create/Update: the outputs are the inputs. */
  private planned(step: StepResult, goal: Goal, id: string, inputs: WireMap): Registered {
    step.id = id;
    Object.assign(step, plainOutputs(inputs));
    return { urn: goal.urn, id, object: inputs };
  }

  private async changeExisting(goal: Goal, old: StateResource, step: StepResult): Promise<Registered> {
    const wanted = applyIgnoreChanges(goal.inputs, old.inputs, goal.ignoreChanges);
    let inputs = await this.check(goal, wanted, old.inputs);
    step.inputs = plain(inputs);
    const host = await this.host();
    const response = await host.diff(
      goal.urn,
      old.id,
      revealMap(old.outputs),
      revealMap(inputs),
      revealMap(old.inputs),
      goal.ignoreChanges,
    );
    const diff = diffDetails(response, old.inputs, inputs, goal.replaceOnChanges);
    step.diff = diff;

    if (diff.replaces.length > 0) {
      step.op = "replace";
      step.oldId = old.id;
      if (old.options.protect || goal.options.protect) {
        throw new Error(`${goal.urn} is protected: it cannot be replaced (changes to ${diff.replaces.join(", ")})`);
      }
      // Before a replacement the engine checks again without the old inputs (so defaults such as names are fresh).
      inputs = await this.check(goal, wanted, {});
      step.inputs = plain(inputs);
      step.deleteBeforeReplace = diff.deleteBeforeReplace || goal.options.deleteBeforeReplace === true;
      if (this.preview) return this.planned(step, goal, "", inputs);
      if (step.deleteBeforeReplace) {
        await host.delete(old.urn, old.id, revealMap(old.outputs), revealMap(old.inputs));
        this.gone.add(old);
      }
      try {
        const record = await this.createResource(goal, inputs, step);
        if (!step.deleteBeforeReplace) this.replaced.push(old);
        return { urn: goal.urn, id: record.id, object: record.outputs };
      } catch (err) {
        // The replacement exists (it failed to initialise): the old one is still due for deletion.
        const created = err instanceof HostError && err.initFailure !== undefined && err.initFailure.id !== "";
        if (created && !step.deleteBeforeReplace) this.replaced.push(old);
        throw err;
      }
    }

    // A resource that failed to initialise is updated even when nothing changed, as the engine does.
    if (diff.changes === "some" || (old.initErrors?.length ?? 0) > 0) {
      step.op = "update";
      step.id = old.id;
      if (this.preview) return this.planned(step, goal, old.id, inputs);
      let record: StateResource;
      try {
        const updated = await host.update(
          goal.urn,
          old.id,
          revealMap(old.outputs),
          revealMap(inputs),
          revealMap(old.inputs),
          goal.ignoreChanges,
        );
        record = this.record(goal, old.id, inputs, this.outputsOf(goal, updated.properties, inputs));
      } catch (err) {
        if (err instanceof HostError && err.initFailure !== undefined) {
          this.recordInitFailure(goal, old.id, inputs, err.initFailure.properties, err.initFailure.reasons, step);
        }
        throw err;
      }
      Object.assign(step, plainOutputs(record.outputs));
      return { urn: goal.urn, id: old.id, object: record.outputs };
    }

    step.id = old.id;
    const outputs = markSecret(old.outputs, goal.options.additionalSecretOutputs ?? []);
    const record = this.record(goal, old.id, inputs, outputs);
    Object.assign(step, plainOutputs(record.outputs));
    return { urn: goal.urn, id: old.id, object: record.outputs };
  }

  /** Check; failures fail the resource. Secrets of the goal stay secret in the checked inputs. */
  private async check(goal: Goal, news: WireMap, olds: WireMap): Promise<WireMap> {
    const host = await this.host();
    const checked = await host.check(goal.urn, revealMap(olds), revealMap(news));
    if (checked.failures.length > 0) {
      throw new Error(`Check failed: ${checked.failures.map((f) => `${f.property}: ${f.reason}`).join("; ")}`);
    }
    return annotateSecrets(checked.inputs, news);
  }

  private async createResource(goal: Goal, inputs: WireMap, step: StepResult): Promise<StateResource> {
    const host = await this.host();
    try {
      const created = await host.create(goal.urn, revealMap(inputs));
      const record = this.record(goal, created.id, inputs, this.outputsOf(goal, created.properties, inputs));
      step.id = record.id;
      Object.assign(step, plainOutputs(record.outputs));
      return record;
    } catch (err) {
      if (err instanceof HostError && err.initFailure !== undefined && err.initFailure.id !== "") {
        const { id, properties, reasons } = err.initFailure;
        this.recordInitFailure(goal, id, inputs, properties, reasons, step);
      }
      throw err;
    }
  }

  /** The resource exists but failed to initialise: recorded with the error's properties as outputs, as the engine does. */
  private recordInitFailure(
    goal: Goal,
    id: string,
    inputs: WireMap,
    properties: WireMap,
    reasons: string[],
    step: StepResult,
  ): void {
    const record = this.record(goal, id, inputs, this.outputsOf(goal, properties, inputs), reasons);
    step.id = id;
    step.initErrors = reasons;
    Object.assign(step, plainOutputs(record.outputs));
    if (providerOf({ ...record, inputs: {} }) === undefined) {
      this.warnings.push(
        `${goal.name}: the initialization failure's properties carry no ${PROVIDER_KEY}; the engine records them as ` +
          `the outputs, so Read and Delete of this resource fail until an update succeeds`,
      );
    }
  }

  private outputsOf(goal: Goal, properties: WireMap, inputs: WireMap): WireMap {
    return markSecret(annotateSecrets(properties, inputs), goal.options.additionalSecretOutputs ?? []);
  }

  private record(goal: Goal, id: string, inputs: WireMap, outputs: WireMap, initErrors?: string[]): StateResource {
    const record: StateResource = {
      urn: goal.urn,
      type: goal.type,
      name: goal.name,
      custom: goal.custom,
      id,
      parent: goal.parent,
      inputs,
      outputs,
      dependencies: goal.dependencies,
      propertyDependencies: goal.propertyDependencies,
      options: goal.options,
    };
    if (initErrors !== undefined && initErrors.length > 0) record.initErrors = initErrors;
    const index = this.records.findIndex((r) => r.urn === goal.urn);
    if (index >= 0) this.records.splice(index, 1);
    this.records.push(record);
    return record;
  }

  // ---- deletions ----

  /** Deletes what earlier runs replaced but could not delete. Returns false when that failed (the run stops). */
  async deletePending(): Promise<boolean> {
    const pending = this.old.resources.filter((r) => r.pendingDelete);
    return this.deleteAll(pending, "pending");
  }

  /** After the program: deletes the replaced resources and those the program no longer declares. */
  async deleteUnwanted(): Promise<void> {
    if (this.errors.length > 0) return;
    const unwanted = this.old.resources.filter((r) => !r.pendingDelete && !this.seen.has(r.urn));
    await this.deleteAll([...unwanted, ...this.replaced], "unwanted");
  }

  async destroyAll(): Promise<void> {
    await this.deleteAll(this.old.resources, "unwanted");
  }

  /** Deletes in dependency order, a wave at a time; stops after a wave with a failure (the rest is still needed). */
  private async deleteAll(resources: StateResource[], reason: "pending" | "unwanted"): Promise<boolean> {
    const deleting = new Set(resources.map((r) => r.urn));
    for (const wave of deletionWaves(resources)) {
      const results = await Promise.all(wave.map((r) => this.deleteOne(r, deleting, reason)));
      if (results.includes(false)) return false;
    }
    return true;
  }

  private async deleteOne(
    resource: StateResource,
    deleting: Set<string>,
    reason: "pending" | "unwanted",
  ): Promise<boolean> {
    const replacedNow = this.replaced.includes(resource);
    const step: StepResult = {
      ...stepOf(resource, "delete"),
      inputs: plain(resource.inputs),
      ...plainOutputs(resource.outputs),
    };
    // A replacement's deletion is part of its "replace" step; only report it when it fails.
    const report = (): void => {
      if (!replacedNow) this.steps.push(step);
    };
    if (this.preview) {
      report();
      return true;
    }
    if (resource.options.protect && !replacedNow && reason === "unwanted") {
      step.error = `${resource.urn} is protected: it cannot be deleted`;
      this.fail(resource.urn, step.error);
      report();
      return false;
    }
    const deletedWithOther = resource.options.deletedWith !== undefined && deleting.has(resource.options.deletedWith);
    if (resource.custom && !resource.options.retainOnDelete && !deletedWithOther) {
      try {
        const host = await this.host();
        await host.delete(resource.urn, resource.id, revealMap(resource.outputs), revealMap(resource.inputs));
      } catch (err) {
        step.error = messageOf(err) + missingProviderHint(resource);
        this.fail(resource.urn, step.error);
        report();
        return false;
      }
    }
    this.gone.add(resource);
    report();
    return true;
  }

  // ---- refresh ----

  async refreshAll(): Promise<void> {
    const custom = this.old.resources.filter((r) => r.custom && !r.pendingDelete);
    await Promise.all(custom.map((r) => this.refreshOne(r)));
  }

  private async refreshOne(old: StateResource): Promise<void> {
    const step: StepResult = { ...stepOf(old, "read"), inputs: plain(old.inputs), ...plainOutputs(old.outputs) };
    try {
      const host = await this.host();
      const read = await host.read(old.urn, old.id, revealMap(old.outputs), revealMap(old.inputs));
      if (read.id === "") {
        this.gone.add(old);
        step.refresh = "gone";
        return;
      }
      const outputs = markSecret(
        annotateSecrets(read.properties, old.outputs),
        old.options.additionalSecretOutputs ?? [],
      );
      const inputs = read.inputs === undefined ? old.inputs : annotateSecrets(read.inputs, old.inputs);
      const { initErrors: _cleared, ...rest } = old;
      this.refreshed.set(old, { ...rest, id: read.id, inputs, outputs });
      const changed = changedKeys(old.outputs, outputs);
      const inputsChanged = !deepEqual(reveal(old.inputs), reveal(inputs));
      step.refresh = changed.length > 0 || inputsChanged || read.id !== old.id ? "changed" : "same";
      step.id = read.id;
      step.inputs = plain(inputs);
      Object.assign(step, plainOutputs(outputs));
      step.diff = {
        changes: step.refresh === "same" ? "none" : "some",
        changedKeys: changed,
        replaces: [],
        deleteBeforeReplace: false,
      };
    } catch (err) {
      step.error = messageOf(err) + missingProviderHint(old);
      this.fail(old.urn, step.error);
    } finally {
      this.steps.push(step);
    }
  }

  // ---- errors and results ----

  /** Records a resource error and stops the deployment from starting new provider operations. */
  private fail(urn: string, message: string): Error {
    this.stopped = true;
    if (!this.errors.some((e) => e.urn === urn && e.message === message)) this.errors.push({ urn, message });
    return new Error(message);
  }

  /** An error of the program itself (thrown, or an unhandled rejection); echoes of resource errors are dropped. */
  programError(err: unknown): void {
    const message = messageOf(err);
    if (message.includes(SKIPPED)) return;
    if (this.errors.some((e) => message === e.message || message.includes(e.message))) return;
    this.errors.push({ message });
  }

  finalState(): StackState {
    if (this.preview) return this.old;
    const resources: StateResource[] = [...this.records];
    const superseded = new Set(this.records.map((r) => r.urn));
    for (const r of this.old.resources) {
      if (this.gone.has(r)) continue;
      if (this.replaced.includes(r)) resources.push({ ...r, pendingDelete: true });
      else if (r.pendingDelete || !superseded.has(r.urn)) resources.push(this.refreshed.get(r) ?? r);
    }
    return { ...emptyState(this.options.project, this.options.stack), resources: dependencyOrder(resources) };
  }

  result(state: StackState): RunResult {
    const stackOutputs = this.stackOutputs(state);
    const summary: Partial<Record<Operation, number>> = {};
    for (const step of this.steps) summary[step.op] = (summary[step.op] ?? 0) + 1;
    const steps = this.steps;
    return {
      kind: this.kind,
      ok: this.errors.length === 0,
      steps,
      summary,
      outputs: plain(stackOutputs),
      secretOutputs: secretPaths(stackOutputs),
      errors: this.errors,
      warnings: this.warnings,
      state,
      hostLog: this.hostLog,
      step(name, type) {
        const found = steps.filter((s) => s.name === name && (type === undefined || s.type === type));
        if (found.length !== 1) {
          throw new Error(`expected one step for ${name}${type ? ` [${type}]` : ""}, found ${found.length}`);
        }
        return found[0]!;
      },
    };
  }

  private stackOutputs(state: StackState): WireMap {
    const isStack = (r: StateResource): boolean => r.type === STACK_TYPE && r.parent === "";
    if (this.preview) return this.records.find(isStack)?.outputs ?? {};
    return state.resources.find(isStack)?.outputs ?? {};
  }
}

function goalOf(req: resourceProto.RegisterResourceRequest, options: Resolved): Goal {
  const type = req.getType();
  const name = req.getName();
  const parent = req.getParent();
  const propertyDependencies: Record<string, string[]> = {};
  req.getPropertydependenciesMap().forEach((deps, key) => {
    propertyDependencies[key] = deps.getUrnsList();
  });
  const resourceOptions: ResourceOptions = {};
  if (req.getProtect() === true) resourceOptions.protect = true;
  if (req.getRetainondelete() === true) resourceOptions.retainOnDelete = true;
  if (req.getDeletebeforereplace()) resourceOptions.deleteBeforeReplace = true;
  if (req.getAdditionalsecretoutputsList().length > 0) {
    resourceOptions.additionalSecretOutputs = req.getAdditionalsecretoutputsList();
  }
  if (req.getDeletedwith() !== "") resourceOptions.deletedWith = req.getDeletedwith();
  return {
    urn: urnOf(options, parent, type, name),
    type,
    name,
    parent,
    custom: req.getCustom(),
    inputs: flattenReferences((req.getObject()?.toJavaScript() ?? {}) as WireMap) as WireMap,
    dependencies: req.getDependenciesList(),
    propertyDependencies,
    options: resourceOptions,
    ignoreChanges: req.getIgnorechangesList(),
    replaceOnChanges: req.getReplaceonchangesList(),
    importId: req.getImportid(),
  };
}

/** The engine's URN: children carry their ancestors' types, except the root stack's. */
function urnOf(options: Resolved, parent: string, type: string, name: string): string {
  let qualified = type;
  if (parent !== "") {
    const parentType = parent.split("::")[2] ?? "";
    if (parentType !== STACK_TYPE) qualified = `${parentType}$${type}`;
  }
  return `urn:pulumi:${options.stack}::${options.project}::${qualified}::${name}`;
}

function nameOfUrn(urn: string): string {
  return urn.split("::").slice(3).join("::");
}

/** `ignoreChanges`: the listed top-level properties keep their old values. */
function applyIgnoreChanges(news: WireMap, olds: WireMap, ignore: string[]): WireMap {
  const result = { ...news };
  for (const key of ignore) {
    if (key in olds) result[key] = olds[key]!;
    else delete result[key];
  }
  return result;
}

/** The engine's reading of a Diff response (see `diffResource` in the engine's step generator). */
function diffDetails(
  response: DiffResult,
  oldInputs: WireMap,
  newInputs: WireMap,
  replaceOnChanges: string[],
): DiffDetails {
  const changes =
    response.changes === "unknown"
      ? deepEqual(revealMap(oldInputs), revealMap(newInputs))
        ? "none"
        : "some"
      : response.changes;
  if (changes === "none") return { changes, changedKeys: [], replaces: [], deleteBeforeReplace: false };
  const changed = response.diffs.length > 0 ? response.diffs : changedKeys(oldInputs, newInputs);
  const replaces = [...response.replaces];
  for (const key of changed) {
    if ((replaceOnChanges.includes(key) || replaceOnChanges.includes("*")) && !replaces.includes(key)) {
      replaces.push(key);
    }
  }
  return { changes, changedKeys: changed, replaces, deleteBeforeReplace: response.deleteBeforeReplace };
}

function newStep(goal: Goal, op: Operation): StepResult {
  return {
    urn: goal.urn,
    name: goal.name,
    type: goal.type,
    custom: goal.custom,
    op,
    id: "",
    inputs: plain(goal.inputs),
    outputs: {},
    secretOutputs: [],
  };
}

function stepOf(resource: StateResource, op: Operation): StepResult {
  return {
    urn: resource.urn,
    name: resource.name,
    type: resource.type,
    custom: resource.custom,
    op,
    id: resource.id,
    inputs: {},
    outputs: {},
    secretOutputs: [],
  };
}

function plain(map: WireMap): Record<string, unknown> {
  return revealMap(withoutProvider(map));
}

function plainOutputs(outputs: WireMap): Pick<StepResult, "outputs" | "secretOutputs"> {
  const visible = withoutProvider(outputs);
  return { outputs: revealMap(visible), secretOutputs: secretPaths(visible) };
}

/** Read and Delete run the provider serialized in the outputs: say so when there is none. */
function missingProviderHint(resource: StateResource): string {
  if (!resource.custom || typeof resource.outputs[PROVIDER_KEY] === "string") return "";
  return ` (the recorded outputs of ${resource.name} carry no ${PROVIDER_KEY}, which Read and Delete need)`;
}

function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
