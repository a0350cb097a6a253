/**
 * Property values as they travel between a Pulumi program, the engine and a provider: plain JSON plus the SDK's
 * signature objects (secrets, resource references) and the unknown-value sentinel used during previews.
 */
import { UNKNOWN } from "../../provider/resources/props";

/** The value the engine sends for "not known until the deployment runs" (previews only), defined with the provider. */
export { UNKNOWN };
/** Key of the signature property that marks special objects. */
export const SIG_KEY = "4dabf18193072939515e22adb298388d";
/** Signature of a secret: `{ [SIG_KEY]: SECRET_SIG, value }`. */
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
/** Signature of a resource reference: `{ [SIG_KEY]: RESOURCE_SIG, urn, id? }`. */
export const RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e";
/** Signature of an output value: `{ [SIG_KEY]: OUTPUT_SIG, value?, secret?, dependencies? }`. */
export const OUTPUT_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4";
/** The property under which a dynamic resource carries its serialized provider. */
export const PROVIDER_KEY = "__provider";

export type Wire = null | boolean | number | string | Wire[] | { [key: string]: Wire };
export type WireMap = { [key: string]: Wire };

function isObject(value: unknown): value is WireMap {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True for a secret wrapper. */
export function isSecret(value: unknown): value is { [SIG_KEY]: typeof SECRET_SIG; value: Wire } {
  return isObject(value) && value[SIG_KEY] === SECRET_SIG;
}

/** Wraps a value as a secret (once). */
export function secret(value: Wire): Wire {
  return isSecret(value) ? value : { [SIG_KEY]: SECRET_SIG, value };
}

/** The value with every secret wrapper removed, at any depth: what a provider that does not accept secrets sees. */
export function reveal(value: Wire): Wire {
  if (isSecret(value)) return reveal(value.value);
  if (Array.isArray(value)) return value.map(reveal);
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, reveal(v)]));
  return value;
}

/** {@link reveal} for a property map. */
export function revealMap(map: WireMap): WireMap {
  return reveal(map) as WireMap;
}

/** Paths (`a`, `a.b`, `a[0]`) of the secret values inside `value`. */
export function secretPaths(value: Wire, prefix = ""): string[] {
  if (isSecret(value)) return [prefix];
  if (Array.isArray(value)) return value.flatMap((v, i) => secretPaths(v, `${prefix}[${i}]`));
  if (isObject(value)) {
    return Object.entries(value).flatMap(([k, v]) => secretPaths(v, prefix === "" ? k : `${prefix}.${k}`));
  }
  return [];
}

/** True when `value` is, or contains, the unknown sentinel. */
export function containsUnknown(value: Wire): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (isObject(value)) return Object.values(value).some(containsUnknown);
  return false;
}

/**
 * What the engine does for a provider that does not accept secrets: any property that was secret on the way in is
 * marked secret on the way out (recursively through objects and arrays of the same shape).
 */
export function annotateSecrets(outs: WireMap, ins: WireMap): WireMap {
  return annotate(outs, ins) as WireMap;
}

function annotate(out: Wire, input: Wire | undefined): Wire {
  if (input === undefined) return out;
  if (isSecret(input)) return secret(out);
  if (isSecret(out)) return secret(annotate(out.value, input));
  if (Array.isArray(input) && Array.isArray(out)) return out.map((v, i) => annotate(v, input[i]));
  if (isObject(input) && isObject(out)) {
    return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, annotate(v, input[k])]));
  }
  return out;
}

/** Marks the named top-level properties secret (`additionalSecretOutputs`). */
export function markSecret(map: WireMap, keys: readonly string[]): WireMap {
  const result = { ...map };
  for (const key of keys) if (key in result) result[key] = secret(result[key]);
  return result;
}

/**
 * Rewrites what a provider that accepts neither resource references nor output values must not see: a resource
 * reference becomes the resource's id (or its URN for a component), an output value its value (or the unknown
 * sentinel).
 */
export function flattenReferences(value: Wire): Wire {
  if (isObject(value)) {
    if (value[SIG_KEY] === RESOURCE_SIG) {
      const id = value.id;
      return typeof id === "string" && id !== "" ? id : (value.urn ?? null);
    }
    if (value[SIG_KEY] === OUTPUT_SIG) {
      const inner = "value" in value ? flattenReferences(value.value) : UNKNOWN;
      return value.secret === true ? secret(inner) : inner;
    }
    if (isSecret(value)) return secret(flattenReferences(value.value));
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, flattenReferences(v)]));
  }
  if (Array.isArray(value)) return value.map(flattenReferences);
  return value;
}

/** Structural equality of two values. */
export function deepEqual(a: Wire | undefined, b: Wire | undefined): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** Top-level keys whose (revealed) values differ between two maps, ignoring the serialized provider. */
export function changedKeys(olds: WireMap, news: WireMap): string[] {
  const keys = new Set([...Object.keys(olds), ...Object.keys(news)]);
  keys.delete(PROVIDER_KEY);
  return [...keys].filter((k) => !deepEqual(reveal(olds[k] ?? null), reveal(news[k] ?? null))).sort();
}

/** The map without the serialized provider. */
export function withoutProvider(map: WireMap): WireMap {
  const { [PROVIDER_KEY]: _provider, ...rest } = map;
  return rest;
}

/** Drops `undefined` members (a protobuf Struct cannot hold them). */
export function toWire(value: unknown): Wire {
  if (value === undefined) return null;
  if (value === null || typeof value === "boolean" || typeof value === "number" || typeof value === "string") {
    return value;
  }
  if (Array.isArray(value)) return value.map(toWire);
  if (typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => [k, toWire(v)]),
    );
  }
  throw new TypeError(`cannot send a ${typeof value} as a property value`);
}
