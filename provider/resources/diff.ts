import type { Props } from "./props";
import { containsUnknown } from "./props";

export interface DiffResult {
  changes: boolean;
  replaces: string[];
  stables: string[];
  deleteBeforeReplace: boolean;
  /**
   * What the plan must say beside the change, e.g. why a resource whose inputs are unchanged is replaced: each host
   * shows these as warnings about the resource, at preview and at `up`.
   */
  warnings?: string[];
}

export interface DiffSpec {
  /** Inputs changed in place. */
  inPlace: readonly string[];
  /** Inputs whose change replaces the resource. */
  replaceOnChanges: readonly string[];
  /** Inputs whose removal from the program clears the value (others keep what the API has). */
  clearable?: readonly string[];
  /**
   * Required inputs the API does not report back: a resource whose value is not known (imported, or read by `get`)
   * takes the program's without a change.
   */
  takenFromProgram?: readonly string[];
  /** A replacement must delete first, e.g. when the replacement would reuse a unique name. */
  deleteBeforeReplace?: (olds: Props, news: Props) => boolean;
  /** Inputs that only steer the provider (e.g. `adopt`): never a change. */
  ignored?: readonly string[];
  /**
   * The output that says the resource is in a failed state it cannot leave in place (e.g. its create job failed):
   * the next diff replaces it (listed as this key). Every kind whose API objects can fail names one, so a resource
   * recorded in a failed state is never a dead end, even after a refresh cleared its initialisation errors.
   */
  failed?: (olds: Props) => string | undefined;
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Props)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Props)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameValue((a as Props)[k], (b as Props)[k]));
}

/** The inputs whose wanted value differs from what the resource has (`olds` are its outputs, refreshed or not). */
export function changedInputs(olds: Props, news: Props, spec: DiffSpec): string[] {
  const keys = [...spec.inPlace, ...spec.replaceOnChanges];
  return keys.filter((k) => {
    const wanted = news[k];
    if (olds[k] === undefined && spec.takenFromProgram?.includes(k)) return false;
    if (wanted === undefined) return spec.clearable?.includes(k) === true && olds[k] !== undefined && olds[k] !== null;
    return !sameValue(olds[k], wanted);
  });
}

/** Diff of a resource: `__provider` and steering inputs ignored, replacements listed, unknowns counted as changes. */
export function diffInputs(olds: Props, news: Props, spec: DiffSpec): DiffResult {
  const changed = changedInputs(olds, news, spec);
  const replaces = changed.filter((k) => spec.replaceOnChanges.includes(k));
  const failed = spec.failed?.(olds);
  if (failed !== undefined) replaces.push(failed);
  const all = [...spec.inPlace, ...spec.replaceOnChanges];
  return {
    changes: changed.length > 0 || replaces.length > 0,
    replaces,
    stables: all.filter((k) => !changed.includes(k) && !replaces.includes(k) && !containsUnknown(news[k])),
    deleteBeforeReplace: replaces.length > 0 && (spec.deleteBeforeReplace?.(olds, news) ?? false),
  };
}
