import { ApiError, JobFailedError } from "../client";
import { errorCodeOf, type ErrorCodeName } from "../client/error-codes";
import type { Props } from "./props";

/**
 * The resource exists but did not become ready (e.g. its create job failed). Thrown from create/update, the engine
 * records it with this id as a resource that failed to initialise, so nothing is orphaned; the next `up` retries.
 */
export class ResourceInitError extends Error {
  override name = "ResourceInitError";
  /** The code of the failure it records: the cause's (`codeOfCause`), JOB_FAILED by default. */
  code: ErrorCodeName = "JOB_FAILED";
  /** Whether what it records is a job the API reported failed (not a timeout, a lost answer or a failed set-up). */
  jobFailed = false;
  constructor(
    message: string,
    readonly id: string,
    public properties: Props,
    readonly reasons: string[] = [message],
  ) {
    super(message);
  }

  /** This error with the code of the error it reports (a failed job, a refused request…), JOB_FAILED if it has none. */
  codedBy(cause: unknown): this {
    this.code = codeOfCause(cause, "JOB_FAILED");
    this.jobFailed = cause instanceof JobFailedError;
    return this;
  }

  /** Marks what it records as a failed create job seen through its record's status Error (the job itself unseen). */
  ofFailedJob(): this {
    this.jobFailed = true;
    return this;
  }
}

/** The host cancelled the operation (the plugin's Cancel: Ctrl-C or the engine shutting down). */
export class OperationCancelledError extends Error {
  override name = "OperationCancelledError";
  readonly code = "OPERATION_CANCELLED" satisfies ErrorCodeName;
}

/** The documented code of an error this one wraps, or `fallback` when it has none. */
export const codeOfCause = (cause: unknown, fallback: ErrorCodeName): ErrorCodeName =>
  (errorCodeOf(cause) as ErrorCodeName | undefined) ?? fallback;

/** An error's text without the client's "it may have taken effect" note: the caller has settled that question. */
export const settledText = (error: unknown) =>
  error instanceof ApiError ? `${error.apiMessage} (${error.code}, HTTP ${error.status})` : String(error);

export const isNotFound = (error: unknown) => error instanceof ApiError && error.status === 404;
export const isConflict = (error: unknown) => error instanceof ApiError && error.status === 409;
