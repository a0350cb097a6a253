import { z } from "zod";
import { containsUnknown, type Props } from "./props";
import type { InputField } from "./fields";

export interface CheckFailure {
  property: string;
  reason: string;
}
export interface CheckResult<I> {
  inputs: I;
  failures: CheckFailure[];
}

/** What a value is, for messages: its type, never the value itself (it may be a secret). */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return Number.isInteger(value) ? "a whole number" : "a number";
  if (typeof value === "boolean") return "true/false";
  return typeof value;
}

const expectedText: Record<string, string> = {
  string: "a string (text in quotes)",
  number: "a number",
  int: "a whole number",
  boolean: "true or false",
  array: "a list",
  object: "an object of named values",
  record: "an object of named values",
  bigint: "a whole number",
  null: "null",
};

/**
 * The message of a check failure where the schema gave none: what is expected and how to fix it, in place of zod's
 * default text. It never names the property (the engine shows the reason next to it) and never echoes the value.
 */
function checkMessage(issue: z.core.$ZodRawIssue): string {
  const sizes = (origin: unknown) =>
    origin === "string" ? " characters" : origin === "array" || origin === "set" ? " items" : "";
  switch (issue.code) {
    case "invalid_type": {
      const expected = expectedText[issue.expected] ?? issue.expected;
      if (issue.input === undefined) return `is required: set it to ${expected}`;
      return `must be ${expected}, not ${kindOf(issue.input)}: change the value to ${expected}`;
    }
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}: use one of these values`;
    case "too_small":
      if (issue.origin === "string" && issue.minimum === 1) return "must not be empty";
      if (issue.origin === "number" && issue.minimum === 0 && issue.inclusive === false) return "must be positive";
      return `must be at least ${String(issue.minimum)}${sizes(issue.origin)}: give a larger value`;
    case "too_big":
      return `must be at most ${String(issue.maximum)}${sizes(issue.origin)}: give a smaller value`;
    case "invalid_format":
      return `must be in ${issue.format} format: correct the value`;
    case "invalid_union":
      return `must be one of the accepted forms, not ${kindOf(issue.input)}: see the property's documentation`;
    case "not_multiple_of":
      return `must be a multiple of ${String(issue.divisor)}: round the value`;
    default:
      return `is not an accepted value (${kindOf(issue.input)}): see the property's documentation`;
  }
}

/** A reason as the engine shows it, next to its property: a leading repetition of the property is dropped. */
export function reasonFor(property: string, reason: string): string {
  const prefix = `${property}: `;
  return reason.startsWith(prefix) ? reason.slice(prefix.length) : reason;
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let at = value;
  for (const key of path) {
    if (at === null || typeof at !== "object") return undefined;
    at = (at as Record<PropertyKey, unknown>)[key];
  }
  return at;
}

/**
 * The reason of a required value that is absent. Outside preview the engine leaves out of Check a value that is not
 * known (KeepUnknowns only in a dry run), e.g. the id of a resource that failed under `--continue-on-error`, and
 * Check is not told whether it runs in a preview: the likely cause is said first, then what the value must be.
 */
export function noValue(reason: string): string {
  return (
    "has no value: if the program sets it from another resource's output, that resource was not created in this " +
    `run (see its error), so the value is not known; otherwise it ${reason}`
  );
}

/**
 * Validates a resource's inputs against its schema: every problem is reported (property + what is expected + how to
 * fix it, never zod's default text, never the property twice), unknown properties are refused, and values not known
 * yet (preview) are let through unchecked. `extra` adds the checks that span several properties; it sees only the
 * known values. `expects` (a kind's input fields) says what an input must be where its schema, taken from the
 * contract, has no message of its own.
 */
export function checkInputs<S extends z.ZodObject>(
  schema: S,
  news: Props,
  extra?: (known: Partial<z.output<S>>, failures: CheckFailure[]) => void,
  expects: Readonly<Record<string, InputField>> = {},
): CheckResult<z.output<S>> {
  const { __provider: _provider, ...given } = news;
  const pending = Object.keys(given).filter((k) => containsUnknown(given[k]));
  const mask = Object.fromEntries(pending.filter((k) => k in schema.shape).map((k) => [k, true as const]));
  const known = Object.fromEntries(Object.entries(given).filter(([k]) => !pending.includes(k)));
  const partialSchema = pending.length > 0 ? (schema.omit(mask as never) as unknown as z.ZodType) : schema;
  const parsed = partialSchema.safeParse(known, { error: checkMessage });
  const failures: CheckFailure[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          failures.push({
            property: [...issue.path, key].join("."),
            reason: `is not a property of this resource: remove it; the known ones are ${Object.keys(schema.shape).join(", ")}`,
          });
        }
      } else {
        const property = issue.path.join(".") || "(inputs)";
        const missing =
          issue.code === "invalid_type" && issue.path.length > 0 && valueAt(known, issue.path) === undefined;
        // What the input (or an item of it) must be, as its declaration says it: the contract's schema has no message
        // of its own. The size of a text or a list keeps the type's message, which names the limit.
        const sized = (issue.code === "too_small" || issue.code === "too_big") && issue.origin !== "number";
        const expected =
          issue.path.length <= 2 && issue.code !== "custom" && !sized
            ? expects[String(issue.path[0])]?.expects
            : undefined;
        const message = expected ?? issue.message;
        failures.push({ property, reason: missing ? noValue(reasonFor(property, message)) : message });
      }
    }
  }
  // The cross-property checks see only values that passed their own: a list given as a number is not a list.
  const refused = new Set(failures.map((f) => f.property.split(".")[0]));
  const clean = Object.fromEntries(Object.entries(known).filter(([k]) => !refused.has(k) && k in schema.shape));
  const cleanMask = Object.fromEntries(Object.keys(clean).map((k) => [k, true as const]));
  const reparsed = parsed.success
    ? parsed
    : schema
        .pick(cleanMask as never)
        .partial()
        .safeParse(clean);
  const values = (reparsed.success ? reparsed.data : clean) as Partial<z.output<S>>;
  extra?.(values, failures);
  const inputs = { ...values, ...Object.fromEntries(pending.map((k) => [k, given[k]])) } as z.output<S>;
  return { inputs, failures: failures.map((f) => ({ property: f.property, reason: reasonFor(f.property, f.reason) })) };
}

/** The schema of an id input: a UUID, with a message that says so. */
export const uuidInput = (what: string) => z.uuid({ error: `must be the UUID of ${what}` });
