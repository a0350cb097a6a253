import { CloudClient, JobFailedError, JobTimeoutError } from "../client";
import { CodedError, raiseJobTimeout } from "../client/error-codes";
import type { Job } from "../api";
import { duration } from "../client/progress";
import { BatchedReader, type ListPage } from "../client/batched-reader";
import { type HandlerContext, warnAbout } from "./context";
import { isNotFound, OperationCancelledError } from "./errors";

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
export async function awaitJob(ctx: HandlerContext, jobId: string, what: string): Promise<Job> {
  const current = ctx.settings;
  const jobs = ctx.api.jobs;
  const context = { resource: what };
  const started = Date.now();
  ctx.log.info(
    `job ${jobId} started; waiting for it (at most ${duration(current.jobTimeoutMs)}: cloudinfra:jobTimeoutMs)`,
    context,
  );
  const ticker = setInterval(() => {
    const last = jobs.lastSeen(jobId);
    const state = last ? `${last.status.replace("_", " ")}, ${last.progress}%` : "not reported yet";
    ctx.log.info(`job ${jobId} ${state} after ${duration(Date.now() - started)}`, context);
  }, current.progressIntervalMs);
  ticker.unref();
  try {
    const job = await jobs.wait(jobId, { timeoutMs: current.jobTimeoutMs, signal: ctx.signal });
    ctx.log.info(`job ${jobId} completed in ${duration(Date.now() - started)}`, context);
    return job;
  } catch (error) {
    if (error instanceof JobFailedError) throw failedJob(error.job, what);
    if (error instanceof JobTimeoutError) {
      throw new CodedError(
        "JOB_TIMEOUT",
        `${what} did not finish within ${current.jobTimeoutMs} ms (job ${jobId}); ` +
          raiseJobTimeout("run `pulumi refresh` and `pulumi up`"),
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

/**
 * The once-resend after a job that failed and left its resource as it was (a delete, detach or attach job): the first
 * failed job answers `true` (send the request again) after a warning naming the resource, the job and the API's
 * reason, e.g. `Deleting VM <id> failed: <reason> (job <id>, VM <id>); the delete is sent once more`. Any other error,
 * and a second failed job, answer `false`: the caller throws them as they are.
 */
export function resendAfterFailedJob(
  ctx: HandlerContext,
  resource: string,
  action: string,
): (error: unknown) => boolean {
  let failedJobs = 0;
  return (error) => {
    if (!(error instanceof JobFailedError) || failedJobs++ > 0) return false;
    warnAbout(ctx, resource, `${error.message}; the ${action} is sent once more`);
    return true;
  };
}

/**
 * After a delete job that failed, the resource is read before the delete is sent again: when it is gone (the job
 * reported a failure, yet the resource was removed), the delete is done, with a warning naming the job, and `true`
 * is answered. Any other error, a resource still there, or a read that fails otherwise, answer `false` (the caller
 * goes on to its resend, whose 404 also means done).
 */
export async function goneAfterFailedJob(
  ctx: HandlerContext,
  error: unknown,
  resource: string,
  read: () => Promise<unknown>,
): Promise<boolean> {
  if (!(error instanceof JobFailedError)) return false;
  try {
    await read();
    return false;
  } catch (lookup) {
    if (!isNotFound(lookup)) return false;
  }
  warnAbout(ctx, resource, `${error.message}; yet the ${resource} no longer exists: it is deleted`);
  return true;
}

/** Waits `ms`; the operation's cancellation (`signal`) ends the wait with its reason. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
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
 * The batched reader of a kind for the context's client (one per client and kind, so reads gathered together share
 * one batch). Only for kinds whose list items carry every field of the detail (the list then answers them all).
 */
export function batchedRead<T extends { id: string }>(
  ctx: HandlerContext,
  kind: string,
  source: (api: CloudClient) => BatchSource<T>,
): BatchedReader<T> {
  const api = ctx.api;
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
  ctx: HandlerContext,
  fetch: () => Promise<T>,
  settled: (value: T) => boolean,
  timedOut: (last: T, timeoutMs: number) => Error,
): Promise<T> {
  const current = ctx.settings;
  const deadline = Date.now() + current.jobTimeoutMs;
  for (;;) {
    const value = await fetch();
    if (settled(value)) return value;
    if (Date.now() > deadline) throw timedOut(value, current.jobTimeoutMs);
    await sleep(current.pollIntervalMs, ctx.signal);
  }
}
