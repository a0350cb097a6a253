import * as fs from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import * as tls from "node:tls";
import pRetry from "p-retry";
import { Pool, type Dispatcher } from "undici";
import { z } from "zod";
import { routes, type RouteName, type RouteSpec } from "../api";
import type { Authenticator } from "./auth";
import { ApiError, ClientClosedError, RequestValidationError, type RequestIssue } from "./errors";
import { resetHeaderMs, type Pacer } from "./pacing";
import { duration, silentProgressLog, type ProgressLog } from "./progress";
import type { Redactor } from "./redact";

/**
 * The certificate authorities `NODE_EXTRA_CA_CERTS` names, when the plugin's executable handed that file over as
 * `CLOUDINFRA_EXTRA_CA_CERTS` (Node.js 20 reads the file at every start, before any code runs: some 70 ms for a
 * system bundle, paid by every CLI operation even against an http API): trusted next to Node's own, as Node would
 * have. A file that cannot be read is ignored with a warning, as Node does.
 */
function extraCertificates(): { ca: string[] } | undefined {
  const file = process.env.CLOUDINFRA_EXTRA_CA_CERTS;
  if (!file) return undefined;
  try {
    return { ca: [...tls.rootCertificates, fs.readFileSync(file, "utf8")] };
  } catch (error) {
    process.emitWarning(`Ignoring extra certs from \`${file}\`, load failed: ${(error as Error).message}`);
    return undefined;
  }
}

export interface TimeoutOptions {
  /** TCP/TLS connect timeout (only for the dispatcher the client creates). Default 10 s. */
  connectMs?: number;
  /** Time allowed until the response headers arrive. Default 60 s. */
  headersMs?: number;
  /** Time allowed between body chunks. Default 60 s. */
  bodyMs?: number;
  /** Idle keep-alive of pooled connections (only for the dispatcher the client creates). Default 30 s. */
  keepAliveMs?: number;
  /** Maximum connections to the server (only for the dispatcher the client creates). Default 32. */
  connections?: number;
}

export interface RetryOptions {
  /** Retries after 5xx and network failures (of requests that may be retried). Default 4. */
  retries?: number;
  /** First backoff delay; it doubles each retry, randomized (jitter). Default 250 ms. */
  minDelayMs?: number;
  /** Longest backoff delay. Default 8 s. */
  maxDelayMs?: number;
  /** 429 answers retried without consuming `retries` (the pacer waits out the limit). Default 20. */
  maxRateLimitRetries?: number;
}

/** One HTTP exchange as the client saw it (every attempt, including those retried). */
export interface ExchangeInfo {
  route: string;
  method: string;
  path: string;
  /** 0 when no response arrived. */
  status: number;
  attempt: number;
  durationMs: number;
  /** The API error code of an error response, or the network error code. */
  code?: string;
}

/**
 * How the settings behind the client are named in error messages, so that an error points at the setting to fix
 * (`cloudinfra:baseUrl (stack config)` rather than `baseUrl`). Each defaults to the client option's own name.
 */
export interface SettingLabels {
  /** Where the base URL came from. Default: `the client's baseUrl option`. */
  baseUrl?: string;
  /** The per-attempt timeout. Default: `timeouts.headersMs`. */
  requestTimeout?: string;
  /** The number of retries. Default: `retry.retries`. */
  retries?: string;
  /** Appended to a 401 (given the API's error code): where the credentials came from and what to do. */
  authHint?: string | ((code: string) => string | undefined);
}

export interface TransportOptions {
  baseUrl: string;
  /** How the settings are named in errors. */
  labels?: SettingLabels;
  /** Where retries and rate-limit pauses are reported. Default: nowhere. */
  log?: ProgressLog;
  dispatcher?: Dispatcher;
  timeouts?: TimeoutOptions;
  retry?: RetryOptions;
  pacer: Pacer;
  redactor: Redactor;
  userAgent?: string;
  onExchange?: (info: ExchangeInfo) => void;
}

/** A request checked against the contract, ready to send. */
export interface PreparedRequest {
  route: RouteName;
  spec: RouteSpec;
  method: string;
  /** Path relative to the base URL, with the query string. */
  path: string;
  body: string | undefined;
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** Parsed JSON, or undefined for an empty or non-JSON body. */
  body: unknown;
  /** The body text when it was not JSON. */
  text: string;
  attempts: number;
  /** When the attempt that got this answer was sent, and when its answer came (this machine's clock, epoch ms). */
  sentAt: number;
  receivedAt: number;
}

export interface SendOptions {
  signal?: AbortSignal;
  /**
   * Ends the request's waits (for rate-limit budget, between retries) with its reason, never an exchange in flight:
   * the answer on its way is what the caller needs to know what the API did.
   */
  waits?: AbortSignal;
  /** Extra request headers (e.g. `cookie` for the 2FA routes). */
  headers?: Record<string, string>;
  /** Credentials to attach; null for public and 2FA routes. */
  auth: Authenticator | null;
  /** Error statuses to hand back as a response instead of throwing. */
  accept?: (status: number, code: string | undefined) => boolean;
  /** One attempt only: no retry of any kind (a sign-out on the way out, bounded by `signal`). */
  once?: boolean;
}

/** Routes sent with POST that change nothing: safe to retry like a GET. */
const readOnlyPosts: ReadonlySet<string> = new Set(["queryJobs"]);
/** Non-GET routes whose repetition has the same effect as one call (absolute updates and deletes). */
const idempotentPatches: ReadonlySet<string> = new Set(["setApiKeyStatus"]);

/** Network errors raised before a single byte of the request could reach the server. */
const unreachedCodes: ReadonlySet<string> = new Set([
  "ECONNREFUSED",
  "UND_ERR_CONNECT_TIMEOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
]);
const closedCodes: ReadonlySet<string> = new Set(["UND_ERR_CLOSED", "UND_ERR_DESTROYED"]);

type RetryKind = "always" | "ifIdempotent" | "never";
const retryKinds = new WeakMap<ApiError, RetryKind>();

/**
 * May this route be sent again after an ambiguous failure (5xx, connection lost after sending)? A PUT that starts a
 * job (attach, detach, resize) may not: sent again while its job runs, it is refused, and the caller must look at the
 * resource to learn whether the first one took effect.
 */
export function isIdempotent(route: RouteName): boolean {
  const { method, status } = routes[route];
  return (
    method === "GET" ||
    (method === "PUT" && status !== 202) ||
    method === "DELETE" ||
    readOnlyPosts.has(route) ||
    idempotentPatches.has(route)
  );
}

/** Does this route change anything on the server? */
export function isMutating(route: RouteName): boolean {
  return routes[route].method !== "GET" && !readOnlyPosts.has(route);
}

function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
    if (e instanceof AggregateError && e.errors.length > 0) {
      const inner = (e.errors[0] as { code?: unknown }).code;
      if (typeof inner === "string") return inner;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What a network error code means, for people. */
function networkReason(code: string | undefined, origin: string, timeoutMs: number): string | undefined {
  switch (code) {
    case "UND_ERR_HEADERS_TIMEOUT":
      return `no answer within ${duration(timeoutMs)}`;
    case "UND_ERR_BODY_TIMEOUT":
      return `the answer stalled for more than ${duration(timeoutMs)}`;
    case "UND_ERR_CONNECT_TIMEOUT":
      return `could not connect to ${origin} in time`;
    case "ECONNREFUSED":
      return `nothing listens at ${origin} (connection refused)`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host of ${origin} was not found (DNS)`;
    case "ECONNRESET":
    case "UND_ERR_SOCKET":
      return "the connection was closed before the answer was complete";
    default:
      return undefined;
  }
}

/** A base URL as text for messages, without any credentials it may embed. */
function displayUrl(url: URL): string {
  const copy = new URL(url.href);
  copy.username = "";
  copy.password = "";
  return copy.href.replace(/\/+$/, "");
}

/** The `<title>` of an HTML page, if it has one. */
function htmlTitle(text: string): string | undefined {
  const match = /<title[^>]*>([^<]{1,120})<\/title>/i.exec(text);
  return match ? match[1]!.trim() : undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** How long a 429 asks us to wait: `data.retryAfter`, then `Retry-After`, then `X-RateLimit-Reset`; 1 s otherwise. */
export function retryAfterMs(headers: IncomingHttpHeaders, body: unknown, now = Date.now()): number {
  const fromData = (body as { data?: { retryAfter?: unknown } } | undefined)?.data?.retryAfter;
  if (typeof fromData === "number" && Number.isFinite(fromData) && fromData >= 0) return fromData * 1000;
  const retryAfter = header(headers, "retry-after");
  if (retryAfter !== undefined) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  const reset = resetHeaderMs(header(headers, "x-ratelimit-reset"), now);
  if (reset !== undefined) return Math.max(0, reset - now);
  return 1000;
}

/** Turns zod issues into named fields: `body.networkInterfaces.0.primary: ...`. */
function issuesOf(where: "path" | "query" | "body", error: z.ZodError): RequestIssue[] {
  return error.issues.map((i) => {
    const field = [where, ...i.path.map(String)].join(".");
    if (i.code === "unrecognized_keys") return { field, message: `unknown field(s): ${i.keys.join(", ")}` };
    return { field, message: i.message };
  });
}

function queryString(query: Record<string, unknown>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
  }
  const text = search.toString();
  return text.length > 0 ? `?${text}` : "";
}

/**
 * The wire: one undici dispatcher (keep-alive pool), contract validation before sending, pacing, retries with
 * p-retry, credential handling and the mapping of every failure to an ApiError.
 */
export class Transport {
  readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly timeouts: Required<TimeoutOptions>;
  private readonly retry: Required<RetryOptions>;
  private readonly labels: Required<Omit<SettingLabels, "authHint">> & Pick<SettingLabels, "authHint">;
  private readonly log: ProgressLog;
  /** The base URL for messages (no credentials, no trailing slash). */
  readonly baseUrl: string;
  private closed = false;
  private lastBudgetNotice = 0;

  constructor(private readonly options: TransportOptions) {
    this.labels = {
      baseUrl: "the client's baseUrl option",
      requestTimeout: "timeouts.headersMs",
      retries: "retry.retries",
      ...options.labels,
    };
    this.log = options.log ?? silentProgressLog;
    let url: URL;
    try {
      url = new URL(options.baseUrl);
      if (url.protocol !== "http:" && url.protocol !== "https:") throw new TypeError("not http(s)");
    } catch {
      throw Object.assign(
        new TypeError(
          `The API base URL ${JSON.stringify(options.baseUrl)} (${this.labels.baseUrl}) is not an http(s) URL: ` +
            "give the API's full URL ending in /v1, e.g. https://api.example.com/v1",
        ),
        { code: "BASE_URL_INVALID" as const },
      );
    }
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, "");
    this.baseUrl = displayUrl(url);
    this.timeouts = {
      connectMs: 10_000,
      headersMs: 60_000,
      bodyMs: 60_000,
      keepAliveMs: 30_000,
      connections: 32,
      ...options.timeouts,
    };
    this.retry = { retries: 4, minDelayMs: 250, maxDelayMs: 8_000, maxRateLimitRetries: 20, ...options.retry };
    this.ownsDispatcher = options.dispatcher === undefined;
    this.dispatcher =
      options.dispatcher ??
      new Pool(this.origin, {
        connections: this.timeouts.connections,
        keepAliveTimeout: this.timeouts.keepAliveMs,
        connect: { timeout: this.timeouts.connectMs, ...(url.protocol === "https:" ? extraCertificates() : {}) },
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      });
  }

  /** Checks params, query and body against the route's schemas and builds the request; nothing is sent. */
  prepare(route: RouteName, args: { params?: unknown; query?: unknown; body?: unknown }): PreparedRequest {
    const spec: RouteSpec = routes[route];
    const issues: RequestIssue[] = [];
    const check = (where: "path" | "query" | "body", schema: z.ZodType | undefined, value: unknown) => {
      if (!schema) {
        const empty = value === undefined || (where !== "body" && Object.keys(value as object).length === 0);
        if (!empty) issues.push({ field: where, message: `${route} takes no ${where === "path" ? "params" : where}` });
        return;
      }
      const result = schema.safeParse(value ?? (where === "body" ? undefined : {}));
      if (!result.success) issues.push(...issuesOf(where, result.error));
    };
    const params = (args.params ?? {}) as Record<string, unknown>;
    const query = (args.query ?? {}) as Record<string, unknown>;
    check("path", spec.params, params);
    check("query", spec.query, query);
    check("body", spec.body, args.body);
    const path =
      spec.path.replace(/:(\w+)/g, (_, name: string) =>
        encodeURIComponent(params[name] === undefined ? `:${name}` : String(params[name])),
      ) + queryString(query);
    if (issues.length > 0) {
      throw new RequestValidationError({ method: spec.method, path, route, issues }, this.options.redactor);
    }
    return {
      route,
      spec,
      method: spec.method,
      path,
      body: spec.body && args.body !== undefined ? JSON.stringify(args.body) : undefined,
    };
  }

  /**
   * Sends a prepared request with pacing and retries: 429 always (after the pause it asks for), 5xx and lost
   * connections only when the route is idempotent, a refused connection always (the request never left). A session
   * that expired is renewed once. Resolves with 2xx responses and those `accept` allows; rejects with ApiError.
   */
  async send(request: PreparedRequest, options: SendOptions): Promise<RawResponse> {
    const idempotent = isIdempotent(request.route);
    const started = Date.now();
    let rateLimited = 0;
    const { signal, waits } = options;
    const budgetSignal = signal && waits ? AbortSignal.any([signal, waits]) : (waits ?? signal);
    // The back-off ends on `waits` only between attempts: p-retry drops an answer that arrives after its signal aborts.
    const backOff = new AbortController();
    let attempting = false;
    const endBackOff = () => {
      if (!attempting) backOff.abort(waits!.reason);
    };
    waits?.addEventListener("abort", endBackOff, { once: true });
    return pRetry(
      async (attempt) => {
        attempting = true;
        try {
          return await this.attempt(request, options, attempt, budgetSignal);
        } finally {
          attempting = false;
        }
      },
      {
        retries: options.once ? 0 : this.retry.retries,
        minTimeout: this.retry.minDelayMs,
        maxTimeout: this.retry.maxDelayMs,
        factor: 2,
        randomize: true,
        signal: signal ? AbortSignal.any([signal, backOff.signal]) : backOff.signal,
        shouldConsumeRetry: ({ error }) =>
          !options.once &&
          !(error instanceof ApiError && error.status === 429 && ++rateLimited <= this.retry.maxRateLimitRetries),
        shouldRetry: ({ error, retriesLeft }) => {
          if (options.once || this.closed || waits?.aborted || !(error instanceof ApiError)) return false;
          const kind = retryKinds.get(error) ?? "never";
          const retry = kind === "always" || (kind === "ifIdempotent" && idempotent);
          if (retry && error.status !== 429) {
            const attempt = error.attempts;
            this.log.warn(
              `${request.method} ${this.urlOf(request)}: ${error.apiMessage} (${error.code}); retrying ` +
                `(attempt ${attempt + 1} of at most ${attempt + retriesLeft})`,
            );
          }
          return retry;
        },
      },
    )
      .catch((error: unknown) => {
        if (!(error instanceof ApiError) || error instanceof RequestValidationError) throw error;
        throw this.explain(error, Date.now() - started);
      })
      .finally(() => waits?.removeEventListener("abort", endBackOff));
  }

  /** One attempt: credentials, the exchange, a session renewed once; an error response throws its ApiError. */
  private async attempt(
    request: PreparedRequest,
    options: SendOptions,
    attempt: number,
    budgetSignal: AbortSignal | undefined,
  ): Promise<RawResponse> {
    for (let renewed = false; ;) {
      const credentials = options.auth ? await options.auth.headers() : { headers: {}, token: null };
      const response = await this.exchange(
        request,
        { ...options.headers, ...credentials.headers },
        attempt,
        options.signal,
        budgetSignal,
      );
      const code = (response.body as { error?: unknown } | undefined)?.error;
      const apiCode = typeof code === "string" ? code : undefined;
      if (response.status < 300 || options.accept?.(response.status, apiCode)) return response;
      if (
        response.status === 401 &&
        apiCode === "SESSION_EXPIRED" &&
        !renewed &&
        options.auth?.sessionExpired(credentials.token)
      ) {
        renewed = true;
        continue;
      }
      const error = this.errorFromResponse(request, response, attempt);
      if (response.status === 429) {
        const pauseMs = error.retryAfterMs ?? 1000;
        this.options.pacer.budgetFor(request.route).pause(pauseMs);
        this.log.info(
          `rate limited by the API on ${request.method} ${request.path.split("?")[0]}: pausing ` +
            `${duration(pauseMs)} before trying again`,
        );
      }
      throw error;
    }
  }

  /** The full URL of a request, for messages. */
  urlOf(request: PreparedRequest): string {
    return `${this.baseUrl}${request.path}`;
  }

  /**
   * Adds to a final error what the user needs to act: for failures without an answer (or with a server error) how
   * many attempts were made in how long and which settings bound them; for a refused credential where it came from.
   */
  private explain(error: ApiError, elapsedMs: number): ApiError {
    if (error.status === 0 && error.code === "NETWORK_ERROR") {
      const attempts = error.attempts === 1 ? "1 attempt" : `${error.attempts} attempts`;
      return error.withHint(
        `Gave up after ${attempts} in ${duration(elapsedMs)} (at most ${duration(this.timeouts.headersMs)} each: ` +
          `${this.labels.requestTimeout}; ${this.retry.retries} ${this.retry.retries === 1 ? "retry" : "retries"}: ` +
          `${this.labels.retries}). The base URL ` +
          `${this.baseUrl} comes from ${this.labels.baseUrl}: check it, and that the API is reachable from here`,
      );
    }
    const authHint = this.labels.authHint;
    if (error.status === 401 && authHint) {
      const hint = typeof authHint === "string" ? authHint : authHint(error.code);
      if (hint) return error.withHint(hint);
    }
    if (error.status >= 500 && error.attempts > 1) {
      return error.withHint(`Gave up after ${error.attempts} attempts in ${duration(elapsedMs)}`);
    }
    return error;
  }

  /** Closes the dispatcher when the client created it (an injected one belongs to its owner). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /** One HTTP exchange, inside the pacing budget of its route. Network failures become ApiError (status 0). */
  private async exchange(
    request: PreparedRequest,
    extraHeaders: Record<string, string>,
    attempt: number,
    signal: AbortSignal | undefined,
    budgetSignal: AbortSignal | undefined,
  ): Promise<RawResponse> {
    if (this.closed) throw new ClientClosedError("request");
    const budget = this.options.pacer.budgetFor(request.route);
    // A wait for rate-limit budget is announced when it lasts (at most one line every few seconds per transport).
    const notice = setTimeout(() => {
      if (Date.now() - this.lastBudgetNotice < 5000) return;
      this.lastBudgetNotice = Date.now();
      this.log.info(
        `waiting for the API's rate-limit budget before ${request.method} ${request.path.split("?")[0]} ` +
          "(and any other request queued behind it)",
      );
    }, 1000);
    notice.unref();
    let permit: Awaited<ReturnType<typeof budget.acquire>>;
    try {
      permit = await budget.acquire(budgetSignal);
    } finally {
      clearTimeout(notice);
    }
    const started = Date.now();
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": this.options.userAgent ?? "cloudinfra-pulumi-client/0.1",
      ...extraHeaders,
    };
    if (request.body !== undefined) headers["content-type"] = "application/json";
    let status = 0;
    let responseHeaders: IncomingHttpHeaders | undefined;
    try {
      const response = await this.dispatcher.request({
        origin: this.origin,
        path: this.basePath + request.path,
        method: request.method as Dispatcher.HttpMethod,
        headers,
        body: request.body,
        signal,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
      });
      status = response.statusCode;
      responseHeaders = response.headers;
      const text = await response.body.text();
      let body: unknown;
      if (text.length > 0) {
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
      }
      const code = (body as { error?: unknown } | undefined)?.error;
      this.report(request, status, attempt, started, typeof code === "string" ? code : undefined);
      return {
        status,
        headers: responseHeaders,
        body,
        text: body === undefined ? text : "",
        attempts: attempt,
        sentAt: started,
        receivedAt: Date.now(),
      };
    } catch (cause) {
      if (signal?.aborted) throw signal.reason;
      const code = networkCode(cause);
      this.report(request, status, attempt, started, code ?? "NETWORK_ERROR");
      if (this.closed || (code !== undefined && closedCodes.has(code))) throw new ClientClosedError("request");
      // A failure while reading the body still means the server processed the request.
      const reached = status !== 0 || code === undefined || !unreachedCodes.has(code);
      const reason = networkReason(code, this.origin, this.timeouts.headersMs);
      const detail = cause instanceof Error ? cause.message : String(cause);
      const error = new ApiError(
        {
          status,
          code: "NETWORK_ERROR",
          message: `Network failure${code ? ` (${code})` : ""}: ${reason ?? detail}`,
          method: request.method,
          path: request.path,
          url: this.urlOf(request),
          route: request.route,
          cause,
          mayHaveSucceeded: reached && isMutating(request.route),
          attempts: attempt,
        },
        this.options.redactor,
      );
      retryKinds.set(error, reached ? "ifIdempotent" : "always");
      throw error;
    } finally {
      permit.done(responseHeaders, status);
    }
  }

  private report(request: PreparedRequest, status: number, attempt: number, started: number, code?: string): void {
    this.options.onExchange?.({
      route: request.route,
      method: request.method,
      path: request.path,
      status,
      attempt,
      durationMs: Date.now() - started,
      ...(code !== undefined ? { code } : {}),
    });
  }

  /** The ApiError of an error response, classified for retries. */
  errorFromResponse(request: PreparedRequest, response: RawResponse, attempt: number): ApiError {
    const envelope = (response.body ?? {}) as { error?: unknown; message?: unknown; data?: unknown };
    const status = response.status;
    const code = typeof envelope.error === "string" ? envelope.error : `HTTP_${status}`;
    const serverError = status >= 500 && status !== 501;
    const raw = response.text.trim();
    const contentType = header(response.headers, "content-type")?.split(";")[0]?.trim();
    const page = /html/i.test(contentType ?? "") || raw.startsWith("<");
    // An HTML page is not echoed: its title (if any) says enough, and the page may be long.
    const text = page
      ? `the server answered with an HTML page${htmlTitle(raw) ? ` ("${htmlTitle(raw)}")` : ""}, not the API's JSON`
      : raw.slice(0, 200);
    let message =
      typeof envelope.message === "string" ? envelope.message : text.length > 0 ? text : `HTTP status ${status}`;
    // A 404 on a route without an id, a non-JSON 404 or the API's "No route": the URL is wrong, not a resource gone.
    const routing =
      status === 404 && (!/:\w+/.test(request.spec.path) || response.body === undefined || /^no route/i.test(message));
    let hint: string | undefined;
    if (routing) {
      message = `${message}: no API route at this URL`;
      hint =
        `The base URL ${this.baseUrl} comes from ${this.labels.baseUrl}; it must be the API's base URL, ending in ` +
        `the version (e.g. https://api.example.com/v1)${/\/v\d+$/.test(this.basePath) ? "" : ", and this one does not end in /v1"}`;
    }
    const error = new ApiError(
      {
        status,
        code,
        message,
        hint,
        method: request.method,
        path: request.path,
        url: this.urlOf(request),
        route: request.route,
        data: envelope.data,
        mayHaveSucceeded: serverError && isMutating(request.route),
        retryAfterMs: status === 429 ? retryAfterMs(response.headers, response.body) : undefined,
        attempts: attempt,
      },
      this.options.redactor,
    );
    retryKinds.set(error, status === 429 ? "always" : serverError ? "ifIdempotent" : "never");
    return error;
  }
}
