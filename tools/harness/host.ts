import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as providerRpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import * as providerProto from "@pulumi/pulumi/proto/provider_pb";
import * as statusProto from "@pulumi/pulumi/proto/status_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { SECRET_SIG, SIG_KEY, type WireMap } from "./wire";

/** How the host process is started. */
export interface HostOptions {
  /** Working directory of the host (where the serialized providers' `require`s start); the repository root. */
  cwd: string;
  project: string;
  stack: string;
  /** Extra environment for the host (the rest is inherited). */
  env?: Record<string, string | undefined>;
}

/** One stack configuration value for Configure. */
export interface HostConfigValue {
  value: string;
  secret: boolean;
}

/** An initialization failure: the provider's Create/Update threw an error carrying `id` (the resource exists). */
export interface InitFailure {
  id: string;
  properties: WireMap;
  reasons: string[];
}

/** A failed call into the host: the provider's error message, and the init-failure details when it carried an id. */
export class HostError extends Error {
  constructor(
    readonly method: string,
    message: string,
    readonly code: number,
    readonly initFailure?: InitFailure,
  ) {
    super(message);
    this.name = "HostError";
  }
}

export interface CheckResult {
  inputs: WireMap;
  failures: { property: string; reason: string }[];
}

export interface DiffResult {
  changes: "some" | "none" | "unknown";
  replaces: string[];
  stables: string[];
  diffs: string[];
  deleteBeforeReplace: boolean;
}

export interface ReadResult {
  id: string;
  properties: WireMap;
  inputs?: WireMap;
}

const HOST_SCRIPT = "@pulumi/pulumi/cmd/dynamic-provider/index.js";
const START_TIMEOUT_MS = 30_000;
const ERROR_DETAILS_KEY = "grpc-status-details-bin";

interface Support {
  /** Directory for NODE_PATH holding `<package name>` → the repository. */
  nodePath: string;
  /** Preload script that ends the host when its parent goes away. */
  watchdog: string;
}

const supports = new Map<string, Support>();

/**
 * Files the host needs, in a directory of the system's temp dir named after the repository path (shared by test
 * processes, built atomically, never stale: its content only depends on that path):
 * - `node_modules/<this package's name>` linked to the repository, put on the host's NODE_PATH: in a user's project
 *   the package is installed, so a serialized provider's `require("@cloudinfra/pulumi/...")` resolves; here nothing
 *   else would resolve it (a module compiled from a string has no path, so Node's package self-reference fails);
 * - a watchdog preloaded into the host (`--require`): the host exits when its stdin closes, i.e. when the test
 *   process is gone, instead of serving forever. The host's own code is untouched.
 */
function supportFiles(root: string): Support {
  const known = supports.get(root);
  if (known !== undefined) return known;
  const digest = createHash("sha256").update(root).digest("hex").slice(0, 12);
  const dir = path.join(os.tmpdir(), `pulumi-test-host-${digest}`);
  const result = { nodePath: path.join(dir, "node_modules"), watchdog: path.join(dir, "watchdog.js") };
  if (!fs.existsSync(result.watchdog)) {
    const { name } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { name: string };
    const building = fs.mkdtempSync(`${dir}-`);
    const link = path.join(building, "node_modules", ...name.split("/"));
    fs.mkdirSync(path.dirname(link), { recursive: true });
    fs.symlinkSync(root, link, "dir");
    fs.writeFileSync(
      path.join(building, "watchdog.js"),
      'process.stdin.on("data", () => {});\nprocess.stdin.on("end", () => process.exit(0));\n' +
        'process.stdin.on("error", () => process.exit(0));\n' +
        // The watchdog alone must not keep a host alive that failed to start.
        "process.stdin.unref();\n",
    );
    try {
      fs.renameSync(building, dir);
    } catch {
      // Another test process built it first.
      fs.rmSync(building, { recursive: true, force: true });
    }
  }
  supports.set(root, result);
  return result;
}

function struct(map: WireMap): Struct {
  return Struct.fromJavaScript(map);
}

function fromStruct(value: Struct | undefined): WireMap {
  return (value?.toJavaScript() ?? {}) as WireMap;
}

/**
 * The real `@pulumi/pulumi/cmd/dynamic-provider` host in a child process, driven over gRPC with the SDK's own
 * protos — the process `pulumi` starts for dynamic resources. Values sent are plain JSON (secrets already revealed:
 * the host does not accept secrets); the unknown sentinel is sent as is during previews.
 */
export class ProviderHost {
  private exited: string | undefined;

  private constructor(
    private readonly child: ChildProcess,
    private readonly client: providerRpc.ResourceProviderClient,
    private readonly options: HostOptions,
    private readonly output: { text: string },
  ) {
    child.on("exit", (code, signal) => {
      this.exited = `the provider host exited (${signal ?? `code ${code}`})`;
    });
  }

  /** Spawns the host (one process per call, as `pulumi` starts one per deployment) and connects to its port. */
  static async start(options: HostOptions): Promise<ProviderHost> {
    const script = require.resolve(HOST_SCRIPT, { paths: [options.cwd] });
    const files = supportFiles(options.cwd);
    const child = spawn(process.execPath, ["--require", files.watchdog, script, "127.0.0.1:0"], {
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...process.env,
        PULUMI_NODEJS_PROJECT: options.project,
        PULUMI_NODEJS_STACK: options.stack,
        NODE_PATH: [files.nodePath, process.env.NODE_PATH].filter(Boolean).join(path.delimiter),
        ...options.env,
      },
    });
    const output = { text: "" };
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => (output.text += chunk));
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = "";
      const done = (err: Error | undefined, found?: number): void => {
        clearTimeout(timer);
        child.off("error", onError).off("exit", onExit);
        child.stdout!.removeAllListeners("data");
        // Anything a provider prints with console.log lands in the log too.
        child.stdout!.on("data", (chunk: string) => (output.text += chunk));
        if (err === undefined) {
          resolve(found!);
          return;
        }
        child.kill("SIGKILL");
        reject(new Error(`could not start the dynamic provider host: ${err.message}\n${output.text}`));
      };
      const onError = (err: Error): void => done(err);
      const onExit = (code: number | null): void => done(new Error(`it exited with code ${code}`));
      const timer = setTimeout(() => done(new Error("timed out waiting for its port")), START_TIMEOUT_MS);
      child.once("error", onError).once("exit", onExit);
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => {
        stdout += chunk;
        const line = /^(\d+)\s*\n/.exec(stdout);
        if (line) done(undefined, Number(line[1]));
      });
    });
    const client = new providerRpc.ResourceProviderClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    return new ProviderHost(child, client, options, output);
  }

  /** Everything the host wrote (its stderr, where providers log, and stray stdout). */
  get log(): string {
    return this.output.text;
  }

  /** Configure with the stack configuration (`ns:key` → value); secrets are sent as secrets, as the engine does. */
  async configure(config: Record<string, HostConfigValue>): Promise<void> {
    const req = new providerProto.ConfigureRequest();
    const args: WireMap = {};
    for (const [key, { value, secret }] of Object.entries(config)) {
      args[key] = secret ? { [SIG_KEY]: SECRET_SIG, value } : value;
      req.getVariablesMap().set(key, value);
    }
    req.setArgs(struct(args));
    req.setAcceptsecrets(true);
    req.setAcceptresources(true);
    req.setSendsOldInputs(true);
    req.setSendsOldInputsToDelete(true);
    req.setUrn(`urn:pulumi:${this.options.stack}::${this.options.project}::pulumi:providers:pulumi-nodejs::default`);
    req.setName("default");
    req.setType("pulumi:providers:pulumi-nodejs");
    req.setId(randomBytes(16).toString("hex"));
    await this.call("Configure", (cb) => this.client.configure(req, cb));
  }

  async check(urn: string, olds: WireMap, news: WireMap): Promise<CheckResult> {
    const req = new providerProto.CheckRequest();
    req.setUrn(urn).setName(nameOf(urn)).setType(typeOf(urn));
    req.setOlds(struct(olds)).setNews(struct(news));
    req.setRandomseed(randomBytes(32));
    const resp = await this.call<providerProto.CheckResponse>("Check", (cb) => this.client.check(req, cb));
    return {
      inputs: fromStruct(resp.getInputs()),
      failures: resp.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() })),
    };
  }

  /** `olds` are the old outputs, as the engine sends them; `oldInputs` the old inputs. */
  async diff(
    urn: string,
    id: string,
    olds: WireMap,
    news: WireMap,
    oldInputs: WireMap,
    ignoreChanges: string[],
  ): Promise<DiffResult> {
    const req = new providerProto.DiffRequest();
    req.setUrn(urn).setName(nameOf(urn)).setType(typeOf(urn)).setId(id);
    req.setOlds(struct(olds)).setNews(struct(news)).setOldInputs(struct(oldInputs));
    req.setIgnorechangesList(ignoreChanges);
    const resp = await this.call<providerProto.DiffResponse>("Diff", (cb) => this.client.diff(req, cb));
    const kinds = providerProto.DiffResponse.DiffChanges;
    const changes = resp.getChanges();
    return {
      changes: changes === kinds.DIFF_SOME ? "some" : changes === kinds.DIFF_NONE ? "none" : "unknown",
      replaces: resp.getReplacesList(),
      stables: resp.getStablesList(),
      diffs: resp.getDiffsList(),
      deleteBeforeReplace: resp.getDeletebeforereplace(),
    };
  }

  async create(urn: string, properties: WireMap): Promise<{ id: string; properties: WireMap }> {
    const req = new providerProto.CreateRequest();
    req.setUrn(urn).setName(nameOf(urn)).setType(typeOf(urn)).setProperties(struct(properties));
    const resp = await this.call<providerProto.CreateResponse>("Create", (cb) => this.client.create(req, cb));
    return { id: resp.getId(), properties: fromStruct(resp.getProperties()) };
  }

  async read(urn: string, id: string, properties: WireMap, inputs: WireMap): Promise<ReadResult> {
    const req = new providerProto.ReadRequest();
    req.setUrn(urn).setName(nameOf(urn)).setType(typeOf(urn)).setId(id);
    req.setProperties(struct(properties)).setInputs(struct(inputs));
    const resp = await this.call<providerProto.ReadResponse>("Read", (cb) => this.client.read(req, cb));
    const result: ReadResult = { id: resp.getId(), properties: fromStruct(resp.getProperties()) };
    if (resp.hasInputs()) result.inputs = fromStruct(resp.getInputs());
    return result;
  }

  /** `olds` are the old outputs, as the engine sends them. */
  async update(
    urn: string,
    id: string,
    olds: WireMap,
    news: WireMap,
    oldInputs: WireMap,
    ignoreChanges: string[],
  ): Promise<{ properties: WireMap }> {
    const req = new providerProto.UpdateRequest();
    req.setUrn(urn).setName(nameOf(urn)).setType(typeOf(urn)).setId(id);
    req.setOlds(struct(olds)).setNews(struct(news)).setOldInputs(struct(oldInputs));
    req.setIgnorechangesList(ignoreChanges);
    const resp = await this.call<providerProto.UpdateResponse>("Update", (cb) => this.client.update(req, cb));
    return { properties: fromStruct(resp.getProperties()) };
  }

  /** `properties` are the old outputs (their `__provider` is the one that deletes). */
  async delete(urn: string, id: string, properties: WireMap, oldInputs: WireMap): Promise<void> {
    const req = new providerProto.DeleteRequest();
    req.setUrn(urn).setName(nameOf(urn)).setType(typeOf(urn)).setId(id);
    req.setProperties(struct(properties)).setOldInputs(struct(oldInputs));
    await this.call("Delete", (cb) => this.client.delete(req, cb));
  }

  /** Disconnects and stops the host. */
  async close(): Promise<void> {
    this.client.close();
    if (this.exited !== undefined || this.child.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 5_000);
      this.child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.kill("SIGTERM");
    });
  }

  private call<T>(
    method: string,
    send: (callback: (err: grpc.ServiceError | null, resp: T) => void) => unknown,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      send((err, resp) => {
        if (!err) {
          resolve(resp);
          return;
        }
        const message = err.code === grpc.status.UNAVAILABLE && this.exited ? this.exited : err.details || err.message;
        reject(new HostError(method, message, err.code, initFailureOf(err)));
      });
    });
  }
}

/** The ErrorResourceInitFailed detail the host packs into the status when a Create/Update error carried an id. */
export function initFailureOf(err: grpc.ServiceError): InitFailure | undefined {
  const [raw] = err.metadata?.get(ERROR_DETAILS_KEY) ?? [];
  if (raw === undefined) return undefined;
  const status = statusProto.Status.deserializeBinary(typeof raw === "string" ? Buffer.from(raw) : raw);
  for (const detail of status.getDetailsList()) {
    if (detail.getTypeName() !== "pulumirpc.ErrorResourceInitFailed") continue;
    const failed = providerProto.ErrorResourceInitFailed.deserializeBinary(detail.getValue_asU8());
    return {
      id: failed.getId(),
      properties: fromStruct(failed.getProperties()),
      reasons: failed.getReasonsList(),
    };
  }
  return undefined;
}

/** The name part of a URN (`urn:pulumi:stack::project::type::name`). */
export function nameOf(urn: string): string {
  return urn.split("::").slice(3).join("::");
}

/** The resource's own type (last segment of the qualified type) of a URN. */
export function typeOf(urn: string): string {
  return (urn.split("::")[2] ?? "").split("$").pop() ?? "";
}
