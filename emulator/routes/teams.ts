import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { BulkResultItem, PageMeta } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { conflict, invalid, notFound } from "../errors";
import { owned, paginate } from "../http";
import type { TeamRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";
import {
  addMemberships,
  bodyTeams,
  bodyUsers,
  listEntity,
  teamListOptions,
  teamView,
  userListOptions,
  userView,
} from "./users";

/** Group names are unique within an entity, compared case-insensitively. */
function assertNameFree(ctx: EmulatorContext, entityId: string, name: string, exceptId?: number): void {
  const taken = Object.values(ctx.state.teams).some(
    (t) => t.entityId === entityId && t.id !== exceptId && t.name.toLowerCase() === name.toLowerCase(),
  );
  if (taken) throw conflict(`A resource group named "${name}" already exists in this entity`);
}

/** Is `candidateId` the group itself or one of its descendants? */
function isSelfOrDescendant(ctx: EmulatorContext, team: TeamRec, candidateId: number): boolean {
  for (let id: number | null = candidateId; id !== null; id = ctx.state.teams[String(id)]?.parentTeamId ?? null) {
    if (id === team.id) return true;
  }
  return false;
}

const childrenOf = (ctx: EmulatorContext, id: number) =>
  Object.values(ctx.state.teams).filter((t) => t.parentTeamId === id);

/** Deletes a group: resources assigned to it become unassigned, its memberships go with it. */
function removeTeam(ctx: EmulatorContext, team: TeamRec): void {
  const now = ctx.now();
  for (const records of [ctx.state.vms, ctx.state.gpuVms, ctx.state.volumes]) {
    for (const rec of Object.values(records)) {
      if (rec.teamId === team.id) {
        rec.teamId = null;
        rec.updatedAt = now;
      }
    }
  }
  delete ctx.state.teams[String(team.id)];
}

const ownedTeam = (ctx: EmulatorContext, caller: Caller, id: number) =>
  owned(ctx.state.teams, String(id), caller, "Resource group");

function teamHandlers(ctx: EmulatorContext): RouteHandlers {
  return {
    listTeams({ query, caller }) {
      const entityId = listEntity(ctx, caller, query["filter[entityId]"]);
      const teams = Object.values(ctx.state.teams).filter((t) => t.entityId === entityId);
      const members = new Set(teams.flatMap((t) => t.memberIds));
      const unassignedUsers = Object.values(ctx.state.users).filter(
        (u) => u.entityId === entityId && u.deletedAt === null && !members.has(u.id),
      ).length;
      const unassignedVMs = Object.values(ctx.state.vms).filter(
        (vm) => vm.entityId === entityId && vm.teamId === null,
      ).length;
      return paginate(
        teams.map((t) => teamView(ctx, t)),
        query,
        teamListOptions,
        { unassignedUsers, unassignedVMs },
      );
    },

    createTeam({ body, caller }) {
      assertNameFree(ctx, caller.entityId, body.name);
      if (body.parentTeamId !== undefined) bodyTeams(ctx, caller.entityId, [body.parentTeamId], "parentTeamId");
      const now = ctx.now();
      const team: TeamRec = {
        id: ctx.state.nextTeamId++,
        entityId: caller.entityId,
        name: body.name,
        parentTeamId: body.parentTeamId ?? null,
        memberIds: [],
        createdAt: now,
        updatedAt: now,
      };
      ctx.state.teams[String(team.id)] = team;
      return { teamId: team.id };
    },

    getTeam({ params, query, caller }) {
      const team = ownedTeam(ctx, caller, params.id);
      const members = team.memberIds.flatMap((id) => {
        const user = ctx.state.users[id];
        return user ? [userView(ctx, user)] : [];
      });
      const page = paginate(members, query, userListOptions("email:asc"));
      return { ...teamView(ctx, team), members: page.data as typeof members, membersMeta: page.meta as PageMeta };
    },

    updateTeam({ params, body, caller }) {
      const team = ownedTeam(ctx, caller, params.id);
      if (body.name !== undefined) assertNameFree(ctx, team.entityId, body.name, team.id);
      if (body.parentTeamId !== undefined && body.parentTeamId !== null) {
        bodyTeams(ctx, team.entityId, [body.parentTeamId], "parentTeamId");
        if (isSelfOrDescendant(ctx, team, body.parentTeamId)) {
          throw invalid(`parentTeamId: ${body.parentTeamId} is this group or one of its descendants`);
        }
      }
      if (body.name !== undefined) team.name = body.name;
      if (body.parentTeamId !== undefined) team.parentTeamId = body.parentTeamId;
      team.updatedAt = ctx.now();
      return teamView(ctx, team);
    },

    deleteTeam({ params, caller }) {
      const team = ownedTeam(ctx, caller, params.id);
      const children = childrenOf(ctx, team.id);
      if (children.length > 0) {
        throw conflict(
          `Resource group ${team.id} has child groups (${children.map((c) => c.id).join(", ")}); delete or move them first`,
        );
      }
      removeTeam(ctx, team);
    },

    addTeamMember({ params, body, caller }) {
      const team = ownedTeam(ctx, caller, params.id);
      const [user] = bodyUsers(ctx, team.entityId, [body.userId], "userId");
      if (team.memberIds.includes(user.id)) throw conflict(`User ${user.id} is already a member of group ${team.id}`);
      addMemberships(ctx, [user], [team]);
      return { teamId: team.id, userId: user.id };
    },

    removeTeamMember({ params, caller }) {
      const team = ownedTeam(ctx, caller, params.id);
      if (!team.memberIds.includes(params.userId)) throw notFound("Member", `${params.userId} of group ${team.id}`);
      team.memberIds = team.memberIds.filter((id) => id !== params.userId);
      team.updatedAt = ctx.now();
    },

    bulkDeleteTeams({ body, caller }) {
      const ids = [...new Set(body.ids)];
      // A parent listed together with all its children goes too: shrink to the groups whose children all go.
      const deletable = new Set(ids.filter((id) => ctx.state.teams[String(id)]?.entityId === caller.entityId));
      for (let changed = true; changed;) {
        changed = false;
        for (const id of deletable) {
          if (childrenOf(ctx, id).some((c) => !deletable.has(c.id))) {
            deletable.delete(id);
            changed = true;
          }
        }
      }
      return ids.map((id): z.input<typeof BulkResultItem> => {
        const team = ctx.state.teams[String(id)];
        if (!team || team.entityId !== caller.entityId) {
          return { id, success: false, jobId: null, error: `Resource group ${id} not found` };
        }
        if (!deletable.has(id)) {
          return { id, success: false, jobId: null, error: `Resource group ${id} has child groups` };
        }
        removeTeam(ctx, team);
        return { id, success: true, jobId: null, error: null };
      });
    },

    bulkAddTeamMembers({ body, caller }) {
      const users = bodyUsers(ctx, caller.entityId, body.userIds, "userIds");
      const teams = bodyTeams(ctx, caller.entityId, body.teamIds, "teamIds");
      return { affected: addMemberships(ctx, users, teams) };
    },
  };
}

/** Resource groups (teams): CRUD, hierarchy, members, bulk operations. */
export async function teamRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  defineRoutes(app, ctx, teamHandlers(ctx));
}
