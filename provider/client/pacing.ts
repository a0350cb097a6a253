import type { IncomingHttpHeaders } from "node:http";
import { ClientClosedError } from "./errors";

export interface PacingOptions {
  /** Requests allowed in flight before the first rate-limit headers are seen (and after each window ends). Default 4. */
  initialConcurrency?: number;
  /** Upper bound of the random delay added after a reset time or a 429 pause, so waiters do not stampede. Default 250. */
  jitterMs?: number;
  /** Never wait longer than this for one reset or pause (a guard against bogus headers). Default 1 hour. */
  maxWaitMs?: number;
  /** Set false to turn pacing off entirely. Default true. */
  enabled?: boolean;
  /**
   * Other processes may spend the same budget (one key in many CI jobs). In each window let no more requests be in
   * flight than were answered so far in it (doubling each round trip), and, once others show in the figures, no more
   * than half of this process's share, so that their requests show in the figures before this process commits much
   * of the window. Set false to send at once whatever the figures allow. Default true.
   */
  slowStart?: boolean;
  /** Clock (epoch ms); tests may replace it. */
  now?: () => number;
  /** Random source in [0, 1) for jitter. */
  random?: () => number;
}

/** Routes with the spec's stricter per-IP limits: each has its own budget, apart from the general one. */
export const strictlyLimitedRoutes: ReadonlySet<string> = new Set([
  "signIn",
  "forgetPassword",
  "resetPassword",
  "verifyTotp",
  "verifyOtp",
  "sendOtp",
  "usersForgotPassword",
]);

/** What a budget knows: nothing yet, the server's figures, or that the server sends none (no pacing). */
type BudgetState = "unknown" | "known" | "unlimited";

/** A permission to send one request; `done` hands back what the response said about the budget. */
export interface Permit {
  /** Call once the response (or the failure) is in; pass the response's headers and status when there was one. */
  done(headers?: IncomingHttpHeaders, status?: number): void;
}

interface Waiter {
  grant: () => void;
  fail: (reason: unknown) => void;
}

export interface BudgetSnapshot {
  state: BudgetState;
  limit: number | null;
  remaining: number;
  resetAt: number;
  inFlight: number;
  queued: number;
  pausedUntil: number;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Reads `X-RateLimit-Reset` as epoch milliseconds. The spec says Unix seconds; small values are taken as seconds
 * from now, which some servers send instead.
 */
export function resetHeaderMs(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) return undefined;
  return n < 1e9 ? now + n * 1000 : n * 1000;
}

/**
 * One rate-limit budget, fed by the `X-RateLimit-*` headers of every response. Requests wait for budget instead of
 * firing: requests in flight count against `remaining`; when nothing is left they wait until the reset time plus
 * jitter; a 429 pauses the whole queue. Before any figures are known (and after each window ends) only a few
 * requests are let through, to learn the new figures. A server that sends no headers is not paced at all.
 */
export class RateBudget {
  private state: BudgetState = "unknown";
  private limit: number | null = null;
  private remaining = 0;
  private resetAt = 0;
  private inFlight = 0;
  /** Responses of the current window that carried its figures: our own share of what the server counted. */
  private answered = 0;
  /**
   * What the server had counted in the current window before our first answer in it, not ours: others' requests from
   * before this process joined the window (a CI job starting while others deploy).
   */
  private before = 0;
  private readonly slowStart: boolean;
  private pausedUntil = 0;
  private readonly queue: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  private timerAt = 0;
  private closed = false;
  private readonly initialConcurrency: number;
  private readonly jitterMs: number;
  private readonly maxWaitMs: number;
  private readonly now: () => number;
  private readonly random: () => number;

  constructor(options: PacingOptions = {}) {
    this.initialConcurrency = Math.max(1, options.initialConcurrency ?? 4);
    this.jitterMs = Math.max(0, options.jitterMs ?? 250);
    this.maxWaitMs = options.maxWaitMs ?? 3600_000;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.slowStart = options.slowStart ?? true;
    if (options.enabled === false) this.state = "unlimited";
  }

  /** Waits for room in the budget. Rejects if the signal aborts or the budget is closed. */
  acquire(signal?: AbortSignal): Promise<Permit> {
    if (this.closed) return Promise.reject(new ClientClosedError("request"));
    signal?.throwIfAborted();
    return new Promise<Permit>((resolve, reject) => {
      const onAbort = () => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        reject(signal?.reason);
        this.pump();
      };
      const waiter: Waiter = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          this.inFlight++;
          let released = false;
          resolve({
            done: (headers, status) => {
              if (released) return;
              released = true;
              this.inFlight--;
              if (headers) this.observe(headers, status ?? 200);
              this.pump();
            },
          });
        },
        fail: (reason) => {
          signal?.removeEventListener("abort", onAbort);
          reject(reason);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.queue.push(waiter);
      this.pump();
    });
  }

  /** Stops everyone waiting: any 429 means the server refused before processing, so the queue holds back. */
  pause(ms: number): void {
    const until = this.now() + Math.min(Math.max(0, ms), this.maxWaitMs) + this.jitter();
    this.pausedUntil = Math.max(this.pausedUntil, until);
    if (this.state === "known") {
      // Nothing is left until the pause ends; then the figures are stale and a probe learns the new ones.
      this.remaining = 0;
      this.resetAt = Math.min(this.resetAt, this.pausedUntil);
    }
    this.pump();
  }

  snapshot(): BudgetSnapshot {
    return {
      state: this.state,
      limit: this.limit,
      remaining: this.remaining,
      resetAt: this.resetAt,
      inFlight: this.inFlight,
      queued: this.queue.length,
      pausedUntil: this.pausedUntil,
    };
  }

  close(): void {
    this.closed = true;
    this.clearTimer();
    for (const waiter of this.queue.splice(0)) waiter.fail(new ClientClosedError("request"));
  }

  private jitter(): number {
    return Math.round(this.random() * this.jitterMs);
  }

  private observe(headers: IncomingHttpHeaders, status: number): void {
    const now = this.now();
    const limit = Number(header(headers, "x-ratelimit-limit"));
    const remaining = Number(header(headers, "x-ratelimit-remaining"));
    const resetAt = resetHeaderMs(header(headers, "x-ratelimit-reset"), now);
    const complete = header(headers, "x-ratelimit-limit") !== undefined && Number.isFinite(limit);
    if (!complete || !Number.isFinite(remaining) || resetAt === undefined) {
      // No figures on a success: the limit is off. Errors may come from before the limiter and prove nothing; and
      // once figures are known, a response without them does not undo them.
      if (this.state === "unknown" && status < 400) this.state = "unlimited";
      return;
    }
    if (this.state !== "known" || resetAt > this.resetAt) {
      this.state = "known";
      this.limit = limit;
      this.remaining = remaining;
      this.resetAt = Math.min(resetAt, now + this.maxWaitMs);
      this.answered = 1;
      // Counted before it: the answered request, and ours still in flight (perhaps counted already: the least `before`).
      this.before = Math.max(0, limit - remaining - 1 - this.inFlight);
    } else if (resetAt === this.resetAt) {
      // Responses of one window arrive out of order: the lowest remaining is the most recent.
      this.remaining = Math.min(this.remaining, remaining);
      this.answered++;
    }
    // Older windows' figures are stale and ignored.
  }

  /** Grants as many waiters as the budget allows, or arms one timer for when it will allow more. */
  private pump(): void {
    if (this.closed) return;
    while (this.queue.length > 0) {
      const now = this.now();
      if (this.pausedUntil > now) return this.armTimer(this.pausedUntil);
      if (this.state === "unlimited") {
        this.queue.shift()!.grant();
        continue;
      }
      let room: number;
      if (this.state === "known" && now < this.resetAt) {
        room = this.room();
        if (room <= 0) return this.armTimer(this.resetAt + this.jitter());
      } else {
        // Figures unknown, or the window they describe has ended: probe with a few until new figures arrive.
        room = this.initialConcurrency - this.inFlight;
        if (room <= 0) return this.clearTimer();
      }
      this.queue.shift()!.grant();
    }
    this.clearTimer();
  }

  /**
   * What this process may still send in the current window. The headers are the shared truth: when the server
   * counted more requests than ours (answered or in flight), other processes spend the same budget (one key in many
   * CI jobs, or keys of one user, which share a pool), and we take only our share of what remains, the share we
   * have been taking so far. Alone, that share is all of it.
   */
  private room(): number {
    const share = this.share(this.answered + this.inFlight);
    // The figures are older than what is in flight: ours, and the others' too (as many as ours, for their share),
    // will be counted against the remaining budget.
    const room = Math.floor(this.remaining * share) - Math.ceil(this.inFlight / share);
    if (!this.slowStart) return room;
    const ramp = Math.max(this.initialConcurrency, this.answered) - this.inFlight;
    // Shared (others spend now, or spent before we joined): at most half of our part in flight, the other half waits
    // for fresher figures.
    const half = share < 1 || this.before > 0 ? Math.floor((this.remaining * share) / 2) - this.inFlight : room;
    return Math.min(room, ramp, half);
  }

  /**
   * Our part of what the server counted in this window since we joined it, given `ours` requests of ours (1 when
   * nobody else spent meanwhile). What others spent before we joined is left out: it says how much is left, not how
   * fast they spend now. Counted from the window's start instead, a process starting late in a busy window would get
   * a part near 0 and wait for the next window before its second request, whatever was left.
   */
  private share(ours: number): number {
    const used = (this.limit ?? 0) - this.remaining - this.before;
    return used <= ours ? 1 : ours / used;
  }

  private armTimer(at: number): void {
    if (this.timer && this.timerAt <= at) return;
    this.clearTimer();
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.pump();
      },
      Math.max(0, at - this.now()),
    );
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

/**
 * The budgets of one credential: the general one, and one per route with a stricter limit. Share one Pacer between
 * clients that use the same credential against the same server.
 */
export class Pacer {
  private readonly general: RateBudget;
  private readonly strict = new Map<string, RateBudget>();

  constructor(private readonly options: PacingOptions = {}) {
    this.general = new RateBudget(options);
  }

  budgetFor(route: string): RateBudget {
    if (!strictlyLimitedRoutes.has(route)) return this.general;
    let budget = this.strict.get(route);
    if (!budget) {
      budget = new RateBudget(this.options);
      this.strict.set(route, budget);
    }
    return budget;
  }

  close(): void {
    this.general.close();
    for (const budget of this.strict.values()) budget.close();
  }
}
