import { z } from "zod";
import { CodedError } from "../client/error-codes";
import { CreateTeamBody, UpdateTeamBody, type Team, type TeamDetail } from "../api";
import { ApiError, BatchedDeleter, batchedDeleterOf, type CloudClient } from "../client";
import { uuidInput } from "./check";
import type { HandlerContext } from "./context";
import { createUnique, retryOnConflict } from "./create-recovery";
import { changedInputs } from "./diff";
import { codeOfCause, isConflict, isNotFound, ResourceInitError } from "./errors";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import { plainInputs, type Props } from "./props";
import { diffSpecOf, sdkTypes, type InputFields } from "./fields";

type TeamView = Team | z.output<typeof TeamDetail>;
type UpdateTeamBody = z.output<typeof UpdateTeamBody>;

const teamIdError = "must be the integer id of a resource group (a ResourceGroup's `id` or `teamId`)";

/** A resource group id: the integer, or its decimal text (the Pulumi id of a ResourceGroup, e.g. `parent.id`). */
export const teamIdInput = z
  .union([z.number(), z.string().regex(/^\d+$/, { error: teamIdError })], { error: teamIdError })
  .transform(Number)
  .pipe(z.number().int().positive({ error: "must be a positive integer resource group id" }))
  .register(sdkTypes, {
    name: "ResourceGroupRef",
    io: "input",
    kind: "ResourceGroup",
    description:
      "A reference to a resource group, the one type every `teamId`, `teamIds` and `parentTeamId` input takes: the integer group id, or its decimal text. Both outputs of a {@link ResourceGroup} fit: `group.id` (the id as text, which also tells Pulumi the dependency) and `group.teamId` (the number).",
  });

/** A set of values given as a list: order and repetitions mean nothing, so it is kept sorted and without duplicates. */
export const sortedSet = <T extends string | number>(values: T[]): T[] =>
  [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The create request's body (`POST /teams`), with what a program has beyond it: `parentTeamId` also takes a
 * ResourceGroup's `id`, `members` (no request body carries the list: each user is added by `POST /teams/{id}/members`;
 * its items are user ids, checked with a message since `expects` speaks only of top-level inputs), and `adopt`.
 */
export const ResourceGroupInputs = CreateTeamBody.pick({ name: true })
  .extend({
    parentTeamId: teamIdInput.optional(),
    members: z.array(uuidInput("a user (a User's `id`)")).transform(sortedSet).optional(),
    adopt: z.boolean().optional(),
  })
  .strict();
export type ResourceGroupInputs = z.output<typeof ResourceGroupInputs>;
type ResourceGroupState = State<ResourceGroupInputs, typeof inputFields, z.output<typeof ResourceGroupOutputs>>;

/** Every input changes in place and is reported back (members through the group's member pages). */
const inputFields = {
  name: {
    change: "inPlace",
    reported: "documented",
    description: "Name, unique within the entity ignoring case. Changed in place.",
    output: "Name of the group.",
  },
  // Removing parentTeamId from the program makes the group top-level again; members left out are "no opinion".
  parentTeamId: {
    change: "inPlace",
    reported: "documented",
    clearable: true,
    description:
      "The parent group (the API's child groups): its integer id, or a ResourceGroup's `id` (e.g. `parent.id`, which also makes Pulumi delete this child before its parent). Default: none (a top-level group). Changed in place; removing it makes the group top-level again.",
    output: "Id of the parent group, if any.",
  },
  members: {
    change: "inPlace",
    reported: "documented",
    description:
      "User ids (UUIDs, e.g. a User's `id`) that are the group's members: users are added and removed to match, in place. Default: not managed (the members are left as they are). When given, the list is complete: a member added by a ResourceGroupMember resource or a user's `teamIds` is removed. Manage a group's memberships in one place.",
    output: "User ids of the members, sorted, when the program manages `members` (else undefined).",
  },
  adopt: {
    change: "ignored",
    reported: "never",
    description:
      "When a group of this name already exists, take it over instead of failing (its parent and members are aligned to the program). The way to bring existing groups under management; `pulumi import` does not work for dynamic resources. Default false. Never causes a change by itself.",
    output: "Whether an existing group of this name may be taken over (as given).",
  },
} as const satisfies InputFields<ResourceGroupInputs>;
const diffSpec = diffSpecOf(ResourceGroupInputs, inputFields);

/** All members of a group (the detail pages them), as sorted user ids. */
async function teamWithMembers(ctx: HandlerContext, id: number): Promise<{ team: TeamView; members: string[] }> {
  const api = ctx.api;
  const members: string[] = [];
  for (let page = 1; ; page++) {
    const detail = await api.getTeam({ params: { id }, query: { page, limit: 100 } });
    members.push(...detail.members.map((m) => m.id));
    if (!detail.membersMeta.hasNextPage || detail.members.length === 0) {
      return { team: detail, members: sortedSet(members) };
    }
  }
}

/**
 * Outputs: the inputs as given, overlaid with what the API reports about the group itself. What moves with other
 * resources (member and VM counts, `updatedAt`, which membership changes bump) is left out, so refresh stays quiet when VMs or users join.
 */
export function outputsOf(given: Props, team: TeamView, members: string[]): ResourceGroupState {
  return stateOf(inputFields, given, {
    name: team.name,
    teamId: team.id,
    parentTeamId: team.parentTeamId ?? undefined,
    // Membership is an output only where the program manages it: users joining through User.teamIds are not drift.
    members: given.members === undefined ? undefined : members,
    entityId: team.entityId,
    createdAt: team.createdAt,
  });
}

/** Names are unique per entity, compared case-insensitively (as the API does). */
async function findByName(ctx: HandlerContext, name: string): Promise<Team | undefined> {
  for await (const team of ctx.api.listAll("listTeams", { search: name })) {
    if (team.name.toLowerCase() === name.toLowerCase()) return team;
  }
  return undefined;
}

const parseId = (id: string): number => {
  if (!/^\d+$/.test(id)) throw new CodedError("ID_INVALID", `"${id}" is not a resource group id (an integer)`);
  return Number(id);
};

/** Makes the group's name, parent and (when given) members match the inputs; returns the outputs. */
export async function update(
  ctx: HandlerContext,
  id: string,
  olds: Props,
  news: ResourceGroupInputs,
): Promise<ResourceGroupState> {
  const api = ctx.api;
  const teamId = parseId(id);
  const changed = changedInputs(olds, news, diffSpec);
  // Every member of the contract's update body as the program wants it (one the contract adds is a compile error
  // here); sent are those whose input changed. Removing parentTeamId makes the group top-level (null).
  const wanted: Required<UpdateTeamBody> = { name: news.name, parentTeamId: news.parentTeamId ?? null };
  const body: Partial<UpdateTeamBody> = {};
  const include = <K extends keyof UpdateTeamBody>(key: K) => {
    if (changed.includes(key)) body[key] = wanted[key];
  };
  for (const key of UpdateTeamBody.keyof().options) include(key);
  if (Object.keys(body).length > 0) {
    try {
      await retryOnConflict(ctx, () => api.updateTeam({ params: { id: teamId }, body }));
    } catch (error) {
      if (isConflict(error) && body.name !== undefined) {
        const holder = await findByName(ctx, body.name).catch(() => undefined);
        throw new CodedError(
          "NAME_TAKEN",
          `Cannot rename resource group ${id} to "${body.name}": ` +
            (holder ? `resource group ${holder.id} is named "${holder.name}"` : "another group has that name") +
            " (names are unique per entity, ignoring case). Choose another name, or rename the other group first " +
            "(two groups swapping names need an intermediate name)",
        );
      }
      throw error;
    }
  }
  let current = await teamWithMembers(ctx, teamId);
  if (news.members !== undefined) {
    const wanted = news.members;
    const adding = wanted.filter((m) => !current.members.includes(m));
    const removing = current.members.filter((m) => !wanted.includes(m));
    for (const userId of adding) {
      await api.addTeamMember({ params: { id: teamId }, body: { userId } }).catch((e: unknown) => {
        if (!isConflict(e)) throw e; // already a member: someone else added it meanwhile
      });
    }
    for (const userId of removing) {
      await api.removeTeamMember({ params: { id: teamId, userId } }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e; // no longer a member
      });
    }
    if (adding.length + removing.length > 0) current = await teamWithMembers(ctx, teamId);
  }
  return outputsOf(news, current.team, current.members);
}

/** Takes over an existing group; once found it is recorded even when aligning it fails, so it is not orphaned. */
async function adopt(
  ctx: HandlerContext,
  inputs: ResourceGroupInputs,
  existing: Team,
): Promise<{ id: string; outs: ResourceGroupState }> {
  const id = String(existing.id);
  const { team, members } = await teamWithMembers(ctx, existing.id);
  try {
    return { id, outs: await update(ctx, id, outputsOf({}, team, members), inputs) };
  } catch (error) {
    throw new ResourceInitError(
      `Resource group "${team.name}" (${id}) was taken over but could not be aligned with the program: ` +
        (error as Error).message,
      id,
      outputsOf(inputs, team, members),
    );
  }
}

export async function create(
  ctx: HandlerContext,
  inputs: ResourceGroupInputs,
): Promise<{ id: string; outs: ResourceGroupState }> {
  const api = ctx.api;
  const body = bodyFrom(CreateTeamBody, inputs);
  return createUnique(ctx, {
    what: `resource group named "${inputs.name}"`,
    adopt: inputs.adopt,
    retryConflicts: true,
    send: async () => ({ id: String((await api.createTeam({ body })).teamId) }),
    findByName: () => findByName(ctx, inputs.name),
    takeOver: (existing) => adopt(ctx, inputs, existing),
    // Members are set once the group exists; if that fails the group is recorded and the next `up` retries them.
    outputs: async (id) => {
      if (inputs.members !== undefined && inputs.members.length > 0) {
        return update(ctx, id, { name: inputs.name, parentTeamId: inputs.parentTeamId }, inputs).catch(
          (error: unknown) => {
            throw new CodedError(
              codeOfCause(error, "JOB_FAILED"),
              `Resource group "${inputs.name}" (${id}) was created but its members could not be set: ${(error as Error).message}`,
            );
          },
        );
      }
      const { team, members } = await teamWithMembers(ctx, Number(id));
      return outputsOf(inputs, team, members);
    },
    partialOutputs: async (id) => {
      const found = await teamWithMembers(ctx, Number(id)).catch(() => undefined);
      return found ? outputsOf(inputs, found.team, found.members) : { ...plainInputs(inputs), teamId: Number(id) };
    },
  });
}

export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: ResourceGroupState } | null> {
  try {
    const { team, members } = await teamWithMembers(ctx, parseId(id));
    return { id, props: outputsOf(props, team, members) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Resource group deletes gathered into `POST /teams/bulk/delete` (synchronous: no jobs). */
const bulkDeleter = (api: CloudClient) =>
  batchedDeleterOf(
    api,
    "teams",
    () => new BatchedDeleter<number>(async (ids) => await api.bulkDeleteTeams({ body: { ids } })),
  );

/** Deletes the group; while child groups remain (e.g. being deleted in the same run), waits briefly, then names them. */
export async function remove(ctx: HandlerContext, id: string): Promise<void> {
  const teamId = parseId(id);
  // Deletes arriving together go in one bulk request (a parent with its children too); what it did not delete goes
  // the single way below, which waits for children being deleted or names them.
  if ((await bulkDeleter(ctx.api).delete(teamId)).kind === "deleted") return;
  try {
    await retryOnConflict(ctx, () => ctx.api.deleteTeam({ params: { id: teamId } }));
  } catch (error) {
    if (isNotFound(error)) return;
    if (isConflict(error)) {
      throw new CodedError(
        "DEPENDENTS_EXIST",
        `Resource group ${id} still has child groups: ${(error as ApiError).apiMessage}. Delete them or set another ` +
          "parentTeamId on them first (a child declared with `parentTeamId: parent.id` is deleted before its parent)",
      );
    }
    throw error;
  }
}

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const ResourceGroupOutputs = z.object({
  teamId: z.number().int().describe("The integer group id (the Pulumi `id` is the same number as text)."),
  entityId: z.string().describe("The entity (UUID) the group belongs to."),
  createdAt: z.string().describe("Creation time (ISO 8601)."),
});

export const resourceGroup = defineKind({
  name: "ResourceGroup",
  description:
    "A resource group (the API's team). Its Pulumi id is the integer group id as text. Deleting a group that still has child groups is refused by the API: declare children with `parentTeamId: parent.id` so they are deleted first.",
  inputs: { schema: ResourceGroupInputs, fields: inputFields },
  outputs: ResourceGroupOutputs,
  create,
  read,
  update,
  delete: (ctx, id) => remove(ctx, id),
});
