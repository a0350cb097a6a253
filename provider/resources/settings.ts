import { z } from "zod";
import type { ClientAuth } from "../client";
import { CodedError, type ErrorCodeName } from "../client/error-codes";

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
  preflight: "CLOUDINFRA_PREFLIGHT",
} as const;
export type SettingName = keyof typeof settingSources;

/** What a setting is (the schema's config variable); its default, range and environment variable are added to it. */
export interface SettingDeclaration {
  readonly description: string;
  /** A credential: the schema marks it secret (`pulumi config set --secret`). */
  readonly secret?: true;
}

/** Every setting, described (one left out is a compile error). */
export const settingDeclarations: Readonly<Record<SettingName, SettingDeclaration>> = {
  baseUrl: { description: "API base URL, ending in /v1." },
  apiKey: { description: "API key (`svc_...`): one of the three ways to authenticate.", secret: true },
  sessionToken: { description: "Session token: one of the three ways to authenticate.", secret: true },
  email: {
    description: "Email to sign in with (with password and totpSecret): one of the three ways to authenticate.",
  },
  password: { description: "Password to sign in with (with email and totpSecret).", secret: true },
  totpSecret: { description: "Base32 TOTP secret of the signing-in user (with email and password).", secret: true },
  entityId: { description: "Entity (UUID) to act in; default: the credentials' own entity." },
  pollIntervalMs: {
    description:
      "Shortest time between two polls of the jobs being waited for, and the first look at a job of a kind not seen yet in the run.",
  },
  jobTimeoutMs: {
    description: "How long to wait for one job; a resource's `customTimeouts` overrides it for that resource.",
  },
  requestTimeoutMs: { description: "How long one HTTP attempt may wait for its answer." },
  maxRetries: {
    description:
      "Retries of a failed request that may be retried (429 pauses do not count); also how many times a create whose answer was lost, and which made nothing, is sent again (at least once).",
  },
  progressIntervalMs: { description: "How often a job being waited for reports its progress." },
  skipCredentialsValidation: {
    description: "Do not check the credentials with the API (`GET /auth/check`) before the first change.",
  },
  preflight: {
    description:
      "What preview does when the API's current state says `up` would be refused (GPU capacity, attachability, " +
      "permissions, names already held): `error` fails the check, `warn` only warns, `off` reads nothing. " +
      "Default `error`. See docs/guides/preview-checks.md.",
  },
};

/** The values of `cloudinfra:preflight`. */
export const preflightModes = ["error", "warn", "off"] as const;
export type PreflightMode = (typeof preflightModes)[number];

/** The numeric settings: default, smallest and largest value allowed. */
export const numericSettings = {
  pollIntervalMs: { fallback: 2000, min: 1, max: Number.MAX_SAFE_INTEGER },
  jobTimeoutMs: { fallback: 30 * 60_000, min: 1000, max: Number.MAX_SAFE_INTEGER },
  requestTimeoutMs: { fallback: 30_000, min: 100, max: 10 * 60_000 },
  maxRetries: { fallback: 3, min: 0, max: 10 },
  progressIntervalMs: { fallback: 5000, min: 100, max: Number.MAX_SAFE_INTEGER },
} as const satisfies Partial<Record<SettingName, { fallback: number; min: number; max: number }>>;
type NumericSetting = keyof typeof numericSettings;

/**
 * One provider configuration's `cloudinfra:*` values, as a host read them (the dynamic host from the stack, a plugin
 * from each provider instance's Configure): settings not in it are read from the environment.
 */
export interface Configuration {
  values: Partial<Record<SettingName, string>>;
  unknownKeys: string[];
}

/**
 * The configuration of `get` (a stack's or a provider's config). `keys`, when the host can list them, are every
 * configuration key of the stack: those under `cloudinfra:` that are not settings are reported by
 * {@link settingProblems}, with the closest known key.
 */
export function configuration(get: (key: string) => string | undefined, keys?: Iterable<string>): Configuration {
  const values: Partial<Record<SettingName, string>> = {};
  for (const name of Object.keys(settingSources) as SettingName[]) {
    const value = get(`cloudinfra:${name}`);
    if (value !== undefined && value !== "") values[name] = value;
  }
  const unknown = [...(keys ?? [])].filter((k) => k.startsWith("cloudinfra:") && !(k.slice(11) in settingSources));
  return { values, unknownKeys: unknown };
}

/** No `cloudinfra:*` values: every setting from the environment. */
export const environmentOnly = (): Configuration => ({ values: {}, unknownKeys: [] });

export function readSetting(config: Configuration, name: SettingName): string | undefined {
  const value = config.values[name] ?? process.env[settingSources[name]];
  return value === undefined || value === "" ? undefined : value;
}

/**
 * Where a setting's value comes from, for messages: `cloudinfra:apiKey (stack config)`,
 * `CLOUDINFRA_API_KEY (environment)`, or both names when it is not set.
 */
export function settingOrigin(config: Configuration, name: SettingName): string {
  if (config.values[name] !== undefined) return `cloudinfra:${name} (stack config)`;
  const env = process.env[settingSources[name]];
  if (env !== undefined && env !== "") return `${settingSources[name]} (environment)`;
  return `cloudinfra:${name} (or ${settingSources[name]})`;
}

/** How to set a setting, for messages: the `pulumi config set` command, or the variable it came from. */
export function howToSet(config: Configuration, name: SettingName, example: string, secret = false): string {
  const command = `\`pulumi config set${secret ? " --secret" : ""} cloudinfra:${name} ${example}\``;
  if (config.values[name] === undefined && readSetting(config, name) !== undefined) {
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

/** A settings problem (SETTING_INVALID), refused credentials (AUTH_REJECTED) or a missing session (SESSION_REQUIRED). */
export class ConfigurationError extends CodedError {
  override name = "ConfigurationError";
  /**
   * The setting most likely at fault, when one can be told (`baseUrl` for an API that cannot be reached, `apiKey` for
   * a refused key): the property the plugin's CheckConfig names, which the engine prints beside the reason.
   */
  readonly setting: SettingName | undefined;
  constructor(
    message: string,
    options?: {
      cause?: unknown;
      /** Default SETTING_INVALID; a failed credentials check carries the code of what happened (NETWORK_ERROR, …). */
      code?: ErrorCodeName;
      setting?: SettingName;
    },
  ) {
    super(options?.code ?? "SETTING_INVALID", message, options);
    this.setting = options?.setting;
  }
}

/** The settings in force, validated (each one described in {@link settingDeclarations}). */
export interface Settings {
  baseUrl: string;
  auth: ClientAuth;
  entityId?: string;
  pollIntervalMs: number;
  jobTimeoutMs: number;
  requestTimeoutMs: number;
  maxRetries: number;
  progressIntervalMs: number;
  skipCredentialsValidation: boolean;
  /** What the preview checks against the API's state do with what they find (`cloudinfra:preflight`). */
  preflight: PreflightMode;
}

function readNumber(config: Configuration, name: NumericSetting, problems: string[]): number {
  const { fallback, min, max } = numericSettings[name];
  const raw = readSetting(config, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    problems.push(`cloudinfra:${name} (${settingSources[name]}) must be an integer ${range}, not "${raw}"`);
    return fallback;
  }
  return value;
}

function readBoolean(config: Configuration, name: SettingName, problems: string[]): boolean {
  const raw = readSetting(config, name);
  if (raw === undefined) return false;
  if (/^(true|1|yes)$/i.test(raw)) return true;
  if (/^(false|0|no)$/i.test(raw)) return false;
  problems.push(`cloudinfra:${name} (${settingSources[name]}) must be true or false, not "${raw}"`);
  return false;
}

function readPreflight(config: Configuration, problems: string[]): PreflightMode {
  const raw = readSetting(config, "preflight");
  if (raw === undefined) return "error";
  const mode = preflightModes.find((m) => m === raw.trim().toLowerCase());
  if (mode) return mode;
  problems.push(
    `${settingOrigin(config, "preflight")} must be one of ${preflightModes.join(", ")}, not "${raw}": ` +
      howToSet(config, "preflight", "warn"),
  );
  return "error";
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
export function settingProblems(config: Configuration): string[] {
  return readSettings(config).problems;
}

function readSettings(config: Configuration): { settings?: Settings; problems: string[] } {
  const problems: string[] = [];
  for (const key of config.unknownKeys) {
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
  const baseUrl = readSetting(config, "baseUrl");
  if (!baseUrl) {
    problems.push(
      "cloudinfra:baseUrl is not set: `pulumi config set cloudinfra:baseUrl https://<host>/v1` (or CLOUDINFRA_BASE_URL)",
    );
  } else {
    const problem = baseUrlProblem(baseUrl);
    if (problem) {
      problems.push(
        `${settingOrigin(config, "baseUrl")} ${problem}; fix it: ${howToSet(config, "baseUrl", "https://<host>/v1")}`,
      );
    }
  }
  const apiKey = readSetting(config, "apiKey");
  const sessionToken = readSetting(config, "sessionToken");
  const email = readSetting(config, "email");
  const password = readSetting(config, "password");
  const totpSecret = readSetting(config, "totpSecret");
  let auth: ClientAuth | undefined;
  if (apiKey) auth = { apiKey };
  else if (sessionToken) auth = { sessionToken };
  else if (email && password && totpSecret) auth = { email, password, totpSecret };
  if (apiKey && !apiKey.startsWith("svc_")) {
    problems.push(
      `${settingOrigin(config, "apiKey")} is not an API key (API keys start with svc_; a session token goes in ` +
        `cloudinfra:sessionToken): ${howToSet(config, "apiKey", "svc_...", true)}`,
    );
  }
  if ((email || password || totpSecret) && !(email && password && totpSecret)) {
    const missing = (["email", "password", "totpSecret"] as const).filter((n) => !readSetting(config, n));
    problems.push(`Signing in needs cloudinfra:${missing.join(", cloudinfra:")} too. ${credentialHelp}`);
  } else if (!auth) problems.push(`No cloudinfra credentials are configured. ${credentialHelp}`);
  const entityId = readSetting(config, "entityId");
  if (entityId !== undefined && !z.uuid().safeParse(entityId).success) {
    problems.push(`${settingOrigin(config, "entityId")} must be the UUID of an entity, not "${entityId}"`);
  }
  const numbers = Object.fromEntries(
    (Object.keys(numericSettings) as NumericSetting[]).map((name) => [name, readNumber(config, name, problems)]),
  ) as Record<NumericSetting, number>;
  const skipCredentialsValidation = readBoolean(config, "skipCredentialsValidation", problems);
  const preflight = readPreflight(config, problems);
  if (problems.length > 0 || !baseUrl || !auth) return { problems };
  return { problems, settings: { baseUrl, auth, entityId, ...numbers, skipCredentialsValidation, preflight } };
}

/** The settings of a configuration, validated; a ConfigurationError lists every problem. */
export function settingsOf(config: Configuration): Settings {
  const { settings: found, problems } = readSettings(config);
  if (!found) {
    throw new ConfigurationError(
      problems.length === 1
        ? problems[0]!
        : `The cloudinfra configuration has ${problems.length} problems:\n${problems.map((p) => `- ${p}`).join("\n")}`,
    );
  }
  return found;
}
