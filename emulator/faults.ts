import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { type ErrorCode, ErrorCodeSchema, errorStatus, routes } from "../provider/api";
import type { EmulatorContext } from "./context";
import { ApiProblem } from "./errors";
import { API_PREFIX } from "./http";
import type { JobRec } from "./state";

/*
 * Fault rules. The `--faults SPEC` syntax (also accepted by the admin API as `{"spec": "..."}`):
 *
 *   SPEC   := RULE (';' RULE)*                       rules are tried in order
 *   RULE   := [TARGET ','] FIELD (',' FIELD)*
 *   TARGET := routeName | '/path/pattern' | 'METHOD /path/pattern'     shorthand for route= / path= / method= + path=
 *   FIELD  := route=NAME | method=GET|POST|PUT|PATCH|DELETE | path=PATTERN
 *           | status=CODE | error=ERROR_CODE | message=TEXT | latency=MS (250, 250ms, 2s)
 *           | after | drop
 *           | job=OPERATION | fail[=MESSAGE] | stall
 *           | p=PROBABILITY (0..1, default 1) | count=N (fire N times, then stop)
 *
 * Path patterns are relative to /v1: `*` and `:name` match one segment, `**` any number of segments.
 * Operations are job operations such as `volume.create`; `*` matches anything (`vm.*`).
 * A request rule answers before the handler runs (nothing happens on the server), unless it says `after`: the handler
 * runs (the request takes effect) and its answer is then replaced by the rule's 5xx error, or lost with `drop` (the
 * connection is closed without an answer). `drop` without `after` closes the connection before the handler runs.
 * Examples:
 *   createVolume,status=503,count=2
 *   GET /resource/virtual-machines/*,latency=300ms,p=0.2
 *   queryJobs,status=429;job=volume.create,fail=Provider quota exceeded;job=vm.*,stall,p=0.1
 *   createVm,status=503,after,count=1;method=DELETE,drop,after,p=0.3
 * Messages given in a spec string cannot contain ',' or ';' (use the admin API's JSON form for those).
 */

const Method = z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const firing = {
  /** Chance that a matching request or job is hit, drawn from the seeded random source. */
  probability: z.number().min(0).max(1).default(1),
  /** How many more times the rule may fire; null = unlimited. */
  count: z.number().int().min(1).nullable().default(null),
};

/**
 * A rule hitting requests: answer with an error or close the connection (before the handler runs, or after it with
 * `after`: the request took effect, its answer is lost) and/or add latency.
 */
export const RequestFaultInput = z
  .strictObject({
    kind: z.literal("request"),
    route: z.string().min(1).optional(),
    method: Method.optional(),
    path: z.string().startsWith("/").optional(),
    status: z.number().int().min(400).max(599).optional(),
    error: ErrorCodeSchema.optional(),
    message: z.string().min(1).max(500).optional(),
    latencyMs: z.number().int().min(0).max(120_000).optional(),
    /** The handler runs first (the request takes effect); then its answer is replaced by the error, or dropped. */
    after: z.boolean().optional(),
    /** The connection is closed without an answer (after the handler with `after`, else before it). */
    drop: z.boolean().optional(),
    ...firing,
  })
  .refine((r) => r.route !== undefined || r.method !== undefined || r.path !== undefined, {
    message: "a request rule needs route, method or path",
  })
  .refine((r) => r.route === undefined || Object.hasOwn(routes, r.route), {
    message: "route must be the name of a contract route (provider/api/routes.ts), e.g. createVolume",
    path: ["route"],
  })
  .refine((r) => r.status !== undefined || r.error !== undefined || r.latencyMs !== undefined || r.drop === true, {
    message: "a request rule needs status, error, latency or drop",
  })
  .refine((r) => !(r.drop === true && (r.status !== undefined || r.error !== undefined)), {
    message: "drop sends no answer: leave out status and error",
    path: ["drop"],
  })
  .refine(
    (r) => r.after !== true || r.drop === true || (r.status ?? errorStatus[r.error ?? "INVALID_REQUEST"]) >= 500,
    {
      message:
        "after replaces the answer of a request that took effect: it needs a 5xx status (or error) or drop, since a " +
        "4xx says the request was not carried out",
      path: ["after"],
    },
  );

/** A rule hitting jobs of an operation: they fail with a message when due, or stall until the stall timeout. */
export const JobFaultInput = z.strictObject({
  kind: z.literal("job"),
  operation: z.string().min(1),
  outcome: z.enum(["fail", "stall"]),
  message: z.string().min(1).max(500).optional(),
  ...firing,
});

export const FaultRuleInput = z.discriminatedUnion("kind", [RequestFaultInput, JobFaultInput]);
export type FaultRuleInput = z.input<typeof FaultRuleInput>;
type ParsedRule = z.output<typeof FaultRuleInput>;

/** A rule as stored and listed by the admin API. */
export type FaultRule = ParsedRule & { id: number; fired: number };

/** A `--faults` string that does not parse; the message names the rule and the problem. */
export class FaultSpecError extends Error {}

function parseLatency(value: string, rule: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s)?$/.exec(value.trim());
  if (!m) throw new FaultSpecError(`fault rule "${rule}": latency must be like 250, 250ms or 2s, got "${value}"`);
  return Math.round(Number(m[1]) * (m[2] === "s" ? 1000 : 1));
}

function parseNumber(value: string, key: string, rule: string): number {
  if (!/^\d+(\.\d+)?$/.test(value.trim())) {
    throw new FaultSpecError(`fault rule "${rule}": ${key} must be a number, got "${value}"`);
  }
  return Number(value);
}

function parseRule(text: string): FaultRuleInput {
  const fields = text.split(",").map((f) => f.trim());
  const out: Record<string, unknown> = {};
  let job = false;
  fields.forEach((field, index) => {
    if (field.length === 0) throw new FaultSpecError(`fault rule "${text}": empty field`);
    const eq = field.indexOf("=");
    const key = eq < 0 ? field : field.slice(0, eq).trim();
    const value = eq < 0 ? undefined : field.slice(eq + 1).trim();
    const need = () => {
      if (value === undefined || value.length === 0) {
        throw new FaultSpecError(`fault rule "${text}": ${key} needs a value (${key}=...)`);
      }
      return value;
    };
    if (eq < 0 && index === 0 && key !== "stall" && key !== "fail") {
      const target = /^([A-Za-z]+)\s+(\/\S*)$/.exec(field);
      if (target) {
        out.method = target[1].toUpperCase();
        out.path = target[2];
      } else if (field.startsWith("/")) {
        out.path = field;
      } else {
        out.route = field;
      }
      return;
    }
    switch (key) {
      case "route":
        out.route = need();
        break;
      case "method":
        out.method = need().toUpperCase();
        break;
      case "path":
        out.path = need();
        break;
      case "status":
        out.status = parseNumber(need(), key, text);
        break;
      case "error":
        out.error = need().toUpperCase();
        break;
      case "message":
      case "msg":
        out.message = need();
        break;
      case "latency":
        out.latencyMs = parseLatency(need(), text);
        break;
      case "p":
      case "probability":
        out.probability = parseNumber(need(), key, text);
        break;
      case "count":
        out.count = parseNumber(need(), key, text);
        break;
      case "job":
        job = true;
        out.operation = need();
        break;
      case "fail":
        out.outcome = "fail";
        if (value) out.message = value;
        break;
      case "stall":
        if (value !== undefined) throw new FaultSpecError(`fault rule "${text}": stall takes no value`);
        out.outcome = "stall";
        break;
      case "after":
      case "drop":
        if (value !== undefined) throw new FaultSpecError(`fault rule "${text}": ${key} takes no value`);
        out[key] = true;
        break;
      default:
        throw new FaultSpecError(
          `fault rule "${text}": unknown field "${key}" (known: route, method, path, status, error, message, ` +
            `latency, after, drop, job, fail, stall, p, count)`,
        );
    }
  });
  const candidate = { kind: job ? "job" : "request", ...out };
  const parsed = FaultRuleInput.safeParse(candidate);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => (i.path.length ? `${i.path.join(".")}: ${i.message}` : i.message));
    throw new FaultSpecError(`fault rule "${text}": ${problems.join("; ")}`);
  }
  return candidate as FaultRuleInput;
}

/** Parses a `--faults` string into rule inputs (see the syntax at the top of this file). */
export function parseFaultSpec(spec: string): FaultRuleInput[] {
  return spec
    .split(/[;\n]/)
    .map((r) => r.trim())
    .filter((r) => r.length > 0)
    .map(parseRule);
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Compiles a path pattern relative to /v1 (`*`, `:name` = one segment, `**` = any number of segments). */
export function compilePathPattern(pattern: string): RegExp {
  const relative = pattern.startsWith(API_PREFIX + "/") || pattern === API_PREFIX ? pattern.slice(3) : pattern;
  let source = "^";
  for (const segment of relative.split("/").filter((s) => s.length > 0)) {
    if (segment === "**") source += "(?:/[^/]+)*";
    else if (segment.startsWith(":")) source += "/[^/]+";
    else source += "/" + segment.split("*").map(escapeRegExp).join("[^/]*");
  }
  return new RegExp(source + "/?$");
}

function compileOperation(pattern: string): RegExp {
  return new RegExp("^" + pattern.split("*").map(escapeRegExp).join(".*") + "$");
}

/** The error code an injected status answers with, unless the rule names one. */
function codeForStatus(status: number): ErrorCode {
  const known = (Object.entries(errorStatus) as [ErrorCode, number][]).find(([, s]) => s === status);
  if (known) return known[0];
  return status >= 500 ? "SERVER_ERROR" : "INVALID_REQUEST";
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Holds the fault rules and applies them to requests and to jobs as they start. */
export class FaultInjector {
  private rules: FaultRule[] = [];
  private nextId = 1;
  private readonly patterns = new Map<number, RegExp>();
  /** Told of every request whose connection a rule closes without an answer (the request log records it). */
  onDrop: (req: FastifyRequest) => void = () => {};
  /** Requests whose handler runs before their `after` rule takes effect. */
  private readonly afterHandler = new WeakMap<FastifyRequest, FaultRule & { kind: "request" }>();

  constructor(private readonly ctx: EmulatorContext) {}

  /** Copies of the rules, in the order they are tried (`count` = fires left, `fired` = times fired so far). */
  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** Validates and appends rules; returns the stored rules. */
  add(inputs: FaultRuleInput[]): FaultRule[] {
    const parsed = inputs.map((input) => FaultRuleInput.parse(input));
    const added = parsed.map((rule) => {
      const stored: FaultRule = { ...rule, id: this.nextId++, fired: 0 };
      if (stored.kind === "request" && stored.path !== undefined) {
        this.patterns.set(stored.id, compilePathPattern(stored.path));
      } else if (stored.kind === "job") {
        this.patterns.set(stored.id, compileOperation(stored.operation));
      }
      return stored;
    });
    this.rules.push(...added);
    return added.map((r) => ({ ...r }));
  }

  /** Validates the new rules first, then replaces every rule with them. */
  replace(inputs: FaultRuleInput[]): FaultRule[] {
    const parsed = inputs.map((input) => FaultRuleInput.parse(input));
    this.clear();
    return this.add(parsed);
  }

  /** Removes one rule; false when there is no such rule. */
  remove(id: number): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    this.patterns.delete(id);
    return this.rules.length < before;
  }

  /** Removes every rule; returns how many there were. */
  clear(): number {
    const n = this.rules.length;
    this.rules = [];
    this.patterns.clear();
    return n;
  }

  /** Does the rule fire this time? Spends one of its `count` and draws its probability when below 1. */
  private fires(rule: FaultRule): boolean {
    if (rule.count !== null && rule.count <= 0) return false;
    if (rule.probability <= 0) return false;
    if (rule.probability < 1 && this.ctx.random() >= rule.probability) return false;
    rule.fired++;
    if (rule.count !== null) rule.count--;
    return true;
  }

  /**
   * onRequest: sleeps for the latency of every firing rule, then answers with the first firing error or closes the
   * connection; a firing `after` rule instead lets the handler run and takes effect in {@link onSend}.
   */
  async onRequest(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const path = req.url.split("?")[0].slice(API_PREFIX.length) || "/";
    const routeName = req.routeOptions.config?.routeName;
    let latency = 0;
    let problem: ApiProblem | null = null;
    let drop = false;
    for (const rule of this.rules) {
      if (rule.kind !== "request") continue;
      if (rule.route !== undefined && rule.route !== routeName) continue;
      if (rule.method !== undefined && rule.method !== req.method) continue;
      if (rule.path !== undefined && !this.patterns.get(rule.id)!.test(path)) continue;
      if (!this.fires(rule)) continue;
      latency += rule.latencyMs ?? 0;
      if (rule.after === true) {
        this.afterHandler.set(req, rule);
        break;
      }
      if (rule.drop === true) {
        drop = true;
        break;
      }
      if (rule.status !== undefined || rule.error !== undefined) {
        problem = this.problemOf(rule);
        break;
      }
    }
    if (latency > 0) await sleep(latency);
    if (drop) {
      reply.hijack();
      req.raw.socket.destroy();
      this.onDrop(req);
      return;
    }
    if (problem) throw problem;
  }

  /**
   * onSend: the answer of a request hit by an `after` rule (its handler has run) is replaced by the rule's error, or
   * dropped: the connection is closed and the client never hears back.
   */
  onSend(req: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
    const rule = this.afterHandler.get(req);
    if (rule === undefined) return payload;
    this.afterHandler.delete(req);
    if (rule.drop === true) {
      req.raw.socket.destroy();
      this.onDrop(req);
      return payload;
    }
    const problem = this.problemOf(rule);
    reply.code(problem.status).header("content-type", "application/json; charset=utf-8");
    reply.removeHeader("content-length");
    return JSON.stringify({ success: false, error: problem.code, message: problem.message });
  }

  private problemOf(rule: FaultRule & { kind: "request" }): ApiProblem {
    const code = rule.error ?? codeForStatus(rule.status!);
    const status = rule.status ?? errorStatus[code];
    const message = rule.message ?? `Injected fault: ${status} ${code}`;
    if (status === 429) {
      return new ApiProblem(code, message, { retryAfter: 1 }, status, { "Retry-After": "1" });
    }
    return new ApiProblem(code, message, undefined, status);
  }

  /** The injected outcome of a job of this operation starting now (wired to `ctx.jobFault`). */
  jobFault(operation: string): JobRec["inject"] {
    for (const rule of this.rules) {
      if (rule.kind !== "job" || !this.patterns.get(rule.id)!.test(operation)) continue;
      if (!this.fires(rule)) continue;
      if (rule.outcome === "stall") return { kind: "stall" };
      return { kind: "fail", error: rule.message ?? `Injected failure of ${operation}` };
    }
    return null;
  }
}
