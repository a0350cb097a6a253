import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { RoleName, type BulkResultItem, type Team, type User } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { conflict, forbidden, invalid, notFound } from "../errors";
import { hashSecret, iso, iso0, isWithinEntity, owned, paginate, rolePermissions, type ListOptions } from "../http";
import { hashPassword, newToken } from "../secrets";
import type { TeamRec, UserRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

/** A pending invitation older than this reads as expired. */
export const INVITE_VALIDITY_MS = 7 * 24 * 3600_000;

/** The invite status as callers see it: a stale pending invitation has expired. */
export function effectiveInviteStatus(ctx: EmulatorContext, user: UserRec): UserRec["inviteStatus"] {
  if (user.inviteStatus === "pending" && user.invitedAt !== null && ctx.now() - user.invitedAt > INVITE_VALIDITY_MS) {
    return "expired";
  }
  return user.inviteStatus;
}

/** Ids of the resource groups the user belongs to, ascending. */
export function teamIdsOf(ctx: EmulatorContext, userId: string): number[] {
  return Object.values(ctx.state.teams)
    .filter((t) => t.memberIds.includes(userId))
    .map((t) => t.id)
    .sort((a, b) => a - b);
}

/** The contract's User record. */
export function userView(ctx: EmulatorContext, user: UserRec): User {
  const fullName = [user.firstName, user.lastName].filter(Boolean).join(" ");
  return {
    id: user.id,
    email: user.email,
    firstName: user.firstName,
    lastName: user.lastName,
    name: fullName || user.email,
    entityId: user.entityId,
    roles: [...user.roles],
    teamIds: teamIdsOf(ctx, user.id),
    inviteStatus: effectiveInviteStatus(ctx, user),
    // Two-factor authentication is mandatory: without TOTP the emailed code is the second factor.
    twoFactorEnabled: true,
    createdAt: iso(user.createdAt),
    updatedAt: iso(user.updatedAt),
    deletedAt: iso0(user.deletedAt),
  };
}

/** The contract's Team (resource group) record, with its computed member and VM counts. */
export function teamView(ctx: EmulatorContext, team: TeamRec): Team {
  return {
    id: team.id,
    name: team.name,
    parentTeamId: team.parentTeamId,
    entityId: team.entityId,
    memberCount: team.memberIds.length,
    vmCount: Object.values(ctx.state.vms).filter((vm) => vm.teamId === team.id && vm.entityId === team.entityId).length,
    createdAt: iso(team.createdAt),
    updatedAt: iso(team.updatedAt),
  };
}

/** Sorting and search over User views, shared by the user list and a group's member page. */
export const userListOptions = (defaultSort: string): ListOptions<User> => ({
  sortFields: {
    createdAt: (u) => u.createdAt,
    email: (u) => u.email.toLowerCase(),
    firstName: (u) => u.firstName?.toLowerCase() ?? null,
    lastName: (u) => u.lastName?.toLowerCase() ?? null,
  },
  defaultSort,
  searchFields: [(u) => u.email, (u) => u.firstName, (u) => u.lastName],
});

export const teamListOptions: ListOptions<Team> = {
  sortFields: { name: (t) => t.name.toLowerCase(), createdAt: (t) => t.createdAt },
  defaultSort: "name:asc",
  searchFields: [(t) => t.name],
};

/** The entity a list acts on: `filter[entityId]` when given (the active entity or one of its children), else the active one. */
export function listEntity(ctx: EmulatorContext, caller: Caller, filterEntityId: string | undefined): string {
  if (filterEntityId === undefined) return caller.entityId;
  if (!isWithinEntity(ctx, filterEntityId, caller.entityId)) {
    throw forbidden(`filter[entityId] ${filterEntityId} is not the active entity or one of its children`);
  }
  return filterEntityId;
}

/** A live (not deleted) user of the caller's active entity, or 404. */
export function liveUser(ctx: EmulatorContext, caller: Caller, id: string): UserRec {
  const user = owned(ctx.state.users, id, caller, "User");
  if (user.deletedAt !== null) throw notFound("User", id);
  return user;
}

/** Users named in a request body must be live users of the entity (400 otherwise, naming them). */
export function bodyUsers(ctx: EmulatorContext, entityId: string, ids: readonly string[], field: string): UserRec[] {
  const missing: string[] = [];
  const found: UserRec[] = [];
  for (const id of new Set(ids)) {
    const user = ctx.state.users[id];
    if (!user || user.entityId !== entityId || user.deletedAt !== null) missing.push(id);
    else found.push(user);
  }
  if (missing.length > 0) throw invalid(`${field}: no such user in this entity: ${missing.join(", ")}`);
  return found;
}

/** Resource groups named in a request body must be groups of the entity (400 otherwise, naming them). */
export function bodyTeams(ctx: EmulatorContext, entityId: string, ids: readonly number[], field: string): TeamRec[] {
  const missing: number[] = [];
  const found: TeamRec[] = [];
  for (const id of new Set(ids)) {
    const team = ctx.state.teams[String(id)];
    if (!team || team.entityId !== entityId) missing.push(id);
    else found.push(team);
  }
  if (missing.length > 0) throw invalid(`${field}: no such resource group in this entity: ${missing.join(", ")}`);
  return found;
}

/** Adds every user to every group, skipping existing memberships; returns how many were added. */
export function addMemberships(ctx: EmulatorContext, users: readonly UserRec[], teams: readonly TeamRec[]): number {
  let affected = 0;
  for (const team of teams) {
    for (const user of users) {
      if (team.memberIds.includes(user.id)) continue;
      team.memberIds.push(user.id);
      team.updatedAt = ctx.now();
      affected++;
    }
  }
  return affected;
}

/** A caller may grant or revoke only roles whose permissions it fully holds itself. */
function assertGrantable(caller: Caller, roles: readonly RoleName[]): void {
  const beyond = roles.filter((r) => !rolePermissions[r].every((p) => caller.permissions.has(p)));
  if (beyond.length > 0) {
    throw forbidden(`Cannot grant or revoke role(s) ${beyond.join(", ")}: they carry permissions the caller lacks`);
  }
}

const normalizeEmail = (email: string) => email.trim().toLowerCase();

function assertEmailFree(ctx: EmulatorContext, email: string, exceptUserId?: string): void {
  const taken = Object.values(ctx.state.users).some(
    (u) => u.deletedAt === null && u.id !== exceptUserId && u.email.toLowerCase() === email,
  );
  if (taken) throw conflict(`A user with the email ${email} already exists`);
}

/**
 * Mails an invitation. Its token works like a password-reset token (POST /auth/reset-password sets the first password)
 * and lives as long as the invitation; a new invitation replaces the previous token.
 */
function sendInvite(ctx: EmulatorContext, user: UserRec): void {
  const entity = ctx.state.entities[user.entityId];
  const now = ctx.now();
  user.invitedAt = now;
  user.inviteStatus = "pending";
  user.updatedAt = now;
  for (const [hash, entry] of Object.entries(ctx.state.resetTokens)) {
    if (entry.userId === user.id) delete ctx.state.resetTokens[hash];
  }
  const token = newToken();
  ctx.state.resetTokens[hashSecret(token)] = { userId: user.id, expiresAt: now + INVITE_VALIDITY_MS };
  ctx.state.outbox.push({
    at: now,
    to: user.email,
    kind: "invite",
    subject: `You are invited to ${entity?.name ?? "your organization"}`,
    secret: token,
  });
}

/** Soft delete: the record stays (deletedAt set), its sessions and group memberships go. */
function softDelete(ctx: EmulatorContext, user: UserRec): void {
  const now = ctx.now();
  user.deletedAt = now;
  user.updatedAt = now;
  for (const [hash, session] of Object.entries(ctx.state.sessions)) {
    if (session.userId === user.id) delete ctx.state.sessions[hash];
  }
  for (const [hash, pending] of Object.entries(ctx.state.pendingTwoFactor)) {
    if (pending.userId === user.id) delete ctx.state.pendingTwoFactor[hash];
  }
  for (const team of Object.values(ctx.state.teams)) {
    if (team.memberIds.includes(user.id)) {
      team.memberIds = team.memberIds.filter((id) => id !== user.id);
      team.updatedAt = now;
    }
  }
}

const roleView = (name: RoleName) => ({ id: name, name, permissions: [...rolePermissions[name]] });

type BulkItem = z.input<typeof BulkResultItem>;
const bulkOk = (id: string | number): BulkItem => ({ id, success: true, jobId: null, error: null });
const bulkError = (id: string | number, error: string): BulkItem => ({ id, success: false, jobId: null, error });

function userHandlers(ctx: EmulatorContext): RouteHandlers {
  const eachUser = (caller: Caller, ids: readonly string[], act: (user: UserRec) => string | null): BulkItem[] =>
    [...new Set(ids)].map((id) => {
      const user = ctx.state.users[id];
      if (!user || user.entityId !== caller.entityId || user.deletedAt !== null) {
        return bulkError(id, `User ${id} not found`);
      }
      const error = act(user);
      return error === null ? bulkOk(id) : bulkError(id, error);
    });

  return {
    me({ caller }) {
      return userView(ctx, caller.user);
    },

    listUsers({ query, caller }) {
      const entityId = listEntity(ctx, caller, query["filter[entityId]"]);
      if (query.roleId !== undefined && query.roleId !== "0" && !RoleName.safeParse(query.roleId).success) {
        throw invalid(`roleId: unknown role "${query.roleId}"; use one of ${RoleName.options.join(", ")} or 0`);
      }
      const deleted = query.deletedFilter ?? "exclude";
      const excluded = query["filter[excludeTeamId]"];
      const excludedMembers = new Set(
        excluded === undefined ? [] : (ctx.state.teams[String(excluded)]?.memberIds ?? []),
      );
      const rows = Object.values(ctx.state.users)
        .filter((u) => u.entityId === entityId)
        .filter((u) =>
          deleted === "exclude" ? u.deletedAt === null : deleted === "only" ? u.deletedAt !== null : true,
        )
        .map((u) => userView(ctx, u))
        .filter((u) => !excludedMembers.has(u.id))
        .filter((u) => query.inviteStatus === undefined || query.inviteStatus.includes(u.inviteStatus))
        .filter((u) =>
          query.teamId === undefined
            ? true
            : query.teamId === 0
              ? u.teamIds.length === 0
              : u.teamIds.includes(query.teamId),
        )
        .filter((u) =>
          query.roleId === undefined
            ? true
            : query.roleId === "0"
              ? u.roles.length === 0
              : u.roles.includes(query.roleId),
        )
        .filter((u) => query.noTeam !== true || u.teamIds.length === 0)
        .filter((u) => query.noRole !== true || u.roles.length === 0);
      return paginate(rows, query, userListOptions("createdAt:desc"));
    },

    createUser({ body, caller }) {
      const register = body.action === "register";
      const entityId = body.entityId ?? caller.entityId;
      if (!isWithinEntity(ctx, entityId, caller.entityId)) {
        throw forbidden(`entityId ${entityId} is not the active entity or one of its children`);
      }
      const email = normalizeEmail(body.email);
      assertEmailFree(ctx, email);
      const roles = [...new Set<RoleName>(body.roleNames ?? ["tenant-user"])];
      assertGrantable(caller, roles);
      const teams = bodyTeams(ctx, entityId, body.teamIds ?? [], "teamIds");
      const now = ctx.now();
      const user: UserRec = {
        id: randomUUID(),
        entityId,
        email,
        firstName: body.firstName ?? null,
        lastName: body.lastName ?? null,
        passwordHash: register && body.password !== undefined ? hashPassword(body.password) : null,
        roles,
        inviteStatus: register ? "activated" : "pending",
        invitedAt: null,
        totpSecret: null,
        twoFactorSetupAt: null,
        backupCodeHashes: [],
        platformAdmin: false,
        createdAt: now,
        updatedAt: now,
        deletedAt: null,
      };
      ctx.state.users[user.id] = user;
      if (!register) sendInvite(ctx, user);
      addMemberships(ctx, [user], teams);
      return userView(ctx, user);
    },

    getUser({ params, caller }) {
      return userView(ctx, liveUser(ctx, caller, params.id));
    },

    updateUser({ params, body, caller }) {
      const user = liveUser(ctx, caller, params.id);
      if (body.email !== undefined) {
        const email = normalizeEmail(body.email);
        assertEmailFree(ctx, email, user.id);
        user.email = email;
      }
      if (body.firstName !== undefined) user.firstName = body.firstName;
      if (body.lastName !== undefined) user.lastName = body.lastName;
      user.updatedAt = ctx.now();
      return userView(ctx, user);
    },

    deleteUser({ params, caller }) {
      const user = liveUser(ctx, caller, params.id);
      if (user.id === caller.user.id) throw conflict("You cannot delete your own user");
      softDelete(ctx, user);
    },

    resendInvite({ params, caller }) {
      const user = liveUser(ctx, caller, params.id);
      if (user.inviteStatus === "activated") throw conflict(`User ${user.id} has already accepted the invitation`);
      sendInvite(ctx, user);
      return {
        id: user.id,
        inviteStatus: effectiveInviteStatus(ctx, user),
        invitedAt: iso(user.invitedAt ?? ctx.now()),
      };
    },

    userTeams({ params, query, caller }) {
      const user = liveUser(ctx, caller, params.id);
      const teams = Object.values(ctx.state.teams)
        .filter((t) => t.memberIds.includes(user.id))
        .map((t) => teamView(ctx, t));
      return paginate(teams, query, teamListOptions);
    },

    userRoles({ params, caller }) {
      return liveUser(ctx, caller, params.userId).roles.map(roleView);
    },

    addUserRole({ params, body, caller }) {
      const user = liveUser(ctx, caller, params.userId);
      assertGrantable(caller, [body.roleName]);
      if (!user.roles.includes(body.roleName)) {
        user.roles.push(body.roleName);
        user.updatedAt = ctx.now();
      }
      return user.roles.map(roleView);
    },

    removeUserRole({ params, caller }) {
      const user = liveUser(ctx, caller, params.userId);
      const role = user.roles.find((r) => r === params.roleName);
      if (role === undefined) throw notFound("Role", `${params.roleName} of user ${user.id}`);
      assertGrantable(caller, [role]);
      user.roles = user.roles.filter((r) => r !== role);
      user.updatedAt = ctx.now();
    },

    bulkDeleteUsers({ body, caller }) {
      return eachUser(caller, body.ids, (user) => {
        if (user.id === caller.user.id) return "You cannot delete your own user";
        softDelete(ctx, user);
        return null;
      });
    },

    bulkResendInvite({ body, caller }) {
      return eachUser(caller, body.ids, (user) => {
        if (user.inviteStatus === "activated") return `User ${user.id} has already accepted the invitation`;
        sendInvite(ctx, user);
        return null;
      });
    },

    bulkAssignRoles({ body, caller }) {
      const users = bodyUsers(ctx, caller.entityId, body.userIds, "userIds");
      const roles = [...new Set(body.roleNames)];
      assertGrantable(caller, roles);
      let affected = 0;
      for (const user of users) {
        for (const role of roles) {
          if (user.roles.includes(role)) continue;
          user.roles.push(role);
          user.updatedAt = ctx.now();
          affected++;
        }
      }
      return { affected };
    },

    bulkAssignTeams({ body, caller }) {
      const users = bodyUsers(ctx, caller.entityId, body.userIds, "userIds");
      const teams = bodyTeams(ctx, caller.entityId, body.teamIds, "teamIds");
      return { affected: addMemberships(ctx, users, teams) };
    },
  };
}

/** Users: CRUD with soft delete, roles, invites, memberships, bulk operations. */
export async function userRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  defineRoutes(app, ctx, userHandlers(ctx));
}
