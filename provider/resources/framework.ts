import { AsyncLocalStorage } from "node:async_hooks";
import { createHash } from "node:crypto";
import { z } from "zod";
import { ApiError, CloudClient, JobFailedError, JobTimeoutError, Pacer, type ClientAuth } from "../client";
import type { Job } from "../api";
import { duration, stderrProgressLog, type ProgressLog } from "../client/progress";
import { BatchedReader, type ListPage } from "../client/batched-reader";
import type { InputField } from "./fields";

/** The engine's placeholder for a value not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
export type Props = Record<string, unknown>;

// ---------------------------------------------------------------- configuration

/**
 * Provider settings: stack config `cloudinfra:<name>`, else the environment variable. This section is the one place
 * where they are read and validated, for every host (the dynamic provider's check, a plugin's CheckConfig/Configure).
 */
export const settingSources = {
  baseUrl: "CLOUDINFRA_BASE_URL",
  apiKey: "CLOUDINFRA_API_KEY",
  sessionToken: "CLOUDINFRA_SESSION_TOKEN",
  email: "CLOUDINFRA_EMAIL",
  password: "CLOUDINFRA_PASSWORD",
  totpSecret: "CLOUDINFRA_TOTP_SECRET",
  entityId: "CLOUDINFRA_ENTITY_ID",
  pollIntervalMs: "CLOUDINFRA_POLL_INTERVAL_MS",
  jobTimeoutMs: "CLOUDINFRA_JOB_TIMEOUT_MS",
  requestTimeoutMs: "CLOUDINFRA_REQUEST_TIMEOUT_MS",
  maxRetries: "CLOUDINFRA_MAX_RETRIES",
  progressIntervalMs: "CLOUDINFRA_PROGRESS_INTERVAL_MS",
  skipCredentialsValidation: "CLOUDINFRA_SKIP_CREDENTIALS_VALIDATION",
} as const;
export type SettingName = keyof typeof settingSources;

/** The numeric settings: default, smallest and largest value allowed. */
export const numericSettings = {
  pollIntervalMs: { fallback: 2000, min: 1, max: Number.MAX_SAFE_INTEGER },
  jobTimeoutMs: { fallback: 30 * 60_000, min: 1000, max: Number.MAX_SAFE_INTEGER },
  requestTimeoutMs: { fallback: 30_000, min: 100, max: 10 * 60_000 },
  maxRetries: { fallback: 3, min: 0, max: 10 },
  progressIntervalMs: { fallback: 5000, min: 100, max: Number.MAX_SAFE_INTEGER },
} as const satisfies Partial<Record<SettingName, { fallback: number; min: number; max: number }>>;
type NumericSetting = keyof typeof numericSettings;

let stackConfig: Partial<Record<SettingName, string>> = {};
let unknownKeys: string[] = [];

/**
 * Keeps the stack's `cloudinfra:*` values (the dynamic host passes them to `configure`). `keys`, when the host can
 * list them, are every configuration key of the stack: those under `cloudinfra:` that are not settings are reported
 * by {@link settingProblems}, with the closest known key.
 */
export function configure(get: (key: string) => string | undefined, keys?: Iterable<string>): void {
  ({ values: stackConfig, unknownKeys } = configuration(get, keys));
}

/** One provider configuration's `cloudinfra:*` values, for hosts that serve several ({@link withConfiguration}). */
export interface Configuration {
  values: Partial<Record<SettingName, string>>;
  unknownKeys: string[];
  /**
   * Aborted (with an {@link OperationCancelledError}) when the host cancels the operations running under this
   * configuration, e.g. the plugin's Cancel: their waits (jobs, polls, rate-limit budget, retries) end at once.
   */
  cancel?: AbortSignal;
}

/** The configuration `configure` would keep, without keeping it. */
export function configuration(get: (key: string) => string | undefined, keys?: Iterable<string>): Configuration {
  const values: Partial<Record<SettingName, string>> = {};
  for (const name of Object.keys(settingSources) as SettingName[]) {
    const value = get(`cloudinfra:${name}`);
    if (value !== undefined && value !== "") values[name] = value;
  }
  const unknown = [...(keys ?? [])].filter((k) => k.startsWith("cloudinfra:") && !(k.slice(11) in settingSources));
  return { values, unknownKeys: unknown };
}

// A plugin serves one configuration per provider instance (explicit providers), its calls interleaved: each call runs
// inside its own, and everything it awaits (job waits, retries) keeps reading that one.
const scopedConfiguration = new AsyncLocalStorage<Configuration>();
const configValues = () => scopedConfiguration.getStore()?.values ?? stackConfig;

/** Runs `fn` (and everything it awaits) with `config` in force instead of the one `configure` kept. */
export function withConfiguration<T>(config: Configuration, fn: () => T): T {
  return scopedConfiguration.run(config, fn);
}

/** The signal of the running operation's cancellation, if its host has one. */
export const cancellation = (): AbortSignal | undefined => scopedConfiguration.getStore()?.cancel;

export function readSetting(name: SettingName): string | undefined {
  const value = configValues()[name] ?? process.env[settingSources[name]];
  return value === undefined || value === "" ? undefined : value;
}

/**
 * Where a setting's value comes from, for messages: `cloudinfra:apiKey (stack config)`,
 * `CLOUDINFRA_API_KEY (environment)`, or both names when it is not set.
 */
export function settingOrigin(name: SettingName): string {
  if (configValues()[name] !== undefined) return `cloudinfra:${name} (stack config)`;
  const env = process.env[settingSources[name]];
  if (env !== undefined && env !== "") return `${settingSources[name]} (environment)`;
  return `cloudinfra:${name} (or ${settingSources[name]})`;
}

/** How to set a setting, for messages: the `pulumi config set` command, or the variable it came from. */
function howToSet(name: SettingName, example: string, secret = false): string {
  const command = `\`pulumi config set${secret ? " --secret" : ""} cloudinfra:${name} ${example}\``;
  if (configValues()[name] === undefined && readSetting(name) !== undefined) {
    return `set ${settingSources[name]}=${example} (or ${command}: stack config wins over the environment)`;
  }
  return command;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The known setting closest to a mistyped one (case ignored), if any is close. */
export function closestSetting(name: string): SettingName | undefined {
  let best: { name: SettingName; distance: number } | undefined;
  for (const known of Object.keys(settingSources) as SettingName[]) {
    const distance = editDistance(name.toLowerCase(), known.toLowerCase());
    if (!best || distance < best.distance) best = { name: known, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.name : undefined;
}

export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

/** The settings in force, validated. */
export interface Settings {
  /** API base URL, ending in /v1. */
  baseUrl: string;
  auth: ClientAuth;
  entityId?: string;
  pollIntervalMs: number;
  jobTimeoutMs: number;
  /** How long one HTTP attempt may wait for its answer. */
  requestTimeoutMs: number;
  /** Retries of a failed request that may be retried (429 pauses do not count). */
  maxRetries: number;
  /** How often a job being waited for reports its progress. */
  progressIntervalMs: number;
  /** Do not check the credentials with the API (`GET /auth/check`) before the first change. */
  skipCredentialsValidation: boolean;
}

function readNumber(name: NumericSetting, problems: string[]): number {
  const { fallback, min, max } = numericSettings[name];
  const raw = readSetting(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    problems.push(`cloudinfra:${name} (${settingSources[name]}) must be an integer ${range}, not "${raw}"`);
    return fallback;
  }
  return value;
}

function readBoolean(name: SettingName, problems: string[]): boolean {
  const raw = readSetting(name);
  if (raw === undefined) return false;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  problems.push(`cloudinfra:${name} (${settingSources[name]}) must be true or false, not "${raw}"`);
  return false;
}

const credentialHelp =
  "Configure one of: `pulumi config set --secret cloudinfra:apiKey <key>` (or CLOUDINFRA_API_KEY); " +
  "`pulumi config set --secret cloudinfra:sessionToken <token>` (or CLOUDINFRA_SESSION_TOKEN); or " +
  "cloudinfra:email + cloudinfra:password + cloudinfra:totpSecret (or CLOUDINFRA_EMAIL, CLOUDINFRA_PASSWORD, " +
  "CLOUDINFRA_TOTP_SECRET) to sign in with two-factor authentication.";

/** Why a base URL is not usable, or undefined when it is. Credentials in the URL are never echoed. */
function baseUrlProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `is not a URL ("${raw.replace(/\/\/[^/@]*@/, "//")}")`;
  }
  const shown = `${url.protocol}//${url.host}${url.pathname}`;
  if (url.protocol !== "http:" && url.protocol !== "https:") return `is not an http(s) URL ("${shown}")`;
  if (url.search || url.hash) return `must not have a query or fragment ("${shown}${url.search}${url.hash}")`;
  if (!/\/v1\/?$/.test(url.pathname)) {
    const fixed = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, "")}/v1`;
    return `does not end in /v1 ("${shown.replace(/\/+$/, "")}"): the API's routes are under it, e.g. ${fixed}`;
  }
  return undefined;
}

/**
 * Every problem of the settings in force, each naming the setting, where its value came from and the fix; empty when
 * they are usable. Nothing is sent to the API. What `check` (and a plugin's CheckConfig) reports.
 */
export function settingProblems(): string[] {
  return readSettings().problems;
}

function readSettings(): { settings?: Settings; problems: string[] } {
  const problems: string[] = [];
  for (const key of scopedConfiguration.getStore()?.unknownKeys ?? unknownKeys) {
    const name = key.slice("cloudinfra:".length);
    const closest = closestSetting(name);
    problems.push(
      `${key} is not a cloudinfra setting` +
        (closest
          ? `: did you mean cloudinfra:${closest}? `
          : `; the settings are ${Object.keys(settingSources).join(", ")}. `) +
        `Remove it with \`pulumi config rm ${key}\`${closest ? ` and set cloudinfra:${closest} instead` : ""}`,
    );
  }
  const baseUrl = readSetting("baseUrl");
  if (!baseUrl) {
    problems.push(
      "cloudinfra:baseUrl is not set: `pulumi config set cloudinfra:baseUrl https://<host>/v1` (or CLOUDINFRA_BASE_URL)",
    );
  } else {
    const problem = baseUrlProblem(baseUrl);
    if (problem) {
      problems.push(`${settingOrigin("baseUrl")} ${problem}; fix it: ${howToSet("baseUrl", "https://<host>/v1")}`);
    }
  }
  const apiKey = readSetting("apiKey");
  const sessionToken = readSetting("sessionToken");
  const email = readSetting("email");
  const password = readSetting("password");
  const totpSecret = readSetting("totpSecret");
  let auth: ClientAuth | undefined;
  if (apiKey) auth = { apiKey };
  else if (sessionToken) auth = { sessionToken };
  else if (email && password && totpSecret) auth = { email, password, totpSecret };
  if (apiKey && !apiKey.startsWith("svc_")) {
    problems.push(
      `${settingOrigin("apiKey")} is not an API key (API keys start with svc_; a session token goes in ` +
        `cloudinfra:sessionToken): ${howToSet("apiKey", "svc_...", true)}`,
    );
  }
  if ((email || password || totpSecret) && !(email && password && totpSecret)) {
    const missing = (["email", "password", "totpSecret"] as const).filter((n) => !readSetting(n));
    problems.push(`Signing in needs cloudinfra:${missing.join(", cloudinfra:")} too. ${credentialHelp}`);
  } else if (!auth) problems.push(`No cloudinfra credentials are configured. ${credentialHelp}`);
  const entityId = readSetting("entityId");
  if (entityId !== undefined && !z.uuid().safeParse(entityId).success) {
    problems.push(`${settingOrigin("entityId")} must be the UUID of an entity, not "${entityId}"`);
  }
  const numbers = Object.fromEntries(
    (Object.keys(numericSettings) as NumericSetting[]).map((name) => [name, readNumber(name, problems)]),
  ) as Record<NumericSetting, number>;
  const skipCredentialsValidation = readBoolean("skipCredentialsValidation", problems);
  if (problems.length > 0 || !baseUrl || !auth) return { problems };
  return { problems, settings: { baseUrl, auth, entityId, ...numbers, skipCredentialsValidation } };
}

/** The settings in force now (read at each call, never captured); a ConfigurationError lists every problem. */
export function settings(): Settings {
  const { settings: found, problems } = readSettings();
  if (!found) {
    throw new ConfigurationError(
      problems.length === 1
        ? problems[0]!
        : `The cloudinfra configuration has ${problems.length} problems:\n${problems.map((p) => `- ${p}`).join("\n")}`,
    );
  }
  return found;
}

const clients = new Map<string, CloudClient>();
const pacers = new Map<string, Pacer>();

/**
 * One rate budget per API for the whole process: the clients of a deployment (an API key, and the session that
 * creates API keys) draw from one user's pool, so they pace together and a 429 pauses them all.
 */
function pacerOf(baseUrl: string): Pacer {
  let pacer = pacers.get(baseUrl);
  // One probe before the figures are known: another process (a stack in the next CI job) may have spent the window.
  if (!pacer) pacers.set(baseUrl, (pacer = new Pacer({ initialConcurrency: 1 })));
  return pacer;
}

/** One client per distinct settings, so every resource of a deployment shares its rate budget and job poller. */
export function client(current: Settings = settings()): CloudClient {
  const secret =
    "apiKey" in current.auth
      ? current.auth.apiKey
      : "sessionToken" in current.auth
        ? current.auth.sessionToken
        : `${current.auth.email}\n${current.auth.password}\n${current.auth.totpSecret}`;
  const key = JSON.stringify([
    current.baseUrl,
    current.entityId ?? null,
    current.pollIntervalMs,
    current.requestTimeoutMs,
    current.maxRetries,
    createHash("sha256").update(secret).digest("hex"),
  ]);
  let found = clients.get(key);
  if (!found) {
    found = new CloudClient({
      baseUrl: current.baseUrl,
      auth: current.auth,
      entityId: current.entityId,
      jobs: { pollIntervalMs: current.pollIntervalMs, maxPollIntervalMs: Math.max(current.pollIntervalMs, 10_000) },
      timeouts: {
        connectMs: Math.min(10_000, current.requestTimeoutMs),
        headersMs: current.requestTimeoutMs,
        bodyMs: current.requestTimeoutMs,
      },
      retry: { retries: current.maxRetries },
      log: forwardingLog,
      labels: {
        baseUrl: settingOrigin("baseUrl"),
        requestTimeout: "cloudinfra:requestTimeoutMs",
        retries: "cloudinfra:maxRetries",
        authHint: authHint(current.auth),
      },
      pacing: pacerOf(current.baseUrl),
      waits: cancellation,
    });
    clients.set(key, found);
  }
  return found;
}

/** Closes every client (tests; the host process simply exits). */
export async function closeClients(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  await Promise.all(all.map((c) => c.close()));
  for (const pacer of pacers.values()) pacer.close();
  pacers.clear();
}

// ---------------------------------------------------------------- progress and credentials

let progressLog: ProgressLog = stderrProgressLog;

/**
 * Routes the provider's progress lines (jobs started and their progress, rate-limit pauses, retries and their
 * reasons). Default: stderr, as the dynamic-provider host has no engine connection; a plugin host sends them to the
 * engine's log.
 */
export function setProgressLog(log: ProgressLog): void {
  progressLog = log;
}

/** The sink in force, read at each line (clients are cached; the sink may be set later). */
const forwardingLog: ProgressLog = {
  info: (message, context) => progressLog.info(message, context),
  warn: (message, context) => progressLog.warn(message, context),
};

/** What to do when the API refuses these credentials (HTTP 401): where they came from and how to replace them. */
function authHint(auth: ClientAuth): (code: string) => string | undefined {
  return (code) => {
    if ("apiKey" in auth) {
      const state =
        code === "API_KEY_EXPIRED"
          ? "has expired"
          : "was refused (unknown, revoked, rotated away, suspended, or its owner deleted)";
      return (
        `The API key from ${settingOrigin("apiKey")} ${state}: create a new key (or rotate this one, or reactivate ` +
        `a suspended one) and ${howToSet("apiKey", "<key>", true)}`
      );
    }
    if ("sessionToken" in auth) {
      return (
        `The session token from ${settingOrigin("sessionToken")} was refused: sign in again and ` +
        `${howToSet("sessionToken", "<token>", true)}, or use an API key (\`pulumi config set --secret cloudinfra:apiKey <key>\`)`
      );
    }
    return (
      `The sign-in credentials from ${settingOrigin("email")}, ${settingOrigin("password")} and ` +
      `${settingOrigin("totpSecret")} were refused: check them, e.g. ${howToSet("password", "<password>", true)}`
    );
  };
}

const verified = new WeakMap<CloudClient, Promise<void>>();

/**
 * Checks once per credential and process that the API accepts the credentials (`GET /auth/check`), so that a
 * preview fails on a wrong key or an unreachable API instead of planning changes an `up` cannot make. Skipped with
 * `cloudinfra:skipCredentialsValidation` (previews without network access). The outcome, good or bad, is kept.
 */
export function verifyCredentials(current: Settings = settings()): Promise<void> {
  // Signing in (email, password, TOTP) is not a check without effects: it opens a session and spends a TOTP code
  // that the `up` after a preview could then not use. Those credentials are checked by the first real call.
  if (current.skipCredentialsValidation || "password" in current.auth) return Promise.resolve();
  const api = client(current);
  let found = verified.get(api);
  if (!found) {
    found = api.check().then(
      () => undefined,
      (error: unknown) => {
        const text = error instanceof Error ? error.message : String(error);
        const refused = error instanceof ApiError && (error.status === 401 || error.status === 403);
        throw new ConfigurationError(
          (refused
            ? `The API refused the cloudinfra credentials: ${text}`
            : `The cloudinfra credentials could not be checked: ${text}`) +
            ". (Checked once per run with GET /auth/check; set `cloudinfra:skipCredentialsValidation` to true to " +
            "preview without network access.)",
          { cause: error },
        );
      },
    );
    found.catch(() => undefined);
    verified.set(api, found);
  }
  return found;
}

/**
 * Check of a resource with the configuration: settings problems fail it before anything else (nothing sent); a
 * resource whose inputs are valid then has the credentials checked with the API (once per credential and process).
 * Bad inputs are reported without any request.
 */
export async function checkResource(kind: ResourceKind, olds: Props, news: Props): Promise<CheckResult<Props>> {
  const current = settings();
  // The credentials this kind will use (an ApiKey needs a session): missing ones fail here, before any request.
  const used = kind.settingsFor ? kind.settingsFor(current) : current;
  const result = await kind.check(olds, news);
  if (result.failures.length === 0) await verifyCredentials(used);
  return result;
}

// ---------------------------------------------------------------- check

export interface CheckFailure {
  property: string;
  reason: string;
}
export interface CheckResult<I> {
  inputs: I;
  failures: CheckFailure[];
}

export function containsUnknown(value: unknown): boolean {
  if (value === UNKNOWN) return true;
  if (Array.isArray(value)) return value.some(containsUnknown);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsUnknown);
  return false;
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
 * known values.
 */
export function checkInputs<S extends z.ZodObject>(
  schema: S,
  news: Props,
  extra?: (known: Partial<z.output<S>>, failures: CheckFailure[]) => void,
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
        failures.push({ property, reason: missing ? noValue(reasonFor(property, issue.message)) : issue.message });
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

// ---------------------------------------------------------------- diff

export interface DiffResult {
  changes: boolean;
  replaces: string[];
  stables: string[];
  deleteBeforeReplace: boolean;
}

export interface DiffSpec {
  /** Inputs changed in place. */
  inPlace: readonly string[];
  /** Inputs whose change replaces the resource. */
  replaceOnChanges: readonly string[];
  /** Inputs whose removal from the program clears the value (others keep what the API has). */
  clearable?: readonly string[];
  /**
   * Required inputs the API does not report back: a resource whose value is not known (imported, or read by `get`)
   * takes the program's without a change.
   */
  takenFromProgram?: readonly string[];
  /** A replacement must delete first, e.g. when the replacement would reuse a unique name. */
  deleteBeforeReplace?: (olds: Props, news: Props) => boolean;
  /** Inputs that only steer the provider (e.g. `adopt`): never a change. */
  ignored?: readonly string[];
  /**
   * The output that says the resource is in a failed state it cannot leave in place (e.g. its create job failed):
   * the next diff replaces it (listed as this key). Every kind whose API objects can fail names one, so a resource
   * recorded in a failed state is never a dead end, even after a refresh cleared its initialisation errors.
   */
  failed?: (olds: Props) => string | undefined;
}

export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Props)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Props)[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => sameValue((a as Props)[k], (b as Props)[k]));
}

/** The inputs whose wanted value differs from what the resource has (`olds` are its outputs, refreshed or not). */
export function changedInputs(olds: Props, news: Props, spec: DiffSpec): string[] {
  const keys = [...spec.inPlace, ...spec.replaceOnChanges];
  return keys.filter((k) => {
    const wanted = news[k];
    if (olds[k] === undefined && spec.takenFromProgram?.includes(k)) return false;
    if (wanted === undefined) return spec.clearable?.includes(k) === true && olds[k] !== undefined && olds[k] !== null;
    return !sameValue(olds[k], wanted);
  });
}

/** Diff of a resource: `__provider` and steering inputs ignored, replacements listed, unknowns counted as changes. */
export function diffInputs(olds: Props, news: Props, spec: DiffSpec): DiffResult {
  const changed = changedInputs(olds, news, spec);
  const replaces = changed.filter((k) => spec.replaceOnChanges.includes(k));
  const failed = spec.failed?.(olds);
  if (failed !== undefined) replaces.push(failed);
  const all = [...spec.inPlace, ...spec.replaceOnChanges];
  return {
    changes: changed.length > 0 || replaces.length > 0,
    replaces,
    stables: all.filter((k) => !changed.includes(k) && !replaces.includes(k) && !containsUnknown(news[k])),
    deleteBeforeReplace: replaces.length > 0 && (spec.deleteBeforeReplace?.(olds, news) ?? false),
  };
}

// ---------------------------------------------------------------- the shape of a resource kind

/**
 * What each resource kind implements, free of Pulumi's dynamic API (provider/dynamic.ts adapts it), so another host
 * can serve it later. Props are plain values: no `__provider`, no secrets wrappers.
 */
export interface ResourceKind {
  readonly name: string;
  /**
   * The program's inputs: their schema, and how each one changes and what the API reports of it (fields.ts). Diff
   * rules are derived from `fields`; every key of the schema is classified there.
   */
  readonly inputs: { readonly schema: z.ZodObject; readonly fields: Readonly<Record<string, InputField>> };
  /** The outputs beyond the inputs: their schema (the outputs also carry every input, as the API reports it). */
  readonly outputs: z.ZodObject;
  /**
   * Inputs the SDK always stores as secrets. A check failure about one names it in its reason, not as its property:
   * the engine prints a failing property's value beside it, a secret's in clear.
   */
  readonly secretInputs?: readonly string[];
  /**
   * The settings this kind calls the API with, when they differ from the configured ones (an ApiKey is created by
   * a signed-in session); a ConfigurationError when they cannot be had. Check uses it to verify those credentials.
   */
  settingsFor?(current: Settings): Settings;
  /** Validates and normalises inputs; values unknown during preview pass unchecked. */
  check(olds: Props, news: Props): CheckResult<Props> | Promise<CheckResult<Props>>;
  /** `olds` are the current outputs (refreshed or not), `news` the checked inputs. */
  diff(id: string, olds: Props, news: Props): DiffResult;
  create(inputs: Props): Promise<{ id: string; outs: Props }>;
  /**
   * The live resource as outputs, or null when it is gone. Inputs are left as the program declared them: drift shows
   * in the outputs, which the next diff compares with the program.
   */
  read(id: string, props: Props): Promise<{ id: string; props: Props } | null>;
  update(id: string, olds: Props, news: Props): Promise<Props>;
  /** Deletes and waits; already gone is success. */
  delete(id: string, props: Props): Promise<void>;
}

// ---------------------------------------------------------------- errors and jobs

/**
 * The resource exists but did not become ready (e.g. its create job failed). Thrown from create/update, the engine
 * records it with this id as a resource that failed to initialise, so nothing is orphaned; the next `up` retries.
 */
export class ResourceInitError extends Error {
  override name = "ResourceInitError";
  constructor(
    message: string,
    readonly id: string,
    public properties: Props,
    readonly reasons: string[] = [message],
  ) {
    super(message);
  }
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
export class OperationCancelledError extends Error {
  override name = "OperationCancelledError";
}

const jobResourceNames: Record<string, string> = { vm: "VM", gpu: "GPU VM", volume: "volume", network: "network" };

/**
 * The error of a failed job: what failed, the API's reason, then the job and the resource it was about, e.g.
 * `Creating VM "web" failed: Quota exceeded (job <id>, VM <id>)`. Its `job.error` is that text without the ids.
 */
export function failedJob(job: Job, what: string): JobFailedError {
  const failed = new JobFailedError({ ...job, error: `${what} failed: ${job.error ?? "no reason given"}` });
  const resource = job.resourceId
    ? `, ${jobResourceNames[job.resourceType] ?? job.resourceType} ${job.resourceId}`
    : "";
  failed.message = `${failed.job.error} (job ${job.id}${resource})`;
  return failed;
}

/**
 * Waits for a job with the configured timeout; a failed job becomes an error saying what failed and why, a
 * cancellation one saying what was cancelled and that the job goes on.
 */
export async function awaitJob(jobId: string, what: string, current: Settings = settings()): Promise<Job> {
  const jobs = client(current).jobs;
  const context = { resource: what };
  const started = Date.now();
  forwardingLog.info(
    `job ${jobId} started; waiting for it (at most ${duration(current.jobTimeoutMs)}: cloudinfra:jobTimeoutMs)`,
    context,
  );
  const ticker = setInterval(() => {
    const last = jobs.lastSeen(jobId);
    const state = last ? `${last.status.replace("_", " ")}, ${last.progress}%` : "not reported yet";
    forwardingLog.info(`job ${jobId} ${state} after ${duration(Date.now() - started)}`, context);
  }, current.progressIntervalMs);
  ticker.unref();
  try {
    const job = await jobs.wait(jobId, { timeoutMs: current.jobTimeoutMs, signal: cancellation() });
    forwardingLog.info(`job ${jobId} completed in ${duration(Date.now() - started)}`, context);
    return job;
  } catch (error) {
    if (error instanceof JobFailedError) throw failedJob(error.job, what);
    if (error instanceof JobTimeoutError) {
      throw new Error(
        `${what} did not finish within ${current.jobTimeoutMs} ms (job ${jobId}); raise cloudinfra:jobTimeoutMs if the ` +
          "cloud is slow, then run `pulumi refresh` and `pulumi up`",
        { cause: error },
      );
    }
    if (error instanceof OperationCancelledError) {
      throw new OperationCancelledError(
        `${what}: ${error.message} while waiting for job ${jobId}; the job goes on in the cloud`,
        { cause: error },
      );
    }
    throw error;
  } finally {
    clearInterval(ticker);
  }
}

/** Waits `ms`; the operation's cancellation ends the wait with its reason. */
export function sleep(ms: number): Promise<void> {
  const signal = cancellation();
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** How a kind is read in batches: a page of its list endpoint, and a single read by id. */
export interface BatchSource<T> {
  list(page: number, limit: number): Promise<ListPage<T>>;
  get(id: string): Promise<T>;
}

const readers = new WeakMap<CloudClient, Map<string, BatchedReader<{ id: string }>>>();

/**
 * The batched reader of a kind for the current client (one per client and kind, so reads gathered together share
 * one batch). Only for kinds whose list items carry every field of the detail (the list then answers them all).
 */
export function batchedRead<T extends { id: string }>(
  kind: string,
  source: (api: CloudClient) => BatchSource<T>,
): BatchedReader<T> {
  const api = client();
  let byKind = readers.get(api);
  if (!byKind) readers.set(api, (byKind = new Map()));
  let reader = byKind.get(kind) as BatchedReader<T> | undefined;
  if (!reader) {
    const { list, get } = source(api);
    reader = new BatchedReader<T>(list, get);
    byKind.set(kind, reader as unknown as BatchedReader<{ id: string }>);
  }
  return reader;
}

/**
 * Reads a resource every poll interval until `settled` says it is, within `cloudinfra:jobTimeoutMs`; then
 * `timedOut(last, timeoutMs)` is thrown. For waits whose job id is unknown or that depend on other resources.
 */
export async function pollUntil<T>(
  fetch: () => Promise<T>,
  settled: (value: T) => boolean,
  timedOut: (last: T, timeoutMs: number) => Error,
): Promise<T> {
  const current = settings();
  const deadline = Date.now() + current.jobTimeoutMs;
  for (;;) {
    const value = await fetch();
    if (settled(value)) return value;
    if (Date.now() > deadline) throw timedOut(value, current.jobTimeoutMs);
    await sleep(current.pollIntervalMs);
  }
}

/**
 * After an ambiguous create (the request may have reached the server but the answer was lost), a record of the same
 * unique name is taken as the one that request made when it was created after the request was sent, give or take
 * this much clock skew; an older one was there before and needs `adopt: true`.
 */
export const AMBIGUOUS_CREATE_SKEW_MS = 2 * 60_000;

/**
 * Runs `attempt`, retrying it while it fails with 409 for a short bounded time, then rethrows the 409: another
 * resource of the same deployment may be giving the name up right now (renames and deletes run concurrently).
 */
export async function retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
  const current = settings();
  const deadline = Date.now() + Math.min(current.jobTimeoutMs, 10_000);
  const pause = Math.max(100, Math.min(current.pollIntervalMs, 1000));
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error) || Date.now() + pause > deadline) throw error;
    }
    await sleep(pause);
  }
}

/** A warning about a resource through the host's log (the engine's with the plugin, stderr with dynamic providers). */
export function warnAbout(resource: string, message: string): void {
  forwardingLog.warn(message, { resource });
}

/** A progress line about one resource (e.g. the wait for a VM to stop before it is deleted). */
export function progressAbout(resource: string, message: string): void {
  forwardingLog.info(message, { resource });
}

export interface UniqueCreate<E extends { id: string | number; createdAt: string }> {
  /** What is created, for messages: `network named "app"`. */
  what: string;
  /** The program's `adopt` input. */
  adopt: boolean | undefined;
  /** Sends the create request: the new id, and the job that creates it when the API answers with one. */
  send(): Promise<{ id: string; jobId?: string }>;
  /** While not adopting, a 409 is retried for a short time: the name may be being given up in the same run. */
  retryConflicts?: boolean;
  /** The existing resource of the same unique name, if any. */
  findByName(): Promise<E | undefined>;
  /** Takes an existing resource over; `ambiguous` when it is the one our own failed-looking request created. */
  takeOver(existing: E, ambiguous: boolean): Promise<{ id: string; outs: Props }>;
  /** Outputs of the created resource once its job completed (it may finish setting it up, e.g. members). */
  outputs(id: string): Promise<Props>;
  /** Best-known outputs of a resource that exists but did not become ready. */
  partialOutputs(id: string): Promise<Props>;
}

/** An error's text without the client's "it may have taken effect" note: the caller has settled that question. */
export const settledText = (error: unknown) =>
  error instanceof ApiError ? `${error.apiMessage} (${error.code}, HTTP ${error.status})` : String(error);

/**
 * Creates a resource whose name is unique in the API (and waits for its job, when there is one). A duplicate (409)
 * is adopted when the program says `adopt`, otherwise explained. An answer lost on the way (the request may have
 * been carried out) is resolved by the name: a resource of that name made since the request was sent is ours; none
 * means nothing was created, so the request is sent once more (names are unique: it cannot make a second one), and
 * if that answer is lost too, the error says plainly that nothing was created. A resource that exists but did not
 * become ready (failed job, failed set-up) is recorded with its id (ResourceInitError), never orphaned.
 */
export async function createUnique<E extends { id: string | number; createdAt: string }>(
  spec: UniqueCreate<E>,
): Promise<{ id: string; outs: Props }> {
  let created: { id: string; jobId?: string } | undefined;
  for (let attempt = 1; created === undefined; attempt++) {
    const sentAt = Date.now();
    try {
      created = spec.retryConflicts && !spec.adopt ? await retryOnConflict(spec.send) : await spec.send();
    } catch (error) {
      const ambiguous = error instanceof ApiError && error.mayHaveSucceeded;
      if (!isConflict(error) && !ambiguous) throw error;
      const existing = await spec.findByName();
      if (existing) {
        const ours = ambiguous && Date.parse(existing.createdAt) >= sentAt - AMBIGUOUS_CREATE_SKEW_MS;
        if (spec.adopt || ours) return spec.takeOver(existing, ours);
        throw new Error(
          `A ${spec.what} already exists (${existing.id}). Set \`adopt: true\` to manage it from this program, or ` +
            "choose another name",
        );
      }
      if (!ambiguous) {
        throw new Error(
          `Cannot create the ${spec.what}: the API refused the name (${settledText(error)}), but no such resource is ` +
            "visible to these credentials; choose another name",
          { cause: error },
        );
      }
      if (attempt >= 2) {
        throw new Error(
          `Creating the ${spec.what} failed: ${settledText(error)}. No resource of that name exists, so nothing was ` +
            "created; the next `pulumi up` creates it",
          { cause: error },
        );
      }
      warnAbout(
        spec.what,
        `the create got no answer (${settledText(error)}) and no resource of that name exists: sending it again`,
      );
    }
  }
  const id = created.id;
  try {
    if (created.jobId !== undefined) await awaitJob(created.jobId, `Creating ${spec.what}`);
    return { id, outs: await spec.outputs(id) };
  } catch (error) {
    if (error instanceof ResourceInitError) throw error;
    throw new ResourceInitError((error as Error).message, id, await spec.partialOutputs(id));
  }
}

export const isNotFound = (error: unknown) => error instanceof ApiError && error.status === 404;
export const isConflict = (error: unknown) => error instanceof ApiError && error.status === 409;

/** Takes the inputs' own keys, without the provider. */
export function plainInputs(inputs: Props): Props {
  const { __provider: _provider, ...rest } = inputs;
  return rest;
}

/** The schema of an id input: a UUID, with a message that says so. */
export const uuidInput = (what: string) => z.uuid({ error: `must be the UUID of ${what}` });
