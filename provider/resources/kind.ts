import type { z } from "zod";
import { verifyCredentials, type HandlerContext } from "./context";
import type { CheckFailure, CheckResult } from "./check";
import type { DiffResult } from "./diff";
import { checkInputs } from "./check";
import { diffSpecOf, inputsAsReported, type InputField, type InputFields } from "./fields";
import { diffInputs, type DiffSpec } from "./diff";
import { plainInputs, type Props } from "./props";
import type { Configuration, Settings } from "./settings";
import { runPreflight, type PreflightCheck } from "./preflight";

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
   * (`additionalSecretOutputs`, written into them by tools/sdk-gen.ts), the schema declares them `secret`. Each kind
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
  /**
   * What `up` would be refused, read from the API's current state (capacity, attachability, permissions, names):
   * run by {@link checkResource} after the inputs passed their own checks, under `cloudinfra:preflight` (preflight.ts).
   */
  readonly preflight?: PreflightCheck;
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

/** The names of the inputs whose declaration (`fields`) says the API reports them as `how`. */
type ReportedAs<F, How extends InputField["reported"]> = {
  [K in keyof F]: F[K] extends { readonly reported: How } ? K : never;
}[keyof F];

/** A value as an answer may carry it: the API reports an enumerated input (or its items) as any text or number. */
type Widened<T> = T extends string
  ? string
  : T extends number
    ? number
    : T extends readonly (infer E)[]
      ? Widened<E>[]
      : T;

/**
 * A reported input's value: the type the declaration gives its output (`reportedType`, which the SDKs show), else the
 * input's type, or null or undefined where the API reports none. An input reported in a shape of its own
 * (`reportedShape`) without a `reportedType` is typed by its handlers.
 */
type ReportedValue<T, Field> = Field extends { readonly reportedType: infer R extends z.ZodType }
  ? z.output<R>
  : Field extends { readonly reportedShape: z.ZodObject }
    ? unknown
    : Widened<Exclude<T, undefined>> | null | undefined;

/**
 * What the API reports of a resource of a kind whose inputs are `I`, classified by `F`, with outputs beyond them `O`:
 * every input a documented answer carries (each one required: one left out is a compile error), those only an
 * undocumented field carries (when sent, in whatever shape it comes), and every output beyond the inputs.
 */
export type ApiReport<I, F, O> = {
  -readonly [K in ReportedAs<F, "documented"> & keyof I]-?: ReportedValue<I[K], F[K]>;
} & { -readonly [K in ReportedAs<F, "undocumented"> & keyof I]?: unknown } & Beyond<O>;

/** The outputs beyond the inputs; none (`z.object({})`, whose output is `Record<string, never>`) asks for nothing. */
type Beyond<O> = string extends keyof O ? unknown : O;

/** A resource's outputs: the inputs as given, overlaid with what the API reports ({@link ApiReport}). */
export type State<I, F, O> = ApiReport<I, F, O> & Props;

/**
 * The outputs of a resource: `given` (the program's inputs, or the previous outputs on a read) overlaid with what the
 * API `reported`, as the declaration's `fields` say each input is reported.
 */
export function stateOf<R extends object>(
  fields: Readonly<Record<string, InputField>>,
  given: Props,
  reported: R,
): R & Props {
  return inputsAsReported(fields, plainInputs(given), reported as Props) as R & Props;
}

/**
 * The body of a request, taken from `values` (a kind's inputs, which are built from the contract's request bodies, plus
 * what the handler computes): every member of the contract's `schema`, nothing else, undefined ones left out. A
 * member of the body that `values` lacks or types otherwise is a compile error, and none can be forgotten at run time.
 */
export function bodyFrom<S extends z.ZodObject>(schema: S, values: z.output<S>): z.output<S> {
  const given = values as Props;
  return Object.fromEntries(
    Object.keys(schema.shape)
      .filter((key) => given[key] !== undefined)
      .map((key) => [key, given[key]]),
  ) as z.output<S>;
}

/**
 * A kind as its file declares it, typed on its inputs (`IS`, classified by `fields`) and outputs beyond them (`OS`):
 * `create`, `read` and `update` take the checked inputs and give the {@link State}, so what the declaration says the
 * API reports cannot be left out of the outputs. {@link defineKind} makes it a {@link ResourceKind}.
 */
export interface KindDeclaration<IS extends z.ZodObject, F extends InputFields<z.output<IS>>, OS extends z.ZodObject> {
  readonly name: string;
  readonly description: string;
  readonly inputs: { readonly schema: IS; readonly fields: F };
  readonly outputs: OS;
  readonly secretInputs?: readonly (keyof z.output<IS> & string)[];
  readonly secretOutputs?: readonly OutputName<IS, OS>[];
  readonly exclusiveInputs?: ResourceKind["exclusiveInputs"];
  settingsFor?(configuration: Configuration, current: Settings): Settings;
  /**
   * The checks that span several inputs, after each input's own: they see the known values, and the raw inputs
   * (`news`, where a value unknown during preview still counts as given).
   */
  crossChecks?(known: Partial<z.output<IS>>, failures: CheckFailure[], news: Props): void;
  /** Default: the schema's checks with the fields' `expects`, then `crossChecks`. */
  check?(olds: Props, news: Props, ctx?: HandlerContext): CheckResult<Props> | Promise<CheckResult<Props>>;
  /** The preview checks against the API's state (preflight.ts); default none. */
  readonly preflight?: PreflightCheck;
  /** The diff rules. Default: the fields' classification alone ({@link diffSpecOf}). */
  readonly diffSpec?: DiffSpec;
  /** Default: {@link diffInputs} with `diffSpec`. */
  diff?(id: string, olds: Props, news: Props): DiffResult;
  create(
    ctx: HandlerContext,
    inputs: z.output<IS>,
  ): Promise<{ id: string; outs: State<z.output<IS>, F, z.output<OS>> }>;
  read(
    ctx: HandlerContext,
    id: string,
    props: Props,
  ): Promise<{ id: string; props: State<z.output<IS>, F, z.output<OS>> } | null>;
  update(
    ctx: HandlerContext,
    id: string,
    olds: Props,
    news: z.output<IS>,
  ): Promise<State<z.output<IS>, F, z.output<OS>>>;
  delete(ctx: HandlerContext, id: string, props: Props): Promise<void>;
}

/**
 * A kind from its typed declaration. The hosts hand `create` and `update` the inputs `check` returned: this is the one
 * place they are taken as the schema's output.
 */
export function defineKind<IS extends z.ZodObject, F extends InputFields<z.output<IS>>, OS extends z.ZodObject>(
  declaration: KindDeclaration<IS, F, OS>,
): ResourceKind {
  const { schema, fields } = declaration.inputs;
  const inputFields = fields as Readonly<Record<string, InputField>>;
  const diffSpec = declaration.diffSpec ?? diffSpecOf(schema, inputFields);
  const crossChecks = declaration.crossChecks?.bind(declaration);
  type Inputs = z.output<IS>;
  return {
    name: declaration.name,
    description: declaration.description,
    inputs: { schema, fields: inputFields },
    outputs: declaration.outputs,
    ...(declaration.secretInputs ? { secretInputs: declaration.secretInputs } : {}),
    ...(declaration.secretOutputs ? { secretOutputs: declaration.secretOutputs } : {}),
    ...(declaration.exclusiveInputs ? { exclusiveInputs: declaration.exclusiveInputs } : {}),
    ...(declaration.settingsFor ? { settingsFor: declaration.settingsFor.bind(declaration) } : {}),
    ...(declaration.preflight ? { preflight: declaration.preflight } : {}),
    check: (olds, news, ctx) =>
      declaration.check
        ? declaration.check(olds, news, ctx)
        : checkInputs(
            schema,
            news,
            crossChecks && ((known, failures) => crossChecks(known, failures, news)),
            inputFields,
          ),
    diff: (id, olds, news) => (declaration.diff ? declaration.diff(id, olds, news) : diffInputs(olds, news, diffSpec)),
    create: (ctx, inputs) => declaration.create(ctx, inputs as Inputs),
    read: (ctx, id, props) => declaration.read(ctx, id, props),
    update: (ctx, id, olds, news) => declaration.update(ctx, id, olds, news as Inputs),
    delete: (ctx, id, props) => declaration.delete(ctx, id, props),
  };
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
  if (result.failures.length > 0) return result;
  await verifyCredentials(ctx, used);
  // What `up` would be refused, from the API's state: read only, shared by the run (cloudinfra:preflight).
  result.failures.push(...(await runPreflight(ctx, kind.preflight, used, olds, result.inputs)));
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
