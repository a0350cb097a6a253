/** The engine's placeholder for a value not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
/** A resource's inputs or outputs as plain values: no `__provider`, no secrets wrappers. */
export type Props = Record<string, unknown>;

export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
}

/** Takes the inputs' own keys, without the provider. */
export function plainInputs(inputs: Props): Props {
  const { __provider: _provider, ...rest } = inputs;
  return rest;
}

/** The `sshPrivateKey` outputs `known` hold, kept only while `wanted` (inputs, or outputs on a read) has `exposePrivateKey`. */
export const keptPrivateKey = (wanted: Props, known: Props): string | undefined =>
  wanted.exposePrivateKey === true && typeof known.sshPrivateKey === "string" ? known.sshPrivateKey : undefined;

/**
 * `sshPrivateKey` as a machine's outputs hold it: none without `exposePrivateKey` in `wanted`; with it, the key `known`
 * holds, read (`read`, one request) only when it holds none.
 */
export async function exposedPrivateKey(
  wanted: Props,
  known: Props,
  read: () => Promise<string | undefined>,
): Promise<string | undefined> {
  if (wanted.exposePrivateKey !== true) return undefined;
  return keptPrivateKey(wanted, known) ?? read();
}
