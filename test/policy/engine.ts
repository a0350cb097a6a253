/**
 * The engine's side of a policy pack, for tests: a pack project is started the way `pulumi` starts one
 * (`pulumi-analyzer-policy` = `node @pulumi/pulumi/cmd/run-policy-pack <engine> .` in the pack's directory, the port
 * read from its stdout), and driven over gRPC with the SDK's own protos. Between the two runs the real
 * `@pulumi/policy` server: props behind its unknown-checking proxy, its enforcement-level handling, its diagnostics.
 * What the engine itself does is reproduced from `pkg/resource/analyzer` and `sdk/go/common/resource/plugin`: the
 * policy config is reconciled (schema defaults, then the pack's initial config, then the stack's config) and
 * validated against each policy's `configSchema` (ajv here, gojsonschema there) before `Configure`; `Analyze` and
 * `AnalyzeStack` get the properties without internal keys (`__provider`), `Remediate` with them; a mandatory
 * diagnostic blocks the run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as analyzerRpc from "@pulumi/pulumi/proto/analyzer_grpc_pb";
import * as analyzerProto from "@pulumi/pulumi/proto/analyzer_pb";
import { Ajv } from "ajv";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { Struct } from "google-protobuf/google/protobuf/struct_pb";
import { PROVIDER_KEY, STACK_TYPE, type RunResult } from "../../tools/harness";
import { flattenReferences, secret, type WireMap } from "../../tools/harness/wire";

const ROOT = path.resolve(__dirname, "../..");
const RUN_POLICY_PACK = path.join(ROOT, "node_modules/@pulumi/pulumi/cmd/run-policy-pack");
const START_TIMEOUT_MS = 30_000;

export type Level = "advisory" | "mandatory" | "remediate" | "disabled";
const LEVELS: readonly Level[] = ["advisory", "mandatory", "remediate", "disabled"];
const toProtoLevel: Record<Level, analyzerProto.EnforcementLevel> = {
  advisory: analyzerProto.EnforcementLevel.ADVISORY,
  mandatory: analyzerProto.EnforcementLevel.MANDATORY,
  remediate: analyzerProto.EnforcementLevel.REMEDIATE,
  disabled: analyzerProto.EnforcementLevel.DISABLED,
};
function fromProtoLevel(level: analyzerProto.EnforcementLevel): Level {
  const found = LEVELS.find((l) => toProtoLevel[l] === level);
  if (found === undefined) throw new Error(`invalid enforcement level ${level}`);
  return found;
}

/** A policy as the pack describes it (`GetAnalyzerInfo`), with `enforcementLevel` injected into its schema. */
export interface PolicyMeta {
  name: string;
  description: string;
  enforcementLevel: Level;
  type: "resource" | "stack" | "unknown";
  configSchema: { properties: Record<string, object>; required: string[] };
}

/** A policy's config as the engine handles it: the level apart from the properties. */
export interface PolicyConfig {
  enforcementLevel?: Level;
  properties?: Record<string, unknown>;
}

/** The policy config a stack gives (`--policy-pack-config` file): name → level, or { enforcementLevel?, ...props }. */
export type PolicyConfigFile = Record<string, string | Record<string, unknown>>;

/** The reconciled config failed validation against the policies' schemas; `errors` as the engine prints them. */
export class PolicyConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(`policy pack configuration is invalid:\n  ${errors.join("\n  ")}`);
    this.name = "PolicyConfigError";
  }
}

/** One resource as the engine sends it to the pack. */
export interface PolicyResource {
  urn: string;
  type: string;
  name: string;
  /** Wire form: plain JSON, secrets wrapped, the unknown sentinel during previews. */
  properties: WireMap;
  parent?: string;
  dependencies?: string[];
  /** Per property, the URNs of the resources its value came from. */
  propertyDependencies?: Record<string, string[]>;
  protect?: boolean;
  additionalSecretOutputs?: string[];
}

export interface Diagnostic {
  policyName: string;
  policyPackName: string;
  policyPackVersion: string;
  description: string;
  message: string;
  enforcementLevel: Level;
  urn: string;
}

export interface NotApplicable {
  policyName: string;
  reason: string;
}

export interface AnalyzeResult {
  diagnostics: Diagnostic[];
  notApplicable: NotApplicable[];
}

export interface Remediation {
  policyName: string;
  /** The resource's new properties (wire form), when the remediation changed it. */
  properties?: WireMap;
  /** Why the remediation could not run (e.g. an unknown value during preview). */
  diagnostic?: string;
}

/** What one run (preview or update) of a stack through the pack gave. */
export interface PolicyRun {
  /** Every diagnostic of Analyze (per resource, after remediation) and AnalyzeStack. */
  diagnostics: Diagnostic[];
  /** The diagnostics that block the run: enforcement level mandatory. */
  mandatory: Diagnostic[];
  /** Remediations applied, per resource URN. */
  remediations: Record<string, Remediation[]>;
  /** The resources' inputs after remediation, per URN. */
  inputs: Record<string, WireMap>;
}

function struct(value: object): Struct {
  return Struct.fromJavaScript(value as Parameters<typeof Struct.fromJavaScript>[0]);
}

function withoutInternalKeys(map: WireMap): WireMap {
  return Object.fromEntries(Object.entries(map).filter(([key]) => !key.startsWith("__")));
}

function resourceOptions(r: PolicyResource): analyzerProto.AnalyzerResourceOptions {
  const options = new analyzerProto.AnalyzerResourceOptions();
  options.setProtect(r.protect ?? false);
  options.setAdditionalsecretoutputsList(r.additionalSecretOutputs ?? []);
  options.setCustomtimeouts(new analyzerProto.AnalyzerResourceOptions.CustomTimeouts());
  options.setParent(r.parent ?? "");
  return options;
}

function defaultProvider(urn: string): analyzerProto.AnalyzerProviderResource {
  const [, stack, project] = /^urn:pulumi:([^:]+)::([^:]+)::/.exec(urn) ?? ["", "test", "test"];
  const provider = new analyzerProto.AnalyzerProviderResource();
  provider.setType("pulumi:providers:pulumi-nodejs").setName("default").setProperties(struct({}));
  provider.setUrn(`urn:pulumi:${stack}::${project}::pulumi:providers:pulumi-nodejs::default`);
  return provider;
}

function analyzeRequest(r: PolicyResource, properties: WireMap): analyzerProto.AnalyzeRequest {
  const req = new analyzerProto.AnalyzeRequest();
  req.setUrn(r.urn).setType(r.type).setName(r.name).setProperties(struct(properties));
  req.setOptions(resourceOptions(r)).setProvider(defaultProvider(r.urn));
  return req;
}

function analyzeResult(resp: analyzerProto.AnalyzeResponse): AnalyzeResult {
  return {
    diagnostics: resp.getDiagnosticsList().map((d) => ({
      policyName: d.getPolicyname(),
      policyPackName: d.getPolicypackname(),
      policyPackVersion: d.getPolicypackversion(),
      description: d.getDescription(),
      message: d.getMessage(),
      enforcementLevel: fromProtoLevel(d.getEnforcementlevel()),
      urn: d.getUrn(),
    })),
    notApplicable: resp.getNotApplicableList().map((n) => ({ policyName: n.getPolicyName(), reason: n.getReason() })),
  };
}

/** `parsePolicyPackConfig` of the engine: a level string, or an object whose `enforcementLevel` is taken apart. */
export function parsePolicyConfigFile(file: PolicyConfigFile): Record<string, PolicyConfig> {
  const result: Record<string, PolicyConfig> = {};
  for (const [name, value] of Object.entries(file)) {
    let enforcementLevel: Level | undefined;
    let properties: Record<string, unknown> | undefined;
    if (typeof value === "string") {
      if (!LEVELS.includes(value as Level)) {
        throw new Error(`parsing enforcement level for "${name}": "${value}" is not a valid enforcement level`);
      }
      enforcementLevel = value as Level;
    } else {
      const { enforcementLevel: level, ...rest } = value;
      if (level !== undefined) {
        if (typeof level !== "string" || !LEVELS.includes(level as Level)) {
          throw new Error(`parsing enforcement level for "${name}": ${JSON.stringify(level)} is not valid`);
        }
        enforcementLevel = level as Level;
      }
      if (Object.keys(rest).length > 0) properties = rest;
    }
    if (enforcementLevel === undefined && properties === undefined) continue;
    result[name] = { enforcementLevel, properties };
  }
  return result;
}

/** `applyConfig` of the engine: `all` sets every level, then each policy's level and properties are laid over. */
function applyConfig(result: Record<string, PolicyConfig>, given: Record<string, PolicyConfig>): void {
  const all = given.all?.enforcementLevel;
  if (all !== undefined) for (const key of Object.keys(result)) result[key] = { ...result[key], enforcementLevel: all };
  for (const [name, config] of Object.entries(given)) {
    const current = result[name] ?? {};
    result[name] = {
      enforcementLevel: config.enforcementLevel ?? current.enforcementLevel,
      properties:
        config.properties === undefined || Object.keys(config.properties).length === 0
          ? current.properties
          : { ...current.properties, ...config.properties },
    };
  }
}

/**
 * A policy pack process and the engine's calls into it. `start` a pack directory (a PulumiPolicy.yaml project with
 * its dependencies resolvable), `configure` it with a stack's policy config, then analyze resources or whole runs.
 */
export class PolicyEngine {
  private config: Record<string, PolicyConfig> = {};

  private constructor(
    private readonly child: ChildProcess,
    private readonly client: analyzerRpc.AnalyzerClient,
    private readonly output: { text: string },
    /** Pack name, version, policies and the pack's own initial config. */
    readonly info: {
      name: string;
      version: string;
      policies: PolicyMeta[];
      initialConfig: Record<string, PolicyConfig>;
    },
  ) {}

  /**
   * Starts the pack in `dir` as `pulumi` does, and reads its policies. `env` is laid over the test's environment:
   * what the CLI adds, e.g. `PULUMI_CONFIG` (the stack's config, secrets decrypted).
   */
  static async start(
    dir: string,
    options: { stack?: string; project?: string; env?: Record<string, string> } = {},
  ): Promise<PolicyEngine> {
    const watchdog = path.join(dir, ".watchdog.js");
    // Ends the pack when the test process is gone (its stdin closes), without keeping a failed pack alive.
    fs.writeFileSync(
      watchdog,
      'process.stdin.on("data", () => {});\nprocess.stdin.on("end", () => process.exit(0));\nprocess.stdin.unref();\n',
    );
    const child = spawn(process.execPath, ["--require", watchdog, RUN_POLICY_PACK, "127.0.0.1:0", "."], {
      cwd: dir,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...process.env,
        PULUMI_NODEJS_PROJECT: options.project ?? "test",
        PULUMI_NODEJS_STACK: options.stack ?? "test",
        ...options.env,
      },
    });
    const output = { text: "" };
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (output.text += chunk));
    const port = await new Promise<number>((resolve, reject) => {
      let stdout = "";
      const fail = (why: string) => {
        clearTimeout(timer);
        child.kill("SIGKILL");
        reject(new Error(`the policy pack in ${dir} did not start: ${why}\n${output.text}${stdout}`));
      };
      const timer = setTimeout(() => fail("timed out waiting for its port"), START_TIMEOUT_MS);
      child.once("exit", (code) => fail(`it exited with code ${code}`));
      child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
        stdout += chunk;
        const line = /^(\d+)\s*\n/.exec(stdout);
        if (line === null) return;
        clearTimeout(timer);
        child.removeAllListeners("exit");
        child.stdout!.removeAllListeners("data").on("data", (more: string) => (output.text += more));
        resolve(Number(line[1]));
      });
    });
    const client = new analyzerRpc.AnalyzerClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const info = await unary<analyzerProto.AnalyzerInfo>((cb) => client.getAnalyzerInfo(new Empty(), cb));
    const policies = info.getPoliciesList().map((p): PolicyMeta => {
      const schema = p.getConfigschema();
      return {
        name: p.getName(),
        description: p.getDescription(),
        enforcementLevel: fromProtoLevel(p.getEnforcementlevel()),
        type:
          p.getPolicyType() === analyzerProto.PolicyType.POLICY_TYPE_RESOURCE
            ? "resource"
            : p.getPolicyType() === analyzerProto.PolicyType.POLICY_TYPE_STACK
              ? "stack"
              : "unknown",
        configSchema: {
          properties: {
            ...((schema?.getProperties()?.toJavaScript() ?? {}) as Record<string, object>),
            enforcementLevel: { type: "string", enum: [...LEVELS] },
          },
          required: schema?.getRequiredList() ?? [],
        },
      };
    });
    const initialConfig: Record<string, PolicyConfig> = {};
    info.getInitialconfigMap().forEach((config, name) => {
      initialConfig[name] = {
        enforcementLevel: fromProtoLevel(config.getEnforcementlevel()),
        properties: config.getProperties()?.toJavaScript(),
      };
    });
    const engine = new PolicyEngine(child, client, output, {
      name: info.getName(),
      version: info.getVersion(),
      policies: policies.sort((a, b) => a.name.localeCompare(b.name)),
      initialConfig,
    });
    const stackRequest = new analyzerProto.AnalyzerStackConfigureRequest();
    stackRequest.setStack(options.stack ?? "test").setProject(options.project ?? "test");
    await unary((cb) => client.configureStack(stackRequest, cb));
    await engine.configure();
    return engine;
  }

  /** Everything the pack process printed. */
  get log(): string {
    return this.output.text;
  }

  /** The config last sent with `Configure`, per policy. */
  get effectiveConfig(): Record<string, PolicyConfig> {
    return this.config;
  }

  /**
   * `ReconcilePolicyPackConfig` then `Configure`: schema defaults and each policy's level, the pack's initial config,
   * then `file` (the stack's policy config); validated against every policy's schema. Throws
   * {@link PolicyConfigError} listing every problem, as the engine refuses to run then.
   */
  async configure(file: PolicyConfigFile = {}): Promise<Record<string, PolicyConfig>> {
    const result: Record<string, PolicyConfig> = {};
    for (const policy of this.info.policies) {
      const defaults = Object.entries(policy.configSchema.properties).filter(([, s]) => "default" in s);
      result[policy.name] = {
        enforcementLevel: policy.enforcementLevel,
        properties:
          defaults.length === 0
            ? undefined
            : Object.fromEntries(defaults.map(([k, s]) => [k, (s as { default: unknown }).default])),
      };
    }
    applyConfig(result, this.info.initialConfig);
    applyConfig(result, parsePolicyConfigFile(file));

    const ajv = new Ajv({ allErrors: true, strict: false });
    const errors: string[] = [];
    for (const policy of this.info.policies) {
      const validate = ajv.compile({ type: "object", ...policy.configSchema });
      if (!validate(result[policy.name]?.properties ?? {})) {
        for (const e of validate.errors ?? []) {
          errors.push(`${policy.name}: ${e.instancePath === "" ? "" : `${e.instancePath.slice(1)} `}${e.message}`);
        }
      }
    }
    if (errors.length > 0) throw new PolicyConfigError(errors);

    const req = new analyzerProto.ConfigureAnalyzerRequest();
    for (const [name, config] of Object.entries(result)) {
      const entry = new analyzerProto.PolicyConfig();
      entry.setEnforcementlevel(toProtoLevel[config.enforcementLevel ?? "advisory"]);
      entry.setProperties(struct(config.properties ?? {}));
      req.getPolicyconfigMap().set(name, entry);
    }
    await unary((cb) => this.client.configure(req, cb));
    this.config = result;
    return result;
  }

  /** `Analyze` one resource's inputs (internal keys left out, as the engine does). */
  async analyze(resource: PolicyResource): Promise<AnalyzeResult> {
    const req = analyzeRequest(resource, withoutInternalKeys(resource.properties));
    return analyzeResult(await unary((cb) => this.client.analyze(req, cb)));
  }

  /** `AnalyzeStack` over the resources' outputs. */
  async analyzeStack(resources: PolicyResource[]): Promise<AnalyzeResult> {
    const req = new analyzerProto.AnalyzeStackRequest();
    req.setResourcesList(
      resources.map((r) => {
        const resource = new analyzerProto.AnalyzerResource();
        resource.setUrn(r.urn).setType(r.type).setName(r.name);
        resource.setProperties(struct(withoutInternalKeys(r.properties)));
        resource.setOptions(resourceOptions(r)).setProvider(defaultProvider(r.urn));
        resource.setParent(r.parent ?? "").setDependenciesList(r.dependencies ?? []);
        for (const [property, urns] of Object.entries(r.propertyDependencies ?? {})) {
          resource
            .getPropertydependenciesMap()
            .set(property, new analyzerProto.AnalyzerPropertyDependencies().setUrnsList(urns));
        }
        return resource;
      }),
    );
    return analyzeResult(await unary((cb) => this.client.analyzeStack(req, cb)));
  }

  /** `Remediate` one resource (internal keys kept, as the engine does). */
  async remediate(resource: PolicyResource): Promise<{ remediations: Remediation[]; notApplicable: NotApplicable[] }> {
    const resp = await unary<analyzerProto.RemediateResponse>((cb) =>
      this.client.remediate(analyzeRequest(resource, resource.properties), cb),
    );
    return {
      remediations: resp.getRemediationsList().map((r) => ({
        policyName: r.getPolicyname(),
        properties: r.getProperties()?.toJavaScript() as WireMap | undefined,
        diagnostic: r.getDiagnostic() === "" ? undefined : r.getDiagnostic(),
      })),
      notApplicable: resp.getNotApplicableList().map((n) => ({ policyName: n.getPolicyName(), reason: n.getReason() })),
    };
  }

  /**
   * One run as the engine does it: per resource, remediations (each one's properties replace the resource's), then
   * Analyze on the result; then AnalyzeStack over the stack's outputs.
   */
  async run(resources: { resource: PolicyResource; outputs: WireMap }[]): Promise<PolicyRun> {
    const diagnostics: Diagnostic[] = [];
    const remediations: Record<string, Remediation[]> = {};
    const inputs: Record<string, WireMap> = {};
    for (const { resource } of resources) {
      let properties = resource.properties;
      const remediated = await this.remediate(resource);
      for (const r of remediated.remediations) if (r.properties !== undefined) properties = r.properties;
      if (remediated.remediations.length > 0) remediations[resource.urn] = remediated.remediations;
      inputs[resource.urn] = properties;
      // The engine knows which resource a resource policy judged; the pack leaves the URN empty.
      const analyzed = await this.analyze({ ...resource, properties });
      diagnostics.push(...analyzed.diagnostics.map((d) => ({ ...d, urn: d.urn === "" ? resource.urn : d.urn })));
    }
    const stack = await this.analyzeStack(
      resources.map(({ resource, outputs }) => ({ ...resource, properties: outputs })),
    );
    diagnostics.push(...stack.diagnostics);
    return {
      diagnostics,
      mandatory: diagnostics.filter((d) => d.enforcementLevel === "mandatory"),
      remediations,
      inputs,
    };
  }

  /** Stops the pack process. */
  async close(): Promise<void> {
    this.client.close();
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.stdin!.end();
    this.child.kill();
    await exited;
  }
}

function unary<T = unknown>(call: (cb: (error: grpc.ServiceError | null, response: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) =>
    call((error, response) => (error === null ? resolve(response) : reject(new Error(error.details)))),
  );
}

/**
 * The resources a harness run holds, as the engine hands them to a policy pack: for an `up`, the stack's state
 * (inputs and outputs in wire form: secrets wrapped, references flattened); for a `preview`, the planned steps
 * (checked inputs with the unknown sentinel, and as outputs the same, since a dynamic provider has no preview).
 */
export function stackResources(result: RunResult): { resource: PolicyResource; outputs: WireMap }[] {
  if (result.kind === "preview") {
    return result.steps
      .filter((s) => s.op !== "delete")
      .map((s) => ({
        resource: { urn: s.urn, type: s.type, name: s.name, properties: wrapSecrets(s.inputs, []) },
        outputs: wrapSecrets(s.outputs, s.secretOutputs),
      }));
  }
  return result.state.resources
    .filter((r) => r.type !== STACK_TYPE)
    .map((r) => ({
      resource: {
        urn: r.urn,
        type: r.type,
        name: r.name,
        properties: flattenReferences(r.inputs) as WireMap,
        parent: r.parent,
        dependencies: r.dependencies,
        protect: r.options.protect,
        additionalSecretOutputs: r.options.additionalSecretOutputs,
      },
      outputs: flattenReferences(r.outputs) as WireMap,
    }));
}

function wrapSecrets(values: Record<string, unknown>, secretPaths: string[]): WireMap {
  const map = JSON.parse(JSON.stringify(values)) as WireMap;
  for (const key of secretPaths)
    if (!key.includes(".") && !key.includes("[") && key in map) map[key] = secret(map[key]);
  delete map[PROVIDER_KEY];
  return map;
}

/**
 * A policy pack project in a fresh temporary directory, as `npm install` leaves one: its files, and
 * `node_modules/@cloudinfra/pulumi` linking to this repository (what the `file:../..` dependency installs; its own
 * dependencies resolve from the repository's node_modules). Removed by the returned `remove`.
 */
export function packProject(files: Record<string, string>): { dir: string; remove(): void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-policy-pack-"));
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  const link = path.join(dir, "node_modules", "@cloudinfra", "pulumi");
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(ROOT, link, "dir");
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** A pack project serving `new CloudinfraGuard(args)` from the built package (`dist/`: build first). */
export function guardProject(args: object = {}): { dir: string; remove(): void } {
  return packProject({
    "PulumiPolicy.yaml": "runtime: nodejs\ndescription: test pack\n",
    "package.json": JSON.stringify({ name: "guard-under-test", version: "0.0.1", main: "index.js" }),
    "index.js": `const { CloudinfraGuard } = require("@cloudinfra/pulumi/policy");\nnew CloudinfraGuard(${JSON.stringify(args)});\n`,
  });
}

/** The files of a pack project of this repository (e.g. `examples/policy-pack`), without its node_modules. */
export function projectFiles(relative: string): Record<string, string> {
  const dir = path.join(ROOT, relative);
  return Object.fromEntries(
    fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => [e.name, fs.readFileSync(path.join(dir, e.name), "utf8")]),
  );
}
