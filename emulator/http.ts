import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { z } from "zod";
import { documentedOnly, type Permission, type RoleName, type RouteSpec } from "../provider/api";
import type { Caller, EmulatorContext } from "./context";
import { ApiProblem, forbidden, fromZodError, invalid } from "./errors";
import type { ApiKeyRec, UserRec } from "./state";

export const API_PREFIX = "/v1";
export const SESSION_COOKIE = "session_token";
export const TWO_FACTOR_COOKIE = "two_factor_token";

/** Permissions of each role (the spec names three permissions; the rest are ours, see emulator/README.md). */
export const rolePermissions: Record<RoleName, readonly Permission[]> = {
  "tenant-admin": [
    "api-keys:self",
    "api-keys:manage",
    "vm:operate",
    "vm:read",
    "vm:write",
    "gpu:read",
    "gpu:write",
    "volume:read",
    "volume:write",
    "network:read",
    "network:write",
    "user:read",
    "user:write",
    "team:read",
    "team:write",
    "metrics:read",
  ],
  "tenant-user": [
    "api-keys:self",
    "vm:read",
    "gpu:read",
    "volume:read",
    "network:read",
    "user:read",
    "team:read",
    "metrics:read",
  ],
  "vm-operator": ["api-keys:self", "vm:read", "vm:operate", "gpu:read", "volume:read", "network:read"],
};

export function permissionsOf(roles: readonly RoleName[]): Set<Permission> {
  return new Set(roles.flatMap((r) => rolePermissions[r]));
}

export const hashSecret = (secret: string) => createHash("sha256").update(secret).digest("hex");
export const iso = (ms: number) => new Date(ms).toISOString();
export const iso0 = (ms: number | null) => (ms === null ? null : iso(ms));

declare module "fastify" {
  interface FastifyRequest {
    /** The authenticated caller (entity not yet resolved), or null. */
    caller: Caller | null;
    /** Why the credentials presented were refused, when they were. */
    authProblem: ApiProblem | null;
  }
  interface FastifyContextConfig {
    /** The contract route this Fastify route implements (absent on admin routes). */
    routeName?: string;
    routeSpec?: RouteSpec;
  }
}

/** A success envelope with extras; plain handler results become `{success: true, data}`. */
export class Envelope {
  constructor(
    readonly data: unknown,
    readonly meta?: Record<string, unknown>,
    readonly message?: string,
  ) {}
}

export interface ListOptions<T> {
  /** Sortable fields and how to read each. */
  sortFields: Record<string, (item: T) => string | number | null>;
  defaultSort: string;
  /** Fields matched by `search` (case-insensitive partial). */
  searchFields: ((item: T) => string | null | undefined)[];
}

/** Filter by `search`, sort, then cut the page: the spec's list rules in one place. */
export function paginate<T>(
  items: T[],
  query: { page?: number; limit?: number; sort?: string; search?: string },
  opts: ListOptions<T>,
  extraMeta?: Record<string, unknown>,
): Envelope {
  let rows = items;
  if (query.search) {
    const needle = query.search.toLowerCase();
    rows = rows.filter((item) => opts.searchFields.some((f) => (f(item) ?? "").toLowerCase().includes(needle)));
  }
  const [field, dir] = (query.sort ?? opts.defaultSort).split(":");
  const key = opts.sortFields[field];
  if (!key) {
    throw invalid(`sort: unknown field "${field}"; sortable fields are ${Object.keys(opts.sortFields).join(", ")}`);
  }
  const sign = dir === "desc" ? -1 : 1;
  rows = [...rows].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x === y) return 0;
    if (x === null) return 1;
    if (y === null) return -1;
    return (x < y ? -1 : 1) * sign;
  });
  const page = query.page ?? 1;
  const limit = query.limit ?? 10;
  const total = rows.length;
  const totalPages = Math.ceil(total / limit);
  const data = rows.slice((page - 1) * limit, page * limit);
  return new Envelope(data, {
    total,
    page,
    pageSize: limit,
    totalPages,
    hasNextPage: page < totalPages,
    hasPreviousPage: page > 1,
    ...extraMeta,
  });
}

/** Is `entityId` the same as `ancestorId` or one of its descendants? */
export function isWithinEntity(ctx: EmulatorContext, entityId: string, ancestorId: string): boolean {
  for (let id: string | null = entityId; id !== null; id = ctx.state.entities[id]?.parentId ?? null) {
    if (id === ancestorId) return true;
  }
  return false;
}

function readCookie(req: FastifyRequest, name: string): string | undefined {
  const cookies = (req as FastifyRequest & { cookies?: Record<string, string | undefined> }).cookies;
  return cookies?.[name];
}

function apiKeyCaller(ctx: EmulatorContext, secret: string): Caller {
  const key = Object.values(ctx.state.apiKeys).find((k) => k.secretHash === hashSecret(secret));
  if (!key) throw new ApiProblem("API_KEY_INVALID", "API key is invalid, revoked or rotated");
  const user = ctx.state.users[key.userId];
  if (!user || user.deletedAt !== null) throw new ApiProblem("API_KEY_INVALID", "API key owner no longer exists");
  if (!key.enabled) throw new ApiProblem("API_KEY_INVALID", "API key is suspended");
  if (key.expiresAt <= ctx.now()) throw new ApiProblem("API_KEY_EXPIRED", "API key has expired");
  key.lastUsedAt = ctx.now();
  return callerFor(user, key, null);
}

export function callerFor(user: UserRec, apiKey: ApiKeyRec | null, sessionTokenHash: string | null): Caller {
  const userPermissions = permissionsOf(user.roles);
  let roles = user.roles;
  let permissions = userPermissions;
  if (apiKey?.roleId) {
    roles = [apiKey.roleId];
    // A key never exceeds its creator: its role is cut down to what the owner still holds.
    permissions = new Set([...permissionsOf(roles)].filter((p) => userPermissions.has(p)));
  }
  return {
    kind: apiKey ? "apiKey" : "session",
    user,
    apiKey,
    sessionTokenHash,
    entityId: user.entityId,
    roles,
    permissions,
  };
}

/** Finds a live session by its token, or explains why there is none. Refreshes it (idle timeout restarts). */
export function sessionCaller(ctx: EmulatorContext, token: string): Caller {
  const tokenHash = hashSecret(token);
  const session = ctx.state.sessions[tokenHash];
  if (!session) throw new ApiProblem("SESSION_EXPIRED", "Session expired or was invalidated; sign in again");
  const idle = session.rememberMe ? 30 * 24 * 3600_000 : ctx.options.sessionIdleMs;
  const user = ctx.state.users[session.userId];
  if (ctx.now() - session.lastSeenAt > idle || !user || user.deletedAt !== null) {
    delete ctx.state.sessions[tokenHash];
    ctx.touch();
    throw new ApiProblem("SESSION_EXPIRED", "Session expired or was invalidated; sign in again");
  }
  session.lastSeenAt = ctx.now();
  return callerFor(user, null, tokenHash);
}

/** onRequest: work out who is calling from X-API-Key, Authorization or the session cookie. Never throws. */
export function identify(ctx: EmulatorContext, req: FastifyRequest): void {
  req.caller = null;
  req.authProblem = null;
  try {
    const apiKey = req.headers["x-api-key"];
    const authorization = req.headers.authorization;
    const cookie = readCookie(req, SESSION_COOKIE);
    if (typeof apiKey === "string" && apiKey.length > 0) {
      req.caller = apiKeyCaller(ctx, apiKey);
    } else if (authorization !== undefined) {
      const match = /^Bearer ([^\s]+)$/.exec(authorization);
      if (!match)
        throw new ApiProblem("NOT_AUTHENTICATED", "Malformed Authorization header: expected `Bearer <token>`");
      req.caller = match[1].startsWith("svc_") ? apiKeyCaller(ctx, match[1]) : sessionCaller(ctx, match[1]);
    } else if (cookie) {
      req.caller = sessionCaller(ctx, cookie);
    }
  } catch (e) {
    if (!(e instanceof ApiProblem)) throw e;
    req.authProblem = e;
  }
}

function authorize(
  ctx: EmulatorContext,
  spec: RouteSpec,
  req: FastifyRequest,
  entityId: string | undefined,
): Caller | null {
  if (spec.auth === "public" || spec.auth === "twoFactor") return req.caller;
  if (req.authProblem) throw req.authProblem;
  const caller = req.caller;
  if (!caller)
    throw new ApiProblem(
      "NOT_AUTHENTICATED",
      "Authentication required: send X-API-Key, a bearer token or the session cookie",
    );
  if (spec.auth === "session" && caller.kind !== "session") {
    throw forbidden(
      "This operation needs a signed-in session with two-factor authentication completed; API keys cannot do it",
    );
  }
  if (entityId !== undefined && entityId !== caller.user.entityId) {
    if (!ctx.state.entities[entityId] || !isWithinEntity(ctx, entityId, caller.user.entityId)) {
      throw forbidden(`Entity ${entityId} is not the caller's entity or one of its children`);
    }
    caller.entityId = entityId;
  }
  if (spec.permission && !spec.permission.some((p) => caller.permissions.has(p))) {
    throw forbidden(`This operation needs the permission ${spec.permission.join(" or ")}`);
  }
  return caller;
}

export interface HandlerInput<S extends RouteSpec> {
  params: S extends { params: z.ZodType } ? z.output<S["params"]> : Record<string, never>;
  query: S extends { query: z.ZodType } ? z.output<S["query"]> : Record<string, never>;
  body: S extends { body: z.ZodType } ? z.output<S["body"]> : undefined;
  /** Null only on public and 2FA routes. */
  caller: S extends { auth: "public" | "twoFactor" } ? Caller | null : Caller;
  req: FastifyRequest;
  reply: FastifyReply;
}

type HandlerResult<S extends RouteSpec> = S extends { status: 204 }
  ? void
  : (S extends { data: z.ZodType } ? z.input<S["data"]> : unknown) | Envelope;

function hasJsonContentType(req: FastifyRequest): boolean {
  const type = req.headers["content-type"];
  return typeof type === "string" && /^application\/json\s*(;|$)/i.test(type);
}

function parse(schema: z.ZodType | undefined, value: unknown, where: "body" | "query" | "path"): unknown {
  if (!schema) return where === "body" ? undefined : {};
  // A JSON `null` body is not an empty object: only absent path parameters and query strings default to {}.
  const result = schema.safeParse(where === "body" ? value : (value ?? {}));
  if (!result.success) throw fromZodError(where, result.error);
  return result.data;
}

/**
 * Registers one contract route: checks content type, validates path, query and body against the contract (strict),
 * authenticates and authorises, resolves the entity, runs the handler, and wraps the result in the success envelope
 * after checking it against the contract's response schema (a mismatch is an emulator bug and answers 500).
 */
export function defineRoute<S extends RouteSpec>(
  app: FastifyInstance,
  ctx: EmulatorContext,
  name: string,
  spec: S,
  handler: (input: HandlerInput<S>) => HandlerResult<S> | Promise<HandlerResult<S>>,
): void {
  app.route({
    method: spec.method,
    url: API_PREFIX + spec.path,
    config: { routeName: name, routeSpec: spec },
    handler: async (req, reply) => {
      const params = parse(spec.params, req.params, "path");
      const query = parse(spec.query, req.query, "query");
      let body: unknown;
      if (spec.body) {
        if (!hasJsonContentType(req)) throw invalid("Content-Type must be application/json on a request with a body");
        body = parse(spec.body, req.body, "body");
      } else if (
        req.body !== undefined &&
        req.body !== null &&
        !(typeof req.body === "object" && Object.keys(req.body).length === 0)
      ) {
        throw invalid("This operation takes no body");
      }
      const entityId = (query as { entityId?: string }).entityId;
      const caller = authorize(ctx, spec, req, entityId);
      const result = await handler({ params, query, body, caller, req, reply } as unknown as HandlerInput<S>);
      ctx.touch();
      if (spec.status === 204) {
        return reply.code(204).send();
      }
      const envelope = result instanceof Envelope ? result : new Envelope(result);
      if (spec.data) {
        const checked = spec.data.safeParse(envelope.data);
        if (!checked.success) {
          throw new ApiProblem(
            "SERVER_ERROR",
            `Emulator response for ${name} does not match the contract: ${checked.error.message}`,
          );
        }
      }
      reply.code(spec.status);
      return {
        success: true,
        data: ctx.options.specFieldsOnly && spec.data ? documentedOnly(spec.data, envelope.data) : envelope.data,
        ...(envelope.meta ? { meta: envelope.meta } : {}),
        ...(envelope.message !== undefined ? { message: envelope.message } : {}),
      };
    },
  });
}

/** Looks up a record owned by the caller's active entity; anything else is invisible (404). */
export function owned<T extends { entityId: string }>(
  records: Record<string, T>,
  id: string,
  caller: Caller,
  what: string,
): T {
  const rec = records[id];
  if (!rec || rec.entityId !== caller.entityId) throw new ApiProblem("NOT_FOUND", `${what} ${id} not found`);
  return rec;
}
