/**
 * The hosts the lifecycle table runs on, each as a {@link HostStack}: the test harness (dynamic SDK), the real CLI
 * with either SDK (inline programs), and the real CLI with Pulumi's YAML host (a Pulumi.yaml rendered from the same
 * program). A table program is plain data: rendered here to SDK resources or to YAML.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { CommandError, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import { destroy, preview, refresh, up, type RunOptions, type RunResult } from "../harness";
import { readStateFile } from "../harness/state";
import { revealMap, SIG_KEY } from "../harness/wire";
import { register, type Family } from "../e2e/every-kind";
import { DYNAMIC_TYPE, type CliWorld } from "../e2e/helpers";
import { yamlProject } from "../e2e/yaml-host";
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
    for (const step of result.steps.filter((s) => s.custom)) {
      ops[step.name] =
        step.op === "replace" && step.diff?.deleteBeforeReplace === true ? "replace-delete-first" : (step.op as Op);
    }
    const error = result.errors.map((e) => `${e.urn?.split("::").pop() ?? ""}: ${e.message}`).join("\n");
    return { ops, error: result.ok ? undefined : error };
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

/** The engine's operations per resource, from its events: a replacement's order by which half came first. */
function recorder(): { onEvent: (event: EngineEvent) => void; ops: () => Record<string, Op> } {
  const seen: Record<string, string[]> = {};
  return {
    onEvent(event) {
      const meta = event.resourcePreEvent?.metadata;
      if (meta !== undefined && ours(meta.type)) (seen[nameOf(meta.urn)] ??= []).push(meta.op);
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
    return { ops: recorded.ops(), error };
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

/** Stack config: the emulator, the admin's API key and, beside it, the sign-in an ApiKey is created with. */
export const lifecycleConfig = (world: CliWorld) => ({ ...world.config, ...world.signIn });

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
