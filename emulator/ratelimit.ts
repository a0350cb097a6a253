import type { FastifyReply, FastifyRequest } from "fastify";
import type { EmulatorContext } from "./context";
import { ApiProblem } from "./errors";

/** A limit: at most `limit` requests per fixed window of `windowMs`. */
export interface LimitRule {
  limit: number;
  windowMs: number;
}

const minutes = (n: number) => n * 60_000;

/** The spec's stricter per-IP limits, by contract route name. */
export const strictRouteLimits: Readonly<Record<string, LimitRule>> = {
  signIn: { limit: 15, windowMs: minutes(15) },
  forgetPassword: { limit: 9, windowMs: minutes(60) },
  resetPassword: { limit: 15, windowMs: minutes(15) },
  verifyTotp: { limit: 15, windowMs: minutes(15) },
  verifyOtp: { limit: 15, windowMs: minutes(15) },
  sendOtp: { limit: 9, windowMs: minutes(60) },
  usersForgotPassword: { limit: 5, windowMs: minutes(15) },
};

interface Bucket {
  windowStart: number;
  windowMs: number;
  count: number;
}

/** Which pool a request draws from, and under which rule; null when no limit applies. */
export interface Pool {
  key: string;
  rule: LimitRule;
}

/**
 * Fixed-window rate limiting on the emulator's clock. A request draws from one pool: the stricter per-IP pool of
 * its route (sign-in and the other sensitive routes), else its API key's own pool when the key has an override,
 * else its user's pool (every key and session of a user share it), else its IP's pool when unauthenticated.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly ctx: EmulatorContext) {}

  /** The pool a request falls under. */
  poolFor(req: FastifyRequest): Pool | null {
    const routeName = req.routeOptions.config?.routeName;
    const strict = routeName !== undefined ? strictRouteLimits[routeName] : undefined;
    if (strict && this.ctx.options.strictLimits) return { key: `strict:${routeName}:${req.ip}`, rule: strict };
    const override = req.caller?.apiKey?.rateLimit;
    if (req.caller?.apiKey && override) {
      return {
        key: `apiKey:${req.caller.apiKey.id}`,
        rule: { limit: override.requestsPerWindow, windowMs: override.windowSeconds * 1000 },
      };
    }
    const limit = this.ctx.options.rateLimit;
    if (limit <= 0) return null;
    const rule = { limit, windowMs: this.ctx.options.rateLimitWindowMs };
    return req.caller ? { key: `user:${req.caller.user.id}`, rule } : { key: `ip:${req.ip}`, rule };
  }

  /** Counts the request against its pool and sets the X-RateLimit-* headers; throws 429 (not counted) when spent. */
  check(req: FastifyRequest, reply: FastifyReply): void {
    const pool = this.poolFor(req);
    if (!pool) return;
    const now = this.ctx.now();
    let bucket = this.buckets.get(pool.key);
    if (!bucket || now >= bucket.windowStart + pool.rule.windowMs) {
      if (this.buckets.size > 10_000) this.prune(now);
      bucket = { windowStart: now, windowMs: pool.rule.windowMs, count: 0 };
      this.buckets.set(pool.key, bucket);
    }
    const resetAt = bucket.windowStart + pool.rule.windowMs;
    const headers = {
      "X-RateLimit-Limit": String(pool.rule.limit),
      "X-RateLimit-Remaining": String(Math.max(0, pool.rule.limit - bucket.count - 1)),
      "X-RateLimit-Reset": String(Math.ceil(resetAt / 1000)),
    };
    if (bucket.count >= pool.rule.limit) {
      const retryAfter = Math.max(1, Math.ceil((resetAt - now) / 1000));
      throw new ApiProblem(
        "RATE_LIMIT_EXCEEDED",
        `Too many requests: the limit is ${pool.rule.limit} per ${pool.rule.windowMs / 1000} s; retry in ${retryAfter} s`,
        { retryAfter },
        429,
        { ...headers, "X-RateLimit-Remaining": "0", "Retry-After": String(retryAfter) },
      );
    }
    bucket.count++;
    reply.headers(headers);
  }

  /** Forgets every pool (used by the admin reset). */
  reset(): void {
    this.buckets.clear();
  }

  private prune(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (now >= bucket.windowStart + bucket.windowMs) this.buckets.delete(key);
    }
  }
}
