import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { ApiKey, ApiKeyWithSecret, ApiKeyStatus, RoleName } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { forbidden, notFound } from "../errors";
import { Envelope, hashSecret, iso, iso0, owned, paginate, rolePermissions } from "../http";
import { keyStart, newApiKeySecret } from "../secrets";
import type { ApiKeyRec } from "../state";
import { recordAudit } from "./auth";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

const DAY_MS = 24 * 3600_000;
const DEFAULT_EXPIRY_DAYS = 90;
const EXPIRING_WITHIN_MS = 30 * DAY_MS;
const EXPIRATION_CHOICES = [7, 30, 90, 180, 365];

const roleDescriptions: Record<RoleName, string> = {
  "tenant-admin": "Everything in the entity, including users, resource groups and every API key",
  "tenant-user": "Read access to the entity's resources; manages only its own API keys",
  "vm-operator": "Read access, plus VM power and rescue operations",
};

/** Status is computed on read: suspension first, then expiry. */
export function apiKeyStatus(key: ApiKeyRec, now: number): ApiKeyStatus {
  if (!key.enabled) return "Suspended";
  if (key.expiresAt <= now) return "Expired";
  if (key.expiresAt - now <= EXPIRING_WITHIN_MS) return "Expiring";
  return "Active";
}

/** The contract view of a key, without its secret. */
export function apiKeyView(key: ApiKeyRec, now: number): z.input<typeof ApiKey> {
  return {
    id: key.id,
    name: key.name,
    start: key.start,
    status: apiKeyStatus(key, now),
    enabled: key.enabled,
    roleId: key.roleId,
    userId: key.userId,
    metadata: key.metadata,
    expiresAt: iso(key.expiresAt),
    createdAt: iso(key.createdAt),
    lastUsedAt: iso0(key.lastUsedAt),
  };
}

/** The view with the full secret: only creation and rotation answer it. */
function withSecret(key: ApiKeyRec, now: number, secret: string): z.input<typeof ApiKeyWithSecret> {
  return { ...apiKeyView(key, now), key: secret };
}

/** Can the caller hold every permission of the role? (A key never exceeds its creator.) */
function canGrant(caller: Caller, role: RoleName): boolean {
  return rolePermissions[role].every((p) => caller.permissions.has(p));
}

function apiKeyHandlers(ctx: EmulatorContext): RouteHandlers {
  /**
   * A key of the caller's active entity that the caller may act on: any with api-keys:manage, otherwise only
   * their own. Keys the caller may not see are 404, as they are absent from the caller's list.
   */
  function manageableKey(caller: Caller, keyId: string): ApiKeyRec {
    const key = owned(ctx.state.apiKeys, keyId, caller, "API key");
    if (!caller.permissions.has("api-keys:manage") && key.userId !== caller.user.id) throw notFound("API key", keyId);
    return key;
  }

  function removeKey(key: ApiKeyRec): void {
    delete ctx.state.apiKeys[key.id];
  }

  return {
    createApiKey({ body, caller, req }) {
      if (body.roleId !== undefined && !canGrant(caller, body.roleId)) {
        throw forbidden(`A key cannot exceed its creator: you do not hold every permission of the role ${body.roleId}`);
      }
      const now = ctx.now();
      const secret = newApiKeySecret();
      const key: ApiKeyRec = {
        id: randomUUID(),
        userId: caller.user.id,
        entityId: caller.user.entityId,
        name: body.name,
        secretHash: hashSecret(secret),
        start: keyStart(secret),
        roleId: body.roleId ?? null,
        metadata: body.metadata ?? null,
        enabled: true,
        expiresAt: now + (body.expiresInDays ?? DEFAULT_EXPIRY_DAYS) * DAY_MS,
        createdAt: now,
        lastUsedAt: null,
        rateLimit: null,
      };
      ctx.state.apiKeys[key.id] = key;
      recordAudit(ctx, req, "api-key.created", caller.user, true, `key ${key.id} (${key.start}...)`);
      return withSecret(key, now, secret);
    },

    deleteOwnApiKey({ params, caller, req }) {
      const key = ctx.state.apiKeys[params.keyId];
      if (!key || key.userId !== caller.user.id) throw notFound("API key", params.keyId);
      removeKey(key);
      recordAudit(ctx, req, "api-key.deleted", caller.user, true, `own key ${key.id}`);
      return { affected: 1 };
    },

    listApiKeys({ query, caller }) {
      const now = ctx.now();
      const seesAll = caller.permissions.has("api-keys:manage");
      const keys = Object.values(ctx.state.apiKeys).filter((k) => {
        const owner = ctx.state.users[k.userId];
        // Keys of deleted users no longer authenticate and are left out.
        if (!owner || owner.deletedAt !== null) return false;
        return k.entityId === caller.entityId && (seesAll || k.userId === caller.user.id);
      });
      const page = paginate(keys, query, {
        sortFields: { name: (k) => k.name.toLowerCase(), createdAt: (k) => k.createdAt, expiresAt: (k) => k.expiresAt },
        defaultSort: "createdAt:desc",
        searchFields: [(k) => k.name],
      });
      return new Envelope(
        (page.data as ApiKeyRec[]).map((k) => apiKeyView(k, now)),
        page.meta,
      );
    },

    deleteApiKey({ params, caller, req }) {
      const key = owned(ctx.state.apiKeys, params.keyId, caller, "API key");
      removeKey(key);
      recordAudit(ctx, req, "api-key.deleted", caller.user, true, `key ${key.id} of user ${key.userId}`);
      return { affected: 1 };
    },

    rotateApiKey({ params, caller, req }) {
      const key = manageableKey(caller, params.keyId);
      const secret = newApiKeySecret();
      key.secretHash = hashSecret(secret);
      key.start = keyStart(secret);
      recordAudit(ctx, req, "api-key.rotated", caller.user, true, `key ${key.id} (${key.start}...)`);
      return withSecret(key, ctx.now(), secret);
    },

    setApiKeyStatus({ params, body, caller, req }) {
      const key = manageableKey(caller, params.keyId);
      if (key.enabled !== body.enabled) {
        key.enabled = body.enabled;
        recordAudit(
          ctx,
          req,
          body.enabled ? "api-key.resumed" : "api-key.suspended",
          caller.user,
          true,
          `key ${key.id}`,
        );
      }
      return apiKeyView(key, ctx.now());
    },

    setApiKeyRateLimit({ params, body, caller, req }) {
      if (!caller.user.platformAdmin) throw forbidden("Only platform administrators may override a key's rate limit");
      const key = owned(ctx.state.apiKeys, params.keyId, caller, "API key");
      key.rateLimit = { requestsPerWindow: body.requestsPerWindow, windowSeconds: body.windowSeconds };
      recordAudit(
        ctx,
        req,
        "api-key.rate-limit-set",
        caller.user,
        true,
        `key ${key.id}: ${body.requestsPerWindow} per ${body.windowSeconds} s`,
      );
      return apiKeyView(key, ctx.now());
    },

    apiKeyRoleOptions({ caller }) {
      return (Object.keys(rolePermissions) as RoleName[])
        .filter((role) => canGrant(caller, role))
        .map((role) => ({ id: role, name: role, description: roleDescriptions[role] }));
    },

    apiKeyExpirationOptions() {
      return EXPIRATION_CHOICES.map((days) => ({ days, label: days === 365 ? "1 year" : `${days} days` }));
    },
  };
}

/** API keys: own and managed keys, rotation, suspension, role and expiry options. */
export async function apiKeyRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  defineRoutes(app, ctx, apiKeyHandlers(ctx));
}
