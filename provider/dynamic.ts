/* eslint-disable @typescript-eslint/no-require-imports -- dynamicProvider loads the module of a kind's provider by
   its path, chosen at run time (see there). */
import * as path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import { errorCodeOf, messageWithCode, withCode } from "./client/error-codes";
import { callerOperations } from "./client/gather";
import { stderrProgressLog } from "./client/progress";
import {
  checkResource,
  configuration,
  endSessionsOnExitSignals,
  environmentOnly,
  failuresForEngine,
  handlerContext,
  kinds,
  ResourceInitError,
  type Configuration,
  type HandlerContext,
  type KindName,
  type Props,
} from "./resources";
import { providerOf } from "./dynamic-providers/provider";

const PROVIDER_KEY = "__provider";

function withoutProvider(props: Props | undefined): Props {
  const { [PROVIDER_KEY]: _provider, ...rest } = props ?? {};
  return rest;
}

/** Plain JSON for the wire: the host's protobuf Struct refuses `undefined`. */
function wire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/**
 * An error as the dynamic host reports it for a failed check, diff, read or delete: it prints `${error}: ${error.stack}`
 * on its stderr, which the engine shows under the Stack (with the paths of every stack frame), then sends the error's
 * message to the engine, which shows it with the resource. So the message goes to the engine only, and the stderr
 * line only says which resource failed (`cloudinfra: reading Network <id> failed (the error is shown with the resource)`).
 * The message ends with the code of the error it reports (`… [NOT_FOUND]`, {@link withCode}).
 */
export class HostError extends Error {
  override name = "cloudinfra";
  /** The code of the error it reports (see README's "Error codes"), when that error has one. */
  readonly code: string | undefined;
  constructor(message: string, what: string, cause: unknown) {
    super(message, { cause });
    this.code = errorCodeOf(cause);
    this.stack = `${what} failed (the error is shown with the resource)`;
  }
  /** The name alone: the host prints this before the stack, and the message goes to the engine. */
  override toString(): string {
    return this.name;
  }
}

/** Runs a host call; a failure becomes a {@link HostError} about `what` (`reading Network <id>`). */
async function reported<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new HostError(messageWithCode(error), what, error);
  }
}

/**
 * A failed create or update as the engine receives it: the message and, for a resource that exists but failed
 * (ResourceInitError: the engine shows its reasons), each reason followed by the error's code; such a failure's
 * properties also carry `__provider`. The host reads only the message, id, properties and reasons.
 */
function forEngine(error: unknown, provider: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = errorCodeOf(error);
  error.message = withCode(error.message, code);
  if (error instanceof ResourceInitError) {
    error.properties = wire({ ...error.properties, [PROVIDER_KEY]: provider });
    error.reasons.splice(0, Infinity, ...error.reasons.map((reason) => withCode(reason, code)));
  }
  return error;
}

/** The stack's `cloudinfra:*` values, as the host's Configure gave them (the environment alone until then). */
let stackConfiguration: Configuration = environmentOnly();

/** The context of one operation: the stack's configuration, progress lines on stderr (the host has no engine link). */
const operationContext = (): HandlerContext => handlerContext({ configuration: stackConfiguration });

/**
 * What the serialized providers call. Host-specific work lives here and nowhere else: `__provider` is stripped on the
 * way in, and copied into the properties of an initialization failure (the engine stores those as the outputs, and
 * Read and Delete run the provider found there).
 */
export const dynamicHandlers = {
  configure(req: pulumi.dynamic.ConfigureRequest): void {
    // The host's Config keeps every stack key in `rawConfig` (not in its type): listing them finds mistyped keys.
    const raw = (req.config as unknown as { rawConfig?: Record<string, unknown> }).rawConfig;
    stackConfiguration = configuration((key) => req.config.get(key), raw ? Object.keys(raw) : undefined);
    // The engine ends the host process with SIGINT at the end of the run (and on Ctrl-C): sign out first.
    endSessionsOnExitSignals();
  },
  /** Settings problems fail the check (nothing sent); valid inputs then have the credentials checked once. */
  async check(kind: KindName, olds: Props, news: Props): Promise<pulumi.dynamic.CheckResult> {
    const named = typeof news.name === "string" ? ` "${news.name}"` : "";
    return reported(`checking ${kind}${named}`, async () => {
      const { inputs, failures } = await checkResource(
        operationContext(),
        kinds[kind],
        withoutProvider(olds),
        withoutProvider(news),
      );
      const secret = (property: string) => kinds[kind].secretInputs?.includes(property) === true;
      return wire({ inputs, failures: failuresForEngine(failures, secret) });
    });
  },
  async diff(kind: KindName, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.DiffResult> {
    return reported(`comparing ${kind} ${id} with the program`, async () => {
      const { warnings, ...result } = kinds[kind].diff(id, withoutProvider(olds), withoutProvider(news));
      // The host has no engine link: on stderr, which the engine shows with the run's output.
      for (const warning of warnings ?? []) stderrProgressLog.warn(warning);
      return result;
    });
  },
  async create(kind: KindName, inputs: Props): Promise<pulumi.dynamic.CreateResult> {
    try {
      return wire(await callerOperations.run(() => kinds[kind].create(operationContext(), withoutProvider(inputs))));
    } catch (error) {
      throw forEngine(error, inputs[PROVIDER_KEY]);
    }
  },
  async read(kind: KindName, id: string, props: Props): Promise<pulumi.dynamic.ReadResult> {
    return reported(`reading ${kind} ${id}`, async () => {
      const found = await callerOperations.run(() => kinds[kind].read(operationContext(), id, withoutProvider(props)));
      return found ? wire(found) : { id: "", props: {} };
    });
  },
  async update(kind: KindName, id: string, olds: Props, news: Props): Promise<pulumi.dynamic.UpdateResult> {
    try {
      const outs = await callerOperations.run(() =>
        kinds[kind].update(operationContext(), id, withoutProvider(olds), withoutProvider(news)),
      );
      return { outs: wire(outs) };
    } catch (error) {
      throw forEngine(error, news[PROVIDER_KEY]);
    }
  },
  async delete(kind: KindName, id: string, props: Props): Promise<void> {
    await reported(`deleting ${kind} ${id}`, () =>
      callerOperations.run(() => kinds[kind].delete(operationContext(), id, withoutProvider(props))),
    );
  },
};

/**
 * The properties a resource of `kind` exposes as outputs (every input and every declared output), each `undefined`:
 * what an SDK class passes to Pulumi beside its arguments, so that each one is an Output on the resource, set or not.
 */
export function outputPlaceholders(kind: KindName): Record<string, undefined> {
  const { inputs, outputs } = kinds[kind];
  return Object.fromEntries(
    [...Object.keys(inputs.schema.shape), ...Object.keys(outputs.shape)].map((k) => [k, undefined]),
  );
}

/**
 * The outputs a resource of `kind` always stores as secrets (the kind's `secretOutputs`): what an SDK class gives
 * Pulumi as `additionalSecretOutputs`.
 */
export function secretOutputs(kind: KindName): string[] {
  return [...(kinds[kind].secretOutputs ?? [])];
}

/**
 * The dynamic provider of one resource kind, as the SDK classes give it to Pulumi, which serializes it into the state
 * of every resource (twice: inputs and outputs). Where Pulumi's serializer can name it, it is the exports of the
 * kind's module `@cloudinfra/pulumi/dynamic/<kind>`, serialized as a `require` of that module (~260 bytes instead of
 * ~2.7 KB). The serializer names a module's exports when the module's path goes through node_modules and the
 * package's manifest resolves from @pulumi/pulumi's own location; otherwise (a linked or `file:` install, a layout
 * like pnpm's) it would write a path the package does not export, so an object that is no module's exports is given
 * instead, serialized by value (providerOf): the same provider, the larger text.
 */
export function dynamicProvider(kind: KindName): pulumi.dynamic.ResourceProvider {
  const file = kind.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
  const module = requiredByName(`./dynamic-providers/${file}`, `@cloudinfra/pulumi/dynamic/${file}`);
  return module === undefined ? providerOf(kind) : (require(module) as pulumi.dynamic.ResourceProvider);
}

/**
 * The path of the module `relative` when Pulumi's closure serializer would write its exports as `require(name)`;
 * undefined when it would not, or when Node cannot load it as it is (sources run through a TypeScript loader).
 */
function requiredByName(relative: string, name: string): string | undefined {
  try {
    const file = require.resolve(relative);
    const parts = path.relative(process.cwd(), file).split(path.sep);
    const at = parts.indexOf("node_modules");
    if (at < 0 || `${parts[at + 1]}/${parts[at + 2]}` !== "@cloudinfra/pulumi") return undefined;
    const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
    return require.resolve(name, { paths: [pulumiDir] }) === file ? file : undefined;
  } catch {
    return undefined;
  }
}
