import { z } from "zod";
import { CodedError } from "../client/error-codes";
import { RoleName } from "../api";
import { ApiError } from "../client";
import { checkInputs, uuidInput } from "./check";
import type { HandlerContext } from "./context";
import { diffInputs } from "./diff";
import { isNotFound } from "./errors";
import type { ResourceKind } from "./kind";
import type { Props } from "./props";
import { diffSpecOf, type InputFields } from "./fields";

export const UserRoleInputs = z.strictObject({
  userId: uuidInput("a user (a User's `id`)"),
  roleName: z.enum(RoleName.options, {
    error: (issue) => `unknown role "${String(issue.input)}"; the roles are ${RoleName.options.join(", ")}`,
  }),
});
export type UserRoleInputs = z.output<typeof UserRoleInputs>;

/** Both inputs name the grant: changing either replaces it; the user reports its roles. */
const inputFields = {
  userId: {
    change: "replace",
    reported: "documented",
    description: "The user (UUID), e.g. a User's `id`. Changing it replaces the grant.",
    output: "The user (UUID).",
  },
  roleName: {
    change: "replace",
    reported: "documented",
    description: "The role granted: tenant-admin, tenant-user or vm-operator. Changing it replaces the grant.",
    output: "The role's name.",
  },
} as const satisfies InputFields<UserRoleInputs>;
const diffSpec = diffSpecOf(UserRoleInputs, inputFields);

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

const outputsOf = (grant: UserRoleInputs): Props => ({ ...grant });

/** Grants the role; a role the user already has (granted by hand, or by a run whose answer was lost) is taken over. */
async function grant(ctx: HandlerContext, inputs: UserRoleInputs): Promise<Props> {
  const { userId, roleName } = inputs;
  try {
    await ctx.api.addUserRole({ params: { userId }, body: { roleName } });
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

export async function create(ctx: HandlerContext, inputs: UserRoleInputs): Promise<{ id: string; outs: Props }> {
  return { id: userRoleId(inputs.userId, inputs.roleName), outs: await grant(ctx, inputs) };
}

/** The grant exists while the user has the role; a user deleted, or the role revoked, is gone. */
export async function read(ctx: HandlerContext, id: string): Promise<{ id: string; props: Props } | null> {
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
export async function update(ctx: HandlerContext, id: string, news: UserRoleInputs): Promise<Props> {
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

export const userRole: ResourceKind = {
  name: "UserRole",
  description:
    "One role of one user, managed on its own: creating it grants the role, deleting it revokes it. The id is `<userId>:<roleName>`. A role the user already holds is simply taken over. `refresh` drops the grant when the role was revoked (or the user deleted), and the next `up` grants it again. Declare the user without `roleNames` when its roles are granted this way: `roleNames`, when given, is the complete list and would revoke this role.",
  inputs: { schema: UserRoleInputs, fields: inputFields },
  outputs: UserRoleOutputs,
  check: (_olds: Props, news: Props) => checkInputs(UserRoleInputs, news),
  diff: (_id: string, olds: Props, news: Props) => diffInputs(olds, news, diffSpec),
  create: (ctx: HandlerContext, inputs: Props) => create(ctx, inputs as UserRoleInputs),
  read: (ctx: HandlerContext, id: string) => read(ctx, id),
  update: (ctx: HandlerContext, id: string, _olds: Props, news: Props) => update(ctx, id, news as UserRoleInputs),
  delete: (ctx: HandlerContext, id: string) => remove(ctx, id),
};
