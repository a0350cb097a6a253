import * as fs from "node:fs";
import * as path from "node:path";
import { PROVIDER_KEY, SECRET_SIG, SIG_KEY, isSecret, type Wire, type WireMap } from "./wire";

/** Root stack resource type (a component that holds the stack outputs). */
export const STACK_TYPE = "pulumi:pulumi:Stack";

/** Resource options the engine keeps with a resource because later runs need them. */
export interface ResourceOptions {
  protect?: boolean;
  retainOnDelete?: boolean;
  deleteBeforeReplace?: boolean;
  additionalSecretOutputs?: string[];
  deletedWith?: string;
}

/**
 * One resource of the stack, as the engine records it. `inputs` and `outputs` are property maps in wire form
 * (secrets wrapped, see `wire.ts`); for a dynamic resource both carry the serialized provider under `__provider`,
 * exactly as a real checkpoint does — the engine sends the outputs' copy to Read and Delete.
 */
export interface StateResource {
  urn: string;
  type: string;
  name: string;
  custom: boolean;
  /** Provider-assigned id; "" for components. */
  id: string;
  /** URN of the parent; "" for the stack itself. */
  parent: string;
  inputs: WireMap;
  outputs: WireMap;
  /** URNs this resource depends on (explicit `dependsOn` and through its inputs). */
  dependencies: string[];
  propertyDependencies: Record<string, string[]>;
  options: ResourceOptions;
  /** Reasons of an initialization failure: the resource exists but its Create/Update reported an error. */
  initErrors?: string[];
  /** Replaced and waiting to be deleted (the run that replaced it failed before it could delete it). */
  pendingDelete?: boolean;
}

/** The whole stack: what the JSON state file holds, with secrets in clear inside their wrappers. */
export interface StackState {
  version: 1;
  project: string;
  stack: string;
  resources: StateResource[];
}

/** An empty stack. */
export function emptyState(project: string, stack: string): StackState {
  return { version: 1, project, stack, resources: [] };
}

/**
 * Reads a state file; a missing file is an empty stack. Secrets are stored obscured (base64 "ciphertext", like a
 * real checkpoint's encrypted secrets, not real encryption) and come back in clear inside their wrappers.
 */
export function loadState(file: string, project: string, stack: string): StackState {
  if (!fs.existsSync(file)) return emptyState(project, stack);
  const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as StackState;
  if (parsed.version !== 1 || !Array.isArray(parsed.resources)) {
    throw new Error(`${file} is not a test-host state file (version 1)`);
  }
  if (parsed.project !== project || parsed.stack !== stack) {
    throw new Error(`${file} holds stack ${parsed.project}/${parsed.stack}, not ${project}/${stack}`);
  }
  return transformSecrets(parsed as unknown as Wire, decrypt) as unknown as StackState;
}

/** Reads a state file without knowing its stack name (for assertions); a missing file is an error. */
export function readStateFile(file: string): StackState {
  const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as StackState;
  return loadState(file, parsed.project, parsed.stack);
}

/** Writes the state atomically, secrets obscured. */
export function saveState(file: string, state: StackState): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(transformSecrets(state as unknown as Wire, encrypt), null, 2)}\n`);
  fs.renameSync(tmp, file);
}

function encrypt(secret: Wire): Wire {
  const plaintext = JSON.stringify((secret as WireMap).value);
  return { [SIG_KEY]: SECRET_SIG, ciphertext: Buffer.from(plaintext).toString("base64") };
}

function decrypt(value: Wire): Wire {
  const ciphertext = (value as WireMap).ciphertext;
  if (typeof ciphertext !== "string") return value;
  return { [SIG_KEY]: SECRET_SIG, value: JSON.parse(Buffer.from(ciphertext, "base64").toString("utf8")) as Wire };
}

function transformSecrets(value: Wire, change: (secret: Wire) => Wire): Wire {
  if (isSecret(value)) return change(value);
  if (Array.isArray(value)) return value.map((item) => transformSecrets(item, change));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, item]) => [k, transformSecrets(item, change)]));
  }
  return value;
}

/** The serialized provider a resource's outputs carry (what Read and Delete run), or undefined. */
export function providerOf(resource: StateResource): string | undefined {
  const text = resource.outputs[PROVIDER_KEY] ?? resource.inputs[PROVIDER_KEY];
  return typeof text === "string" ? text : undefined;
}

/** URNs a resource must outlive: its dependencies and its parent. */
export function prerequisites(resource: StateResource): string[] {
  const urns = new Set(resource.dependencies);
  for (const list of Object.values(resource.propertyDependencies)) for (const urn of list) urns.add(urn);
  if (resource.parent !== "") urns.add(resource.parent);
  return [...urns];
}

/**
 * Splits resources into waves for deletion: every resource of a wave is depended on by nothing still waiting, so a
 * wave's deletions may run concurrently, and waves run in order (dependents first).
 */
export function deletionWaves(resources: readonly StateResource[]): StateResource[][] {
  const waves: StateResource[][] = [];
  let remaining = [...resources];
  while (remaining.length > 0) {
    const needed = new Set(remaining.flatMap(prerequisites));
    let wave = remaining.filter((r) => !needed.has(r.urn));
    // A cycle cannot come from a program, but a hand-edited state could hold one: delete in reverse order then.
    if (wave.length === 0) wave = [remaining[remaining.length - 1]!];
    waves.push(wave);
    remaining = remaining.filter((r) => !wave.includes(r));
  }
  return waves;
}

/** Stable topological order: every resource after the resources it depends on (as a checkpoint is written). */
export function dependencyOrder(resources: readonly StateResource[]): StateResource[] {
  const byUrn = new Map<string, StateResource[]>();
  for (const r of resources) byUrn.set(r.urn, [...(byUrn.get(r.urn) ?? []), r]);
  const done = new Set<StateResource>();
  const visiting = new Set<StateResource>();
  const order: StateResource[] = [];
  const visit = (r: StateResource): void => {
    if (done.has(r) || visiting.has(r)) return;
    visiting.add(r);
    for (const urn of prerequisites(r)) for (const dep of byUrn.get(urn) ?? []) visit(dep);
    visiting.delete(r);
    done.add(r);
    order.push(r);
  };
  for (const r of resources) visit(r);
  return order;
}
