import { randomUUID, timingSafeEqual } from "node:crypto";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { GpuCount, PositiveInt, qInt, Uuid } from "../provider/api";
import type { EmulatorContext } from "./context";
import { ApiProblem, fromZodError, invalid, notFound } from "./errors";
import { type FaultInjector, FaultRuleInput, FaultSpecError, compilePathPattern, parseFaultSpec } from "./faults";
import { seedCatalog } from "./fixtures";
import { API_PREFIX, hashSecret, iso } from "./http";
import { advanceJobs } from "./jobs";
import type { RequestLog } from "./operator";
import type { RateLimiter } from "./ratelimit";
import { hashPassword, keyStart } from "./secrets";
import { type ApiKeyRec, emptyState, type UserRec } from "./state";

export const ADMIN_PREFIX = "/__admin";

function validate<S extends z.ZodType>(schema: S, value: unknown, where: "body" | "query" | "path"): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw fromZodError(where, result.error);
  return result.data;
}

const ok = (data: unknown) => ({ success: true, data });

const RequestsQuery = z.strictObject({
  route: z.string().min(1).optional(),
  method: z.string().min(1).optional(),
  /** An exact path or a pattern (`*`, `**`, `:name`), relative to /v1 or not. */
  path: z.string().startsWith("/").optional(),
  status: qInt(100, 599).optional(),
  userId: Uuid.optional(),
  /** Emulator clock, epoch ms: only requests that arrived at or after it. */
  since: qInt(0).optional(),
  /**
   * Only requests that arrived after the one numbered N (`seq`; the current number is `GET /__admin/requests/mark`).
   * Unlike `since`, exact: the clock has millisecond steps, and a request is logged when answered.
   */
  after: qInt(0).optional(),
  /** Only the latest N. */
  limit: qInt(1, 10_000).optional(),
});

const FaultsBody = z.union([
  z.strictObject({ spec: z.string() }),
  z.strictObject({ rules: z.array(FaultRuleInput) }),
  FaultRuleInput,
]);
const FaultIdParams = z.strictObject({ id: qInt(1) });
const ClockBody = z.strictObject({
  advanceMs: z
    .number()
    .int()
    .min(0)
    .max(10 * 365 * 24 * 3600_000),
});
const GpuAvailabilityBody = z.strictObject({
  seriesId: PositiveInt,
  datacenterId: Uuid,
  gpuCount: GpuCount,
  available: z.boolean(),
});
const OutboxQuery = z.strictObject({ to: z.string().min(1).optional() });
const AuditQuery = z.strictObject({ event: z.string().min(1).optional(), userId: Uuid.optional() });
const SessionsQuery = z.strictObject({ userId: Uuid.optional() });

function faultInputs(body: unknown): FaultRuleInput[] {
  const parsed = validate(FaultsBody, body, "body");
  if ("spec" in parsed) {
    try {
      return parseFaultSpec(parsed.spec);
    } catch (e) {
      if (e instanceof FaultSpecError) throw invalid(e.message);
      throw e;
    }
  }
  if ("rules" in parsed) return parsed.rules;
  return [parsed];
}

/** The seeded users and their bootstrap keys as they were when the emulator started, for `reset`. */
function snapshotSeed(ctx: EmulatorContext): { users: UserRec[]; keys: ApiKeyRec[] } {
  const bootstrap = ctx.state.bootstrap;
  if (!bootstrap) return { users: [], keys: [] };
  const seeds = Object.values(bootstrap.users);
  const users = seeds.map((s) => ctx.state.users[s.id]).filter((u): u is UserRec => u !== undefined);
  const hashes = new Set(seeds.map((s) => hashSecret(s.apiKey)));
  const keys = Object.values(ctx.state.apiKeys).filter((k) => hashes.has(k.secretHash));
  return structuredClone({ users, keys });
}

/**
 * Wipes every resource, job, session, pending sign-in, reset token, audit entry and mail, every user and key not
 * seeded, and entities other than the seeded ones; restores the catalog and the seeded users with their bootstrap
 * credentials (password, TOTP secret, API key, no backup codes), so the bootstrap stays valid.
 */
export function resetState(ctx: EmulatorContext, seed: { users: UserRec[]; keys: ApiKeyRec[] }): void {
  const { bootstrap } = ctx.state;
  const now = ctx.now();
  const fresh = emptyState(seedCatalog());
  const keepEntities = new Set<string>(seed.users.map((u) => u.entityId));
  if (bootstrap) keepEntities.add(bootstrap.entityId).add(bootstrap.childEntityId);
  fresh.entities = Object.fromEntries(Object.entries(ctx.state.entities).filter(([id]) => keepEntities.has(id)));
  fresh.bootstrap = bootstrap;
  for (const seedUser of Object.values(bootstrap?.users ?? {})) {
    const snapshot = seed.users.find((u) => u.id === seedUser.id);
    if (!snapshot) continue;
    fresh.users[seedUser.id] = {
      ...structuredClone(snapshot),
      passwordHash: hashPassword(seedUser.password),
      totpSecret: seedUser.totpSecret,
      twoFactorSetupAt: snapshot.twoFactorSetupAt ?? now,
      backupCodeHashes: [],
      inviteStatus: "activated",
      deletedAt: null,
      updatedAt: now,
    };
    const secretHash = hashSecret(seedUser.apiKey);
    const key = seed.keys.find((k) => k.userId === seedUser.id && k.secretHash === secretHash);
    const id = key?.id ?? randomUUID();
    fresh.apiKeys[id] = {
      id,
      userId: seedUser.id,
      entityId: snapshot.entityId,
      name: key?.name ?? `${seedUser.email}-bootstrap`,
      secretHash,
      start: keyStart(seedUser.apiKey),
      roleId: null,
      metadata: { seeded: true },
      enabled: true,
      expiresAt: Math.max(key?.expiresAt ?? 0, now + 365 * 24 * 3600_000),
      createdAt: key?.createdAt ?? now,
      lastUsedAt: null,
      rateLimit: null,
    };
  }
  // In place: every module reads ctx.state, and collections added to State later are emptied too.
  Object.assign(ctx.state, fresh);
  ctx.touch();
}

/** The token a request to the admin API carries: `Authorization: Bearer <token>` or `x-admin-token`. */
function adminTokenOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  const bearer = /^Bearer\s+(\S+)$/i.exec(String(headers.authorization ?? ""));
  const direct = headers["x-admin-token"];
  return bearer?.[1] ?? (typeof direct === "string" ? direct : undefined);
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The admin API, outside /v1. Open on a loopback host (the default, 127.0.0.1); elsewhere it requires the emulator's
 * admin token, and with `adminApi: false` it is not served at all. `/__health` stays open (it holds nothing secret).
 */
export function registerAdminRoutes(
  app: FastifyInstance,
  ctx: EmulatorContext,
  deps: { limiter: RateLimiter; faults: FaultInjector; log: RequestLog },
): void {
  const { limiter, faults, log } = deps;
  const seed = snapshotSeed(ctx);

  app.get("/__health", async () => ok({ status: "ok", now: iso(ctx.now()) }));
  if (!ctx.options.adminApi) return;
  const token = ctx.options.adminToken;
  if (token !== null) {
    app.addHook("onRequest", async (req) => {
      if (!req.url.startsWith(`${ADMIN_PREFIX}/`) && req.url !== ADMIN_PREFIX) return;
      const given = adminTokenOf(req.headers);
      if (given === undefined || !sameSecret(given, token)) {
        throw new ApiProblem(
          "NOT_AUTHENTICATED",
          "The admin API needs the emulator's admin token (printed at start): Authorization: Bearer <token>",
        );
      }
    });
  }

  app.get(`${ADMIN_PREFIX}/bootstrap`, async (req) => {
    if (!ctx.state.bootstrap) throw new ApiProblem("NOT_FOUND", "This emulator state has no bootstrap");
    return ok({ ...ctx.state.bootstrap, baseUrl: `${req.protocol}://${req.host}${API_PREFIX}` });
  });

  app.get(`${ADMIN_PREFIX}/requests`, async (req) => {
    const q = validate(RequestsQuery, req.query, "query");
    const pattern = q.path !== undefined ? compilePathPattern(q.path) : null;
    const method = q.method?.toUpperCase();
    let rows = log
      .list()
      .filter(
        (e) =>
          (q.route === undefined || e.route === q.route) &&
          (method === undefined || e.method === method) &&
          (pattern === null || pattern.test(e.path.slice(API_PREFIX.length) || "/")) &&
          (q.status === undefined || e.status === q.status) &&
          (q.userId === undefined || e.caller?.userId === q.userId) &&
          (q.since === undefined || e.at >= q.since) &&
          (q.after === undefined || e.seq > q.after),
      );
    if (q.limit !== undefined) rows = rows.slice(-q.limit);
    return ok(rows.map((e) => ({ ...e, time: iso(e.at) })));
  });
  app.get(`${ADMIN_PREFIX}/requests/mark`, async () => ok({ seq: log.mark }));
  app.delete(`${ADMIN_PREFIX}/requests`, async () => ok({ cleared: log.clear() }));

  app.get(`${ADMIN_PREFIX}/faults`, async () => ok(faults.list()));
  app.put(`${ADMIN_PREFIX}/faults`, async (req) => ok(faults.replace(faultInputs(req.body))));
  app.post(`${ADMIN_PREFIX}/faults`, async (req, reply) => {
    reply.code(201);
    return ok(faults.add(faultInputs(req.body)));
  });
  app.delete(`${ADMIN_PREFIX}/faults`, async () => ok({ cleared: faults.clear() }));
  app.delete(`${ADMIN_PREFIX}/faults/:id`, async (req) => {
    const { id } = validate(FaultIdParams, req.params, "path");
    if (!faults.remove(id)) throw notFound("Fault rule", id);
    return ok({ id, deleted: true });
  });

  app.post(`${ADMIN_PREFIX}/reset`, async () => {
    resetState(ctx, seed);
    limiter.reset();
    return ok({ reset: true });
  });

  app.get(`${ADMIN_PREFIX}/outbox`, async (req) => {
    const q = validate(OutboxQuery, req.query, "query");
    const mails = ctx.state.outbox.filter((m) => q.to === undefined || m.to.toLowerCase() === q.to.toLowerCase());
    return ok(mails.map((m) => ({ ...m, time: iso(m.at) })));
  });

  app.get(`${ADMIN_PREFIX}/audit`, async (req) => {
    const q = validate(AuditQuery, req.query, "query");
    const events = ctx.state.audit.filter(
      (a) => (q.event === undefined || a.event === q.event) && (q.userId === undefined || a.userId === q.userId),
    );
    return ok(events.map((a) => ({ ...a, time: iso(a.at) })));
  });

  // Test control: the sessions open now (signed in and neither signed out nor idle past their timeout), never their
  // tokens: what shows that a client closes what it opens.
  app.get(`${ADMIN_PREFIX}/sessions`, async (req) => {
    const q = validate(SessionsQuery, req.query, "query");
    const now = ctx.now();
    const open = Object.values(ctx.state.sessions).filter((s) => {
      const idleMs = s.rememberMe ? 30 * 24 * 3600_000 : ctx.options.sessionIdleMs;
      return (q.userId === undefined || s.userId === q.userId) && now - s.lastSeenAt <= idleMs;
    });
    return ok(
      open.map((s) => ({
        userId: s.userId,
        rememberMe: s.rememberMe,
        createdAt: iso(s.createdAt),
        lastSeenAt: iso(s.lastSeenAt),
      })),
    );
  });

  const clockView = () => ({ now: iso(ctx.now()), nowMs: ctx.now(), offsetMs: ctx.clockOffsetMs });
  app.get(`${ADMIN_PREFIX}/clock`, async () => ok(clockView()));
  app.post(`${ADMIN_PREFIX}/clock`, async (req) => {
    const { advanceMs } = validate(ClockBody, req.body, "body");
    ctx.clockOffsetMs += advanceMs;
    advanceJobs(ctx);
    return ok(clockView());
  });

  app.put(`${ADMIN_PREFIX}/gpu-availability`, async (req) => {
    const body = validate(GpuAvailabilityBody, req.body, "body");
    const { catalog } = ctx.state;
    if (!catalog.gpuSeries.some((s) => s.id === body.seriesId)) throw notFound("GPU series", body.seriesId);
    if (!catalog.datacenters.some((d) => d.id === body.datacenterId)) throw notFound("Data center", body.datacenterId);
    const entry = catalog.gpuAvailability.find(
      (a) => a.seriesId === body.seriesId && a.datacenterId === body.datacenterId && a.gpuCount === body.gpuCount,
    );
    if (entry) entry.available = body.available;
    else catalog.gpuAvailability.push({ ...body });
    ctx.touch();
    return ok(body);
  });
}
