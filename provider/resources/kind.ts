import type { z } from "zod";
import { verifyCredentials, type HandlerContext } from "./context";
import type { CheckFailure, CheckResult } from "./check";
import type { DiffResult } from "./diff";
import type { InputField } from "./fields";
import type { Props } from "./props";
import type { Configuration, Settings } from "./settings";

/** The name of an output of a kind whose inputs are `I` and outputs beyond them `O` (zod objects). */
export type OutputName<I extends z.ZodObject, O extends z.ZodObject> = Extract<
  keyof I["shape"] | keyof O["shape"],
  string
>;

/**
 * What each resource kind implements, free of Pulumi's dynamic API (provider/dynamic.ts adapts it), so another host
 * can serve it later. Props are plain values: no `__provider`, no secrets wrappers.
 */
export interface ResourceKind {
  readonly name: string;
  /** What the resource is: the schema's resource description and the doc of the dynamic SDK's class. */
  readonly description: string;
  /**
   * The program's inputs: their schema, and how each one changes and what the API reports of it (fields.ts). Diff
   * rules are derived from `fields`; every key of the schema is classified there.
   */
  readonly inputs: { readonly schema: z.ZodObject; readonly fields: Readonly<Record<string, InputField>> };
  /**
   * The outputs beyond the inputs: their schema, each member described (`.describe()`: the schema's description and
   * the doc of the dynamic SDK's output). The outputs also carry every input, as the API reports it.
   */
  readonly outputs: z.ZodObject;
  /**
   * Inputs the SDK always stores as secrets. A check failure about one names it in its reason, not as its property:
   * the engine prints a failing property's value beside it, a secret's in clear.
   */
  readonly secretInputs?: readonly string[];
  /**
   * Outputs (an input's or one beyond the inputs) always stored as secrets: the dynamic SDK's classes mark them
   * (`additionalSecretOutputs`, provider/dynamic.ts `secretOutputs`), the schema declares them `secret`. Each kind
   * types its list with {@link OutputName}.
   */
  readonly secretOutputs?: readonly string[];
  /**
   * Inputs of which a program gives at most one (`what` they give: e.g. the image, by name or by id; `check` refuses
   * two). The dynamic SDK's arguments are then a union in which two do not compile: one interface per alternative,
   * named and described here; the first may be left out too.
   */
  readonly exclusiveInputs?: {
    readonly what: string;
    readonly alternatives: readonly { readonly input: string; readonly name: string; readonly description: string }[];
  };
  /**
   * The settings this kind calls the API with, when they differ from the configured ones (an ApiKey is created by
   * a signed-in session); a ConfigurationError when they cannot be had. Check uses it to verify those credentials.
   */
  settingsFor?(configuration: Configuration, current: Settings): Settings;
  /**
   * Validates and normalises inputs; values unknown during preview pass unchecked. `ctx` is there for kinds whose
   * check reads the API; a host may leave it out where it has none to give (then such a check skips those reads).
   */
  check(olds: Props, news: Props, ctx?: HandlerContext): CheckResult<Props> | Promise<CheckResult<Props>>;
  /** `olds` are the current outputs (refreshed or not), `news` the checked inputs. */
  diff(id: string, olds: Props, news: Props): DiffResult;
  create(ctx: HandlerContext, inputs: Props): Promise<{ id: string; outs: Props }>;
  /**
   * The live resource as outputs, or null when it is gone. Inputs are left as the program declared them: drift shows
   * in the outputs, which the next diff compares with the program.
   */
  read(ctx: HandlerContext, id: string, props: Props): Promise<{ id: string; props: Props } | null>;
  update(ctx: HandlerContext, id: string, olds: Props, news: Props): Promise<Props>;
  /** Deletes and waits; already gone is success. */
  delete(ctx: HandlerContext, id: string, props: Props): Promise<void>;
}

export async function checkResource(
  ctx: HandlerContext,
  kind: ResourceKind,
  olds: Props,
  news: Props,
): Promise<CheckResult<Props>> {
  // The credentials this kind will use (an ApiKey needs a session): missing ones fail here, before any request.
  const used = kind.settingsFor ? kind.settingsFor(ctx.configuration, ctx.settings) : ctx.settings;
  const result = await kind.check(olds, news, ctx);
  if (result.failures.length === 0) await verifyCredentials(ctx, used);
  return result;
}

/**
 * Failures as the engine should get them: one about a secret input (`secret(property)`) names its property in the
 * reason and leaves the property empty, since the engine prints a failing property's value beside it, secrets too.
 */
export function failuresForEngine(
  failures: readonly CheckFailure[],
  secret: (property: string) => boolean,
): CheckFailure[] {
  return failures.map((f) =>
    secret(f.property.split(/[.[]/)[0]!) ? { property: "", reason: `${f.property}: ${f.reason}` } : f,
  );
}

/** The host cancelled the operation (the plugin's Cancel: Ctrl-C or the engine shutting down). */
