import { z } from "zod";
import type { DiffSpec } from "./diff";
import type { Props } from "./props";

/**
 * How a change of an input reaches the resource: `inPlace` (an update), `replace` (a new resource), `ignored` (an
 * input that only steers the provider, e.g. `adopt`: never a change).
 */
export type Change = "inPlace" | "replace" | "ignored";

/**
 * What the API, as the spec documents it, reports back of an input:
 * - `documented`: a documented answer carries it: read back, compared with the program, drift shows;
 * - `undocumented`: only a field the spec does not document carries it: read when the API sends it, else the program's
 *   value is kept;
 * - `never`: no answer carries it: the program's value is kept.
 * An input that is not `documented` keeps the program's value wherever the API is silent, so the API's silence causes
 * neither drift nor a replacement (a change in the program still does).
 */
export type Reported = "documented" | "undocumented" | "never";

export interface InputField {
  readonly change: Change;
  readonly reported: Reported;
  /** Removing the input from the program clears the value (others keep what the API has). */
  readonly clearable?: boolean;
  /**
   * What the input is, its default and how a change applies: the schema's input description and the doc of the
   * dynamic SDK's argument (tools/sdk-gen.ts writes it there). Nested members are described on the zod schema.
   */
  readonly description: string;
  /**
   * What a value must be, for check's message when the value is refused (e.g. "must be the UUID of a data center"):
   * for an input whose schema is the contract's, which has no message of its own. Default: the type's message.
   */
  readonly expects?: string;
  /** The output of the same name, when it is described otherwise than the input: what the outputs hold. */
  readonly output?: string;
  /**
   * An object value (an array's items) as the outputs and lookups report it, when that differs from the input's
   * object: a zod object whose `.describe()` texts describe the type and its members.
   */
  readonly reportedShape?: z.ZodObject;
  /**
   * The output's type, when the input's (its zod output, `undefined` when optional) does not say it: a value the
   * outputs always hold though the input is optional, null where the API reports none, reported objects
   * (`reportedShape`). The type of the dynamic SDK's output (tools/sdk-gen.ts).
   */
  readonly reportedType?: z.ZodType;
}

/** A type the dynamic SDK names: its name, the side it types, and its doc (else the schema's `.describe()`). */
export interface SdkTypeName {
  readonly name: string;
  /** `input`: where the schema types an argument (members of an object are `pulumi.Input`s); `output`: a value read. */
  readonly io: "input" | "output";
  readonly description?: string;
  /** The kind whose SDK file declares it (others import it from there); default: the one file that uses it. */
  readonly kind?: string;
}

/**
 * Names the dynamic SDK gives to zod schemas (tools/sdk-gen.ts): wherever an argument, output or data function has a
 * value of a registered schema (on the side it names), its type is the name, declared once. A named type is the
 * declaration's to say, like the arguments' types, never the SDK's.
 */
export const sdkTypes = z.registry<SdkTypeName>();

/** Every input of a kind, classified. An input left out (or one that is not an input) is a compile error. */
export type InputFields<I> = { readonly [K in keyof I]-?: InputField };

/**
 * The diff rules of a kind's inputs (`schema`, classified by `fields`): which change in place, which replace, which
 * are ignored or clearable, and which required ones the program alone knows.
 */
export function diffSpecOf(
  schema: z.ZodObject,
  fields: Readonly<Record<string, InputField>>,
  rules: Pick<DiffSpec, "deleteBeforeReplace" | "failed"> = {},
): DiffSpec {
  const named = (test: (field: InputField, name: string) => boolean) =>
    Object.entries(fields)
      .filter(([name, field]) => test(field, name))
      .map(([name]) => name);
  const required = (name: string) => {
    const input = (schema.shape as Record<string, z.ZodType | undefined>)[name];
    return input !== undefined && !input.safeParse(undefined).success;
  };
  return {
    inPlace: named((f) => f.change === "inPlace"),
    replaceOnChanges: named((f) => f.change === "replace"),
    ignored: named((f) => f.change === "ignored"),
    clearable: named((f) => f.clearable === true),
    takenFromProgram: named((f, name) => f.reported !== "documented" && f.change !== "ignored" && required(name)),
    ...rules,
  };
}

/**
 * A resource's outputs: `given` (the program's inputs, or the previous outputs on a read) overlaid with `reported`
 * (what the API answered: its inputs and the outputs beyond them). An input the API did not report (`never`, or
 * `undocumented` and absent from the answer) keeps its given value.
 */
export function inputsAsReported(fields: Readonly<Record<string, InputField>>, given: Props, reported: Props): Props {
  const out: Props = { ...given };
  for (const [name, value] of Object.entries(reported)) {
    const field = fields[name];
    if (field?.reported === "never" || (field?.reported === "undocumented" && value === undefined)) continue;
    out[name] = value;
  }
  return out;
}
