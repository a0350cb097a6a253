import { createHash } from "node:crypto";
import { z } from "zod";
import { ApiError, CloudClient, JobFailedError, JobTimeoutError, type ClientAuth } from "../client";
import type { Job } from "../api";

/** The engine's placeholder for a value not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
export type Props = Record<string, unknown>;

// ---------------------------------------------------------------- configuration

/** Provider settings: stack config `cloudinfra:<name>`, else the environment variable. */
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
} as const;
export type SettingName = keyof typeof settingSources;

let stackConfig: Partial<Record<SettingName, string>> = {};

/** Keeps the stack's `cloudinfra:*` values (the dynamic host passes them to `configure`). */
export function configure(get: (key: string) => string | undefined): void {
  stackConfig = {};
  for (const name of Object.keys(settingSources) as SettingName[]) {
    const value = get(`cloudinfra:${name}`);
    if (value !== undefined && value !== "") stackConfig[name] = value;
  }
}

export function readSetting(name: SettingName): string | undefined {
  const value = stackConfig[name] ?? process.env[settingSources[name]];
  return value === undefined || value === "" ? undefined : value;
}

export class ConfigurationError extends Error {
  override name = "ConfigurationError";
}

export interface Settings {
  baseUrl: string;
  auth: ClientAuth;
  entityId?: string;
  pollIntervalMs: number;
  jobTimeoutMs: number;
}

function readNumber(name: SettingName, fallback: number, min: number): number {
  const raw = readSetting(name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new ConfigurationError(
      `cloudinfra:${name} (${settingSources[name]}) must be an integer of at least ${min}, not "${raw}"`,
    );
  }
  return value;
}

const credentialHelp =
  "Configure one of: `pulumi config set --secret cloudinfra:apiKey <key>` (or CLOUDINFRA_API_KEY); " +
  "`pulumi config set --secret cloudinfra:sessionToken <token>` (or CLOUDINFRA_SESSION_TOKEN); or " +
  "cloudinfra:email + cloudinfra:password + cloudinfra:totpSecret (or CLOUDINFRA_EMAIL, CLOUDINFRA_PASSWORD, " +
  "CLOUDINFRA_TOTP_SECRET) to sign in with two-factor authentication.";

/** The settings in force now (read at each call, never captured). */
export function settings(): Settings {
  const baseUrl = readSetting("baseUrl");
  if (!baseUrl) {
    throw new ConfigurationError(
      "cloudinfra:baseUrl is not set: `pulumi config set cloudinfra:baseUrl https://<host>/v1` (or CLOUDINFRA_BASE_URL)",
    );
  }
  const apiKey = readSetting("apiKey");
  const sessionToken = readSetting("sessionToken");
  const email = readSetting("email");
  const password = readSetting("password");
  const totpSecret = readSetting("totpSecret");
  let auth: ClientAuth;
  if (apiKey) auth = { apiKey };
  else if (sessionToken) auth = { sessionToken };
  else if (email && password && totpSecret) auth = { email, password, totpSecret };
  else if (email || password || totpSecret) {
    const missing = (["email", "password", "totpSecret"] as const).filter((n) => !readSetting(n));
    throw new ConfigurationError(`Signing in needs cloudinfra:${missing.join(", cloudinfra:")} too. ${credentialHelp}`);
  } else throw new ConfigurationError(`No cloudinfra credentials are configured. ${credentialHelp}`);
  return {
    baseUrl,
    auth,
    entityId: readSetting("entityId"),
    pollIntervalMs: readNumber("pollIntervalMs", 2000, 1),
    jobTimeoutMs: readNumber("jobTimeoutMs", 30 * 60_000, 1000),
  };
}

const clients = new Map<string, CloudClient>();

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
    createHash("sha256").update(secret).digest("hex"),
  ]);
  let found = clients.get(key);
  if (!found) {
    found = new CloudClient({
      baseUrl: current.baseUrl,
      auth: current.auth,
      entityId: current.entityId,
      jobs: { pollIntervalMs: current.pollIntervalMs, maxPollIntervalMs: Math.max(current.pollIntervalMs, 10_000) },
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

/**
 * Validates a resource's inputs against its schema: every problem is reported (property + how to fix it), unknown
 * properties are refused, and values not known yet (preview) are let through unchecked. `extra` adds the checks that
 * span several properties; it sees only the known values.
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
  const parsed = partialSchema.safeParse(known);
  const failures: CheckFailure[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      if (issue.code === "unrecognized_keys") {
        for (const key of issue.keys) {
          failures.push({
            property: [...issue.path, key].join("."),
            reason: `unknown property "${key}"; the known ones are ${Object.keys(schema.shape).join(", ")}`,
          });
        }
      } else {
        const property = issue.path.join(".") || "(inputs)";
        failures.push({ property, reason: `${property}: ${issue.message}` });
      }
    }
  }
  const values = (parsed.success ? parsed.data : known) as Partial<z.output<S>>;
  extra?.(values, failures);
  const inputs = { ...values, ...Object.fromEntries(pending.map((k) => [k, given[k]])) } as z.output<S>;
  return { inputs, failures };
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
  /** A replacement must delete first, e.g. when the replacement would reuse a unique name. */
  deleteBeforeReplace?: (olds: Props, news: Props) => boolean;
  /** Inputs that only steer the provider (e.g. `adopt`): never a change. */
  ignored?: readonly string[];
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
    if (wanted === undefined) return spec.clearable?.includes(k) === true && olds[k] !== undefined && olds[k] !== null;
    return !sameValue(olds[k], wanted);
  });
}

/** Diff of a resource: `__provider` and steering inputs ignored, replacements listed, unknowns counted as changes. */
export function diffInputs(olds: Props, news: Props, spec: DiffSpec): DiffResult {
  const changed = changedInputs(olds, news, spec);
  const replaces = changed.filter((k) => spec.replaceOnChanges.includes(k));
  const all = [...spec.inPlace, ...spec.replaceOnChanges];
  return {
    changes: changed.length > 0,
    replaces,
    stables: all.filter((k) => !changed.includes(k) && !containsUnknown(news[k])),
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

/** Waits for a job with the configured timeout; a failed job becomes an error saying what failed and why. */
export async function awaitJob(jobId: string, what: string, current: Settings = settings()): Promise<Job> {
  try {
    return await client(current).jobs.wait(jobId, { timeoutMs: current.jobTimeoutMs });
  } catch (error) {
    if (error instanceof JobFailedError) {
      throw new JobFailedError({ ...error.job, error: `${what} failed: ${error.job.error ?? "no reason given"}` });
    }
    if (error instanceof JobTimeoutError) {
      throw new Error(
        `${what} did not finish within ${current.jobTimeoutMs} ms (job ${jobId}); raise cloudinfra:jobTimeoutMs if the ` +
          "cloud is slow, then run `pulumi refresh` and `pulumi up`",
        { cause: error },
      );
    }
    throw error;
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

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

export interface UniqueCreate<E extends { id: string }> {
  /** What is created, for messages: `network "app"`. */
  what: string;
  /** The program's `adopt` input. */
  adopt: boolean | undefined;
  /** Sends the create request (an async job answered with the new id). */
  send(): Promise<{ jobId: string; id: string }>;
  /** The existing resource of the same unique name, if any. */
  findByName(): Promise<E | undefined>;
  /** Takes an existing resource over; `ambiguous` when it is the one our own failed-looking request created. */
  takeOver(existing: E, ambiguous: boolean): Promise<{ id: string; outs: Props }>;
  /** Outputs of the created resource once its job completed. */
  outputs(id: string): Promise<Props>;
  /** Best-known outputs of a resource whose job failed. */
  partialOutputs(id: string): Promise<Props>;
}

/**
 * Creates a resource whose name is unique in the API and waits for its job. A duplicate (409) is adopted when the
 * program says `adopt`, otherwise explained; an answer lost on the way (the request may have been carried out) is
 * resolved by the name; a failed job leaves the resource recorded with its id (ResourceInitError), never orphaned.
 */
export async function createUnique<E extends { id: string }>(
  spec: UniqueCreate<E>,
): Promise<{ id: string; outs: Props }> {
  let created: { jobId: string; id: string };
  try {
    created = await spec.send();
  } catch (error) {
    const ambiguous = error instanceof ApiError && error.mayHaveSucceeded;
    if (isConflict(error) || ambiguous) {
      const existing = await spec.findByName();
      if (existing && (spec.adopt || ambiguous)) return spec.takeOver(existing, ambiguous);
      if (existing) {
        throw new Error(
          `A ${spec.what} already exists (${existing.id}). Set \`adopt: true\` to manage it from this program, or ` +
            "choose another name",
        );
      }
    }
    throw error;
  }
  try {
    await awaitJob(created.jobId, `Creating ${spec.what}`);
  } catch (error) {
    throw new ResourceInitError((error as Error).message, created.id, await spec.partialOutputs(created.id));
  }
  return { id: created.id, outs: await spec.outputs(created.id) };
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
