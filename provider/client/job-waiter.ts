import { setMaxListeners } from "node:events";
import { Uuid, type Job } from "../api";
import { CodedError } from "./error-codes";
import { ApiError, ClientClosedError, JobFailedError, JobNotFoundError, JobTimeoutError } from "./errors";

export interface JobWaiterOptions {
  /**
   * Shortest interval between two polls of a job, and between two ticks: a job of a kind not seen yet is first polled
   * this long after it started. Default 2 000 ms.
   */
  pollIntervalMs?: number;
  /** Longest interval between two polls of a job, reached while it does not change. Default 10 000 ms. */
  maxPollIntervalMs?: number;
  /** Growth of a job's interval per poll without change. Default 1.5. */
  backoffFactor?: number;
  /** Job ids per POST /resource/jobs (the API allows at most 50). Default 50. */
  batchSize?: number;
  /** A job absent from this many consecutive polls is reported as not found. Default 3. */
  missingPollsLimit?: number;
  /** Timeout of a wait that gives none. Default 30 minutes. */
  defaultTimeoutMs?: number;
  /** Consecutive failed polls (after the transport's own retries) before the waits of that batch fail. Default 3. */
  maxConsecutiveErrors?: number;
  /**
   * A job expected to be done (its kind's usual duration has passed) may wait this fraction of that duration for other
   * jobs to become due, so that one poll answers several. Default 0.2.
   */
  coalesceFraction?: number;
  /**
   * Whether requests are waiting for rate budget now (the client's pacer). A tick is then put off, `pollIntervalMs` at
   * a time and at most `maxPollIntervalMs` in all, until none wait: under a binding budget a poll takes the place of
   * a create, and put off it answers for the jobs that end meanwhile too. Default: never.
   */
  budgetBound?: () => boolean;
}

export interface WaitOptions {
  /** Give up after this long with a JobTimeoutError naming the job. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Counters for tests and diagnostics. */
export interface JobWaiterStats {
  /** Poll ticks run. */
  ticks: number;
  /** POST /resource/jobs requests sent (not counting the transport's retries). */
  requests: number;
  /** Most requests sent in one tick. */
  maxRequestsPerTick: number;
  /** Most job ids polled in one tick. */
  maxJobsPerTick: number;
  /** Polls that failed. */
  failedRequests: number;
  /** Ticks put off because requests were waiting for rate budget. */
  deferred: number;
}

/** One tick as it happened: when, how many jobs were polled (and how many of them were due), with how many requests. */
export interface TickRecord {
  at: number;
  jobs: number;
  /** Jobs expected to be done (or due for another look) at this tick; the others rode along in the same requests. */
  due: number;
  requests: number;
  /** Delay the tick's timer was armed with. */
  intervalMs: number;
}

/** Fetches job records by id (at most `batchSize` per call); unknown ids are simply absent. */
export type JobQuery = (jobIds: string[]) => Promise<Job[]>;

interface Waiter {
  resolve(job: Job): void;
  reject(error: unknown): void;
  timer: NodeJS.Timeout;
  detach(): void;
}

interface Entry {
  id: string;
  waiters: Set<Waiter>;
  last: Job | undefined;
  missing: number;
  /** The operation that started the job (a route name), when the client said so. */
  kind: string | undefined;
  /** When the job is next expected to be done (or worth another look). */
  dueAt: number;
  /** How long a due job may wait for others (coalescing). */
  slackMs: number;
  /** Current interval between its polls (backoff while it does not change). */
  intervalMs: number;
  /** Its first poll answer in progress with a progress above 0, and when it came: what its rate is measured from. */
  firstProgress: { at: number; progress: number } | undefined;
}

interface Started {
  kind: string;
  at: number;
}

const MAX_TICK_LOG = 1000;
const TIMER_TOLERANCE_MS = 1;
/** Durations kept per kind of job, and jobs remembered as started but not (yet) awaited. */
const DURATIONS_KEPT = 9;
const STARTED_KEPT = 10_000;

function isPermanent(error: unknown): boolean {
  if (error instanceof ClientClosedError) return true;
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
}

/** How long a completed job ran, on the API's own clock; undefined when the record does not say. */
function ranFor(job: Job): number | undefined {
  if (!job.completedAt) return undefined;
  const ms = Date.parse(job.completedAt) - Date.parse(job.createdAt);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

/**
 * Waits for jobs, polling every job awaited at the same time (by any caller) together: each tick sends
 * POST /resource/jobs in batches of at most 50 ids. Polls scale with time, not with the jobs in flight: a tick runs only
 * when some job is due, at most one per `pollIntervalMs`, and asks for every awaited job at once (the jobs not due yet
 * ride along in the same requests). A job's first poll is timed by the usual duration of its kind (learned from the
 * `completedAt - createdAt` of the jobs of that kind seen completed; the client tells {@link started} which operation
 * started a job), and a job found due may wait a fraction of that duration so that one poll answers several (only as
 * long as another job becomes due within that fraction: a job alone in it is polled when due); a job
 * of a kind not seen yet is polled after `pollIntervalMs`. A job polled and still running is looked at again when the
 * rate its progress rose at says it will be done (no further ahead than that rise was watched), else at growing
 * intervals while it does not change. No timer is left when nothing is awaited.
 */
export class JobWaiter {
  readonly stats: JobWaiterStats = {
    ticks: 0,
    requests: 0,
    maxRequestsPerTick: 0,
    maxJobsPerTick: 0,
    failedRequests: 0,
    deferred: 0,
  };
  /** The latest ticks (bounded). */
  readonly tickLog: TickRecord[] = [];
  private readonly entries = new Map<string, Entry>();
  private readonly startedJobs = new Map<string, Started>();
  private readonly durations = new Map<string, number[]>();
  private readonly options: Required<JobWaiterOptions>;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  private lastTickAt = Number.NEGATIVE_INFINITY;
  private ticking = false;
  private consecutiveErrors = 0;
  private closed = false;
  /** Since when ticks have been put off for the rate budget (see `budgetBound`). */
  private deferredSince: number | undefined;

  constructor(
    private readonly query: JobQuery,
    options: JobWaiterOptions = {},
  ) {
    this.options = {
      pollIntervalMs: 2_000,
      maxPollIntervalMs: 10_000,
      backoffFactor: 1.5,
      batchSize: 50,
      missingPollsLimit: 3,
      defaultTimeoutMs: 30 * 60_000,
      maxConsecutiveErrors: 3,
      coalesceFraction: 0.2,
      budgetBound: () => false,
      ...options,
    };
    this.options.batchSize = Math.min(50, Math.max(1, this.options.batchSize));
    this.options.maxPollIntervalMs = Math.max(this.options.maxPollIntervalMs, this.options.pollIntervalMs);
    this.options.coalesceFraction = Math.min(1, Math.max(0, this.options.coalesceFraction));
  }

  /** Job ids currently awaited. */
  get awaited(): string[] {
    return [...this.entries.keys()];
  }

  /** True while a poll timer is armed or a tick is running. */
  get active(): boolean {
    return this.timer !== null || this.ticking;
  }

  /**
   * Notes that `kind` (e.g. the route that answered with the job) started these jobs now: their first poll is then
   * timed by how long jobs of that kind usually take.
   */
  started(jobIds: readonly string[], kind: string, at: number = Date.now()): void {
    for (const id of jobIds) {
      this.startedJobs.set(id, { kind, at });
      const entry = this.entries.get(id);
      if (entry && entry.kind === undefined) {
        entry.kind = kind;
        this.planFirstPoll(entry, at);
        this.schedule();
      }
    }
    while (this.startedJobs.size > STARTED_KEPT) this.startedJobs.delete(this.startedJobs.keys().next().value!);
  }

  /** How long jobs of this kind usually take (the median of the latest seen), or undefined before one completed. */
  expectedDurationMs(kind: string): number | undefined {
    const seen = this.durations.get(kind);
    if (!seen || seen.length === 0) return undefined;
    const sorted = [...seen].sort((a, b) => a - b);
    return sorted[sorted.length >> 1];
  }

  /**
   * Resolves with the job record once it is completed; rejects with JobFailedError when it fails, JobTimeoutError
   * after `timeoutMs`, JobNotFoundError when the id stays absent from the API's answers.
   */
  wait(jobId: string, options: WaitOptions = {}): Promise<Job> {
    if (this.closed) return Promise.reject(new ClientClosedError("job wait"));
    if (!Uuid.safeParse(jobId).success) {
      return Promise.reject(new CodedError("JOB_ID_INVALID", `Cannot wait for job "${jobId}": job ids are UUIDs`));
    }
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise<Job>((resolve, reject) => {
      let entry = this.entries.get(jobId);
      const isNew = entry === undefined;
      if (!entry) {
        const started = this.startedJobs.get(jobId);
        entry = {
          id: jobId,
          waiters: new Set(),
          last: undefined,
          missing: 0,
          kind: started?.kind,
          dueAt: 0,
          slackMs: 0,
          intervalMs: this.options.pollIntervalMs,
          firstProgress: undefined,
        };
        this.planFirstPoll(entry, started?.at ?? Date.now());
        this.entries.set(jobId, entry);
      }
      const current = entry;
      const timeoutMs = options.timeoutMs ?? this.options.defaultTimeoutMs;
      const onAbort = () => {
        this.removeWaiter(current, waiter);
        reject(options.signal?.reason);
      };
      const waiter: Waiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.removeWaiter(current, waiter);
          reject(new JobTimeoutError(jobId, timeoutMs, current.last));
        }, timeoutMs),
        detach: () => options.signal?.removeEventListener("abort", onAbort),
      };
      options.signal?.addEventListener("abort", onAbort, { once: true });
      current.waiters.add(waiter);
      if (isNew) this.schedule();
    });
  }

  /** The job as the last poll saw it, while it is awaited (for progress reports); undefined before the first poll. */
  lastSeen(jobId: string): Job | undefined {
    return this.entries.get(jobId)?.last;
  }

  /** Waits for every job; rejects with the first failure (the other waits are then abandoned). */
  async waitAll(jobIds: readonly string[], options: WaitOptions = {}): Promise<Job[]> {
    const controller = new AbortController();
    // Every wait listens on this one signal: hundreds of listeners are expected, not a leak.
    setMaxListeners(jobIds.length + 10, controller.signal);
    const forward = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", forward, { once: true });
    try {
      return await Promise.all(
        jobIds.map((id) => this.wait(id, { timeoutMs: options.timeoutMs, signal: controller.signal })),
      );
    } catch (error) {
      controller.abort(error);
      throw error;
    } finally {
      options.signal?.removeEventListener("abort", forward);
    }
  }

  /** Rejects every pending wait and stops polling. */
  close(): void {
    this.closed = true;
    this.clearTimer();
    for (const entry of [...this.entries.values()])
      this.settle(entry, (w) => w.reject(new ClientClosedError("job wait")));
  }

  /** A job's first poll: when its kind's usual duration has passed since it started, else after the minimum interval. */
  private planFirstPoll(entry: Entry, startedAt: number): void {
    const expected = entry.kind === undefined ? undefined : this.expectedDurationMs(entry.kind);
    if (expected === undefined) {
      entry.dueAt = startedAt + this.options.pollIntervalMs;
      entry.slackMs = 0;
    } else {
      entry.dueAt = startedAt + expected;
      entry.slackMs = expected * this.options.coalesceFraction;
    }
  }

  private learn(entry: Entry, job: Job): void {
    if (entry.kind === undefined) return;
    const ms = ranFor(job);
    if (ms === undefined) return;
    const seen = this.durations.get(entry.kind) ?? [];
    seen.push(ms);
    if (seen.length > DURATIONS_KEPT) seen.shift();
    this.durations.set(entry.kind, seen);
  }

  /** Arms the timer for the next tick: the earliest time a due job must be polled, at most one tick per interval. */
  private schedule(): void {
    if (this.closed || this.ticking || this.entries.size === 0) return;
    // The first deadline (a due job's time plus what it may wait for others) bounds the tick; the jobs due by then are
    // the ones it polls as due, and waiting past the last of them gathers no one more: tick when that one is due.
    let deadline = Number.POSITIVE_INFINITY;
    for (const entry of this.entries.values()) deadline = Math.min(deadline, entry.dueAt + entry.slackMs);
    let at = Number.NEGATIVE_INFINITY;
    for (const entry of this.entries.values()) if (entry.dueAt <= deadline) at = Math.max(at, entry.dueAt);
    at = Math.max(at, this.lastTickAt + this.options.pollIntervalMs);
    if (this.timer && this.timerAt === at) return;
    this.clearTimer();
    const delay = Math.max(0, at - Date.now());
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick(delay);
    }, delay);
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private removeWaiter(entry: Entry, waiter: Waiter): void {
    clearTimeout(waiter.timer);
    waiter.detach();
    entry.waiters.delete(waiter);
    if (entry.waiters.size === 0 && this.entries.get(entry.id) === entry) this.entries.delete(entry.id);
    if (this.entries.size === 0) this.clearTimer();
  }

  private settle(entry: Entry, action: (waiter: Waiter) => void): void {
    if (this.entries.get(entry.id) === entry) this.entries.delete(entry.id);
    this.startedJobs.delete(entry.id);
    for (const waiter of [...entry.waiters]) {
      clearTimeout(waiter.timer);
      waiter.detach();
      action(waiter);
    }
    entry.waiters.clear();
    if (this.entries.size === 0) this.clearTimer();
  }

  /**
   * The ids to poll now: every due job, in as few requests as they need, and the jobs not due yet (soonest first)
   * filling those requests up.
   */
  private pick(now: number): { batches: string[][]; due: Set<string> } {
    const all = [...this.entries.values()].sort((a, b) => a.dueAt - b.dueAt);
    // A job without a known duration is due when it is nearer now than the next tick; timers may fire a little early.
    const horizon = (e: Entry) => (e.slackMs > 0 ? TIMER_TOLERANCE_MS : this.options.pollIntervalMs / 2);
    const due = new Set(all.filter((e) => e.dueAt <= now + horizon(e)).map((e) => e.id));
    const size = this.options.batchSize;
    const capacity = Math.max(1, Math.ceil(due.size / size)) * size;
    const ids = all.slice(0, capacity).map((e) => e.id);
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += size) batches.push(ids.slice(i, i + size));
    return { batches, due };
  }

  private async tick(armedMs: number): Promise<void> {
    if (this.closed || this.entries.size === 0) return;
    const now = Date.now();
    if (this.options.budgetBound()) {
      this.deferredSince ??= now;
      if (now - this.deferredSince < this.options.maxPollIntervalMs) {
        this.stats.deferred++;
        this.clearTimer();
        const delay = this.options.pollIntervalMs;
        this.timerAt = now + delay;
        this.timer = setTimeout(() => {
          this.timer = null;
          void this.tick(armedMs + delay);
        }, delay);
        return;
      }
    }
    this.deferredSince = undefined;
    this.ticking = true;
    const { batches, due } = this.pick(now);
    const polled = batches.reduce((sum, b) => sum + b.length, 0);
    this.stats.ticks++;
    this.stats.requests += batches.length;
    this.stats.maxRequestsPerTick = Math.max(this.stats.maxRequestsPerTick, batches.length);
    this.stats.maxJobsPerTick = Math.max(this.stats.maxJobsPerTick, polled);
    this.tickLog.push({ at: now, jobs: polled, due: due.size, requests: batches.length, intervalMs: armedMs });
    if (this.tickLog.length > MAX_TICK_LOG) this.tickLog.shift();

    const results = await Promise.allSettled(batches.map((batch) => this.query(batch)));
    this.ticking = false;
    this.lastTickAt = Date.now();
    if (this.closed) return;
    // When the API read the jobs' progress, about: halfway through the requests.
    const sampledAt = (now + this.lastTickAt) / 2;

    let failed = false;
    results.forEach((result, i) => {
      if (result.status === "rejected") {
        this.stats.failedRequests++;
        const permanent = isPermanent(result.reason);
        if (!permanent) failed = true;
        if (permanent || this.consecutiveErrors + 1 >= this.options.maxConsecutiveErrors) {
          for (const id of batches[i]) {
            const entry = this.entries.get(id);
            if (entry) this.settle(entry, (w) => w.reject(result.reason));
          }
        } else {
          for (const id of batches[i]) this.backOff(this.entries.get(id), false);
        }
        return;
      }
      const seen = new Map(result.value.map((job) => [job.id, job]));
      for (const id of batches[i]) {
        const entry = this.entries.get(id);
        if (!entry) continue;
        const job = seen.get(id);
        if (!job) {
          entry.missing++;
          if (entry.missing >= this.options.missingPollsLimit) {
            this.settle(entry, (w) => w.reject(new JobNotFoundError(id, entry.missing)));
          } else {
            this.backOff(entry, false);
          }
          continue;
        }
        entry.missing = 0;
        const changed = !entry.last || entry.last.status !== job.status || entry.last.progress !== job.progress;
        entry.last = job;
        if (job.status === "in_progress" && job.progress > 0)
          entry.firstProgress ??= { at: sampledAt, progress: job.progress };
        if (job.status === "completed") {
          this.learn(entry, job);
          this.settle(entry, (w) => w.resolve(job));
        } else if (job.status === "failed") {
          this.settle(entry, (w) => w.reject(new JobFailedError(job)));
        } else if (due.has(id)) {
          this.backOff(entry, changed, this.remainingByProgress(entry, job, sampledAt));
        } else if (changed) {
          entry.intervalMs = this.options.pollIntervalMs;
        }
      }
    });
    // A streak of transient failures only matters while jobs are awaited.
    this.consecutiveErrors = failed && this.entries.size > 0 ? this.consecutiveErrors + 1 : 0;
    this.schedule();
  }

  /**
   * A job polled and still running: look again when its progress says it will be done (`remainingMs`, within the
   * poll intervals), else after its interval, back to the minimum when it changed.
   */
  private backOff(entry: Entry | undefined, changed: boolean, remainingMs?: number): void {
    if (!entry) return;
    entry.intervalMs = changed
      ? this.options.pollIntervalMs
      : Math.min(entry.intervalMs * this.options.backoffFactor, this.options.maxPollIntervalMs);
    const wait =
      remainingMs === undefined
        ? entry.intervalMs
        : Math.min(Math.max(remainingMs, this.options.pollIntervalMs), this.options.maxPollIntervalMs);
    entry.dueAt = Date.now() + wait;
    entry.slackMs = 0;
  }

  /**
   * How long a running job has left, from the rate its progress rose at since its first answer with progress above
   * 0 (not from its start: a job may wait in the queue first); undefined while it has not risen since. Progress comes
   * in whole percents: the rate is taken half a percent higher, so the estimate leans early (a poll a little early
   * only measures the rate over a longer time). It looks no further ahead than the rise was watched: a job whose
   * progress speeds up later is still seen done soon after.
   */
  private remainingByProgress(entry: Entry, job: Job, at: number): number | undefined {
    const first = entry.firstProgress;
    if (first === undefined || job.progress <= first.progress || at <= first.at) return undefined;
    const watchedMs = at - first.at;
    const percentPerMs = (job.progress - first.progress + 0.5) / watchedMs;
    return Math.min((100 - job.progress) / percentPerMs, watchedMs);
  }
}
