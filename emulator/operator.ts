import type { FastifyInstance, FastifyRequest } from "fastify";
import { registerAdminRoutes } from "./admin";
import type { EmulatorContext } from "./context";
import { FaultInjector, parseFaultSpec } from "./faults";
import { API_PREFIX, iso } from "./http";
import { RateLimiter } from "./ratelimit";

/** One /v1 request as the admin API shows it. Headers and bodies are never kept. */
export interface RequestLogEntry {
  seq: number;
  /** Emulator clock (epoch ms) when the request arrived. */
  at: number;
  method: string;
  /** Path without the query string. */
  path: string;
  /** The raw query string (without `?`), empty when none. */
  query: string;
  /** Contract route name, null for paths no route serves. */
  route: string | null;
  /** The status answered; 0 when a fault closed the connection without an answer. */
  status: number;
  durationMs: number;
  caller: { userId: string; apiKeyId: string | null; kind: "session" | "apiKey" } | null;
  ip: string;
}

/** A bounded in-memory ring of the latest requests. */
export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;

  constructor(readonly capacity = 10_000) {}

  /** Numbers a request as it arrives (entries are recorded when it has been answered, so perhaps later). */
  arrived(): number {
    return ++this.seq;
  }

  /** The number of the latest request to arrive: a mark that no request answered later can fall before. */
  get mark(): number {
    return this.seq;
  }

  /** Appends an entry, dropping the oldest beyond the capacity. */
  record(entry: RequestLogEntry): RequestLogEntry {
    this.entries.push(entry);
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
    return entry;
  }

  /** The entries, oldest first. */
  list(): readonly RequestLogEntry[] {
    return this.entries;
  }

  /** Forgets every entry; returns how many there were. */
  clear(): number {
    const n = this.entries.length;
    this.entries = [];
    return n;
  }
}

const arrival = new WeakMap<FastifyRequest, { seq: number; at: number; started: number }>();
const isApiRequest = (req: FastifyRequest) => req.url === API_PREFIX || req.url.startsWith(API_PREFIX + "/");

/**
 * Operator features: rate limits, fault injection, the request log and the admin API (`/__admin`, `/__health`).
 * Installed right after the hook that identifies the caller, so `req.caller` is known here.
 */
export function installOperator(app: FastifyInstance, ctx: EmulatorContext): { close(): Promise<void> } {
  const limiter = new RateLimiter(ctx);
  const faults = new FaultInjector(ctx);
  const log = new RequestLog();
  if (ctx.options.faults) faults.add(parseFaultSpec(ctx.options.faults));
  ctx.jobFault = (operation) => faults.jobFault(operation);
  ctx.requestMark = () => log.mark;

  app.addHook("onRequest", async (req, reply) => {
    if (!isApiRequest(req)) return;
    arrival.set(req, { seq: log.arrived(), at: ctx.now(), started: performance.now() });
    limiter.check(req, reply);
    await faults.onRequest(req, reply);
  });
  app.addHook("onSend", async (req, reply, payload) => faults.onSend(req, reply, payload));

  /** Logs a request once: when answered, or with status 0 when a fault closed its connection without an answer. */
  const record = (req: FastifyRequest, status: number) => {
    const seen = arrival.get(req);
    if (!seen) return;
    arrival.delete(req);
    const [path, ...rest] = req.url.split("?");
    const caller = req.caller;
    const entry = log.record({
      seq: seen.seq,
      at: seen.at,
      method: req.method,
      path,
      query: rest.join("?"),
      route: req.routeOptions.config?.routeName ?? null,
      status,
      durationMs: Math.round(performance.now() - seen.started),
      caller: caller ? { userId: caller.user.id, apiKeyId: caller.apiKey?.id ?? null, kind: caller.kind } : null,
      ip: req.ip,
    });
    if (ctx.options.logRequests) {
      const who = entry.caller ? ` ${entry.caller.kind}:${entry.caller.userId}` : "";
      console.error(
        `${iso(entry.at)} ${entry.method} ${entry.path} ${entry.status} ${entry.durationMs}ms ${entry.route ?? "-"}${who}`,
      );
    }
  };
  app.addHook("onResponse", async (req, reply) => record(req, reply.statusCode));
  faults.onDrop = (req) => record(req, 0);

  registerAdminRoutes(app, ctx, { limiter, faults, log });
  return { close: async () => {} };
}
