/**
 * Property values between the engine's wire form (protobuf Struct with Pulumi's signatures: secrets wrapped in an
 * object signed `4dabf18193072939515e22adb298388d`, unknowns as a sentinel string) and the plain props the kinds take.
 * Secrets are unwrapped on the way in and their top-level keys remembered, to be wrapped again on the way out.
 */
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { UNKNOWN, type Props } from "../resources";

export const SIG_KEY = "4dabf18193072939515e22adb298388d";
export const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
export { UNKNOWN };

/** Plain props and the top-level keys whose value was (or held) a secret. */
export interface Unwrapped {
  props: Props;
  secrets: Set<string>;
}

function isSecret(value: unknown): value is { value?: unknown } {
  return value !== null && typeof value === "object" && (value as Props)[SIG_KEY] === SECRET_SIG;
}

function unwrapValue(value: unknown, found: { secret: boolean }): unknown {
  if (isSecret(value)) {
    found.secret = true;
    return unwrapValue(value.value, found);
  }
  if (Array.isArray(value)) return value.map((v) => unwrapValue(v, found));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unwrapValue(v, found)]));
  }
  return value;
}

/** A Struct from the engine as plain props; a missing Struct is empty. */
export function unwrap(struct: Struct | undefined): Unwrapped {
  const raw = (struct?.toJavaScript() ?? {}) as Props;
  const secrets = new Set<string>();
  const props: Props = {};
  for (const [key, value] of Object.entries(raw)) {
    const found = { secret: false };
    props[key] = unwrapValue(value, found);
    if (found.secret) secrets.add(key);
  }
  return { props, secrets };
}

/**
 * Plain props as a Struct for the engine: `undefined` dropped (a Struct refuses it), the keys in `secrets` wrapped as
 * secrets when the engine accepts them (it then keeps them encrypted; otherwise it applies the schema's flags).
 */
export function wrap(props: Props, secrets: Iterable<string> = [], acceptSecrets = true): Struct {
  const plain = JSON.parse(JSON.stringify(props ?? {})) as Props;
  if (acceptSecrets) {
    for (const key of secrets) {
      if (plain[key] !== undefined && plain[key] !== null) plain[key] = { [SIG_KEY]: SECRET_SIG, value: plain[key] };
    }
  }
  return Struct.fromJavaScript(plain as never);
}
