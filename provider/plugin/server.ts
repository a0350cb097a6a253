/**
 * The provider plugin: a gRPC `ResourceProvider` serving the resource kinds of provider/resources under the tokens
 * `cloudinfra:index:<Kind>`, on @grpc/grpc-js and @pulumi/pulumi's own protos. Everything kind-specific stays in the
 * kinds; this host translates the wire form (Structs, secrets, unknowns, detailed diffs, initialisation failures),
 * keeps one configuration per provider instance, honours `customTimeouts` for job waits, ends the waits of the
 * operations in flight on Cancel and sends the kinds' progress lines to the engine's log with the resource's URN.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import * as grpc from "@grpc/grpc-js";
import type { z } from "zod";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Any } from "google-protobuf/google/protobuf/any_pb";
import * as provider from "@pulumi/pulumi/proto/provider_pb";
import * as providerRpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as plugin from "@pulumi/pulumi/proto/plugin_pb";
import * as engine from "@pulumi/pulumi/proto/engine_pb";
import * as engineRpc from "@pulumi/pulumi/proto/engine_grpc_pb";
import * as status from "@pulumi/pulumi/proto/status_pb";
import {
  checkResource,
  ConfigurationError,
  configuration,
  containsUnknown,
  kinds,
  failuresForEngine,
  OperationCancelledError,
  handlerContext,
  ResourceInitError,
  sameValue,
  settingDeclarations,
  settingProblems,
  endSessions,
  verifyCredentials,
  type Configuration,
  type DiffResult,
  type HandlerContext,
  type KindName,
  type SettingName,
  type Props,
  type ResourceKind,
} from "../resources";
import type { ProgressLog } from "../client/progress";
import { callerOperations } from "../client/gather";
import { CodedError, errorCodeOf, messageWithCode, withCode } from "../client/error-codes";
import { dataFunctions } from "../resources/lookups";
import { UNKNOWN, unwrap, wrap } from "./properties";
import schema from "./schema.json";
import { PACKAGE, TYPE_PREFIX } from "./tokens";

/** A property's type in the schema: a primitive, an array of them, or a reference to an object type. */
type PropertySpec = { type?: string; items?: PropertySpec; $ref?: string };
type Schema = {
  version: string;
  resources: Record<
    string,
    { properties: Record<string, { secret?: boolean }>; inputProperties: Record<string, PropertySpec> }
  >;
  types: Record<string, { properties?: Record<string, PropertySpec> }>;
};
const packageSchema = schema as unknown as Schema;

/** A value cut to what `spec` declares: an object type's own properties (outputs carry more, e.g. a NIC's address). */
function asDeclared(value: unknown, spec: PropertySpec): unknown {
  if (Array.isArray(value) && spec.items) return value.map((item) => asDeclared(item, spec.items!));
  const type = spec.$ref?.startsWith("#/types/") ? packageSchema.types[spec.$ref.slice("#/types/".length)] : undefined;
  if (!type?.properties || value === null || typeof value !== "object") return value;
  const object = value as Props;
  return Object.fromEntries(
    Object.entries(type.properties)
      .filter(([k]) => object[k] !== undefined && object[k] !== null)
      .map(([k, nested]) => [k, asDeclared(object[k], nested)]),
  );
}

/** Keys a provider's inputs carry that are not settings: the engine's own. */
const ENGINE_KEYS = new Set(["version", "pluginDownloadURL"]);

/** What the engine's log receives: one line, its severity, and the resource it is about. */
export interface EngineLine {
  severity: "info" | "warning" | "error";
  message: string;
  urn?: string;
}

export interface ProviderServerOptions {
  /** Where engine log lines go; default: nowhere until {@link ProviderServer.connectEngine}. */
  log?: (line: EngineLine) => void;
}

/** The server and resource a call is about, for log lines (every await of the call inherits it). */
const callContext = new AsyncLocalStorage<{ urn: string; server: ProviderServer; customTimeout: boolean }>();

/** Where a job wait's limit came from, in the kinds' texts: the resource's customTimeouts when it has one. */
function relabel(text: string, customTimeout: boolean | undefined): string {
  return customTimeout ? text.replaceAll("cloudinfra:jobTimeoutMs", "the resource's customTimeouts") : text;
}

const engineLine = (severity: EngineLine["severity"]) => (message: string, context?: { resource?: string }) => {
  const call = callContext.getStore();
  const text = context?.resource ? `${context.resource}: ${message}` : message;
  call?.server.log(severity, relabel(text, call.customTimeout), call.urn);
};
/**
 * The log of every operation's context: the kinds' progress lines (job started, progress, pauses, retries) go to the
 * server of the call in flight, about its resource. One object for the process, so the clients (cached per log) are
 * shared by every call and server.
 */
const engineProgressLog: ProgressLog = { info: engineLine("info"), warn: engineLine("warning") };

/** The kind named by a request's type token, or by the type in its URN (older engines send no type). */
function kindOf(type: string, urn: string): { name: KindName; kind: ResourceKind } {
  const token = type || (urn.split("::")[2] ?? "").split("$").pop() || "";
  const name = token.startsWith(TYPE_PREFIX) ? token.slice(TYPE_PREFIX.length) : "";
  if (!(name in kinds))
    throw new CodedError(
      "UNKNOWN_TOKEN",
      `unknown resource type ${token}: this provider serves ${Object.keys(kinds)
        .map((k) => TYPE_PREFIX + k)
        .join(", ")}`,
    );
  return { name: name as KindName, kind: kinds[name as KindName] };
}

/** The settings of a provider's inputs, as strings (stack config is text; explicit providers may pass numbers). */
function configurationOf(props: Props): Configuration {
  const text = (value: unknown) =>
    value === undefined || value === null ? undefined : typeof value === "string" ? value : JSON.stringify(value);
  const keys = Object.keys(props).filter((k) => !ENGINE_KEYS.has(k) && !k.startsWith("__"));
  return configuration(
    (key) => text(props[key.slice(`${PACKAGE}:`.length)]),
    keys.map((k) => `${PACKAGE}:${k}`),
  );
}

/** The secret outputs of a kind per the schema (e.g. an API key's `key`). */
function schemaSecrets(name: KindName): string[] {
  const properties = packageSchema.resources[TYPE_PREFIX + name]?.properties ?? {};
  return Object.keys(properties).filter((k) => properties[k]!.secret === true);
}

/**
 * An error as gRPC reports it: its message followed by its code (`… [JOB_TIMEOUT]`, what `pulumi up` prints), the code
 * also as metadata; an initialisation failure carries the resource's id, properties and reasons (the engine prints
 * those instead of the message: each ends with the code too).
 */
function grpcError(error: unknown, secrets: Iterable<string>, acceptSecrets: boolean): grpc.ServiceError {
  const message = messageWithCode(error);
  const metadata = new grpc.Metadata();
  // The catalogue code (README's "Error codes") for tools that read the gRPC error.
  const code = errorCodeOf(error);
  if (code !== undefined) metadata.add("cloudinfra-error-code", code);
  if (error instanceof ResourceInitError) {
    const detail = new provider.ErrorResourceInitFailed();
    detail.setId(error.id);
    detail.setProperties(wrap(error.properties, secrets, acceptSecrets));
    detail.setReasonsList(error.reasons.map((reason) => withCode(reason, code)));
    const any = new Any();
    any.pack(detail.serializeBinary(), "pulumirpc.ErrorResourceInitFailed");
    const state = new status.Status();
    state.setCode(grpc.status.UNKNOWN);
    state.setMessage(message);
    state.addDetails(any);
    metadata.add("grpc-status-details-bin", Buffer.from(state.serializeBinary()));
  }
  return Object.assign(new Error(message), { code: grpc.status.UNKNOWN, details: message, metadata });
}

/** Detailed diff kinds per property, from the kind's own diff (one input changed at a time). */
function detailedDiff(
  kind: ResourceKind,
  id: string,
  olds: Props,
  news: Props,
  oldInputs: Props,
  result: DiffResult,
): Map<string, provider.PropertyDiff.Kind> {
  const K = provider.PropertyDiff.Kind;
  const keys = [...new Set([...Object.keys(news), ...Object.keys(oldInputs), ...result.replaces])];
  // The outputs as inputs that match the program except for one key: a change the kind sees is that key's.
  const base = Object.fromEntries(keys.filter((k) => k in news || k in oldInputs).map((k) => [k, olds[k]]));
  const baseChanges = kind.diff(id, olds, base).changes;
  const diffs = new Map<string, provider.PropertyDiff.Kind>();
  for (const key of keys) {
    const had = olds[key] !== undefined && olds[key] !== null;
    const has = news[key] !== undefined && news[key] !== null;
    if (result.replaces.includes(key)) {
      // A replacement named by an output (e.g. a failed status) is an update of it, not a removal.
      const removed = !has && key in oldInputs && !containsUnknown(news[key]);
      diffs.set(key, !had ? K.ADD_REPLACE : removed ? K.DELETE_REPLACE : K.UPDATE_REPLACE);
      continue;
    }
    if (sameValue(olds[key], news[key]) || !result.changes) continue;
    const probe = { ...base };
    if (key in news) probe[key] = news[key];
    else delete probe[key];
    if (!baseChanges && !kind.diff(id, olds, probe).changes) continue;
    if (baseChanges && !(key in news) && !(key in oldInputs)) continue;
    diffs.set(key, !had ? K.ADD : !has ? K.DELETE : K.UPDATE);
  }
  return diffs;
}

export { endSessionsOnExitSignals } from "../resources";

type Handler<Req, Res> = (request: Req) => Promise<Res>;

/**
 * The provider server: one configuration (the engine starts one process per provider instance; tests may start
 * several servers in one process, each with its own), the kinds behind it.
 */
export class ProviderServer {
  private config: Configuration | undefined;
  private configuredWithUnknowns = false;
  private acceptSecrets = false;
  private engineLog: ((line: EngineLine) => void) | undefined;
  private engineClient: engineRpc.EngineClient | undefined;
  /** Aborted by Cancel: the operations in flight then (later ones get a fresh one). */
  private cancelled = new AbortController();
  /** Calls in flight that may use the API, and what waits for there to be none (the sign-out after a Cancel). */
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private readonly server = new grpc.Server({ "grpc.max_receive_message_length": 400 * 1024 * 1024 });

  constructor(options: ProviderServerOptions = {}) {
    this.engineLog = options.log;
    this.server.addService(providerRpc.ResourceProviderService, this.service() as never);
  }

  /** Sends the engine's log lines to the engine at `address` (the argument the engine starts the plugin with). */
  connectEngine(address: string): void {
    this.engineClient = new engineRpc.EngineClient(address, grpc.credentials.createInsecure());
    this.engineLog = (line) => {
      const request = new engine.LogRequest();
      request.setSeverity(
        line.severity === "error"
          ? engine.LogSeverity.ERROR
          : line.severity === "warning"
            ? engine.LogSeverity.WARNING
            : engine.LogSeverity.INFO,
      );
      request.setMessage(line.message);
      if (line.urn) request.setUrn(line.urn);
      this.engineClient?.log(request, () => undefined);
    };
  }

  /** Listens on 127.0.0.1 (port 0: a free one) and resolves to the port. */
  listen(port = 0): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      );
    });
  }

  /** Stops serving (in-flight calls are cut). */
  close(): void {
    this.server.forceShutdown();
    this.engineClient?.close();
  }

  /** Sends one line to the engine's log, about the resource `urn` when given. */
  log(severity: EngineLine["severity"], message: string, urn?: string): void {
    this.engineLog?.({ severity, message, urn: urn || undefined });
  }

  /**
   * Ends the waits of every operation in flight (jobs, polls, rate-limit budget, retries): the engine asks on Ctrl-C
   * or when it shuts down. Each fails promptly; a create whose resource exists still records it (ResourceInitError).
   */
  cancel(): void {
    const cancelled = this.cancelled;
    this.cancelled = new AbortController();
    cancelled.abort(
      new OperationCancelledError("cancelled (the engine asked the provider to stop: Ctrl-C or shutdown)"),
    );
    // The session this process signed in for ends once the cancelled operations have (they may still record what
    // exists); a call after that signs in again, and the process's exit signal signs that one out.
    this.sessionsEnded = this.whenIdle().then(() => endSessions());
  }

  /** Settles when the sign-out started by the last Cancel has (for tests). */
  sessionsEnded: Promise<number> = Promise.resolve(0);

  private whenIdle(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idle.push(resolve));
  }

  /** The context of an operation under `config`: the engine's log and this server's cancellation. */
  private contextOf(config: Configuration): HandlerContext {
    return handlerContext({ configuration: config, log: engineProgressLog, signal: this.cancelled.signal });
  }

  /**
   * Runs a call with the context of this provider's configuration (job waits bounded by `timeoutSeconds` when given),
   * its URN and cancellation.
   */
  private inScope<T>(urn: string, timeoutSeconds: number, fn: (ctx: HandlerContext) => Promise<T>): Promise<T> {
    let config = this.config ?? configuration(() => undefined);
    if (timeoutSeconds > 0) {
      const jobTimeoutMs = String(Math.max(1000, Math.ceil(timeoutSeconds * 1000)));
      config = { ...config, values: { ...config.values, jobTimeoutMs } };
    }
    const customTimeout = timeoutSeconds > 0;
    this.inFlight++;
    return callContext.run({ urn, server: this, customTimeout }, () =>
      (async () => fn(this.contextOf(config)))()
        .finally(() => {
          if (--this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
        })
        .catch((error: unknown) => {
          if (customTimeout && error instanceof Error) {
            error.message = relabel(error.message, true);
            if (error instanceof ResourceInitError)
              error.reasons.splice(0, Infinity, ...error.reasons.map((r) => relabel(r, true)));
          }
          throw error;
        }),
    );
  }

  /** A create, read, update or delete: one of the engine's `--parallel` operations (see CallerOperations). */
  private operation<T>(urn: string, timeoutSeconds: number, fn: (ctx: HandlerContext) => Promise<T>): Promise<T> {
    return callerOperations.run(() => this.inScope(urn, timeoutSeconds, fn));
  }

  private unary<Req, Res>(handler: Handler<Req, Res>, secrets?: (request: Req) => Iterable<string>) {
    return (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
      handler(call.request).then(
        (response) => callback(null, response),
        (error: unknown) => {
          let keys: Iterable<string> = [];
          try {
            keys = secrets?.(call.request) ?? [];
          } catch {
            // An unknown type has no secrets to keep: the error itself says what is wrong.
          }
          callback(grpcError(error, keys, this.acceptSecrets));
        },
      );
    };
  }

  private service(): Record<string, unknown> {
    const empty = async () => new Empty();
    return {
      handshake: this.unary(async () => {
        const response = new provider.ProviderHandshakeResponse();
        response.setAcceptSecrets(true);
        response.setAcceptResources(false);
        response.setAcceptOutputs(false);
        return response;
      }),
      getPluginInfo: this.unary(async () => new plugin.PluginInfo().setVersion(packageSchema.version)),
      getSchema: this.unary(async (request: provider.GetSchemaRequest) => {
        if (request.getSubpackageName())
          throw new CodedError("UNKNOWN_TOKEN", `no subpackage ${request.getSubpackageName()}`);
        return new provider.GetSchemaResponse().setSchema(JSON.stringify(schema));
      }),
      checkConfig: this.unary((request: provider.CheckRequest) => this.checkConfig(request)),
      diffConfig: this.unary((request: provider.DiffRequest) => this.diffConfig(request)),
      configure: this.unary((request: provider.ConfigureRequest) => this.configure(request)),
      check: this.unary((request: provider.CheckRequest) => this.check(request)),
      diff: this.unary((request: provider.DiffRequest) => this.diff(request)),
      create: this.unary(
        (request: provider.CreateRequest) => this.create(request),
        (request) => this.secretsOf(request.getType(), request.getUrn(), unwrap(request.getProperties()).secrets),
      ),
      read: this.unary((request: provider.ReadRequest) => this.read(request)),
      update: this.unary(
        (request: provider.UpdateRequest) => this.update(request),
        (request) => this.secretsOf(request.getType(), request.getUrn(), unwrap(request.getNews()).secrets),
      ),
      delete: this.unary((request: provider.DeleteRequest) => this.delete(request)),
      invoke: this.unary((request: provider.InvokeRequest) => this.invoke(request)),
      cancel: this.unary(async () => {
        this.cancel();
        return new Empty();
      }),
      attach: this.unary(empty),
      getMapping: this.unary(async () => new provider.GetMappingResponse()),
      getMappings: this.unary(async () => new provider.GetMappingsResponse()),
      parameterize: this.unimplemented("Parameterize"),
      call: this.unimplemented("Call"),
      construct: this.unimplemented("Construct"),
      list: (call: grpc.ServerWritableStream<unknown, unknown>) =>
        call.destroy(Object.assign(new Error("List is not supported"), { code: grpc.status.UNIMPLEMENTED })),
    };
  }

  private unimplemented(name: string) {
    return (_call: unknown, callback: grpc.sendUnaryData<unknown>) =>
      callback(
        Object.assign(new Error(`${name} is not supported by the cloudinfra provider`), {
          code: grpc.status.UNIMPLEMENTED,
        }),
      );
  }

  /** Output keys to keep secret: the schema's secret outputs, and every key that came in as a secret. */
  private secretsOf(type: string, urn: string, incoming: Iterable<string>): Set<string> {
    const { name } = kindOf(type, urn);
    return new Set([...schemaSecrets(name), ...incoming]);
  }

  // ---------------------------------------------------------------- configuration

  private async checkConfig(request: provider.CheckRequest): Promise<provider.CheckResponse> {
    const { props: news, secrets } = unwrap(request.getNews());
    // A credential given as plain config is still a credential: returned as a secret, the engine keeps it encrypted
    // in the provider's state (`pulumi new --config` stores even a template's secret values in clear).
    const credentials = Object.keys(news).filter(
      (key) => settingDeclarations[key as SettingName]?.secret && !containsUnknown(news[key]),
    );
    const response = new provider.CheckResponse().setInputs(wrap(news, [...secrets, ...credentials]));
    if (Object.values(news).some(containsUnknown)) return response;
    const config = configurationOf(news);
    const failures = await (async (): Promise<{ property: string; reason: string }[]> => {
      // A settings problem names its setting first (`cloudinfra:<name> …`).
      const problems = settingProblems(config);
      if (problems.length > 0)
        return problems.map((reason) => ({
          property: /cloudinfra:(\w+)/.exec(reason)?.[1] ?? "",
          reason: withCode(reason, "SETTING_INVALID"),
        }));
      try {
        await verifyCredentials(this.contextOf(config));
        return [];
      } catch (error) {
        // A failed check is an error, not a malformed value: its reason carries its code like any error, and its
        // property is the setting most likely at fault (`baseUrl` for an API that cannot be reached).
        const setting = error instanceof ConfigurationError ? error.setting : undefined;
        return [{ property: setting ?? "", reason: messageWithCode(error) }];
      }
    })();
    return response.setFailuresList(
      failures.map(({ property, reason }) => new provider.CheckFailure().setProperty(property).setReason(reason)),
    );
  }

  private async diffConfig(request: provider.DiffRequest): Promise<provider.DiffResponse> {
    const olds = unwrap(request.getOldInputs() ?? request.getOlds()).props;
    const news = unwrap(request.getNews()).props;
    const response = new provider.DiffResponse();
    const keys = [...new Set([...Object.keys(olds), ...Object.keys(news)])].filter((k) => !ENGINE_KEYS.has(k));
    const changed = keys.filter((k) => !sameValue(olds[k], news[k]));
    // Settings steer how resources are reached, never what they are: a change never replaces them.
    response.setChanges(
      changed.length > 0 ? provider.DiffResponse.DiffChanges.DIFF_SOME : provider.DiffResponse.DiffChanges.DIFF_NONE,
    );
    response.setDiffsList(changed);
    response.setHasdetaileddiff(true);
    const detailed = response.getDetaileddiffMap();
    for (const key of changed) {
      const kind =
        olds[key] === undefined
          ? provider.PropertyDiff.Kind.ADD
          : news[key] === undefined
            ? provider.PropertyDiff.Kind.DELETE
            : provider.PropertyDiff.Kind.UPDATE;
      detailed.set(key, new provider.PropertyDiff().setKind(kind).setInputdiff(true));
    }
    return response;
  }

  private async configure(request: provider.ConfigureRequest): Promise<provider.ConfigureResponse> {
    let props: Props;
    if (request.hasArgs()) props = unwrap(request.getArgs()).props;
    else {
      props = {};
      for (const [key, value] of request.getVariablesMap().entries()) {
        const name = key.replace(/^cloudinfra:(config:)?/, "");
        props[name] = value;
      }
    }
    this.acceptSecrets = request.getAcceptsecrets();
    this.config = configurationOf(props);
    this.configuredWithUnknowns = Object.values(props).some(containsUnknown);
    if (!this.configuredWithUnknowns) {
      // Settings problems and refused credentials fail here, so `preview` fails before planning anything.
      await verifyCredentials(this.contextOf(this.config));
    }
    return new provider.ConfigureResponse()
      .setAcceptsecrets(true)
      .setSupportspreview(true)
      .setAcceptresources(false)
      .setAcceptoutputs(false);
  }

  // ---------------------------------------------------------------- resources

  private async check(request: provider.CheckRequest): Promise<provider.CheckResponse> {
    const { kind } = kindOf(request.getType(), request.getUrn());
    const olds = unwrap(request.getOlds()).props;
    const news = unwrap(request.getNews());
    // Settings not known yet (preview): the inputs are checked without a context, so without the API.
    const result = this.configuredWithUnknowns
      ? await kind.check(olds, news.props)
      : await this.inScope(request.getUrn(), 0, (ctx) => checkResource(ctx, kind, olds, news.props));
    const secret = (property: string) => news.secrets.has(property) || kind.secretInputs?.includes(property) === true;
    return new provider.CheckResponse()
      .setInputs(wrap(result.inputs, news.secrets, this.acceptSecrets))
      .setFailuresList(
        failuresForEngine(result.failures, secret).map((f) =>
          new provider.CheckFailure().setProperty(f.property).setReason(f.reason),
        ),
      );
  }

  private async diff(request: provider.DiffRequest): Promise<provider.DiffResponse> {
    const { kind } = kindOf(request.getType(), request.getUrn());
    const id = request.getId();
    const olds = unwrap(request.getOlds()).props;
    const news = unwrap(request.getNews()).props;
    const oldInputs = unwrap(request.getOldInputs()).props;
    const ignored = new Set(request.getIgnorechangesList());
    for (const key of ignored) {
      if (key in olds) news[key] = olds[key];
      else delete news[key];
    }
    const result = kind.diff(id, olds, news);
    for (const warning of result.warnings ?? []) this.log("warning", warning, request.getUrn());
    const details = detailedDiff(kind, id, olds, news, oldInputs, result);
    const response = new provider.DiffResponse()
      .setChanges(
        result.changes ? provider.DiffResponse.DiffChanges.DIFF_SOME : provider.DiffResponse.DiffChanges.DIFF_NONE,
      )
      .setReplacesList(result.replaces)
      .setStablesList(result.stables)
      .setDeletebeforereplace(result.deleteBeforeReplace)
      .setDiffsList([...details.keys()])
      .setHasdetaileddiff(true);
    const map = response.getDetaileddiffMap();
    for (const [key, kindOfChange] of details) {
      map.set(key, new provider.PropertyDiff().setKind(kindOfChange).setInputdiff(true));
    }
    return response;
  }

  private async create(request: provider.CreateRequest): Promise<provider.CreateResponse> {
    const { name, kind } = kindOf(request.getType(), request.getUrn());
    const inputs = unwrap(request.getProperties());
    const secrets = this.secretsOf(request.getType(), request.getUrn(), inputs.secrets);
    if (request.getPreview()) {
      // No API call during preview: every output the program did not give is not known yet.
      const outputs: Props = { ...inputs.props };
      for (const key of Object.keys(packageSchema.resources[TYPE_PREFIX + name]?.properties ?? {})) {
        if (outputs[key] === undefined) outputs[key] = UNKNOWN;
      }
      return new provider.CreateResponse().setId("").setProperties(wrap(outputs, secrets, this.acceptSecrets));
    }
    const created = await this.operation(request.getUrn(), request.getTimeout(), (ctx) =>
      kind.create(ctx, inputs.props),
    );
    return new provider.CreateResponse()
      .setId(created.id)
      .setProperties(wrap(created.outs, secrets, this.acceptSecrets));
  }

  private async read(request: provider.ReadRequest): Promise<provider.ReadResponse> {
    const { name, kind } = kindOf(request.getType(), request.getUrn());
    const props = unwrap(request.getProperties());
    const inputs = unwrap(request.getInputs());
    const importing = Object.keys(inputs.props).length === 0;
    const found = await this.operation(request.getUrn(), request.getTimeout(), async (ctx) => {
      const live = await kind.read(ctx, request.getId(), props.props);
      if (!live || !importing) return live && { ...live, inputs: inputs.props };
      // An import or `get` (no inputs yet) takes the inputs from what the API has, so that a program declaring the
      // same values next finds nothing to change; inputs the API does not report (e.g. a user's `action`) take the
      // kind's defaults, in the outputs too.
      const checked = await kind.check({}, this.inputsFromOutputs(name, live.props), ctx);
      const refused = new Set(checked.failures.map((f) => f.property.split(".")[0]));
      const unreported = [...refused].filter(
        (k) => live.props[k!] === undefined && kind.inputs.fields[k!]?.reported !== "documented",
      );
      if (unreported.length > 0) {
        // The program's value is taken on the next `up` without a change (fields.ts): the program must declare it.
        this.log(
          "warning",
          `the API does not report ${unreported.join(", ")} of ${name} ${request.getId()}: declare ` +
            `${unreported.length === 1 ? "it" : "them"} in the program as the resource was made; the next \`pulumi up\` ` +
            "takes the program's value without a change",
          request.getUrn(),
        );
      }
      const derived = Object.fromEntries(Object.entries(checked.inputs).filter(([k]) => !refused.has(k)));
      const outputs = { ...live.props };
      for (const [key, value] of Object.entries(derived)) if (outputs[key] === undefined) outputs[key] = value;
      return { id: live.id, props: outputs, inputs: derived };
    });
    if (!found) return new provider.ReadResponse().setId("");
    const secrets = this.secretsOf(request.getType(), request.getUrn(), [...props.secrets, ...inputs.secrets]);
    const readInputs = found.inputs;
    return new provider.ReadResponse()
      .setId(found.id)
      .setProperties(wrap(found.props, secrets, this.acceptSecrets))
      .setInputs(wrap(readInputs, secrets, this.acceptSecrets));
  }

  /** The outputs as inputs: the input properties only, nested objects cut to what their input type declares. */
  private inputsFromOutputs(name: KindName, outputs: Props): Props {
    const declared = packageSchema.resources[TYPE_PREFIX + name]?.inputProperties ?? {};
    return Object.fromEntries(
      Object.entries(declared)
        .filter(([k]) => k !== "adopt" && outputs[k] !== undefined && outputs[k] !== null)
        .map(([k, spec]) => [k, asDeclared(outputs[k], spec)]),
    );
  }

  private async update(request: provider.UpdateRequest): Promise<provider.UpdateResponse> {
    const { kind } = kindOf(request.getType(), request.getUrn());
    const olds = unwrap(request.getOlds());
    const news = unwrap(request.getNews());
    const secrets = this.secretsOf(request.getType(), request.getUrn(), [...olds.secrets, ...news.secrets]);
    if (request.getPreview()) {
      return new provider.UpdateResponse().setProperties(
        wrap({ ...olds.props, ...news.props }, secrets, this.acceptSecrets),
      );
    }
    const outs = await this.operation(request.getUrn(), request.getTimeout(), (ctx) =>
      kind.update(ctx, request.getId(), olds.props, news.props),
    );
    return new provider.UpdateResponse().setProperties(wrap(outs, secrets, this.acceptSecrets));
  }

  private async delete(request: provider.DeleteRequest): Promise<Empty> {
    const { kind } = kindOf(request.getType(), request.getUrn());
    const props = unwrap(request.getProperties()).props;
    await this.operation(request.getUrn(), request.getTimeout(), (ctx) => kind.delete(ctx, request.getId(), props));
    return new Empty();
  }

  // ---------------------------------------------------------------- functions

  private async invoke(request: provider.InvokeRequest): Promise<provider.InvokeResponse> {
    const functions = Object.fromEntries(
      Object.entries(dataFunctions).map(([name, fn]) => [`${TYPE_PREFIX}${name}`, fn]),
    ) as Record<
      string,
      {
        args: { safeParse(value: unknown): ReturnType<z.ZodType["safeParse"]> };
        call: (ctx: HandlerContext, args: never) => Promise<unknown>;
      }
    >;
    const fn = functions[request.getTok()];
    if (!fn)
      throw new CodedError(
        "UNKNOWN_TOKEN",
        `unknown function ${request.getTok()}: this provider has ${Object.keys(functions).join(", ")}`,
      );
    const args = unwrap(request.getArgs()).props;
    const parsed = fn.args.safeParse(args);
    const response = new provider.InvokeResponse();
    if (!parsed.success) {
      return response.setFailuresList(
        parsed.error.issues.map((issue) =>
          new provider.CheckFailure().setProperty(issue.path.join(".")).setReason(issue.message),
        ),
      );
    }
    const result = await this.inScope("", 0, (ctx) => fn.call(ctx, parsed.data as never));
    return response.setReturn(wrap(result as Props));
  }
}
