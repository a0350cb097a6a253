import { inspect } from "node:util";
import type * as api from "../api";
import { CodedError } from "./error-codes";
import { patternRedactor, type Redactor } from "./redact";

/**
 * A job record as the API reports it (`POST /resource/jobs`). Written out, equal to the contract's `Job`, so that
 * the declarations of these errors (re-exported by the package's main entry) do not reach zod's types.
 */
export interface JobRecord {
  /** Job id (UUID). */
  id: string;
  /** `pending`, `in_progress`, `completed` or `failed`. */
  status: "pending" | "in_progress" | "completed" | "failed";
  /** Progress in percent, 0 to 100. */
  progress: number;
  /** Kind of resource: `vm`, `volume`, `network`, `gpu`. */
  resourceType: string;
  /** The resource the job acts on, when known. */
  resourceId: string | null;
  /** Why the job failed, when it did. */
  error: string | null;
  /** Creation time (ISO 8601). */
  createdAt: string;
  /** Last change (ISO 8601). */
  updatedAt: string;
  /** End time (ISO 8601), or null while running. */
  completedAt: string | null;
  /** The operation, e.g. `create`, when the API says. */
  operation?: string;
}
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const jobRecordMatchesContract: Same<JobRecord, api.Job> = true;
void jobRecordMatchesContract;
type Job = JobRecord;

/** Everything known about a failed API call. Secrets in any field are redacted when the error is built. */
export interface ApiErrorInit {
  /** HTTP status; 0 when no response was received (network failure, or the request was never sent). */
  status: number;
  /**
   * The API's error code (`error` of the envelope), or one of ours: NETWORK_ERROR, INVALID_RESPONSE, HTTP_<status>,
   * ... Every one is documented in the catalogue (./error-codes).
   */
  code: string;
  /** The server's (or our) human-readable explanation, without the request summary. */
  message: string;
  method: string;
  /** Request path relative to the base URL, with its query string. */
  path: string;
  /** The full URL requested (base URL + path), when known: the message names it. */
  url?: string;
  /** What to do about it, appended to the message: where the failing setting came from, how to fix it. */
  hint?: string;
  /** Contract route name, e.g. `createVolume`. */
  route?: string;
  /** The error envelope's `data`, when it had one. */
  data?: unknown;
  cause?: unknown;
  /**
   * True when the request changes something, may have reached the server and its outcome is unknown (a 5xx, a reset
   * connection, a timeout after sending). Requests that create something are never retried in that case: check
   * whether the resource exists (e.g. by its unique name) before trying again.
   */
  mayHaveSucceeded?: boolean;
  /** For 429: how long the server asked us to wait. */
  retryAfterMs?: number;
  /** Number of attempts made. */
  attempts?: number;
}

/**
 * The one error of the client for API failures: HTTP status, API code, message, request method/path, response
 * `data` and `cause`, with credentials redacted everywhere (message, path, data, cause, toJSON, util.inspect).
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The server's message alone (the `message` property adds the request summary). */
  readonly apiMessage: string;
  readonly method: string;
  readonly path: string;
  readonly route: string | undefined;
  readonly data: unknown;
  readonly mayHaveSucceeded: boolean;
  readonly retryAfterMs: number | undefined;
  attempts: number;

  constructor(init: ApiErrorInit, redactor: Redactor = patternRedactor) {
    const apiMessage = redactor.text(init.message);
    const path = redactor.text(init.path);
    const where = `${init.method} ${init.url === undefined ? path : redactor.text(init.url)}`;
    const status = init.status === 0 ? "no response" : `HTTP ${init.status}`;
    const ambiguous = init.mayHaveSucceeded ? "; it may have taken effect on the server" : "";
    const hint = init.hint ? `. ${redactor.text(init.hint)}` : "";
    super(`${apiMessage} (${init.code}, ${status}, ${where}${ambiguous})${hint}`, {
      cause: init.cause === undefined ? undefined : redactor.error(init.cause),
    });
    this.status = init.status;
    this.code = init.code;
    this.apiMessage = apiMessage;
    this.method = init.method;
    this.path = path;
    this.route = init.route;
    this.data = init.data === undefined ? undefined : redactor.value(init.data);
    this.mayHaveSucceeded = init.mayHaveSucceeded ?? false;
    this.retryAfterMs = init.retryAfterMs;
    this.attempts = init.attempts ?? 1;
    Object.defineProperty(this, "redactor", { value: redactor, enumerable: false });
    Object.defineProperty(this, "init", { value: init, enumerable: false });
  }

  /** The same error with more advice appended to its message (e.g. how long retries took, which setting to fix). */
  withHint(hint: string, changes: Partial<ApiErrorInit> = {}): ApiError {
    const init = (this as unknown as { init: ApiErrorInit }).init;
    const redactor = (this as unknown as { redactor: Redactor }).redactor;
    const joined = init.hint ? `${init.hint}. ${hint}` : hint;
    const copy = new ApiError({ ...init, ...changes, hint: joined, attempts: this.attempts }, redactor);
    copy.stack = `${copy.name}: ${copy.message}\n${(this.stack ?? "").split("\n").slice(1).join("\n")}`;
    return copy;
  }

  toJSON(): Record<string, unknown> {
    const redactor = (this as unknown as { redactor: Redactor }).redactor;
    return {
      name: this.name,
      status: this.status,
      code: this.code,
      message: this.message,
      method: this.method,
      path: this.path,
      route: this.route,
      data: this.data,
      mayHaveSucceeded: this.mayHaveSucceeded,
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
      attempts: this.attempts,
      ...(this.cause !== undefined ? { cause: redactor.errorSummary(this.cause) } : {}),
    };
  }

  [inspect.custom](_depth: number, options: Parameters<typeof inspect>[1]): string {
    const { name: _name, message: _message, ...details } = this.toJSON();
    const redactor = (this as unknown as { redactor: Redactor }).redactor;
    return `${redactor.text(this.stack ?? `${this.name}: ${this.message}`)} ${inspect(details, { ...options, depth: 4 })}`;
  }
}

/** One problem found in a request before it was sent. */
export interface RequestIssue {
  /** Dotted path of the offending field, prefixed by where it is: `body.name`, `query.limit`, `path.id`. */
  field: string;
  message: string;
}

/** The request does not satisfy the contract; it was not sent. Names every offending field. */
export class RequestValidationError extends ApiError {
  readonly issues: RequestIssue[];

  constructor(init: { method: string; path: string; route: string; issues: RequestIssue[] }, redactor?: Redactor) {
    const text = init.issues.map((i) => `${i.field}: ${i.message}`).join("; ");
    super(
      {
        status: 0,
        code: "INVALID_REQUEST",
        message: `${init.route}: invalid request, not sent: ${text}`,
        method: init.method,
        path: init.path,
        route: init.route,
        data: { issues: init.issues },
        attempts: 0,
      },
      redactor,
    );
    this.issues = init.issues;
  }
}

/** A job ended with status `failed`. Carries the job record; the message includes the job's error text. */
export class JobFailedError extends CodedError {
  constructor(readonly job: Job) {
    super(
      "JOB_FAILED",
      `Job ${job.id} (${job.operation ?? job.resourceType}${job.resourceId ? ` of ${job.resourceId}` : ""}) failed: ${
        job.error ?? "no error text given"
      }`,
    );
  }
}

/** A wait for a job gave up after its timeout; the job may still finish later. */
export class JobTimeoutError extends CodedError {
  constructor(
    readonly jobId: string,
    readonly timeoutMs: number,
    /** The job as last seen, if it was seen at all. */
    readonly lastSeen: Job | undefined,
  ) {
    const state = lastSeen ? `last seen ${lastSeen.status} at ${lastSeen.progress}%` : "never seen by a poll";
    super("JOB_TIMEOUT", `Timed out after ${timeoutMs} ms waiting for job ${jobId} (${state})`);
  }
}

/** A job id was absent from several consecutive polls: unknown, another tenant's, or expired. */
export class JobNotFoundError extends CodedError {
  constructor(
    readonly jobId: string,
    readonly polls: number,
  ) {
    super(
      "JOB_NOT_FOUND",
      `Job ${jobId} was absent from ${polls} consecutive polls of POST /resource/jobs: ` +
        `the id is unknown, belongs to another tenant, or the job has expired`,
    );
  }
}

/** The client was closed while the operation was pending. */
export class ClientClosedError extends CodedError {
  constructor(what = "operation") {
    super("CLIENT_CLOSED", `The client was closed; the pending ${what} was abandoned`);
  }
}

// Names live on the prototypes so that stacks, which are captured during `super()`, already carry them.
for (const cls of [
  ApiError,
  RequestValidationError,
  JobFailedError,
  JobTimeoutError,
  JobNotFoundError,
  ClientClosedError,
]) {
  Object.defineProperty(cls.prototype, "name", { value: cls.name, writable: true, configurable: true });
}
