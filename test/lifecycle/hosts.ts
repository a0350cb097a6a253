/**
 * The hosts the lifecycle table runs on, each as a {@link HostStack}: the test harness (dynamic SDK), the plugin
 * through the gRPC driver (a small engine here), the real CLI with either SDK (inline programs), and the real CLI with
 * Pulumi's YAML host (a Pulumi.yaml rendered from the same program). A table program is plain data: rendered here to SDK resources or to YAML.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type * as grpc from "@grpc/grpc-js";
import { CommandError, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import * as provider from "@pulumi/pulumi/proto/provider_pb";
import { destroy, preview, refresh, up, type RunOptions, type RunResult } from "../../tools/harness";
import { initFailureOf } from "../../tools/harness/host";
import { readStateFile } from "../../tools/harness/state";
import { revealMap, SIG_KEY, type WireMap } from "../../tools/harness/wire";
import { register, type Family } from "../e2e/every-kind";
import { DYNAMIC_TYPE, type CliWorld } from "../e2e/helpers";
import { yamlProject } from "../e2e/yaml-host";
import { secret as rpcSecret, type Driver } from "../plugin/driver";
import { TOKEN } from "../plugin/launcher";
import type { HostStack, Outcome } from "./run";
import { isRef, isSecretInput, type InState, type Op, type Program } from "./table";

/** A program's inputs with references and secrets replaced by `resolve`'s answer, at any depth. */
function mapInputs(value: unknown, resolve: (leaf: unknown) => unknown): unknown {
  if (isRef(value) || isSecretInput(value)) return resolve(value);
  if (Array.isArray(value)) return value.map((v) => mapInputs(v, resolve));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapInputs(v, resolve)]));
  }
  return value;
}

/** Registers the program's resources with an SDK (inside a Pulumi program). */
export function registerProgram(family: Family, program: Program): void {
  const make = register(family);
  const made: Record<string, pulumi.CustomResource> = {};
  for (const [name, { kind, inputs }] of Object.entries(program)) {
    const props = mapInputs(inputs, (leaf) =>
      isRef(leaf) ? made[leaf.ref]!.id : pulumi.secret((leaf as { secret: string }).secret),
    );
    made[name] = make(kind as never, name, props as Record<string, unknown>);
  }
}

/** The program as a Pulumi YAML project taking the plugin from `pluginDir`. */
export function yamlProgram(program: Program, pluginDir: string): string {
  const resources = Object.entries(program).map(([name, { kind, inputs }]) => {
    const props = mapInputs(inputs, (leaf) =>
      isRef(leaf) ? `\${${leaf.ref}.id}` : { "fn::secret": (leaf as { secret: string }).secret },
    );
    return `  ${name}:\n    type: ${TOKEN}${kind}\n    properties: ${JSON.stringify(props)}\n`;
  });
  return [
    "name: lifecycle-yaml",
    "runtime: yaml",
    "plugins:",
    "  providers:",
    "    - name: cloudinfra",
    `      path: ${pluginDir}`,
    "resources:",
    ...resources,
  ].join("\n");
}

// ---------------------------------------------------------------- the test harness

/** A stack of the test harness running the program with the dynamic SDK. */
export function harnessStack(options: RunOptions): HostStack {
  const run = async (go: () => Promise<RunResult>): Promise<Outcome> => {
    const result = await go();
    const ops: Record<string, Op> = {};
    const replaces: Record<string, string[]> = {};
    for (const step of result.steps.filter((s) => s.custom)) {
      ops[step.name] =
        step.op === "replace" && step.diff?.deleteBeforeReplace === true ? "replace-delete-first" : (step.op as Op);
      if (step.op === "replace") replaces[step.name] = [...(step.diff?.replaces ?? [])];
    }
    const error = result.errors.map((e) => `${e.urn?.split("::").pop() ?? ""}: ${e.message}`).join("\n");
    return { ops, replaces, error: result.ok ? undefined : error };
  };
  const quiet = { ...options, throwOnError: false };
  const program = (declared: Program) => () => registerProgram("dynamic", declared);
  return {
    up: (declared) => run(() => up(program(declared), quiet)),
    preview: (declared) => run(() => preview(program(declared), quiet)),
    refresh: () => run(() => refresh(quiet)),
    destroy: () => run(() => destroy(quiet)),
    async state() {
      if (!fs.existsSync(options.stateFile)) return {};
      const resources = readStateFile(options.stateFile).resources.filter((r) => r.custom);
      return Object.fromEntries(
        resources.map((r) => {
          const { __provider: _, ...outputs } = revealMap(r.outputs);
          return [r.name, { id: r.id, outputs, initErrors: r.initErrors ?? [] } satisfies InState];
        }),
      );
    },
  };
}

// ---------------------------------------------------------------- the real CLI

const ours = (type: string) => type.startsWith(TOKEN) || type.startsWith(DYNAMIC_TYPE);
const nameOf = (urn: string) => urn.split("::").pop()!;

/** The engine's steps of a replacement. */
const REPLACEMENT = ["create-replacement", "replace", "delete-replaced"];

/**
 * The engine's operations per resource, from its events: a replacement's order by which half came first, and the
 * properties it is for (the keys of its steps).
 */
function recorder(): {
  onEvent: (event: EngineEvent) => void;
  ops: () => Record<string, Op>;
  replaces: Record<string, string[]>;
} {
  const seen: Record<string, string[]> = {};
  const replaces: Record<string, string[]> = {};
  return {
    replaces,
    onEvent(event) {
      const meta = event.resourcePreEvent?.metadata;
      if (meta === undefined || !ours(meta.type)) return;
      const name = nameOf(meta.urn);
      (seen[name] ??= []).push(meta.op);
      if (REPLACEMENT.includes(meta.op))
        replaces[name] = [...new Set([...(replaces[name] ?? []), ...(meta.keys ?? [])])];
    },
    ops: () =>
      Object.fromEntries(
        Object.entries(seen).map(([name, list]) => {
          const half = list.find((op) => op === "create-replacement" || op === "delete-replaced");
          const op = half === undefined ? list[0] : half === "delete-replaced" ? "replace-delete-first" : "replace";
          return [name, op as Op];
        }),
      ),
  };
}

/** A secret as `pulumi stack export --show-secrets` writes it: the value JSON-encoded under `plaintext`. */
function revealExported(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(revealExported);
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  if (record[SIG_KEY] !== undefined && typeof record.plaintext === "string") return JSON.parse(record.plaintext);
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, revealExported(v)]));
}

/** The resources of a CLI stack's state, by name. */
async function cliState(stack: Stack): Promise<Record<string, InState>> {
  const deployment = (await stack.exportStack()).deployment as {
    resources?: { urn: string; type: string; id?: string; outputs?: Record<string, unknown>; initErrors?: string[] }[];
  };
  return Object.fromEntries(
    (deployment.resources ?? [])
      .filter((r) => ours(r.type) && r.id !== undefined)
      .map((r) => {
        const { __provider: _, ...outputs } = revealExported(r.outputs ?? {}) as Record<string, unknown>;
        return [nameOf(r.urn), { id: r.id!, outputs, initErrors: r.initErrors ?? [] } satisfies InState];
      }),
  );
}

/** A stack's operations through the real CLI, `declare` putting the program in place before each up or preview. */
function cliHostStack(stack: Stack, declare: (program: Program) => void): HostStack {
  const run = async (go: (onEvent: (e: EngineEvent) => void) => Promise<unknown>): Promise<Outcome> => {
    const recorded = recorder();
    const error = await go(recorded.onEvent).then(
      () => undefined,
      (e: unknown) => (e instanceof CommandError ? String(e) : Promise.reject(e)),
    );
    return { ops: recorded.ops(), replaces: recorded.replaces, error };
  };
  const options = { color: "never" as const, continueOnError: true };
  return {
    up: (program) => (declare(program), run((onEvent) => stack.up({ ...options, onEvent }))),
    preview: (program) => (declare(program), run((onEvent) => stack.preview({ color: "never", onEvent }))),
    refresh: () => run((onEvent) => stack.refresh({ color: "never", onEvent })),
    destroy: () => run((onEvent) => stack.destroy({ ...options, onEvent })),
    state: () => cliState(stack),
  };
}

/**
 * Stack config: the emulator, the admin's API key and, beside it, the sign-in an ApiKey is created with. The preview
 * checks are off: the table is the contract of the operations (a held name refused by create, a failed job recorded),
 * and a refusal at check would end the whole step early, in whatever order the engine had reached the other kinds.
 * The preview checks have suites of their own (test/resources/preflight*.test.ts, test/e2e/preflight.test.ts).
 */
export const lifecycleConfig = (world: CliWorld) => ({
  ...world.config,
  ...world.signIn,
  "cloudinfra:preflight": "off",
});

/** A stack of the real CLI running the program inline with `family`'s SDK. */
export async function cliSdkStack(world: CliWorld, family: Family): Promise<HostStack> {
  let current: Program = {};
  const stack = await world.stack("quickstart", async () => registerProgram(family, current), lifecycleConfig(world));
  return cliHostStack(stack, (program) => {
    current = program;
  });
}

/** A stack of the real CLI running the program as Pulumi YAML, with the plugin from `pluginDir`. */
export async function cliYamlStack(world: CliWorld, pluginDir: string): Promise<HostStack> {
  const dir = yamlProject(world, yamlProgram({}, pluginDir), pluginDir);
  const stack = await world.stack(dir, undefined, lifecycleConfig(world));
  const file = path.join(stack.workspace.workDir, "Pulumi.yaml");
  return cliHostStack(stack, (program) => fs.writeFileSync(file, yamlProgram(program, pluginDir)));
}

// ---------------------------------------------------------------- the plugin through the gRPC driver

/** The driver's settings from stack config: `cloudinfra:` keys without their namespace, secrets in wire form. */
export function pluginSettings(config: Record<string, string | { secret: string }>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(config)
      .filter(([key]) => key.startsWith("cloudinfra:"))
      .map(([key, value]) => [
        key.slice("cloudinfra:".length),
        typeof value === "string" ? value : rpcSecret(value.secret),
      ]),
  );
}

interface Recorded extends InState {
  kind: string;
  inputs: Record<string, unknown>;
}

/**
 * A stack played by a small engine of our own over the gRPC driver: Check, then Create, or Diff and Update, Replace
 * (create-first, or delete-first when Diff says so) or nothing; resources no longer declared are deleted last, in
 * reverse order. A Create or Update refused with an initialization failure is recorded with its id and reasons, as
 * the engine does. Errors do not stop the other resources (the CLI's `--continue-on-error`).
 */
export function rpcStack(driver: Driver): HostStack {
  const state = new Map<string, Recorded>();
  const message = (name: string, error: unknown) => `${name}: ${(error as grpc.ServiceError).details ?? String(error)}`;
  const failuresText = (name: string, failures: { property: string; reason: string }[]) =>
    `${name}: Check failed: ${failures.map((f) => `${f.property}: ${f.reason}`).join("; ")}`;
  const inputsOf = (program: Program, name: string, ids: Record<string, string>) =>
    mapInputs(program[name]!.inputs, (leaf) =>
      isRef(leaf) ? ids[leaf.ref] : rpcSecret((leaf as { secret: string }).secret),
    ) as Record<string, unknown>;
  /** Create, recording an initialization failure. */
  const create = async (name: string, kind: string, inputs: Record<string, unknown>) => {
    try {
      const made = await driver.create(kind, name, inputs);
      state.set(name, { kind, id: made.id, inputs, outputs: made.outs, initErrors: [] });
    } catch (error) {
      const failed = initFailureOf(error as grpc.ServiceError);
      if (failed === undefined) throw error;
      state.set(name, { kind, id: failed.id, inputs, outputs: failed.properties, initErrors: failed.reasons });
      throw error;
    }
  };
  const remove = async (name: string, recorded: Recorded) => {
    await driver.delete(recorded.kind, name, recorded.id, recorded.outputs);
    if (state.get(name) === recorded) state.delete(name);
  };
  return {
    async up(program) {
      const ops: Record<string, Op> = {};
      const replaces: Record<string, string[]> = {};
      const errors: string[] = [];
      const ids: Record<string, string> = {};
      const replaced: [string, Recorded][] = [];
      for (const [name, { kind }] of Object.entries(program)) {
        const refs = JSON.stringify(program[name]!.inputs).match(/"ref":"[^"]+"/g) ?? [];
        if (refs.some((r) => ids[r.slice(7, -1)] === undefined)) continue;
        const old = state.get(name);
        const news = inputsOf(program, name, ids);
        try {
          const checked = await driver.check(kind, news, old?.inputs ?? {});
          if (checked.failures.length > 0) throw new Error(failuresText(name, checked.failures));
          if (old === undefined) {
            ops[name] = "create";
            await create(name, kind, checked.inputs);
          } else {
            const diff = await driver.diff(kind, old.id, old.outputs, checked.inputs, old.inputs);
            const changed = diff.getChanges() === provider.DiffResponse.DiffChanges.DIFF_SOME;
            if (diff.getReplacesList().length > 0) {
              replaces[name] = diff.getReplacesList();
              const fresh = (await driver.check(kind, news, {})).inputs;
              if (diff.getDeletebeforereplace()) {
                ops[name] = "replace-delete-first";
                await remove(name, old);
              } else {
                ops[name] = "replace";
                replaced.push([name, old]);
              }
              await create(name, kind, fresh);
            } else if (changed || old.initErrors.length > 0) {
              ops[name] = "update";
              try {
                const outputs = await driver.update(kind, name, old.id, old.outputs, checked.inputs);
                state.set(name, { ...old, inputs: checked.inputs, outputs, initErrors: [] });
              } catch (error) {
                const failed = initFailureOf(error as grpc.ServiceError);
                if (failed !== undefined)
                  state.set(name, { ...old, outputs: failed.properties, initErrors: failed.reasons });
                throw error;
              }
            } else {
              ops[name] = "same";
              state.set(name, { ...old, inputs: checked.inputs });
            }
          }
          ids[name] = state.get(name)!.id;
        } catch (error) {
          errors.push(error instanceof Error && !("details" in error) ? error.message : message(name, error));
          if (state.get(name)?.initErrors.length) ids[name] = state.get(name)!.id;
        }
      }
      if (errors.length === 0) {
        // dependents first, as the engine deletes: a replaced volume after the attachment replaced with it
        const gone = [...state.entries()].filter(([name]) => program[name] === undefined).reverse();
        for (const [name, recorded] of [...gone, ...replaced.reverse()]) {
          if (program[name] === undefined) ops[name] = "delete";
          await remove(name, recorded).catch((error: unknown) => errors.push(message(name, error)));
        }
      }
      return { ops, replaces, error: errors.length === 0 ? undefined : errors.join("\n") };
    },
    async preview(program) {
      const errors: string[] = [];
      for (const [name, { kind }] of Object.entries(program)) {
        const ids = Object.fromEntries([...state.entries()].map(([n, r]) => [n, r.id]));
        const checked = await driver.check(kind, inputsOf(program, name, ids), state.get(name)?.inputs ?? {});
        if (checked.failures.length > 0) errors.push(failuresText(name, checked.failures));
      }
      return { ops: {}, error: errors.length === 0 ? undefined : errors.join("\n") };
    },
    async refresh() {
      const errors: string[] = [];
      for (const [name, recorded] of [...state.entries()]) {
        try {
          const read = await driver.read(recorded.kind, name, recorded.id, recorded.outputs, recorded.inputs);
          if (read.id === "") state.delete(name);
          else state.set(name, { ...recorded, outputs: read.outs });
        } catch (error) {
          errors.push(message(name, error));
        }
      }
      return { ops: {}, error: errors.length === 0 ? undefined : errors.join("\n") };
    },
    async destroy() {
      const ops: Record<string, Op> = {};
      const errors: string[] = [];
      for (const [name, recorded] of [...state.entries()].reverse()) {
        ops[name] = "delete";
        await remove(name, recorded).catch((error: unknown) => errors.push(message(name, error)));
      }
      return { ops, error: errors.length === 0 ? undefined : errors.join("\n") };
    },
    async state() {
      return Object.fromEntries(
        [...state.entries()].map(([name, r]) => [
          name,
          { id: r.id, outputs: revealMap(r.outputs as WireMap), initErrors: r.initErrors } satisfies InState,
        ]),
      );
    },
  };
}
