import { setMaxListeners } from "node:events";
import { Uuid, type Job } from "../api";
import { ApiError, ClientClosedError, JobFailedError, JobNotFoundError, JobTimeoutError } from "./errors";

export interface JobWaiterOptions {
  /** Shortest interval between polls, used at first and whenever something changes. Default 2 000 ms. */
  pollIntervalMs?: number;
  /** Longest interval, reached while nothing changes. Default 10 000 ms. */
  maxPollIntervalMs?: number;
  /** Growth of the interval per tick without change. Default 1.5. */
  backoffFactor?: number;
  /** Job ids per POST /resource/jobs (the API allows at most 50). Default 50. */
  batchSize?: number;
  /** A job absent from this many consecutive polls is reported as not found. Default 3. */
  missingPollsLimit?: number;
  /** Timeout of a wait that gives none. Default 30 minutes. */
  defaultTimeoutMs?: number;
  /** Consecutive failed polls (after the transport's own retries) before the waits of that batch fail. Default 3. */
  maxConsecutiveErrors?: number;
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
}

/** One tick as it happened: when, how many jobs were polled and with how many requests. */
export interface TickRecord {
  at: number;
  jobs: number;
  requests: number;
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
}

const MAX_TICK_LOG = 1000;

function isPermanent(error: unknown): boolean {
  if (error instanceof ClientClosedError) return true;
  return error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
}

/**
 * Waits for jobs, polling every job awaited at the same time (by any caller) together: each tick sends
 * POST /resource/jobs in batches of at most 50 ids. The interval starts at `pollIntervalMs`, grows to
 * `maxPollIntervalMs` while nothing changes, and drops back when something changes or a job is added. No timer is
 * left when nothing is awaited.
 */
export class JobWaiter {
  readonly stats: JobWaiterStats = {
    ticks: 0,
    requests: 0,
    maxRequestsPerTick: 0,
    maxJobsPerTick: 0,
    failedRequests: 0,
  };
  /** The latest ticks (bounded). */
  readonly tickLog: TickRecord[] = [];
  private readonly entries = new Map<string, Entry>();
  private readonly options: Required<JobWaiterOptions>;
  private interval: number;
  private timer: NodeJS.Timeout | null = null;
  private dueAt = 0;
  private ticking = false;
  private addedSinceTick = false;
  private consecutiveErrors = 0;
  private closed = false;

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
      ...options,
    };
    this.options.batchSize = Math.min(50, Math.max(1, this.options.batchSize));
    this.options.maxPollIntervalMs = Math.max(this.options.maxPollIntervalMs, this.options.pollIntervalMs);
    this.interval = this.options.pollIntervalMs;
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
   * Resolves with the job record once it is completed; rejects with JobFailedError when it fails, JobTimeoutError
   * after `timeoutMs`, JobNotFoundError when the id stays absent from the API's answers.
   */
  wait(jobId: string, options: WaitOptions = {}): Promise<Job> {
    if (this.closed) return Promise.reject(new ClientClosedError("job wait"));
    if (!Uuid.safeParse(jobId).success) {
      return Promise.reject(new Error(`Cannot wait for job "${jobId}": job ids are UUIDs`));
    }
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    return new Promise<Job>((resolve, reject) => {
      let entry = this.entries.get(jobId);
      const isNew = entry === undefined;
      if (!entry) {
        entry = { id: jobId, waiters: new Set(), last: undefined, missing: 0 };
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
      if (isNew) {
        this.addedSinceTick = true;
        this.interval = this.options.pollIntervalMs;
        this.schedule(this.interval);
      }
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

  private schedule(delayMs: number): void {
    if (this.closed || this.ticking || this.entries.size === 0) return;
    const due = Date.now() + delayMs;
    if (this.timer && this.dueAt <= due) return;
    this.clearTimer();
    this.dueAt = due;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, delayMs);
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
    for (const waiter of [...entry.waiters]) {
      clearTimeout(waiter.timer);
      waiter.detach();
      action(waiter);
    }
    entry.waiters.clear();
    if (this.entries.size === 0) this.clearTimer();
  }

  private async tick(): Promise<void> {
    if (this.closed || this.entries.size === 0) return;
    this.ticking = true;
    const ids = [...this.entries.keys()];
    const batches: string[][] = [];
    for (let i = 0; i < ids.length; i += this.options.batchSize) batches.push(ids.slice(i, i + this.options.batchSize));
    this.stats.ticks++;
    this.stats.requests += batches.length;
    this.stats.maxRequestsPerTick = Math.max(this.stats.maxRequestsPerTick, batches.length);
    this.stats.maxJobsPerTick = Math.max(this.stats.maxJobsPerTick, ids.length);
    this.tickLog.push({ at: Date.now(), jobs: ids.length, requests: batches.length, intervalMs: this.interval });
    if (this.tickLog.length > MAX_TICK_LOG) this.tickLog.shift();
    this.addedSinceTick = false;

    const results = await Promise.allSettled(batches.map((batch) => this.query(batch)));
    this.ticking = false;
    if (this.closed) return;

    let changed = false;
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
          }
          continue;
        }
        entry.missing = 0;
        if (!entry.last || entry.last.status !== job.status || entry.last.progress !== job.progress) changed = true;
        entry.last = job;
        if (job.status === "completed") this.settle(entry, (w) => w.resolve(job));
        else if (job.status === "failed") this.settle(entry, (w) => w.reject(new JobFailedError(job)));
      }
    });
    // A streak of transient failures only matters while jobs are awaited.
    this.consecutiveErrors = failed && this.entries.size > 0 ? this.consecutiveErrors + 1 : 0;
    this.interval =
      changed || this.addedSinceTick
        ? this.options.pollIntervalMs
        : Math.min(this.interval * this.options.backoffFactor, this.options.maxPollIntervalMs);
    this.schedule(this.interval);
  }
}
