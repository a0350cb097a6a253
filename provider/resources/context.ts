import { createHash } from "node:crypto";
import { ApiError, CloudClient, Pacer, type ClientAuth } from "../client";
import { stderrProgressLog, type ProgressLog } from "../client/progress";
import { errorCodeOf, type ErrorCodeName } from "../client/error-codes";
import {
  ConfigurationError,
  howToSet,
  settingOrigin,
  settingsOf,
  type Configuration,
  type SettingName,
  type Settings,
} from "./settings";

/**
 * What a handler works with, built by its host once per operation: nothing is read from ambient state, so a handler
 * runs (and is unit-tested) with whatever context it is given.
 */
export interface HandlerContext {
  /** The client of the configured settings. */
  api: CloudClient;
  /** The settings in force, validated. */
  settings: Settings;
  /** The configuration the settings were read from (a kind that needs other credentials reads them there). */
  configuration: Configuration;
  /** Where progress lines and warnings go (the engine's log with the plugin, stderr with dynamic providers). */
  log: ProgressLog;
  /**
   * Aborted (with an OperationCancelledError) when the host cancels the operation, e.g. the plugin's Cancel: its
   * waits (jobs, polls, rate-limit budget, retries) end at once.
   */
  signal?: AbortSignal;
  /** A client of other settings of this host, e.g. the signed-in session that creates API keys. */
  clientFor(settings: Settings): CloudClient;
}

/** What a host knows of an operation: the provider configuration it runs under, its log and its cancellation. */
export interface OperationScope {
  configuration: Configuration;
  /** Default: stderr (the dynamic-provider host has no engine connection). */
  log?: ProgressLog;
  signal?: AbortSignal;
}

/**
 * The context of one operation; a ConfigurationError (every problem, each with its fix) when the configuration's
 * settings are not usable. Clients are shared by the operations of a process (see {@link clientOf}).
 */
export function handlerContext(scope: OperationScope): HandlerContext {
  const settings = settingsOf(scope.configuration);
  const log = scope.log ?? stderrProgressLog;
  const clientFor = (other: Settings) => clientOf(other, scope.configuration, log, scope.signal);
  return {
    api: clientFor(settings),
    settings,
    configuration: scope.configuration,
    log,
    signal: scope.signal,
    clientFor,
  };
}

// ---------------------------------------------------------------- per-process caches

const clients = new Map<string, CloudClient>();
const pacers = new Map<string, Pacer>();
const verified = new Map<string, Promise<Caller>>();

/** Who the credentials are (`GET /auth/check`): their user, roles and permissions in the active entity. */
export type Caller = Awaited<ReturnType<CloudClient["check"]>>;

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

/** What makes two settings call the API the same way (the credential as a hash). */
function settingsKey(current: Settings): string {
  const secret =
    "apiKey" in current.auth
      ? current.auth.apiKey
      : "sessionToken" in current.auth
        ? current.auth.sessionToken
        : `${current.auth.email}\n${current.auth.password}\n${current.auth.totpSecret}`;
  return JSON.stringify([
    current.baseUrl,
    current.entityId ?? null,
    current.pollIntervalMs,
    current.requestTimeoutMs,
    current.maxRetries,
    createHash("sha256").update(secret).digest("hex"),
  ]);
}

const objectIds = new WeakMap<object, number>();
let lastObjectId = 0;
const idOf = (value: object | undefined): number => {
  if (value === undefined) return 0;
  let id = objectIds.get(value);
  if (id === undefined) objectIds.set(value, (id = ++lastObjectId));
  return id;
};

/**
 * One client per distinct settings, log and cancellation signal, so every resource of a deployment shares its rate
 * budget and job poller. Its messages name where the settings came from (stack config or environment).
 */
function clientOf(current: Settings, config: Configuration, log: ProgressLog, signal?: AbortSignal): CloudClient {
  const key = JSON.stringify([settingsKey(current), Object.keys(config.values).sort(), idOf(log), idOf(signal)]);
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
      log,
      labels: {
        baseUrl: settingOrigin(config, "baseUrl"),
        requestTimeout: "cloudinfra:requestTimeoutMs",
        retries: "cloudinfra:maxRetries",
        authHint: authHint(config, current.auth),
      },
      pacing: pacerOf(current.baseUrl),
      waits: () => signal,
    });
    clients.set(key, found);
  }
  return found;
}

/** Closes every client and forgets every credential check (tests; the host process simply exits). */
export async function closeClients(): Promise<void> {
  const all = [...clients.values()];
  clients.clear();
  verified.clear();
  await Promise.all(all.map((c) => c.close()));
  for (const pacer of pacers.values()) pacer.close();
  pacers.clear();
}

/** How long the sign-outs on the way out may take (one request each, in parallel): well within the engine's grace. */
export const SIGN_OUT_TIMEOUT_MS = 800;

/**
 * Ends every session this process signed in for (email + password + TOTP; `POST /auth/sign-out`, one attempt each,
 * all at once, within `timeoutMs`), so that no run leaves one open for its idle timeout. The clients stay usable: a
 * later call signs in again. Resolves to the number of sessions ended; never rejects.
 */
export async function endSessions(timeoutMs = SIGN_OUT_TIMEOUT_MS): Promise<number> {
  const open = [...clients.values()].filter((c) => c.auth.hasSession);
  const ended = await Promise.all(open.map((c) => c.endSession(timeoutMs)));
  return ended.filter(Boolean).length;
}

const exitSignals = ["SIGINT", "SIGTERM"] as const;
let onExitSignal: ((signal: NodeJS.Signals) => void) | undefined;

/**
 * Makes the host process end its sessions when it is told to stop: the engine ends a provider process (plugin or
 * dynamic-provider host) with SIGINT, then kills it after a short grace, at the end of every run and on Ctrl-C; a CI
 * system may send SIGTERM. On either, the sessions are signed out ({@link endSessions}, one request within
 * {@link SIGN_OUT_TIMEOUT_MS}), then the signal takes its usual course (the process ends as it would have). Once per
 * process; without an open session nothing waits.
 */
export function endSessionsOnExitSignals(): void {
  if (onExitSignal) return;
  let ending = false;
  onExitSignal = (signal) => {
    if (ending) return;
    ending = true;
    void endSessions().finally(() => {
      for (const s of exitSignals) process.removeListener(s, onExitSignal!);
      // Others listening decide for themselves; alone, the signal's default (the process ends by it) is restored.
      if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
    });
  };
  for (const s of exitSignals) process.on(s, onExitSignal);
}

/** What to do when the API refuses these credentials (HTTP 401): where they came from and how to replace them. */
function authHint(config: Configuration, auth: ClientAuth): (code: string) => string | undefined {
  return (code) => {
    if ("apiKey" in auth) {
      const state =
        code === "API_KEY_EXPIRED"
          ? "has expired"
          : "was refused (unknown, revoked, rotated away, suspended, or its owner deleted)";
      return (
        `The API key from ${settingOrigin(config, "apiKey")} ${state}: create a new key (or rotate this one, or reactivate ` +
        `a suspended one) and ${howToSet(config, "apiKey", "<key>", true)}`
      );
    }
    if ("sessionToken" in auth) {
      return (
        `The session token from ${settingOrigin(config, "sessionToken")} was refused: sign in again and ` +
        `${howToSet(config, "sessionToken", "<token>", true)}, or use an API key (\`pulumi config set --secret cloudinfra:apiKey <key>\`)`
      );
    }
    return (
      `The sign-in credentials from ${settingOrigin(config, "email")}, ${settingOrigin(config, "password")} and ` +
      `${settingOrigin(config, "totpSecret")} were refused: check them, e.g. ${howToSet(config, "password", "<password>", true)}`
    );
  };
}

/**
 * Checks once per credential and process that the API accepts the credentials (`GET /auth/check`), so that a
 * preview fails on a wrong key or an unreachable API instead of planning changes an `up` cannot make. Skipped with
 * `cloudinfra:skipCredentialsValidation` (previews without network access). The outcome, good or bad, is kept.
 */
export function verifyCredentials(ctx: HandlerContext, current: Settings = ctx.settings): Promise<void> {
  // Signing in (email, password, TOTP) is not a check without effects: it opens a session and spends a TOTP code
  // that the `up` after a preview could then not use. Those credentials are checked by the first real call.
  if (current.skipCredentialsValidation || "password" in current.auth) return Promise.resolve();
  return checkedCaller(ctx, current).then(() => undefined);
}

/**
 * Who these credentials are, from the one `GET /auth/check` of the run that {@link verifyCredentials} sends (the
 * preview checks of permissions read it too); undefined where that check is not made (signing in, or
 * `cloudinfra:skipCredentialsValidation`).
 */
export function callerOf(ctx: HandlerContext, current: Settings = ctx.settings): Promise<Caller | undefined> {
  if (current.skipCredentialsValidation || "password" in current.auth) return Promise.resolve(undefined);
  return checkedCaller(ctx, current);
}

function checkedCaller(ctx: HandlerContext, current: Settings): Promise<Caller> {
  const key = settingsKey(current);
  let found = verified.get(key);
  if (!found) {
    found = ctx
      .clientFor(current)
      .check()
      .catch((error: unknown) => {
        throw credentialsCheckFailure(ctx.configuration, current, error);
      });
    found.catch(() => undefined);
    verified.set(key, found);
  }
  return found;
}

/** The setting that made the credential of `auth`, for messages. */
function credentialSetting(auth: ClientAuth): SettingName {
  return "apiKey" in auth ? "apiKey" : "sessionToken" in auth ? "sessionToken" : "password";
}

/**
 * Why the credentials check failed, told by the setting most likely at fault, with the code of what happened: an API
 * that cannot be reached, or answers as something else than the API, is `baseUrl` (a network code: NETWORK_ERROR,
 * or HTTP_STATUS, INVALID_RESPONSE, NOT_FOUND, SERVER_ERROR); a refused or expired key is `apiKey` (API_KEY_INVALID,
 * API_KEY_EXPIRED), a refused session token `sessionToken`; a request that timed out is `requestTimeoutMs` as much
 * as `baseUrl`. The check itself (AUTH_REJECTED) is the code only when what happened has none.
 */
export function credentialsCheckFailure(config: Configuration, current: Settings, error: unknown): ConfigurationError {
  const text = error instanceof Error ? error.message : String(error);
  const code = (errorCodeOf(error) as ErrorCodeName | undefined) ?? "AUTH_REJECTED";
  const origin = (name: SettingName) => settingOrigin(config, name);
  const after =
    ". (Checked once per run with GET /auth/check; set `cloudinfra:skipCredentialsValidation` to true to preview " +
    "without network access.)";
  const api = error instanceof ApiError ? error : undefined;
  let setting: SettingName;
  let lead: string;
  if (api && (api.status === 401 || api.status === 403)) {
    setting = credentialSetting(current.auth);
    lead = `The API refused the cloudinfra credentials (${origin(setting)})`;
  } else if (api && api.status === 0 && /\(UND_ERR_(HEADERS|BODY)_TIMEOUT\)/.test(api.apiMessage)) {
    setting = "requestTimeoutMs";
    lead =
      `The API at ${current.baseUrl} (${origin("baseUrl")}) did not answer within ${current.requestTimeoutMs} ms ` +
      `(${origin("requestTimeoutMs")}), so the credentials could not be checked`;
  } else if (api && api.status === 0) {
    setting = "baseUrl";
    lead = `The API at ${current.baseUrl} could not be reached: check ${origin("baseUrl")}`;
  } else if (api && api.status >= 500) {
    setting = "baseUrl";
    lead = `The API at ${current.baseUrl} (${origin("baseUrl")}) failed, so the credentials could not be checked`;
  } else if (api) {
    setting = "baseUrl";
    lead =
      `${current.baseUrl} (${origin("baseUrl")}) does not answer as the cloudinfra API (its base URL ends in the ` +
      "version, e.g. https://api.example.com/v1)";
  } else {
    setting = "baseUrl";
    lead = `The cloudinfra credentials could not be checked at ${current.baseUrl} (${origin("baseUrl")})`;
  }
  return new ConfigurationError(`${lead}: ${text}${after}`, { cause: error, code, setting });
}

/** A warning about a resource through the host's log (the engine's with the plugin, stderr with dynamic providers). */
export function warnAbout(ctx: HandlerContext, resource: string, message: string): void {
  ctx.log.warn(message, { resource });
}

/** A progress line about one resource (e.g. the wait for a VM to stop before it is deleted). */
export function progressAbout(ctx: HandlerContext, resource: string, message: string): void {
  ctx.log.info(message, { resource });
}
