import type { IncomingHttpHeaders } from "node:http";
import type { Dispatcher } from "undici";
import { z } from "zod";
import {
  routes,
  type BodyOf,
  type DataOf,
  type Job,
  type MetaOf,
  type ParamsOf,
  type QueryOf,
  type RouteName,
  type Routes,
  type RouteSpec,
} from "../api";
import { ApiClock } from "./api-clock";
import { Authenticator, setCookies, type ClientAuth } from "./auth";
import { ApiError } from "./errors";
import { JobWaiter, type JobWaiterOptions } from "./job-waiter";
import { Pacer, type PacingOptions } from "./pacing";
import type { ProgressLog } from "./progress";
import { Redactor } from "./redact";
import {
  isMutating,
  Transport,
  type ExchangeInfo,
  type PreparedRequest,
  type RetryOptions,
  type SettingLabels,
  type TimeoutOptions,
} from "./transport";

export interface CloudClientOptions {
  /** Base URL of the API, ending in the version segment, e.g. `http://127.0.0.1:8787/v1`. */
  baseUrl: string;
  /** API key, bearer session token, or email + password + TOTP secret. */
  auth: ClientAuth;
  /** Entity to act on: sent as `entityId` on every call whose query accepts it (a call's own value wins). */
  entityId?: string;
  /** The undici dispatcher to use (a MockAgent in unit tests). Default: a keep-alive Pool of the base URL's origin. */
  dispatcher?: Dispatcher;
  timeouts?: TimeoutOptions;
  retry?: RetryOptions;
  /** Rate-limit pacing settings, or a Pacer shared with other clients of the same credential. */
  pacing?: PacingOptions | Pacer;
  /** Job polling settings of `client.jobs`. */
  jobs?: JobWaiterOptions;
  userAgent?: string;
  /** Observes every HTTP exchange (every attempt), e.g. for metrics or tests. */
  onExchange?: (info: ExchangeInfo) => void;
  /** Where retries (with their reasons) and rate-limit pauses are reported. Default: nowhere. */
  log?: ProgressLog;
  /** How the settings behind this client are named in error messages (e.g. `cloudinfra:baseUrl (stack config)`). */
  labels?: SettingLabels;
  /**
   * The signal that ends a call's waits (see {@link CallOptions.waits}) when the call gives none, read as each call
   * starts, e.g. the host's cancellation of the operation the call is part of.
   */
  waits?: () => AbortSignal | undefined;
}

/** Options of one call. */
export interface CallOptions {
  signal?: AbortSignal;
  /**
   * Ends the call's waits for rate-limit budget and between retries with its reason, but never an exchange in flight
   * (its answer says what the API did). Already aborted when the call starts, it is ignored: what a caller does after
   * a cancellation to find out what exists still runs. Null: no such signal, not even the client's `waits`.
   */
  waits?: AbortSignal | null;
  /** Extra request headers. */
  headers?: Record<string, string>;
}

type Has<N extends RouteName, K extends string> = Routes[N] extends Record<K, z.ZodType> ? true : false;

/** The arguments of a call, derived from the route's schemas: `params` and `body` when it has them, `query` optional. */
export type CallArgs<N extends RouteName> = (Has<N, "params"> extends true ? { params: ParamsOf<N> } : unknown) &
  (Has<N, "body"> extends true ? { body: BodyOf<N> } : unknown) &
  (Has<N, "query"> extends true ? { query?: QueryOf<N> } : unknown) &
  CallOptions;

/** Routes answering a paginated list (their results carry `meta`). */
export type PagedRouteName = { [N in RouteName]: Has<N, "meta"> extends true ? N : never }[RouteName];

/** A page of a paginated list. */
export interface Page<N extends RouteName> {
  data: DataOf<N>;
  meta: MetaOf<N>;
}

/** What a typed method resolves to: `{data, meta}` for lists, nothing for 204 routes, else the envelope's `data`. */
export type ResultOf<N extends RouteName> =
  Has<N, "meta"> extends true ? Page<N> : Routes[N] extends { status: 204 } ? void : DataOf<N>;

/** The full success envelope of a call, with the response headers. */
export interface ApiResponse<N extends RouteName> {
  status: number;
  data: DataOf<N>;
  /**
   * The envelope's `data` as the API sent it, before the contract's schema kept what it knows: for answers whose
   * fields the spec does not show, what the API reports beyond the contract.
   */
  raw: unknown;
  meta: MetaOf<N>;
  message: string | undefined;
  headers: IncomingHttpHeaders;
}

/** One method per contract route, named as the route (`client.getVm(...)`), typed from the route's schemas. */
export type RouteMethods = {
  [N in RouteName]: Has<N, "params"> | Has<N, "body"> extends false
    ? (args?: CallArgs<N>) => Promise<ResultOf<N>>
    : (args: CallArgs<N>) => Promise<ResultOf<N>>;
};

/** What `listAll` needs besides the query: path params for routes that have them, and call options. */
export type ListAllExtra<N extends RouteName> =
  Has<N, "params"> extends true ? [extra: { params: ParamsOf<N> } & CallOptions] : [extra?: CallOptions];

/** Item type of a paginated route. */
export type ItemOf<N extends PagedRouteName> = DataOf<N> extends readonly (infer T)[] ? T : never;

function acceptsEntityId(spec: RouteSpec): boolean {
  return spec.query instanceof z.ZodObject && "entityId" in spec.query.shape;
}

/**
 * The job ids in a 202 answer (a job object's `jobId`, the items of a job array, the `jobId` of bulk result rows), so
 * the poller learns which operation started which job.
 */
function jobIdsOf(data: unknown): string[] {
  const one = (item: unknown): string[] => {
    if (item === null || typeof item !== "object") return [];
    const record = item as { jobId?: unknown; id?: unknown; status?: unknown };
    if (typeof record.jobId === "string") return [record.jobId];
    return record.status === "pending" && typeof record.id === "string" ? [record.id] : [];
  };
  return Array.isArray(data) ? data.flatMap(one) : one(data);
}

const isJobRecord = (item: unknown): item is { id: string; createdAt: string } =>
  typeof (item as { id?: unknown } | null)?.id === "string" &&
  typeof (item as { createdAt?: unknown }).createdAt === "string";

class CloudClientBase {
  /** Shared job poller: every job awaited through it is polled together. */
  readonly jobs: JobWaiter;
  /** Sign-in and credential state (e.g. `auth.signIns`). */
  readonly auth: Authenticator;
  /** The API's clock against this machine's, learnt from the jobs this client started. */
  readonly clock = new ApiClock();
  private readonly transport: Transport;
  private readonly pacer: Pacer;
  private readonly ownsPacer: boolean;
  private readonly redactor = new Redactor();
  /**
   * Cookies set by the public and 2FA routes called through the typed methods (the temporary 2FA cookie), sent back
   * on those routes only, so that `signIn` then `verifyTotp` work as they do in a browser.
   */
  private readonly cookieJar = new Map<string, string>();

  constructor(private readonly options: CloudClientOptions) {
    this.ownsPacer = !(options.pacing instanceof Pacer);
    this.pacer = options.pacing instanceof Pacer ? options.pacing : new Pacer(options.pacing);
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      dispatcher: options.dispatcher,
      timeouts: options.timeouts,
      retry: options.retry,
      pacer: this.pacer,
      redactor: this.redactor,
      userAgent: options.userAgent,
      onExchange: options.onExchange,
      log: options.log,
      labels: options.labels,
    });
    this.auth = new Authenticator(
      options.auth,
      this.redactor,
      async (route, body, cookie, accept) => {
        const request = this.transport.prepare(route, { body });
        const response = await this.transport.send(request, {
          auth: null,
          headers: cookie ? { cookie } : undefined,
          accept,
        });
        return { status: response.status, headers: response.headers, body: response.body };
      },
      Date.now,
      (token, signal) => this.sendSignOut(token, signal),
    );
    // The poller serves every waiter: no one caller's signal ends its polls.
    this.jobs = new JobWaiter(
      async (jobIds) => {
        const { jobs } = await this.invoke("queryJobs", { body: { jobIds }, waits: null });
        for (const job of jobs) this.clock.seen(job);
        return jobs;
      },
      { budgetBound: () => this.pacer.budgetFor("queryJobs").snapshot().queued > 0, ...options.jobs },
    );
  }

  /** The dispatcher every request goes through. */
  get dispatcher(): Dispatcher {
    return this.transport.dispatcher;
  }

  /**
   * Calls a route and returns the whole success envelope (status, data, meta, message, headers). The request is
   * checked against the contract first (RequestValidationError, nothing sent) and the response parsed through the
   * contract's data and meta schemas.
   */
  async request<N extends RouteName>(route: N, args?: CallArgs<N>): Promise<ApiResponse<N>> {
    const spec: RouteSpec = routes[route];
    const input = (args ?? {}) as { params?: unknown; query?: Record<string, unknown>; body?: unknown } & CallOptions;
    let query = input.query;
    if (this.options.entityId !== undefined && acceptsEntityId(spec) && query?.entityId === undefined) {
      query = { ...query, entityId: this.options.entityId };
    }
    const prepared = this.transport.prepare(route, { params: input.params, query, body: input.body });
    const sessionless = spec.auth === "public" || spec.auth === "twoFactor";
    const cookie = sessionless ? [...this.cookieJar].map(([k, v]) => `${k}=${v}`).join("; ") : "";
    const waits = input.waits === undefined ? this.options.waits?.() : (input.waits ?? undefined);
    const response = await this.transport.send(prepared, {
      auth: sessionless ? null : this.auth,
      signal: input.signal,
      waits: waits?.aborted ? undefined : waits,
      headers: { ...(cookie ? { cookie } : {}), ...input.headers },
      // The first sign-in step answers 400 TWO_FACTOR_REQUIRED with the 2FA cookie: keep it for the next step.
      accept: (status, code) => sessionless && status === 400 && code === "TWO_FACTOR_REQUIRED",
    });
    if (sessionless) this.keepCookies(response.headers);
    const date = response.headers.date;
    this.clock.heard(typeof date === "string" ? date : undefined, response.sentAt, response.receivedAt);
    if (response.status >= 300) throw this.transport.errorFromResponse(prepared, response, response.attempts);
    const parsed = this.parse(prepared, response) as ApiResponse<N>;
    if (parsed.status === 202) {
      const jobIds = jobIdsOf(parsed.data);
      this.jobs.started(jobIds, route);
      this.clock.started(jobIds, response.sentAt, response.receivedAt);
      // A job array (VM create) carries each job's createdAt already.
      if (Array.isArray(parsed.data))
        for (const job of parsed.data as unknown[]) if (isJobRecord(job)) this.clock.seen(job);
    }
    return parsed;
  }

  /** Calls a route; lists resolve to `{data, meta}`, 204 routes to nothing, others to the envelope's `data`. */
  async invoke<N extends RouteName>(route: N, args?: CallArgs<N>): Promise<ResultOf<N>> {
    const response = await this.request(route, args);
    const spec: RouteSpec = routes[route];
    if (spec.meta) return { data: response.data, meta: response.meta } as ResultOf<N>;
    return (spec.status === 204 ? undefined : response.data) as ResultOf<N>;
  }

  /**
   * Iterates over every item of a paginated list, page after page (100 per page unless `query.limit` says
   * otherwise), starting at `query.page` or 1. Routes with path params (`userTeams`) take them in `extra`.
   */
  async *listAll<N extends PagedRouteName>(
    route: N,
    query?: QueryOf<N>,
    ...extra: ListAllExtra<N>
  ): AsyncGenerator<ItemOf<N>, void, undefined> {
    const base = (query ?? {}) as Record<string, unknown>;
    let page = (base.page as number | undefined) ?? 1;
    const limit = (base.limit as number | undefined) ?? 100;
    for (;;) {
      const args = { ...extra[0], query: { ...base, page, limit } } as unknown as CallArgs<N>;
      const { data, meta } = (await this.invoke(route, args)) as unknown as {
        data: ItemOf<N>[];
        meta: { hasNextPage: boolean };
      };
      yield* data;
      if (!meta.hasNextPage || data.length === 0) return;
      page++;
    }
  }

  /** Waits for a job through the shared poller (see `jobs`). */
  waitForJob(jobId: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<Job> {
    return this.jobs.wait(jobId, options);
  }

  /**
   * Ends the session this client signed in for with email + password + TOTP (`POST /auth/sign-out`, one attempt
   * within `timeoutMs`), so none is left open for its idle timeout. Nothing for an API key or a given session token.
   * Resolves to whether a session was ended; never rejects.
   */
  endSession(timeoutMs?: number): Promise<boolean> {
    return this.auth.signOut(timeoutMs);
  }

  /** `POST /auth/sign-out` for `token`: one attempt, bounded by `signal`; 401 (the session had ended) is an answer. */
  private async sendSignOut(token: string, signal: AbortSignal) {
    const request = this.transport.prepare("signOut", {});
    const response = await this.transport.send(request, {
      auth: null,
      signal,
      once: true,
      headers: { authorization: `Bearer ${token}` },
      accept: (status) => status === 401,
    });
    return { status: response.status, headers: response.headers, body: response.body };
  }

  /** Rejects pending job waits and queued requests, and closes the dispatcher the client created. */
  async close(): Promise<void> {
    this.jobs.close();
    if (this.ownsPacer) this.pacer.close();
    await this.transport.close();
  }

  private keepCookies(headers: IncomingHttpHeaders): void {
    for (const cookie of setCookies(headers)) {
      const expired =
        cookie.value === "" ||
        (cookie.maxAge !== undefined && cookie.maxAge <= 0) ||
        (cookie.expires !== undefined && new Date(cookie.expires).getTime() <= Date.now());
      if (expired) {
        this.cookieJar.delete(cookie.name);
      } else {
        this.redactor.add(cookie.value);
        this.cookieJar.set(cookie.name, cookie.value);
      }
    }
  }

  private parse(request: PreparedRequest, response: { status: number; headers: IncomingHttpHeaders; body: unknown }) {
    const spec = request.spec;
    const invalid = (message: string) =>
      new ApiError(
        {
          status: response.status,
          code: "INVALID_RESPONSE",
          message: `${request.route}: the response does not match the contract: ${message}`,
          method: request.method,
          path: request.path,
          url: this.transport.urlOf(request),
          route: request.route,
          // The request itself succeeded: for a create, the resource exists.
          mayHaveSucceeded: isMutating(request.route),
        },
        this.redactor,
      );
    if (spec.status === 204 || response.status === 204) {
      return {
        status: response.status,
        data: undefined,
        raw: undefined,
        meta: undefined,
        message: undefined,
        headers: response.headers,
      };
    }
    const envelope = response.body as { success?: unknown; data?: unknown; meta?: unknown; message?: unknown };
    if (!envelope || typeof envelope !== "object" || envelope.success !== true) {
      throw invalid("expected a JSON success envelope");
    }
    const describe = (where: string, error: z.ZodError) =>
      error.issues.map((i) => `${[where, ...i.path.map(String)].join(".")}: ${i.message}`).join("; ");
    let data: unknown = envelope.data;
    if (spec.data) {
      const parsed = spec.data.safeParse(envelope.data);
      if (!parsed.success) throw invalid(describe("data", parsed.error));
      data = parsed.data;
    }
    let meta: unknown;
    if (spec.meta) {
      const parsed = spec.meta.safeParse(envelope.meta);
      if (!parsed.success) throw invalid(describe("meta", parsed.error));
      meta = parsed.data;
    }
    return {
      status: response.status,
      data,
      raw: envelope.data,
      meta,
      message: typeof envelope.message === "string" ? envelope.message : undefined,
      headers: response.headers,
    };
  }
}

for (const name of Object.keys(routes) as RouteName[]) {
  if (name in CloudClientBase.prototype) throw new Error(`Route name ${name} collides with a CloudClient member`);
  Object.defineProperty(CloudClientBase.prototype, name, {
    value: function (this: CloudClientBase, args?: CallArgs<typeof name>) {
      return this.invoke(name, args);
    },
    writable: true,
    configurable: true,
  });
}

/**
 * Typed client of the Cloud Infrastructure Management API: one method per contract route (same names as the keys
 * of `routes`), one undici dispatcher with keep-alive, authentication by API key, session token or
 * email + password + TOTP, retries (p-retry), rate-limit pacing, and a shared job poller (`client.jobs`).
 */
export type CloudClient = CloudClientBase & RouteMethods;

/** Creates a client; see {@link CloudClientOptions}. */
export const CloudClient = CloudClientBase as unknown as new (options: CloudClientOptions) => CloudClient;
