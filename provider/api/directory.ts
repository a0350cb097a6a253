import { z } from "zod";
import {
  listQueryShape,
  Name,
  NonEmpty,
  PositiveInt,
  qBool,
  qInt,
  qList,
  Timestamp,
  TeamsPageMeta,
  Uuid,
} from "./common";
import { passwordProblems, RoleName } from "./auth";

// ---- users ----
export const InviteStatus = z.enum(["activated", "pending", "expired"]);
export const User = z.object({
  id: Uuid,
  email: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  name: z.string(),
  entityId: Uuid,
  roles: z.array(z.string()),
  teamIds: z.array(z.number().int()),
  inviteStatus: InviteStatus,
  twoFactorEnabled: z.boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: Timestamp.nullable(),
});
export type User = z.infer<typeof User>;

export const UserListQuery = z.strictObject({
  ...listQueryShape,
  "filter[entityId]": Uuid.optional(),
  "filter[excludeTeamId]": qInt().optional(),
  inviteStatus: qList(InviteStatus).optional(),
  teamId: qInt(0).optional(),
  roleId: z.string().min(1).optional(),
  noTeam: qBool.optional(),
  noRole: qBool.optional(),
  deletedFilter: z.enum(["exclude", "include", "only"]).optional(),
});

const Email = z.email().max(254);
const PersonName = z.string().trim().min(1).max(100);
export const CreateUserBody = z
  .strictObject({
    email: Email,
    action: z.enum(["invite", "register"]).optional(),
    password: z.string().optional(),
    firstName: PersonName.optional(),
    lastName: PersonName.optional(),
    roleNames: z.array(RoleName).max(3).optional(),
    teamIds: z.array(PositiveInt).max(50).optional(),
    entityId: Uuid.optional(),
  })
  .superRefine((b, ctx) => {
    const register = b.action === "register";
    if (register && b.password === undefined) {
      ctx.addIssue({ code: "custom", path: ["password"], message: "password is required when action is register" });
    }
    if (!register && b.password !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["password"],
        message: "password is only accepted when action is register",
      });
    }
    if (!register && b.entityId !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["entityId"],
        message: "entityId is only accepted when action is register",
      });
    }
    if (register && b.password !== undefined) {
      const problems = passwordProblems(b.password);
      if (problems.length > 0) {
        ctx.addIssue({ code: "custom", path: ["password"], message: `password must ${problems.join(", ")}` });
      }
    }
  });
export type CreateUserBody = z.infer<typeof CreateUserBody>;
export const UpdateUserBody = z.strictObject({
  firstName: PersonName.optional(),
  lastName: PersonName.optional(),
  email: Email.optional(),
});
export const UserIdParams = z.strictObject({ userId: Uuid });
export const UserRoleParams = z.strictObject({ userId: Uuid, roleName: NonEmpty });
export const Role = z.object({ id: z.string(), name: z.string(), permissions: z.array(z.string()) });
export const AssignRoleBody = z.strictObject({ roleName: RoleName });
export const ResendInviteResult = z.object({ id: Uuid, inviteStatus: InviteStatus, invitedAt: Timestamp });
export const BulkUserIds = z.strictObject({ ids: z.array(Uuid).min(1).max(50) });
export const BulkAssignRolesBody = z.strictObject({
  userIds: z.array(Uuid).min(1).max(50),
  roleNames: z.array(RoleName).min(1).max(3),
});
export const BulkAssignTeamsBody = z.strictObject({
  userIds: z.array(Uuid).min(1).max(50),
  teamIds: z.array(PositiveInt).min(1).max(50),
});
export const BulkCountResult = z.object({ affected: z.number().int() });

// ---- resource groups (the API's teams) ----
export const Team = z.object({
  id: z.number().int(),
  name: z.string(),
  parentTeamId: z.number().int().nullable(),
  entityId: Uuid,
  memberCount: z.number().int(),
  vmCount: z.number().int(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Team = z.infer<typeof Team>;
export const TeamListQuery = z.strictObject({ ...listQueryShape, "filter[entityId]": Uuid.optional() });
export const TeamDetail = Team.extend({
  members: z.array(User),
  membersMeta: TeamsPageMeta.omit({ unassignedUsers: true, unassignedVMs: true }),
});
export const CreateTeamBody = z.strictObject({ name: Name, parentTeamId: PositiveInt.optional() });
export const CreateTeamResult = z.object({ teamId: z.number().int() });
export const UpdateTeamBody = z.strictObject({
  name: Name.optional(),
  parentTeamId: PositiveInt.nullable().optional(),
});
export const TeamMemberBody = z.strictObject({ userId: Uuid });
export const TeamMember = z.object({ teamId: z.number().int(), userId: Uuid });
export const TeamMemberParams = z.strictObject({ id: qInt(1), userId: Uuid });
export const BulkTeamIds = z.strictObject({ ids: z.array(PositiveInt).min(1).max(50) });
export const BulkAddMembersBody = BulkAssignTeamsBody;
