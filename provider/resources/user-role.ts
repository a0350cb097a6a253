import { z } from "zod";
import { CodedError } from "../client/error-codes";
import { AssignRoleBody, RoleName, UserRoleParams } from "../api";
import { ApiError, type CloudClient } from "../client";
import { BatchedPairWriter, batchedPairWriterOf } from "../client/batched-writer";
import type { HandlerContext } from "./context";
import { isNotFound } from "./errors";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import type { Props } from "./props";
import type { InputFields } from "./fields";

/**
 * A role name of the contract's (`RoleName`), refused with a message that names the unknown role and lists the known
 * ones: a message made of the value, which `expects` (a fixed text) cannot say.
 */
export const roleNameInput = z.enum(RoleName.options, {
  error: (issue) => `unknown role "${String(issue.input)}"; the roles are ${RoleName.options.join(", ")}`,
});

/** The grant route's (`POST /users/{userId}/roles`) path parameter and body. */
export const UserRoleInputs = z.strictObject({
  userId: UserRoleParams.shape.userId,
  // AssignRoleBody's roleName (RoleName), worded as above.
  roleName: roleNameInput,
});
export type UserRoleInputs = z.output<typeof UserRoleInputs>;
type UserRoleState = State<UserRoleInputs, typeof inputFields, z.output<typeof UserRoleOutputs>>;

/** Both inputs name the grant: changing either replaces it; the user reports its roles. */
const inputFields = {
  userId: {
    change: "replace",
    reported: "documented",
    description: "The user (UUID), e.g. a User's `id`. Changing it replaces the grant.",
    expects: "must be the UUID of a user (a User's `id`)",
    output: "The user (UUID).",
  },
  roleName: {
    change: "replace",
    reported: "documented",
    description: "The role granted: tenant-admin, tenant-user or vm-operator. Changing it replaces the grant.",
    output: "The role's name.",
  },
} as const satisfies InputFields<UserRoleInputs>;

/** The id of a role grant: `<userId>:<roleName>` (the API has no grant object of its own). */
export const userRoleId = (userId: string, roleName: string) => `${userId}:${roleName}`;

function parseId(id: string): UserRoleInputs {
  const [userId, roleName, ...rest] = id.split(":");
  const parsed = UserRoleInputs.safeParse({ userId, roleName });
  if (rest.length > 0 || !parsed.success) {
    throw new CodedError(
      "ID_INVALID",
      `"${id}" is not a user role id (<userId>:<roleName>, e.g. <user UUID>:vm-operator; the roles are ` +
        `${RoleName.options.join(", ")})`,
    );
  }
  return parsed.data;
}

/** The grant's outputs: the pair, which the user's roles report (no outputs beyond the inputs). */
const outputsOf = (grant: UserRoleInputs): UserRoleState =>
  stateOf(inputFields, {}, { userId: grant.userId, roleName: grant.roleName });

/** Grants the role; a role the user already has (granted by hand, or by a run whose answer was lost) is taken over. */
async function grant(ctx: HandlerContext, inputs: UserRoleInputs): Promise<UserRoleState> {
  const { userId, roleName } = inputs;
  try {
    await ctx.api.addUserRole({ params: { userId }, body: bodyFrom(AssignRoleBody, inputs) });
  } catch (error) {
    if (error instanceof ApiError && error.status < 500) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `Granting role ${roleName} to user ${userId} failed: ${error.apiMessage}`,
        { cause: error },
      );
    }
    throw error;
  }
  return outputsOf(inputs);
}

/** Grants made together gathered into `POST /users/bulk/assign-roles`: every role of `roleNames` to every user of `userIds`. */
const bulkGranter = (api: CloudClient) =>
  batchedPairWriterOf(
    api,
    "bulkAssignRoles",
    () =>
      new BatchedPairWriter<string, UserRoleInputs["roleName"]>(
        async (userIds, roleNames) => await api.bulkAssignRoles({ body: { userIds, roleNames } }),
      ),
  );

export async function create(
  ctx: HandlerContext,
  inputs: UserRoleInputs,
): Promise<{ id: string; outs: UserRoleState }> {
  const id = userRoleId(inputs.userId, inputs.roleName);
  // Grants arriving together go in few bulk requests; what they did not grant goes the single way, which explains a
  // refusal.
  if ((await bulkGranter(ctx.api).write(inputs.userId, inputs.roleName)).kind === "done") {
    return { id, outs: outputsOf(inputs) };
  }
  return { id, outs: await grant(ctx, inputs) };
}

/** The grant exists while the user has the role; a user deleted, or the role revoked, is gone. */
export async function read(ctx: HandlerContext, id: string): Promise<{ id: string; props: UserRoleState } | null> {
  const wanted = parseId(id);
  try {
    const user = await ctx.api.getUser({ params: { id: wanted.userId } });
    return user.roles.includes(wanted.roleName) ? { id, props: outputsOf(wanted) } : null;
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Nothing changes in place; an update (after a failed run) makes sure the role is granted again. */
export async function update(
  ctx: HandlerContext,
  id: string,
  _olds: Props,
  news: UserRoleInputs,
): Promise<UserRoleState> {
  const current = parseId(id);
  if (current.userId !== news.userId || current.roleName !== news.roleName) {
    throw new CodedError(
      "INTERNAL_ERROR",
      `User role ${id} cannot be changed in place to ${userRoleId(news.userId, news.roleName)}`,
    );
  }
  return grant(ctx, news);
}

/** Revokes the role; a role already revoked, or a user gone, is success. */
export async function remove(ctx: HandlerContext, id: string): Promise<void> {
  const { userId, roleName } = parseId(id);
  try {
    await ctx.api.removeUserRole({ params: { userId, roleName } });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** No outputs beyond the inputs: the grant is the pair. */
export const UserRoleOutputs = z.object({});

export const userRole = defineKind({
  name: "UserRole",
  description:
    "One role of one user, managed on its own: creating it grants the role, deleting it revokes it. The id is `<userId>:<roleName>`. A role the user already holds is simply taken over. `refresh` drops the grant when the role was revoked (or the user deleted), and the next `up` grants it again. Declare the user without `roleNames` when its roles are granted this way: `roleNames`, when given, is the complete list and would revoke this role.",
  inputs: { schema: UserRoleInputs, fields: inputFields },
  outputs: UserRoleOutputs,
  create,
  read,
  update,
  delete: (ctx, id) => remove(ctx, id),
});
