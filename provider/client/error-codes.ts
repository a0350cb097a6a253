import type { ErrorCode as ApiErrorCode } from "../api";

/**
 * One documented error code: what it means and what to do. README.md's "Error codes" table is generated from these
 * entries (`npm run docs`), and test/tools/error-catalogue.test.ts fails when a code thrown in provider/ is missing.
 */
export interface ErrorEntry {
  /** `api`: the API's own code, carried by `ApiError.code` as the API sent it; `provider`: raised by this package. */
  origin: "api" | "provider";
  /** What happened, in one sentence. */
  summary: string;
  /** What to do about it: the setting or property to change, the command to run. */
  fix: string;
}

/** The API's codes (the contract's catalogue, provider/api): a code the contract adds fails to compile here. */
const apiCodes = {
  INVALID_CREDENTIALS: {
    origin: "api",
    summary: "The API refused the email or password (wrong, or the account is missing or deleted).",
    fix: "Check `cloudinfra:email` and `cloudinfra:password` (or their `CLOUDINFRA_*` variables).",
  },
  TWO_FACTOR_REQUIRED: {
    origin: "api",
    summary: "The password was right and the API asks for the second factor; the client answers it itself.",
    fix: "Seen as an error only when the answer lacked what the second step needs: set `cloudinfra:totpSecret`.",
  },
  INVALID_OTP: {
    origin: "api",
    summary: "The API refused the TOTP code computed from `cloudinfra:totpSecret`; the run stops at once.",
    fix:
      "`cloudinfra:totpSecret` must be the base32 secret (not a 6-digit code), and this machine's clock within 30 s " +
      "of the API's (the message says how far off it is).",
  },
  SESSION_EXPIRED: {
    origin: "api",
    summary: "The session timed out or was invalidated; a client that signs in renews it once by itself.",
    fix: "With a fixed `cloudinfra:sessionToken`, set a fresh one, or configure an API key or email/password/TOTP.",
  },
  NOT_AUTHENTICATED: {
    origin: "api",
    summary: "The request carried no usable credential.",
    fix: "Configure `cloudinfra:apiKey`, or `cloudinfra:email`, `cloudinfra:password` and `cloudinfra:totpSecret`.",
  },
  INSUFFICIENT_PERMISSIONS: {
    origin: "api",
    summary: "The credential is valid but its role may not do this in the active entity.",
    fix:
      "Use a user or key whose role allows it (a key never exceeds its creator, and a `roleId` narrows it); set " +
      "`cloudinfra:entityId` to act on a child entity.",
  },
  API_KEY_INVALID: {
    origin: "api",
    summary: "The API key does not exist, or was revoked, deleted, suspended or rotated away.",
    fix: "Set a working key: `pulumi config set --secret cloudinfra:apiKey …` (the message says where this one came from).",
  },
  API_KEY_EXPIRED: {
    origin: "api",
    summary: "The API key is past its expiry.",
    fix: "Rotate or create a key and set it: `pulumi config set --secret cloudinfra:apiKey …`.",
  },
  RATE_LIMIT_EXCEEDED: {
    origin: "api",
    summary: "Too many requests; the client waits out each 429 as long as the API asks, so this ends a run rarely.",
    fix:
      "Another program spends the same user's budget: give CI its own user, run `pulumi up --parallel 4`, or ask " +
      "for higher limits.",
  },
  INVALID_REQUEST: {
    origin: "api",
    summary:
      "A request broke the contract: refused by the API, or stopped by the client before sending (every field named).",
    fix: "Correct the named field in the program; if the program is right, report it as a provider bug.",
  },
  SERVER_ERROR: {
    origin: "api",
    summary: "The API failed (HTTP 5xx); reads are retried, changes only when nothing can have been made.",
    fix: "Run the command again; `pulumi refresh` first when the message says the change may have taken effect.",
  },
  NOT_FOUND: {
    origin: "api",
    summary: "The resource does not exist (or is not visible to these credentials).",
    fix: "Run `pulumi refresh` to drop what was deleted behind the stack; check ids given as inputs.",
  },
  CONFLICT: {
    origin: "api",
    summary: "The API refused the change in the resource's current state (a name in use, a status that forbids it).",
    fix: "Read the API's message: choose another name, or wait for or change the state it names.",
  },
  NOT_IMPLEMENTED: {
    origin: "api",
    summary: "The API does not offer this operation (for example starting some GPU series).",
    fix: "Change the program so that it does not ask for it (the message names the property).",
  },
} as const satisfies Record<ApiErrorCode, ErrorEntry>;

/** The codes this package raises itself. */
const providerCodes = {
  NETWORK_ERROR: {
    origin: "provider",
    summary: "No answer from the API (refused, reset, DNS, timeout), after the retries allowed.",
    fix:
      "Check `cloudinfra:baseUrl` and that the API is reachable from here; raise `cloudinfra:requestTimeoutMs` or " +
      "`cloudinfra:maxRetries` for a slow network.",
  },
  INVALID_RESPONSE: {
    origin: "provider",
    summary: "The API answered something the contract does not allow (the message names the field).",
    fix: "Check that `cloudinfra:baseUrl` points at the API's `/v1`; otherwise report the answer as an API bug.",
  },
  HTTP_STATUS: {
    origin: "provider",
    summary: "Shown as `HTTP_<status>` (e.g. `HTTP_502`): an error answer without the API's error envelope.",
    fix: "Often a proxy or a wrong `cloudinfra:baseUrl` (the message says when no API route is there); check the URL.",
  },
  BASE_URL_INVALID: {
    origin: "provider",
    summary: "The API base URL is not an http(s) URL.",
    fix: "Set `cloudinfra:baseUrl` to the API's full URL ending in /v1, e.g. https://api.example.com/v1.",
  },
  SIGN_IN_UNAVAILABLE: {
    origin: "provider",
    summary: "A sign-in was needed but the client was given no password (an API key or a fixed session token).",
    fix: "Configure `cloudinfra:email`, `cloudinfra:password` and `cloudinfra:totpSecret` for what needs a session.",
  },
  JOB_ID_INVALID: {
    origin: "provider",
    summary: "A job id to wait for is not a UUID.",
    fix: "Pass the `jobId` the API returned; the message quotes the value given.",
  },
  JOB_FAILED: {
    origin: "provider",
    summary: "An asynchronous job ended `failed`; the message carries the API's reason and the job id.",
    fix: "The resource stays recorded in the stack with the error: fix the cause, then `pulumi up` repairs or replaces it.",
  },
  JOB_TIMEOUT: {
    origin: "provider",
    summary: "A wait bounded by `cloudinfra:jobTimeoutMs` ended first; the job or status change may still finish.",
    fix:
      "Raise `cloudinfra:jobTimeoutMs` if the cloud is slow, then run `pulumi refresh` and `pulumi up` (in the plugin, " +
      "a resource's `customTimeouts` sets the bound).",
  },
  JOB_NOT_FOUND: {
    origin: "provider",
    summary: "A job id stayed absent from the API's job list (unknown, another tenant's, or expired).",
    fix: "Run `pulumi refresh` to record what the API holds, then `pulumi up`.",
  },
  CLIENT_CLOSED: {
    origin: "provider",
    summary: "The client was closed while a request or job wait was pending (the host was shutting down).",
    fix: "Run the command again; `pulumi refresh` first if it was interrupted during a change.",
  },
  // Raised in provider/resources, provider/dynamic.ts and provider/plugin (codes assigned there in phase B).
  SETTING_INVALID: {
    origin: "provider",
    summary: "A `cloudinfra:` setting is missing, incomplete or malformed; every problem is listed at once.",
    fix: "Set what the message names, on the stack (`pulumi config set cloudinfra:…`) or in its `CLOUDINFRA_*` variable.",
  },
  AUTH_REJECTED: {
    origin: "provider",
    summary: "The check of the credentials at the start of a run (GET /auth/check) failed or was refused.",
    fix:
      "Replace the credential the message names; set `cloudinfra:skipCredentialsValidation` to preview without " +
      "network access.",
  },
  SESSION_REQUIRED: {
    origin: "provider",
    summary: "The operation needs a signed-in session with two-factor authentication (e.g. creating an `ApiKey`).",
    fix: "Configure the owner's `cloudinfra:email`, `cloudinfra:password` and `cloudinfra:totpSecret`.",
  },
  INPUT_INVALID: {
    origin: "provider",
    summary: "An input is refused once the API's state is known (an id that does not exist, a size not offered…).",
    fix: "Change the property the message names, to one of the values it lists.",
  },
  CANNOT_SHRINK: {
    origin: "provider",
    summary: "A VM configuration or a volume size would shrink, which the API only allows by replacing.",
    fix: "Keep the size, or replace the resource as the message says (`allowReplaceOnShrink`, or a new name).",
  },
  NAME_TAKEN: {
    origin: "provider",
    summary: "A unique name (or email) is already used by another resource.",
    fix: "Set `adopt: true` to manage the existing one from this program, or choose another name.",
  },
  ADOPT_MISMATCH: {
    origin: "provider",
    summary: "The resource to take over differs from the program where no update could align it.",
    fix: "Align the program with the resource (the message lists the differences), or stop adopting it.",
  },
  STATE_CONFLICT: {
    origin: "provider",
    summary: "The resource's status forbids the change now (not Running, still attached, being deleted…).",
    fix: "Bring the resource to the status the message names (or detach what holds it), then run the command again.",
  },
  DEPENDENTS_EXIST: {
    origin: "provider",
    summary: "The resource still has dependents (child groups, an attached volume) and cannot be deleted.",
    fix: "Delete or move the dependents first; declared in the same program, they are deleted before it.",
  },
  OUTCOME_UNKNOWN: {
    origin: "provider",
    summary: "A change got no answer and the follow-up lookup could not tell whether it was made.",
    fix: "Look for the resource (the message says where) before running `pulumi up` again, to avoid a duplicate.",
  },
  NOTHING_CHANGED: {
    origin: "provider",
    summary: "A change got no answer, and a lookup showed that nothing was made or changed.",
    fix: "Run `pulumi up` again: it makes the change.",
  },
  DUPLICATES_CREATED: {
    origin: "provider",
    summary: "A create got no clear answer and several resources of that name now exist (the message lists them).",
    fix: "Delete the unwanted ones (or keep one and adopt it, e.g. `adoptId`), then run `pulumi up` again.",
  },
  REPLACE_BLOCKED: {
    origin: "provider",
    summary: "A change needs a replacement that would delete what the program took over (a VM adopted by `adoptId`).",
    fix: "Remove `adoptId` from the program first, then make the change.",
  },
  GPU_UNAVAILABLE: {
    origin: "provider",
    summary: "The GPU series is not available in that data center with that GPU count (the message lists what is).",
    fix: "Choose `seriesId`, `datacenterId` and `gpuCount` among the combinations the message lists.",
  },
  LOOKUP_NO_MATCH: {
    origin: "provider",
    summary: "A data function found no resource with that name or id (the closest names are listed).",
    fix: "Check the name (matched exactly, case included) or id, and `cloudinfra:entityId`.",
  },
  LOOKUP_AMBIGUOUS: {
    origin: "provider",
    summary: "A data function found several resources with that name.",
    fix: "Look the resource up by `id` instead (the message lists the candidates).",
  },
  UNKNOWN_TOKEN: {
    origin: "provider",
    summary: "The engine asked the plugin for a resource type, function or subpackage it does not serve.",
    fix: "Use a token the message lists; a program written for a newer provider needs that version.",
  },
  INTERNAL_ERROR: {
    origin: "provider",
    summary: "A state the provider should never reach (an in-place change of an identity, an API answer out of order).",
    fix: "Report it with the message; `pulumi refresh` then `pulumi up` usually gets past it.",
  },
  RESOURCE_GONE: {
    origin: "provider",
    summary: "The resource recorded in the stack no longer exists in the API.",
    fix: "Run `pulumi refresh`, then `pulumi up` creates it anew.",
  },
  ID_INVALID: {
    origin: "provider",
    summary: "An id (from `pulumi import`, a lookup or the state) does not have this kind's shape.",
    fix: "Give the id in the form the message shows.",
  },
  REQUEST_REFUSED: {
    origin: "provider",
    summary: "The API refused an operation the program asked for; the message quotes its reason.",
    fix: "Act on the API's reason (permissions, status, limits), then run the command again.",
  },
  OPERATION_CANCELLED: {
    origin: "provider",
    summary: "The engine asked the provider to stop (Ctrl-C or shutdown); the job goes on in the cloud.",
    fix: "Run `pulumi refresh` to record what the API now holds, then `pulumi up`.",
  },
} as const satisfies Record<string, ErrorEntry>;

/** Every documented code: the API's, then this package's. */
export const errorCatalogue = { ...apiCodes, ...providerCodes } as const satisfies Record<string, ErrorEntry>;

export type ErrorCodeName = keyof typeof errorCatalogue;

/** The catalogue entry of a code as errors carry it (`HTTP_502` is documented as `HTTP_STATUS`), if documented. */
export function errorEntry(code: string): (ErrorEntry & { code: ErrorCodeName }) | undefined {
  const name = /^HTTP_\d{3}$/.test(code) ? "HTTP_STATUS" : code;
  if (!Object.hasOwn(errorCatalogue, name)) return undefined;
  return { code: name as ErrorCodeName, ...errorCatalogue[name as ErrorCodeName] };
}

/** The code of an error raised by this package or the API (`code` property), if it has one. */
export function errorCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === "string" && errorEntry(code) ? code : undefined;
}

/** A code tag at the end of a message, as {@link withCode} writes it (`… [JOB_TIMEOUT]`). */
const TRAILING_TAG = / \[([A-Z][A-Z0-9_]*)\]$/;

/**
 * A message as the hosts hand it to the engine (and `pulumi up` prints it): followed by its code, e.g.
 * `Timed out after 600 s … [JOB_TIMEOUT]`, the key of README's "Error codes". One tag only: a tag the message already
 * ends with (an error that wraps a tagged one) is replaced by `code`. The code comes from the catalogue, never from
 * data, so no value reaches the text through it. Without a code, the message is unchanged.
 */
export function withCode(message: string, code: string | undefined): string {
  if (code === undefined) return message;
  const match = TRAILING_TAG.exec(message);
  const untagged = match && errorEntry(match[1]!) ? message.slice(0, match.index) : message;
  return `${untagged} [${code}]`;
}

/** An error's message followed by its documented code ({@link withCode}): what a host hands to the engine. */
export function messageWithCode(error: unknown): string {
  return withCode(error instanceof Error ? error.message : String(error), errorCodeOf(error));
}

/** The advice of every wait bounded by `cloudinfra:jobTimeoutMs`, followed by what to run next. */
export function raiseJobTimeout(then: string): string {
  return `raise cloudinfra:jobTimeoutMs if the cloud is slow, then ${then}`;
}

/**
 * An error of this package with a documented code. Its message is unchanged; the code is a property. An API code is
 * allowed too: an error that explains an ApiError (e.g. a 501 on a GPU start) may keep the API's code.
 */
export class CodedError extends Error {
  constructor(
    readonly code: ErrorCodeName,
    message: string,
    // Not `ErrorOptions`: that type is ES2022's lib, which a program's tsconfig may not load (Pulumi's template's does not).
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
