import { z } from "zod";
import { CodedError } from "../client/error-codes";
import { TeamMemberBody } from "../api";
import { ApiError, type CloudClient } from "../client";
import { BatchedPairWriter, batchedPairWriterOf } from "../client/batched-writer";
import type { HandlerContext } from "./context";
import { isConflict, isNotFound } from "./errors";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import type { Props } from "./props";
import type { InputFields } from "./fields";
import { teamIdInput } from "./resource-group";

/**
 * The add request (`POST /teams/{id}/members`): the group of its path, which a program may also give as a
 * ResourceGroup's `id`, and its body's `userId`.
 */
export const ResourceGroupMemberInputs = z.strictObject({ teamId: teamIdInput, ...TeamMemberBody.shape });
export type ResourceGroupMemberInputs = z.output<typeof ResourceGroupMemberInputs>;
type ResourceGroupMemberState = State<
  ResourceGroupMemberInputs,
  typeof inputFields,
  z.output<typeof ResourceGroupMemberOutputs>
>;

/** Both inputs name the membership: changing either replaces it; the user reports the groups it belongs to. */
const inputFields = {
  teamId: {
    change: "replace",
    reported: "documented",
    description:
      "The resource group: its integer id, or a ResourceGroup's `id` (e.g. `group.id`), possibly one another stack owns (read through a StackReference). Changing it replaces the membership.",
    output: "The resource group's integer id.",
  },
  userId: {
    change: "replace",
    reported: "documented",
    description: "The user (UUID), e.g. a User's `id`. Changing it replaces the membership.",
    expects: "must be the UUID of a user (a User's `id`)",
    output: "The member (UUID).",
  },
} as const satisfies InputFields<ResourceGroupMemberInputs>;

/** The id of a membership: `<teamId>:<userId>` (the API has no membership object of its own). */
export const membershipId = (teamId: number, userId: string) => `${teamId}:${userId}`;

function parseId(id: string): ResourceGroupMemberInputs {
  const [teamId, userId, ...rest] = id.split(":");
  const parsed = ResourceGroupMemberInputs.safeParse({ teamId, userId });
  if (rest.length > 0 || !parsed.success) {
    throw new CodedError(
      "ID_INVALID",
      `"${id}" is not a resource group membership id (<teamId>:<userId>, e.g. 42:<user UUID>)`,
    );
  }
  return parsed.data;
}

/** Outputs: the membership, the pair the add named or the id names (the API has no membership object of its own). */
const outputsOf = (given: Props, membership: ResourceGroupMemberInputs): ResourceGroupMemberState =>
  stateOf(inputFields, given, { teamId: membership.teamId, userId: membership.userId });

/** Whether the user is a member of the group; null when the user is gone (deleted users read as 404). */
async function isMember(ctx: HandlerContext, { teamId, userId }: ResourceGroupMemberInputs): Promise<boolean | null> {
  try {
    return (await ctx.api.getUser({ params: { id: userId } })).teamIds.includes(teamId);
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Adds the user to the group; a user already a member (added by hand, or by a run whose answer was lost) is taken over. */
async function join(ctx: HandlerContext, inputs: ResourceGroupMemberInputs): Promise<ResourceGroupMemberState> {
  const { teamId, userId } = inputs;
  try {
    await ctx.api.addTeamMember({ params: { id: teamId }, body: bodyFrom(TeamMemberBody, inputs) });
  } catch (error) {
    if (isConflict(error)) return outputsOf(inputs, inputs);
    if (error instanceof ApiError && error.status < 500) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `Adding user ${userId} to resource group ${teamId} failed: ${error.apiMessage}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
  return outputsOf(inputs, inputs);
}

/**
 * Memberships added together gathered into `POST /teams/bulk/add-members`, which adds every user of `userIds` to every
 * group of `teamIds` (the spec shows no answer; `/users/bulk/assign-teams` takes the same lists, but the spec does not
 * say whether it adds to a user's groups or replaces them, so it is not used).
 */
const bulkAdder = (api: CloudClient) =>
  batchedPairWriterOf(
    api,
    "bulkAddTeamMembers",
    () =>
      new BatchedPairWriter<string, number>(
        async (userIds, teamIds) => await api.bulkAddTeamMembers({ body: { userIds, teamIds } }),
      ),
  );

export async function create(
  ctx: HandlerContext,
  inputs: ResourceGroupMemberInputs,
): Promise<{ id: string; outs: ResourceGroupMemberState }> {
  const id = membershipId(inputs.teamId, inputs.userId);
  // Additions arriving together go in few bulk requests; what they did not add goes the single way, which takes over
  // a membership that exists and explains a refusal.
  if ((await bulkAdder(ctx.api).write(inputs.userId, inputs.teamId)).kind === "done") {
    return { id, outs: outputsOf(inputs, inputs) };
  }
  return { id, outs: await join(ctx, inputs) };
}

/** The membership exists while the user belongs to the group; a user or group deleted, or the user removed, is gone. */
export async function read(
  ctx: HandlerContext,
  id: string,
): Promise<{ id: string; props: ResourceGroupMemberState } | null> {
  const membership = parseId(id);
  // Read from the id alone: the outputs are the pair it names, as they were before (nothing else is kept).
  return (await isMember(ctx, membership)) ? { id, props: outputsOf({}, membership) } : null;
}

/** Nothing changes in place; an update (after a failed run) makes sure the user is a member again. */
export async function update(
  ctx: HandlerContext,
  id: string,
  _olds: Props,
  news: ResourceGroupMemberInputs,
): Promise<ResourceGroupMemberState> {
  const current = parseId(id);
  if (current.teamId !== news.teamId || current.userId !== news.userId) {
    throw new CodedError(
      "INTERNAL_ERROR",
      `Membership ${id} cannot be changed in place to ${membershipId(news.teamId, news.userId)}`,
    );
  }
  return join(ctx, news);
}

/** Removes the user from the group; a user no longer a member, or a user or group gone, is success. */
export async function remove(ctx: HandlerContext, id: string): Promise<void> {
  const { teamId, userId } = parseId(id);
  try {
    await ctx.api.removeTeamMember({ params: { id: teamId, userId } });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}

/** No outputs beyond the inputs: the membership is the pair. */
export const ResourceGroupMemberOutputs = z.object({});

export const resourceGroupMember = defineKind({
  name: "ResourceGroupMember",
  description:
    "One user's membership of one resource group, managed on its own: creating it adds the user to the group, deleting it removes the user. The id is `<teamId>:<userId>`. A user already a member is simply taken over. `refresh` drops the membership when the user was removed from the group (or the user or group deleted), and the next `up` adds the user again. Lets an application stack add its users to a group another stack owns: declare the group there without `members` (which, when given, is the complete list and would remove this member), and the user here without `teamIds` for that group.",
  inputs: { schema: ResourceGroupMemberInputs, fields: inputFields },
  outputs: ResourceGroupMemberOutputs,
  // The fields' `expects` say what userId must be (the contract's Uuid has no message of its own).
  create,
  read,
  update,
  delete: (ctx, id) => remove(ctx, id),
});
