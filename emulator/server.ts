import { randomBytes } from "node:crypto";
import { isIP } from "node:net";
import cookie from "@fastify/cookie";
import Fastify, { type FastifyError, type FastifyInstance } from "fastify";
import type { EmulatorContext, EmulatorOptions } from "./context";
import { ApiProblem } from "./errors";
import { seedState } from "./fixtures";
import { API_PREFIX, identify } from "./http";
import { advanceJobs } from "./jobs";
import { installOperator } from "./operator";
import { loadStateFile, startPersistence } from "./persistence";
import { registerRouteGroups } from "./routes";
import { seededRandom } from "./seeded-random";
import type { Bootstrap } from "./state";

const defaults = {
  port: 8787,
  host: "127.0.0.1",
  rateLimit: 100,
  rateLimitWindowMs: 60_000,
  strictLimits: true,
  sessionIdleMs: 30 * 60_000,
  stallTimeoutMs: 10 * 60_000,
  seed: 1,
  logRequests: false,
  adminApi: true,
  specFieldsOnly: false,
} satisfies Partial<EmulatorOptions>;

/** Is this bind address reachable only from this machine? */
export function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  return host === "::1" || host === "[::1]";
}

export interface BuiltEmulator {
  app: FastifyInstance;
  ctx: EmulatorContext;
  bootstrap: Bootstrap;
}

/** Builds the emulator without listening (tests use `app.inject`). */
export async function buildEmulator(options: EmulatorOptions = {}): Promise<BuiltEmulator> {
  const opts: EmulatorContext["options"] = {
    ...defaults,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    stateFile: options.stateFile ?? null,
    faults: options.faults ?? null,
    jobDurationMs: options.jobDurationMs ?? null,
  } as EmulatorContext["options"];
  // Off loopback the admin API (it hands out every password, TOTP secret and API key) needs a token.
  opts.adminToken =
    options.adminToken !== undefined
      ? options.adminToken
      : isLoopback(opts.host)
        ? null
        : randomBytes(24).toString("base64url");
  const loaded = opts.stateFile ? loadStateFile(opts.stateFile) : null;
  const ctx: EmulatorContext = {
    state: loaded ?? seedState(Date.now()),
    options: opts,
    clockOffsetMs: 0,
    now() {
      return Date.now() + this.clockOffsetMs;
    },
    random: seededRandom(opts.seed),
    touch() {},
    jobFault: () => null,
    requestMark: () => 0,
  };

  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024, forceCloseConnections: true });
  await app.register(cookie);
  app.decorateRequest("caller", null);
  app.decorateRequest("authProblem", null);
  app.addHook("onRequest", async (req, reply) => {
    advanceJobs(ctx);
    // The server's clock, as a real server's Date header tells it (clients compare theirs with it, e.g. for TOTP).
    reply.header("date", new Date(ctx.now()).toUTCString());
    if (req.url.startsWith(API_PREFIX + "/")) identify(ctx, req);
  });

  const operator = installOperator(app, ctx);

  app.setErrorHandler((error: FastifyError | ApiProblem, _req, reply) => {
    if (error instanceof ApiProblem) {
      if (error.headers) reply.headers(error.headers);
      return reply.code(error.status).send({
        success: false,
        error: error.code,
        message: error.message,
        ...(error.data !== undefined ? { data: error.data } : {}),
      });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Fastify's own refusals: unsupported or missing content type, malformed JSON, body too large.
      const message =
        error.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" ? "Content-Type must be application/json" : error.message;
      return reply.code(400).send({ success: false, error: "INVALID_REQUEST", message });
    }
    console.error("emulator: unexpected error", error);
    return reply.code(500).send({ success: false, error: "SERVER_ERROR", message: "Internal error" });
  });
  app.setNotFoundHandler((req, reply) =>
    reply
      .code(404)
      .send({ success: false, error: "NOT_FOUND", message: `No route ${req.method} ${req.url.split("?")[0]}` }),
  );

  await registerRouteGroups(app, ctx);

  if (opts.stateFile) {
    const persistence = startPersistence(ctx, opts.stateFile);
    app.addHook("onClose", async () => persistence.stop());
  }
  const ticker = setInterval(() => advanceJobs(ctx), 100);
  ticker.unref();
  app.addHook("onClose", async () => {
    clearInterval(ticker);
    await operator.close();
  });
  await app.ready();
  return { app, ctx, bootstrap: ctx.state.bootstrap! };
}

export interface RunningEmulator {
  /** Base URL ending in /v1. */
  baseUrl: string;
  /** The token the admin API requires, or null when it requires none (loopback host) or is off. */
  adminToken: string | null;
  bootstrap: Bootstrap;
  app: FastifyInstance;
  ctx: EmulatorContext;
  close(): Promise<void>;
}

/** Starts the emulator listening on a port (0 picks a free one), in this process. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const built = await buildEmulator(options);
  const host = built.ctx.options.host;
  await built.app.listen({ port: built.ctx.options.port, host });
  const address = built.app.server.address();
  const port = typeof address === "object" && address ? address.port : built.ctx.options.port;
  const baseUrl = `http://${host}:${port}${API_PREFIX}`;
  const bootstrap = { ...built.bootstrap, baseUrl };
  const adminToken = built.ctx.options.adminApi ? built.ctx.options.adminToken : null;
  return { baseUrl, adminToken, bootstrap, app: built.app, ctx: built.ctx, close: () => built.app.close() };
}
