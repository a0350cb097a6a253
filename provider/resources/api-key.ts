import { z } from "zod";
import { CodedError } from "../client/error-codes";
import {
  ApiKeyStatusBody,
  CreateApiKeyBody,
  RoleName,
  type ApiKey as ApiApiKey,
  type ExpirationOption,
  type RoleOption,
} from "../api";
import { checkInputs } from "./check";
import { ApiError, type CloudClient } from "../client";
import { callerOf, type HandlerContext, warnAbout } from "./context";
import { changedInputs, diffInputs, type DiffResult } from "./diff";
import { isNotFound, ResourceInitError, settledText } from "./errors";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import { containsUnknown, plainInputs, type Props } from "./props";
import { ConfigurationError, readSetting, type Configuration, type Settings } from "./settings";
import { diffSpecOf, type InputFields } from "./fields";
import { apiKeyPermissions, foreignKeyRefusal } from "./preflight";
import { lostAnswerResends, timesText } from "./create-recovery";

type RoleOptionItem = z.output<typeof RoleOption>;
type ExpirationOptionItem = z.output<typeof ExpirationOption>;

/**
 * The create request's body (`POST /auth/api-keys`), with what a program has beyond it: `enabled` (the status route's)
 * and the `rotation` trigger.
 */
export const ApiKeyInputs = CreateApiKeyBody.extend({
  // Any role's id here: which roles a key may have is the API's answer to the signed-in user (roleProblem).
  roleId: z.string({ error: "must be a string: a role's id" }).trim().min(1, "must not be empty").optional(),
  enabled: z.boolean({ error: "must be true or false" }).default(true),
  rotation: z.union([z.string(), z.number()], { error: "must be a string or a number" }).optional(),
  renewBeforeDays: z.number().int().min(1).max(3649).optional(),
}).strict();
export type ApiKeyInputs = z.output<typeof ApiKeyInputs>;
type ApiKeyState = State<ApiKeyInputs, typeof inputFields, z.output<typeof ApiKeyOutputs>>;

/**
 * How each input changes and what the API reports of it. The documented key record has neither the role, the
 * metadata nor an `enabled` flag (its status says Suspended); `expiresInDays` is turned into `expiresAt` at creation.
 */
const inputFields = {
  name: {
    change: "replace",
    reported: "documented",
    description: "Display name (1–100 characters; names need not be unique). Changing it replaces the key.",
    output: "Display name.",
  },
  roleId: {
    change: "replace",
    reported: "undocumented",
    description:
      "Role limiting the key: one the API offers the signed-in user for new keys (`GET /auth/api-keys/options/roles`, read once per run; see `getApiKeyOptions`), e.g. `tenant-admin`, `tenant-user` or `vm-operator`; it can never exceed its creator's permissions. Checked before any change is made: against those options with a session token (or a session the provider already holds; a check never signs in, which would spend the TOTP code), otherwise against the roles the spec names. Default: none, the key has every permission of the user who created it. Changing it replaces the key.",
    output: "Role limiting the key, if any.",
    // The API reports a role as text: one this program cannot name still shows.
    reportedType: z.string().optional(),
  },
  expiresInDays: {
    change: "replace",
    reported: "never",
    description: "Days until the key expires (1–3650). Default 90 (the API's). Changing it replaces the key.",
    expects: "must be a whole number of days, from 1 to 3650 (10 years)",
    output: "Days of validity asked for at creation, as given in the program.",
  },
  metadata: {
    change: "replace",
    reported: "undocumented",
    description: "Free-form object stored with the key. Changing it replaces the key.",
    expects: "must be an object of string keys",
    output: "Object stored with the key.",
  },
  enabled: {
    change: "inPlace",
    reported: "documented",
    description:
      "Whether the key authenticates: `false` suspends it, `true` resumes it. Default true, so a key suspended behind the stack's back is resumed by the next `up`. Changed in place.",
    output: "Whether the key is enabled (false: suspended).",
  },
  rotation: {
    change: "inPlace",
    reported: "never",
    description:
      "Rotation trigger: any change of this value (e.g. a date, a counter) rotates the key, giving it a new secret and invalidating the old one at once; the key keeps its id, expiry and status. Removing it does nothing. Changed in place.",
    output: "The rotation trigger's value, as given in the program.",
  },
  renewBeforeDays: {
    change: "inPlace",
    reported: "never",
    clearable: true,
    description:
      "Renewal: when the key's `expiresAt` is this many days away or less, `pulumi up` replaces it with a new key of the same inputs (so a fresh `expiresInDays` of validity), created before the old one is deleted, and `pulumi preview` says so. A whole number of days, less than `expiresInDays` (90 by default). Compared with the API's clock (the `Date` header of its answers) where it tells it, else this machine's; the `expiresAt` compared is the state's (`pulumi refresh` updates it). A rotation keeps the expiry date: it does not renew. Default: none, the key is never renewed. Changing it only changes the stack's record.",
    expects: "must be a whole number of days, from 1 to 3649, less than expiresInDays",
    output: "Days before expiry from which `up` replaces the key, as given in the program.",
  },
} as const satisfies InputFields<ApiKeyInputs>;
const diffSpec = diffSpecOf(ApiKeyInputs, inputFields);

/** Whether the key is enabled: its `enabled` flag when the API sends one, else what its status says, if it says. */
function enabledOf(apiKey: ApiApiKey): boolean | undefined {
  if (apiKey.enabled !== undefined) return apiKey.enabled;
  if (apiKey.status === "Suspended") return false;
  return apiKey.status === "Active" || apiKey.status === "Expiring" ? true : undefined;
}

/**
 * The secret we hold no longer matches the key (rotated behind the stack's back, or lost when a create failed half
 * way): the next update rotates it so the stack knows a working secret again. `start` is the key's leading characters.
 */
function keyUnknown(outs: Props): boolean {
  const key = outs.key;
  if (typeof key !== "string" || key === "") return true;
  return typeof outs.start === "string" && !key.startsWith(outs.start);
}

/**
 * Outputs: the inputs as given, overlaid with what the API reports, and the secret we hold (the API never returns it
 * again: `secret` is the last one it gave, from the create or a rotation).
 */
function outputsOf(given: Props, apiKey: ApiApiKey, secret: unknown): ApiKeyState {
  const recorded = given.enabled;
  return stateOf(inputFields, given, {
    name: apiKey.name,
    // null: no role, no metadata (as the program leaving them out). The contract has the role as a string: one the
    // program could not name is kept as it is, and shows as drift.
    roleId: apiKey.roleId ?? undefined,
    metadata: apiKey.metadata === null ? undefined : apiKey.metadata,
    // An expired key does not say whether it is suspended: the recorded value stays.
    enabled: enabledOf(apiKey) ?? (typeof recorded === "boolean" ? recorded : undefined),
    status: apiKey.status,
    start: apiKey.start,
    userId: apiKey.userId,
    expiresAt: apiKey.expiresAt,
    createdAt: apiKey.createdAt,
    key: typeof secret === "string" ? secret : undefined,
  });
}

/** Properties recorded for a key that exists but did not reach its declared state: never the secret. */
function partialOutputs(inputs: Props, apiKey: ApiApiKey | undefined): Props {
  const { key: _key, ...rest } = apiKey ? outputsOf(inputs, apiKey, undefined) : plainInputs(inputs);
  return rest;
}

/**
 * The settings to create a key with: the API only creates keys for a signed-in session with two-factor
 * authentication. An API key configured beside the sign-in credentials keeps serving every other call.
 */
export function sessionSettings(config: Configuration, current: Settings, what = "Creating an API key"): Settings {
  if (!("apiKey" in current.auth)) return current;
  const sessionToken = readSetting(config, "sessionToken");
  if (sessionToken) return { ...current, auth: { sessionToken } };
  const email = readSetting(config, "email");
  const password = readSetting(config, "password");
  const totpSecret = readSetting(config, "totpSecret");
  if (email && password && totpSecret) return { ...current, auth: { email, password, totpSecret } };
  const missing = (["email", "password", "totpSecret"] as const).filter((n) => !readSetting(config, n));
  const partly = missing.length < 3 ? ` (cloudinfra:${missing.join(", cloudinfra:")} missing)` : "";
  throw new ConfigurationError(
    `${what} needs a signed-in session with two-factor authentication, and only an API key is ` +
      `configured${partly}. Configure the owner's cloudinfra:email, cloudinfra:password and cloudinfra:totpSecret ` +
      "as secrets (or CLOUDINFRA_EMAIL, CLOUDINFRA_PASSWORD, CLOUDINFRA_TOTP_SECRET), or a session token with " +
      "`pulumi config set --secret cloudinfra:sessionToken <token>` (or CLOUDINFRA_SESSION_TOKEN); cloudinfra:apiKey " +
      "can stay for the other resources.",
    { code: "SESSION_REQUIRED" },
  );
}

/** The options' reads of each session client (one per credentials and process): each read once per run, shared. */
const optionReads = new WeakMap<CloudClient, Map<string, Promise<unknown>>>();
function readOnce<T>(api: CloudClient, route: string, read: () => Promise<T>): Promise<T> {
  let reads = optionReads.get(api);
  if (!reads) optionReads.set(api, (reads = new Map()));
  let found = reads.get(route) as Promise<T> | undefined;
  if (!found) {
    found = read();
    found.catch(() => undefined);
    reads.set(route, found);
  }
  return found;
}

/**
 * What the API offers the signed-in session for new keys (`GET /auth/api-keys/options/roles` and `…/expiration`, each
 * read once per run and shared), as the API answers it (`raw`: every field it sent). Session only: with only an API
 * key configured, a ConfigurationError saying so (`what` names the caller), before any request.
 */
export function apiKeyOptions(
  ctx: HandlerContext,
  what: string,
): {
  roles: () => Promise<{ data: RoleOptionItem[]; raw: unknown }>;
  expirations: () => Promise<{ data: ExpirationOptionItem[]; raw: unknown }>;
} {
  const api = ctx.clientFor(sessionSettings(ctx.configuration, ctx.settings, what));
  return {
    roles: () => readOnce(api, "apiKeyRoleOptions", () => api.request("apiKeyRoleOptions", {})),
    expirations: () => readOnce(api, "apiKeyExpirationOptions", () => api.request("apiKeyExpirationOptions", {})),
  };
}

/**
 * Why `roleId` cannot be given to a key, if it cannot: checked against the roles the API offers the signed-in user
 * (read once per run, with a session token or a session already open: never by signing in); without a context,
 * offline (`skipCredentialsValidation`), with no session yet, or when that read fails (a warning says so), against the
 * roles the spec names.
 */
async function roleProblem(ctx: HandlerContext | undefined, roleId: string): Promise<string | undefined> {
  const named = (ids: readonly string[]) => ids.map((id) => `\`${id}\``).join(", ");
  const known = RoleName.options as readonly string[];
  const statically = known.includes(roleId)
    ? undefined
    : `must be one of ${named(known)}, or left out (the key then has its creator's permissions)`;
  if (ctx === undefined || ctx.settings.skipCredentialsValidation) return statically;
  let offered: RoleOptionItem[];
  try {
    // Not by signing in at check: that would spend the TOTP code the `up` after a preview needs. A session token, or
    // a session this process already holds, is asked; otherwise the API itself refuses a role it does not offer.
    const session = sessionSettings(ctx.configuration, ctx.settings, "Creating an API key");
    if ("password" in session.auth && !ctx.clientFor(session).auth.hasSession) return statically;
    offered = (await apiKeyOptions(ctx, "Creating an API key").roles()).data;
  } catch (error) {
    if (error instanceof ConfigurationError) return statically;
    warnAbout(
      ctx,
      `API key role "${roleId}"`,
      `the roles offered for new keys could not be read (${(error as Error).message}): checked against the roles the spec names instead`,
    );
    return statically;
  }
  const ids = offered.map((o) => o.id);
  if (ids.includes(roleId)) return undefined;
  return ids.length === 0
    ? "cannot be given: the API offers the signed-in user no role for new keys (GET /auth/api-keys/options/roles); leave it out (the key then has its creator's permissions)"
    : `must be a role the API offers the signed-in user for new keys: ${named(ids)} (GET /auth/api-keys/options/roles; see getApiKeyOptions), or left out (the key then has its creator's permissions)`;
}

/** The keys of that exact name, by id. */
async function keysNamed(api: CloudClient, name: string): Promise<Map<string, ApiApiKey>> {
  const keys = new Map<string, ApiApiKey>();
  for await (const key of api.listAll("listApiKeys", { search: name })) if (key.name === name) keys.set(key.id, key);
  return keys;
}

async function find(api: CloudClient, id: string, name: unknown): Promise<ApiApiKey | undefined> {
  const query = typeof name === "string" && name !== "" ? { search: name } : {};
  for await (const key of api.listAll("listApiKeys", query)) if (key.id === id) return key;
  return undefined;
}

/**
 * Rotates the key: its new secret is in the answer only. A rotation whose answer was lost is settled by reading the
 * key first: gone, the error says so (nothing is sent); its `start` (the secret's leading characters, the one field
 * the spec shows that a rotation changes) differs from `startBefore`, the rotation took effect, but the new secret was
 * in the lost answer and the old one is void, so the only way to a working secret is one more rotation (it voids only
 * the secret nobody received); unchanged, the rotation was not carried out and is sent once more. Either way once:
 * each rotation makes a new secret and voids the one before, and the last answer received holds the secret that works.
 */
async function rotate(ctx: HandlerContext, api: CloudClient, keyId: string, name: string, startBefore?: unknown) {
  try {
    return await api.rotateApiKey({ params: { keyId } });
  } catch (error) {
    if (!(error instanceof ApiError && error.mayHaveSucceeded)) throw error;
    const what = `rotating key ${keyId} got no answer (${settledText(error)})`;
    let now: ApiApiKey | undefined;
    try {
      now = await find(api, keyId, name);
    } catch (lookup) {
      throw new CodedError(
        "OUTCOME_UNKNOWN",
        `API key "${name}": ${what}, and reading the key to see whether it was rotated failed too ` +
          `(${settledText(lookup)}); the next \`pulumi up\` rotates it`,
        { cause: error },
      );
    }
    if (now === undefined) {
      throw new CodedError(
        "RESOURCE_GONE",
        `API key "${name}": ${what}, and the key no longer exists: run \`pulumi refresh\`, then \`pulumi up\` ` +
          "creates a new one",
        { cause: error },
      );
    }
    const rotated = typeof startBefore === "string" && now.start !== startBefore;
    warnAbout(
      ctx,
      `API key "${name}"`,
      rotated
        ? `${what}; the key shows a new start (${now.start}...), so the rotation took effect, but its new secret was ` +
            "only in the lost answer and the old one no longer works: rotating it once more to learn a working secret"
        : `${what}, so its secret is not known; ` +
            (typeof startBefore === "string"
              ? `the key still shows its start (${now.start}...): the rotation was not carried out, sending it once more`
              : "rotating it again"),
    );
    return api.rotateApiKey({ params: { keyId } });
  }
}

export async function create(ctx: HandlerContext, inputs: ApiKeyInputs): Promise<{ id: string; outs: ApiKeyState }> {
  const api = ctx.clientFor(sessionSettings(ctx.configuration, ctx.settings));
  // API keys have no unique name: to settle a create whose outcome is unknown, compare the keys of that name before
  // and after.
  const before = await keysNamed(api, inputs.name);
  const resends = lostAnswerResends(ctx);
  let created: (ApiApiKey & { key: string }) | undefined;
  for (let attempt = 1; created === undefined; attempt++) {
    try {
      // The role is one the API offered (roleProblem): the contract types it by the roles the spec names.
      const body = bodyFrom(CreateApiKeyBody, { ...inputs, roleId: inputs.roleId as RoleName | undefined });
      created = await api.createApiKey({ body });
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) {
        throw new CodedError(
          "SESSION_REQUIRED",
          `Cannot create API key "${inputs.name}": ${error.apiMessage}. Creating a key needs a two-factor session of a ` +
            "user holding api-keys:self" +
            (inputs.roleId ? ` and every permission of the role ${inputs.roleId}` : ""),
          { cause: error },
        );
      }
      if (!(error instanceof ApiError && error.mayHaveSucceeded)) throw error;
      const now = await keysNamed(api, inputs.name);
      const appeared = [...now.keys()].filter((id) => !before.has(id));
      // Nothing was made: the create is sent again (up to cloudinfra:maxRetries times, each after this look).
      if (appeared.length === 0 && attempt <= resends) {
        warnAbout(
          ctx,
          `API key "${inputs.name}"`,
          `the create got no answer (${settledText(error)}) and no new key of that name exists: sending it again ` +
            `(resend ${attempt} of at most ${resends}: cloudinfra:maxRetries)`,
        );
        continue;
      }
      if (appeared.length !== 1) {
        throw new CodedError(
          appeared.length === 0 ? "NOTHING_CHANGED" : "DUPLICATES_CREATED",
          `Creating API key "${inputs.name}" got no answer (${error.apiMessage}); ` +
            (appeared.length === 0
              ? `sent ${timesText(attempt)}, and no new key of that name exists: nothing was created; the next \`pulumi up\` creates it`
              : `keys ${appeared.join(", ")} of that name appeared meanwhile: delete the ones you do not want`),
          { cause: error },
        );
      }
      // The key exists but its secret was lost with the answer: rotating it gives us a secret nobody else holds.
      try {
        created = await rotate(ctx, api, appeared[0]!, inputs.name, now.get(appeared[0]!)?.start);
      } catch (rotation) {
        // Recorded without a secret, never orphaned: the next update rotates it.
        const current = await find(api, appeared[0]!, inputs.name).catch(() => undefined);
        throw new ResourceInitError(
          `API key "${inputs.name}" (${appeared[0]}) was created, but its answer was lost and rotating it to learn a ` +
            `secret failed: ${(rotation as Error).message}; the next \`pulumi up\` rotates it`,
          appeared[0]!,
          partialOutputs(inputs, current),
        );
      }
    }
  }
  const id = created.id;
  try {
    let current: ApiApiKey | undefined = created;
    if (!inputs.enabled) {
      // The answer of the status change is not shown by the spec: the key is read again.
      await api.setApiKeyStatus({ params: { keyId: id }, body: { enabled: false } });
      current = (await find(api, id, inputs.name)) ?? { ...created, status: "Suspended", enabled: false };
    }
    return { id, outs: outputsOf(inputs, current, created.key) };
  } catch (error) {
    // Recorded without its secret (an initialisation failure's properties are not secret outputs); the next update
    // rotates the key to know a secret again.
    const current = await find(api, id, inputs.name).catch(() => undefined);
    throw new ResourceInitError(
      `API key "${inputs.name}" (${id}) was created but could not be suspended: ${(error as Error).message}`,
      id,
      partialOutputs(inputs, current),
    );
  }
}

export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: ApiKeyState } | null> {
  const found = await find(ctx.api, id, props.name);
  return found ? { id, props: outputsOf(props, found, props.key) } : null;
}

export async function update(ctx: HandlerContext, id: string, olds: Props, news: ApiKeyInputs): Promise<ApiKeyState> {
  const api = ctx.api;
  const changed = changedInputs(olds, news, diffSpec);
  let secret = olds.key;
  let current: ApiApiKey | undefined;
  try {
    if (changed.includes("rotation") || keyUnknown(olds)) {
      const rotated = await rotate(ctx, api, id, news.name, olds.start);
      secret = rotated.key;
      current = rotated;
    }
    if (changed.includes("enabled")) {
      // The answer is not shown by the spec: the key is read again below.
      await api.setApiKeyStatus({ params: { keyId: id }, body: bodyFrom(ApiKeyStatusBody, news) });
      current = undefined;
    }
  } catch (error) {
    if (isNotFound(error)) {
      // The API hides other users' keys from a caller without api-keys:manage: a 404 may be that, not a deleted key.
      const rotating = secret === olds.key && (changed.includes("rotation") || keyUnknown(olds));
      const what = rotating
        ? "The rotation (POST /auth/api-keys/{keyId}/rotate)"
        : "The status change (PATCH /auth/api-keys/{keyId}/status)";
      const refused = await notTheCallers(ctx, id, olds, what);
      if (refused !== undefined) throw new CodedError("REQUEST_REFUSED", refused, { cause: error });
      throw new CodedError(
        "RESOURCE_GONE",
        `API key ${id} no longer exists: run \`pulumi refresh\`, then \`pulumi up\` creates a new one`,
      );
    }
    if (secret !== olds.key) {
      // Rotated, then failed: the old secret no longer works and the new one must not go into an error's properties.
      // Recorded without a secret, the next update rotates again.
      const known = current ?? (await find(api, id, news.name).catch(() => undefined));
      throw new ResourceInitError((error as Error).message, id, partialOutputs(news, known)).codedBy(error);
    }
    throw error;
  }
  current ??= await find(api, id, news.name);
  if (!current) {
    throw new CodedError(
      "RESOURCE_GONE",
      `API key ${id} no longer exists: run \`pulumi refresh\`, then \`pulumi up\` creates a new one`,
    );
  }
  return outputsOf(news, current, secret);
}

/**
 * Why a change of the key got a 404 when the key is not the caller's (the state's `userId`, when the API sent it, or
 * not known) and the caller (`GET /auth/check`, the run's credentials check) lacks api-keys:manage; undefined when the
 * 404 means the key is gone, or the caller cannot be read.
 */
async function notTheCallers(ctx: HandlerContext, id: string, olds: Props, what: string): Promise<string | undefined> {
  try {
    const caller = (await callerOf(ctx)) ?? (await ctx.api.check());
    return foreignKeyRefusal(caller, id, olds.userId, what);
  } catch {
    return undefined;
  }
}

export async function remove(ctx: HandlerContext, id: string): Promise<void> {
  const api = ctx.api;
  try {
    await api.deleteOwnApiKey({ params: { keyId: id } });
    return;
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
  // Not ours (or gone): a tenant admin may delete any key of the entity.
  try {
    await api.deleteApiKey({ params: { keyId: id } });
  } catch (error) {
    if (isNotFound(error)) return;
    if (error instanceof ApiError && error.status === 403) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `API key ${id} belongs to another user: deleting it needs the api-keys:manage permission, or the ` +
          "credentials of the user who created it",
        { cause: error },
      );
    }
    throw error;
  }
}

function diff(olds: Props, news: Props): DiffResult {
  const result = diffInputs(olds, news, diffSpec);
  const renewal = renewalDue(olds, news);
  if (renewal !== undefined) {
    // Create before delete (the engine's default): the new key exists before the old one is deleted.
    return {
      ...result,
      changes: true,
      replaces: [...result.replaces, "expiresAt"],
      deleteBeforeReplace: false,
      warnings: [renewal],
    };
  }
  return result.changes || !keyUnknown(olds) ? result : { ...result, changes: true };
}

// ---------------------------------------------------------------- renewal (renewBeforeDays)

const DAY_MS = 24 * 3600_000;
/**
 * The lifetime of a key created without `expiresInDays`: the API's default, as `expiresInDays` documents it (the spec
 * does not say it; the emulator's is the same).
 */
const DEFAULT_EXPIRES_IN_DAYS = 90;

/**
 * Why `renewBeforeDays` cannot be kept with the key's lifetime: a key renewed `renewBeforeDays` before its expiry must
 * live longer than that, or every `up` would replace it.
 */
function renewalLifetimeProblem(news: Props): string | undefined {
  const renew = news.renewBeforeDays;
  const given = news.expiresInDays;
  if (typeof renew !== "number" || !Number.isInteger(renew) || renew < 1) return undefined;
  if (given !== undefined && (typeof given !== "number" || !Number.isInteger(given))) return undefined;
  const lifetime = given ?? DEFAULT_EXPIRES_IN_DAYS;
  if (renew < lifetime) return undefined;
  const of =
    given === undefined
      ? `the API's default lifetime of ${lifetime} days (expiresInDays left out)`
      : `expiresInDays (${lifetime})`;
  return (
    `must be less than the key's lifetime: ${renew} days before expiry is not less than ${of}, so every \`up\` ` +
    `would replace the key. Use at most ${lifetime - 1}` +
    (lifetime < 3650 ? `, or a longer expiresInDays (more than ${renew})` : "")
  );
}

/**
 * How far the API's clock is from this machine's, as the client knew it at check (see ApiClock: the `Date` header of
 * its answers). Diff (which sends no request) reads it.
 */
let apiClockOffsetMs: number | undefined;

/** Now, by the API's clock when an answer of this run told it, else by this machine's; and whose it is. */
function renewalNow(): { ms: number; clock: string } {
  return apiClockOffsetMs === undefined
    ? { ms: Date.now(), clock: "this machine's clock" }
    : { ms: Date.now() + apiClockOffsetMs, clock: "the API's clock" };
}

/**
 * The client whose answer tells the API's clock, without signing in (that would spend the TOTP code the `up` after a
 * preview needs): the configured credentials when they are a key or a session token, else a session already open.
 */
function clockClient(ctx: HandlerContext): CloudClient | undefined {
  return "password" in ctx.settings.auth && !ctx.api.auth.hasSession ? undefined : ctx.api;
}

/**
 * Takes the API's clock from the client (every answer's `Date` header tells it; the spec does not document the
 * header: read when present, never required); before any answer, from one `GET /auth/check` (any credentials may
 * call it, nothing is written), once per run. Offline (`cloudinfra:skipCredentialsValidation`), with only sign-in
 * credentials and no session yet, or when the API sends no `Date`, this machine's clock is used; a failed read warns
 * and does the same.
 */
async function learnApiClock(ctx: HandlerContext): Promise<void> {
  if (ctx.settings.skipCredentialsValidation) return;
  const api = clockClient(ctx);
  if (api === undefined) return;
  try {
    if (api.clock.now() === undefined) await readOnce(api, "apiClock", () => api.request("check", {}));
    const now = api.clock.now();
    if (now !== undefined) apiClockOffsetMs = now - Date.now();
  } catch (error) {
    warnAbout(
      ctx,
      "API key renewal (renewBeforeDays)",
      `the API's clock could not be read (${(error as Error).message}): keys are compared with this machine's clock`,
    );
  }
}

/**
 * Why the key is renewed now, if it is: its `expiresAt` (the state's: as of the last create or refresh) is
 * `renewBeforeDays` or fewer days away. Never the secret.
 */
function renewalDue(olds: Props, news: Props): string | undefined {
  const days = news.renewBeforeDays;
  if (typeof days !== "number" || typeof olds.expiresAt !== "string") return undefined;
  const expiresAt = Date.parse(olds.expiresAt);
  if (Number.isNaN(expiresAt)) return undefined;
  const now = renewalNow();
  if (expiresAt - now.ms > days * DAY_MS) return undefined;
  const name = typeof olds.name === "string" ? ` "${olds.name}"` : "";
  const left = `${expiresAt <= now.ms ? "expired" : "expires"} on ${olds.expiresAt}`;
  return (
    `API key${name} ${left}, within renewBeforeDays ${days} (now is ${new Date(now.ms).toISOString()} by ` +
    `${now.clock}): \`pulumi up\` replaces it with a new key of the same inputs, created before this one is deleted`
  );
}

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const ApiKeyOutputs = z.object({
  key: z
    .string()
    .optional()
    .describe(
      "The full secret (`svc_…`, 32 characters), from creation or the last rotation. A secret output. Send it as the `X-API-Key` header. Absent only from the state of a key whose creation did not complete (the next `up` replaces it).",
    ),
  start: z.string().describe("Leading characters of the key (its prefix included), safe to show."),
  status: z
    .enum(["Active", "Expiring", "Suspended", "Expired"])
    .describe(
      "`Active`, `Expiring` (within 30 days of expiry), `Suspended` or `Expired`, as of the last create/refresh.",
    ),
  // Not documented by the spec: read when the API sends it.
  userId: z
    .string()
    .optional()
    .describe(
      "The user who created the key (whose permissions it inherits), when the API reports it: the spec does not document it on key records, so an API that sends only the documented fields leaves it undefined.",
    ),
  expiresAt: z.string().describe("Expiry, ISO 8601."),
  createdAt: z.string().describe("Creation time, ISO 8601."),
});

export const apiKey = defineKind({
  name: "ApiKey",
  description:
    "An API key of the signed-in user, for scripts and pipelines. Creating one needs a session with two-factor authentication: configure `cloudinfra:email`, `cloudinfra:password` and `cloudinfra:totpSecret` (secrets) or `cloudinfra:sessionToken`; an API key alone cannot create keys (it can still read, rotate, suspend and delete them). The full secret, `key`, is only returned by the API on creation and rotation: the stack keeps it as a secret output. API keys have no unique name, so there is no adoption of existing keys.",
  inputs: { schema: ApiKeyInputs, fields: inputFields },
  outputs: ApiKeyOutputs,
  secretOutputs: ["key"],
  // Keys are created by a signed-in session: a stack with only an API key fails at check, before any request.
  settingsFor: sessionSettings,
  check: async (_olds, news, ctx) => {
    const result = checkInputs(ApiKeyInputs, news, undefined, inputFields);
    const roleId = result.inputs.roleId;
    // Refused together only when each is valid alone (else its own failure is the one said).
    const refused = (name: string) => result.failures.some((f) => f.property === name);
    const lifetime = refused("renewBeforeDays") || refused("expiresInDays") ? undefined : renewalLifetimeProblem(news);
    if (lifetime !== undefined) result.failures.push({ property: "renewBeforeDays", reason: lifetime });
    if (typeof roleId === "string" && !containsUnknown(roleId)) {
      // Inputs refused already: the role is checked without a request (nothing is sent for a program this bad).
      const reason = await roleProblem(result.failures.length === 0 ? ctx : undefined, roleId);
      if (reason !== undefined) result.failures.push({ property: "roleId", reason });
    }
    // The clock the renewal is compared with (diff has no requests of its own): only for valid inputs.
    if (result.failures.length === 0 && ctx !== undefined && result.inputs.renewBeforeDays !== undefined) {
      await learnApiClock(ctx);
    }
    return result;
  },
  preflight: apiKeyPermissions,
  diff: (_id, olds, news) => diff(olds, news),
  create,
  read,
  update,
  delete: (ctx, id) => remove(ctx, id),
});
