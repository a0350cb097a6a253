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
