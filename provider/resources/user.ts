import { z } from "zod";
import { CodedError } from "../client/error-codes";
import { CreateUserBody, passwordProblems, type RoleName, UpdateUserBody, type User as ApiUser } from "../api";
import { ApiError, BatchedDeleter, batchedDeleterOf, type CloudClient } from "../client";
import type { CheckFailure } from "./check";
import { type HandlerContext, warnAbout } from "./context";
import { createUnique, retryOnConflict } from "./create-recovery";
import { changedInputs } from "./diff";
import { isConflict, isNotFound, ResourceInitError } from "./errors";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import { containsUnknown, plainInputs, type Props } from "./props";
import { diffSpecOf, type InputFields } from "./fields";
import { freeName } from "./preflight";
import { sortedSet, teamIdInput } from "./resource-group";
import { roleNameInput } from "./user-role";

/**
 * The create request's body (`POST /users`), member by member (its cross-member rules make it a refined schema, which
 * zod cannot pick from), with what a program has beyond it: emails normalised, roles and groups as sets, `adopt`.
 */
export const UserInputs = z.strictObject({
  // The API stores emails lower-case: normalising here keeps the diff quiet.
  email: z.string().trim().toLowerCase().pipe(CreateUserBody.shape.email),
  action: CreateUserBody.shape.action.unwrap().default("invite"),
  // The contract checks the password rule on the whole body; here it is checked on the value alone, so that check
  // names the password and says only what it lacks (never echoing it). The rule is the contract's.
  password: CreateUserBody.shape.password
    .unwrap()
    .superRefine((value, ctx) => {
      const problems = passwordProblems(value);
      if (problems.length > 0) ctx.addIssue({ code: "custom", message: `must ${problems.join(", ")}` });
    })
    .optional(),
  firstName: CreateUserBody.shape.firstName,
  lastName: CreateUserBody.shape.lastName,
  // Each role refused by name (roleNameInput); the list's bound is the contract's.
  roleNames: z.array(roleNameInput).pipe(CreateUserBody.shape.roleNames.unwrap()).transform(sortedSet).optional(),
  // Groups also by a ResourceGroup's `id` (teamIdInput); the list's bound is the contract's.
  teamIds: z.array(teamIdInput).pipe(CreateUserBody.shape.teamIds.unwrap()).transform(sortedSet).optional(),
  entityId: CreateUserBody.shape.entityId,
  adopt: z.boolean().optional(),
  resendInviteTrigger: z
    .string({ error: "must be a string (any text: changing it re-sends the invitation)" })
    .optional(),
});
export type UserInputs = z.output<typeof UserInputs>;
type UserState = State<UserInputs, typeof inputFields, z.output<typeof UserOutputs>>;

/** How each input changes and what the API reports of it: a user reports its invite status, not how it was made. */
const inputFields = {
  email: {
    change: "inPlace",
    reported: "documented",
    description:
      "Email address, unique among the users that are not deleted (stored lower-case). Changed in place. It is also how `adopt` finds an existing user.",
    expects: "must be an email address such as ada@example.com",
    output: "Email address (lower-case).",
  },
  action: {
    change: "replace",
    reported: "never",
    description:
      "`invite` (default: the user gets an invitation mail and sets a password) or `register` (the user is created active, with `password`). Changing it replaces the user.",
    expects: 'must be "invite" or "register"',
    output: "How the user was created, as given: `invite` or `register`.",
  },
  // The password only counts when the user is registered: the API lets users change their own password only.
  password: {
    change: "ignored",
    reported: "never",
    description:
      'First password, with `action: "register"` only (required then): 12-50 characters, upper- and lower-case letters, a number and a special character. Always stored as a secret. Used when the user is created only: later changes are ignored (users change their own password), and an adopted user keeps theirs.',
    expects: "must be a string",
    output: "The password the user was registered with by this resource (secret); absent for invited or adopted users.",
  },
  firstName: {
    change: "inPlace",
    reported: "documented",
    description: "First name. Default none. Changed in place; removing it keeps the current value.",
    output: "First name, if any.",
  },
  lastName: {
    change: "inPlace",
    reported: "documented",
    description: "Last name. Default none. Changed in place; removing it keeps the current value.",
    output: "Last name, if any.",
  },
  roleNames: {
    change: "inPlace",
    reported: "documented",
    description:
      'Roles: `tenant-admin`, `tenant-user`, `vm-operator` (at most 3). Default `["tenant-user"]` when created, and not managed afterwards while left out. Changed in place: roles are granted and revoked to match. When given, the list is complete (a role granted by a UserRole resource is revoked): grant roles either here or with UserRole.',
    output:
      "Roles held, sorted, when the program manages `roleNames` (else undefined: roles granted elsewhere are not drift).",
    // The API reports roles as text: one this program cannot name still shows, as drift.
    reportedType: z.array(z.string()).optional(),
  },
  teamIds: {
    change: "inPlace",
    reported: "documented",
    description:
      "Resource groups the user belongs to: integer ids or ResourceGroup `id`s, at most 50. Default: not managed. Changed in place: memberships are added and removed to match. Manage a membership either here or in the group's `members` or a ResourceGroupMember resource, not more than one (when given, the list is complete).",
    output:
      "Ids of the resource groups the user belongs to, ascending, when the program manages `teamIds` (else undefined).",
  },
  entityId: {
    change: "replace",
    reported: "documented",
    description:
      'Entity (UUID) to register the user in, a child of the configured entity; `action: "register"` only. Default: the configured entity. Changing it replaces the user.',
    expects: "must be the UUID of an entity (the configured one or one of its children)",
    output: "The entity (UUID) the user belongs to.",
    reportedType: z.string(),
  },
  adopt: {
    change: "ignored",
    reported: "never",
    description:
      "When a user with this email already exists, take it over instead of failing (names and, when given, roles and groups are aligned to the program). The way to bring existing users under management; `pulumi import` does not work for dynamic resources. Default false. Never causes a change by itself.",
    output: "Whether an existing user of this email may be taken over (as given).",
  },
  resendInviteTrigger: {
    change: "inPlace",
    reported: "never",
    description:
      "Any text; changing it re-sends the invitation (`POST /users/{id}/resend-invite`) in place: same user, same id, a new invitation valid 7 days, so an `expired` one becomes `pending` again. The create does not re-send (it invites), nor does adopting a user; a user who already accepted is not re-sent one (a warning says so). Removing it does nothing. Default none.",
    output: "`resendInviteTrigger` as given at the last create or update.",
  },
} as const satisfies InputFields<UserInputs>;
const diffSpec = diffSpecOf(UserInputs, inputFields, {
  // Emails are unique among live users: a replacement keeping its email must delete the old user first.
  deleteBeforeReplace: (olds, news) => olds.email === news.email || containsUnknown(news.email),
});

/** The rules that span properties. `given` are the raw inputs: a value unknown during preview counts as present. */
function crossChecks(known: Partial<UserInputs>, failures: CheckFailure[], given: Props): void {
  const action = given.action === undefined ? "invite" : known.action;
  if (action === undefined) return; // not known yet
  const hasPassword = given.password !== undefined;
  if (action === "register" && !hasPassword) {
    failures.push({
      property: "password",
      reason: 'is required when action is "register": set one (12-50 characters, mixed case, a number, a special one)',
    });
  }
  if (action === "invite" && hasPassword) {
    failures.push({
      property: "password",
      reason: 'is only accepted with action "register": remove it (invited users set their own) or register',
    });
  }
  if (action === "invite" && given.entityId !== undefined) {
    failures.push({
      property: "entityId",
      reason: 'is only accepted with action "register": remove it or use action "register"',
    });
  }
}

/**
 * The roles the API reports, as `roleNames` holds them. The contract has them as strings (the spec names the roles it
 * has seen, it does not close the list): a role the program could not name is kept as it is, and shows as drift.
 */
const reportedRoleNames = (roles: string[]) => sortedSet(roles);

/**
 * Outputs: the inputs as given, overlaid with everything the API reports. `password` stays the one the user was
 * registered with (a secret output: the SDK marks it so).
 */
export function outputsOf(given: Props, user: ApiUser): UserState {
  return stateOf(inputFields, given, {
    email: user.email,
    firstName: user.firstName ?? undefined,
    lastName: user.lastName ?? undefined,
    name: user.name,
    entityId: user.entityId,
    roleNames: reportedRoleNames(user.roles),
    roles: user.roles,
    teamIds: sortedSet(user.teamIds),
    inviteStatus: user.inviteStatus,
    twoFactorEnabled: user.twoFactorEnabled,
    createdAt: user.createdAt,
    updatedAt: user.updatedAt,
  });
}

const entityQuery = (entityId: unknown) => (typeof entityId === "string" ? { entityId } : undefined);

/** The live user with this email in the entity (emails are unique among users that are not deleted). */
async function findByEmail(
  ctx: HandlerContext,
  email: string,
  entityId: string | undefined,
): Promise<ApiUser | undefined> {
  const query = { search: email, ...(entityId ? { entityId } : {}) };
  for await (const user of ctx.api.listAll("listUsers", query)) {
    if (user.email === email && user.deletedAt === null) return user;
  }
  return undefined;
}

export async function update(ctx: HandlerContext, id: string, olds: Props, news: UserInputs): Promise<UserState> {
  const api = ctx.api;
  const query = entityQuery(olds.entityId ?? news.entityId);
  const changed = changedInputs(olds, news, diffSpec);
  // The members of the update route's body that changed.
  const body: Partial<z.output<typeof UpdateUserBody>> = {};
  for (const key of UpdateUserBody.keyof().options) {
    if (changed.includes(key) && news[key] !== undefined) body[key] = news[key];
  }
  if (Object.keys(body).length > 0) {
    try {
      await retryOnConflict(ctx, () => api.updateUser({ params: { id }, query, body }));
    } catch (error) {
      if (isConflict(error) && body.email !== undefined) {
        throw new CodedError(
          "NAME_TAKEN",
          `Cannot change the email of user ${id} to ${body.email}: another user has it (emails are unique among ` +
            "users that are not deleted). Choose another email, or change the other user's first",
        );
      }
      throw error;
    }
  }
  let user = await api.getUser({ params: { id }, query });
  let touched = false;
  if (news.roleNames !== undefined) {
    const wanted = news.roleNames;
    for (const roleName of wanted.filter((r) => !user.roles.includes(r))) {
      await api.addUserRole({ params: { userId: id }, query, body: { roleName } });
      touched = true;
    }
    for (const roleName of user.roles.filter((r) => !wanted.includes(r as RoleName))) {
      await api.removeUserRole({ params: { userId: id, roleName }, query }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e; // removed meanwhile
      });
      touched = true;
    }
  }
  if (news.teamIds !== undefined) {
    const wanted = news.teamIds;
    for (const teamId of wanted.filter((t) => !user.teamIds.includes(t))) {
      await api.addTeamMember({ params: { id: teamId }, query, body: { userId: id } }).catch((e: unknown) => {
        if (!isConflict(e)) throw e; // already a member
      });
      touched = true;
    }
    for (const teamId of user.teamIds.filter((t) => !wanted.includes(t))) {
      await api.removeTeamMember({ params: { id: teamId, userId: id }, query }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e; // no longer a member, or the group is gone
      });
      touched = true;
    }
  }
  if (changed.includes("resendInviteTrigger") && (await resendInvite(ctx, user, query))) touched = true;
  if (touched) user = await api.getUser({ params: { id }, query });
  // A new password in the program is not applied (only users change their own): keep the one registered.
  return outputsOf({ ...news, password: olds.password }, user);
}

/**
 * The invitation a changed `resendInviteTrigger` asks for (`POST /users/{id}/resend-invite`): sent unless the user has
 * accepted one already, which a warning says (a trigger shared by many users must not fail on those who joined).
 * Whether it was sent.
 */
async function resendInvite(
  ctx: HandlerContext,
  user: ApiUser,
  query: ReturnType<typeof entityQuery>,
): Promise<boolean> {
  const notSent = () => {
    warnAbout(
      ctx,
      `User ${user.email}`,
      "resendInviteTrigger changed, but the user has accepted the invitation (activated): nothing to re-send",
    );
    return false;
  };
  if (user.inviteStatus === "activated") return notSent();
  try {
    await ctx.api.resendInvite({ params: { id: user.id }, query });
    return true;
  } catch (error) {
    // Accepted between the read and the resend.
    if (isConflict(error)) return notSent();
    throw error;
  }
}

/** Takes over an existing user; once found it is recorded even when aligning it fails, so it is not orphaned. */
async function adopt(
  ctx: HandlerContext,
  inputs: UserInputs,
  existing: ApiUser,
): Promise<{ id: string; outs: UserState }> {
  try {
    // The trigger as given is no change: adopting a user re-sends nothing.
    const current = { ...outputsOf({}, existing), resendInviteTrigger: inputs.resendInviteTrigger };
    return { id: existing.id, outs: await update(ctx, existing.id, current, inputs) };
  } catch (error) {
    throw new ResourceInitError(
      `User ${existing.email} (${existing.id}) was taken over but could not be aligned with the program: ` +
        (error as Error).message,
      existing.id,
      outputsOf(inputs, existing),
    );
  }
}

export async function create(ctx: HandlerContext, inputs: UserInputs): Promise<{ id: string; outs: UserState }> {
  const api = ctx.api;
  const register = inputs.action === "register";
  // A password and an entity go with a registration only (check refuses them otherwise).
  const body = bodyFrom(CreateUserBody, {
    ...inputs,
    password: register ? inputs.password : undefined,
    entityId: register ? inputs.entityId : undefined,
  });
  let made: ApiUser | undefined;
  return createUnique(ctx, {
    what: `user with the email ${inputs.email}`,
    adopt: inputs.adopt,
    retryConflicts: true,
    send: async () => {
      made = await api.createUser({ body });
      return { id: made.id };
    },
    findByName: () => findByEmail(ctx, inputs.email, inputs.entityId),
    takeOver: (existing) => adopt(ctx, inputs, existing),
    outputs: async (id) =>
      outputsOf(inputs, made ?? (await api.getUser({ params: { id }, query: entityQuery(inputs.entityId) }))),
    partialOutputs: async () => (made ? outputsOf(inputs, made) : plainInputs(inputs)),
  });
}

export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: UserState } | null> {
  try {
    return {
      id,
      props: outputsOf(props, await ctx.api.getUser({ params: { id }, query: entityQuery(props.entityId) })),
    };
  } catch (error) {
    // A deleted user (the API deletes softly) reads as 404: gone.
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * User deletes gathered into `POST /users/bulk/delete` (soft deletes, no jobs): one deleter per entity, the bulk
 * request's query.
 */
const bulkDeleter = (api: CloudClient, entityId: unknown) =>
  batchedDeleterOf(
    api,
    `users:${typeof entityId === "string" ? entityId : ""}`,
    () =>
      new BatchedDeleter<string>(
        async (ids) => await api.bulkDeleteUsers({ query: entityQuery(entityId), body: { ids } }),
      ),
  );

/** The API's soft delete; already deleted is success. */
export async function remove(ctx: HandlerContext, id: string, props: Props): Promise<void> {
  // Deletes arriving together go in one bulk request; what it did not delete (already gone, refused, the caller's
  // own user) goes the single way below, which says why.
  const outcome = await bulkDeleter(ctx.api, props.entityId).delete(id);
  if (outcome.kind === "deleted") return;
  try {
    await ctx.api.deleteUser({ params: { id }, query: entityQuery(props.entityId) });
  } catch (error) {
    if (isNotFound(error)) return;
    if (isConflict(error)) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `User ${id} cannot be deleted: ${(error as ApiError).apiMessage}. The provider's own credentials belong to ` +
          "this user: configure another user's credentials, or remove the resource from the program without " +
          "deleting it (`retainOnDelete`)",
      );
    }
    throw error;
  }
}

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const UserOutputs = z.object({
  name: z.string().describe('Display name: "first last", or the email when the user has no name.'),
  roles: z
    .array(z.string())
    .optional()
    .describe(
      "Roles held, as the API lists them, when the program manages `roleNames` (else undefined: see `getUser`).",
    ),
  inviteStatus: z
    .enum(["activated", "pending", "expired"])
    .describe("`activated`, `pending` (invitation not accepted yet) or `expired` (invitation older than 7 days)."),
  twoFactorEnabled: z.boolean().describe("Always true: two-factor authentication is mandatory."),
  createdAt: z.string().describe("Creation time (ISO 8601)."),
  updatedAt: z
    .string()
    .optional()
    .describe(
      "Last change time (ISO 8601), when the program manages `roleNames` (else undefined: every role grant moves it, and a UserRole of another stack would show as drift).",
    ),
});

/**
 * A resource's outputs: `roleNames` and `teamIds` only where the program manages them, so that grants and memberships
 * made by UserRole and ResourceGroupMember resources (or another stack) are not drift. `roles` and `updatedAt` move
 * with every grant (the API bumps `updatedAt`), so they too are shown only where the program manages `roleNames`:
 * otherwise a UserRole in another stack would make this stack's `refresh --expect-no-changes` fail.
 */
const managedOnly = (
  inputs: { readonly roleNames?: unknown; readonly teamIds?: unknown },
  outs: UserState,
): UserState => ({
  ...outs,
  roleNames: inputs.roleNames === undefined ? undefined : outs.roleNames,
  roles: inputs.roleNames === undefined ? undefined : outs.roles,
  updatedAt: inputs.roleNames === undefined ? undefined : outs.updatedAt,
  teamIds: inputs.teamIds === undefined ? undefined : outs.teamIds,
});

export const user = defineKind({
  name: "User",
  description:
    "A user of the entity. Deleting it is the API's soft delete; a new user with the same email may be created after it. Replacing a user (new `action` or `entityId`) deletes the old one first, since emails are unique.",
  inputs: { schema: UserInputs, fields: inputFields },
  outputs: UserOutputs,
  secretOutputs: ["password"],
  secretInputs: ["password"],
  crossChecks: (known, failures, news) => crossChecks(known, failures, plainInputs(news)),
  diffSpec,
  create: async (ctx, inputs) => {
    const created = await create(ctx, inputs);
    return { ...created, outs: managedOnly(inputs, created.outs) };
  },
  read: async (ctx, id, props) => {
    const found = await read(ctx, id, props);
    return found && { ...found, props: managedOnly(props, found.props) };
  },
  update: async (ctx, id, olds, news) => managedOnly(news, await update(ctx, id, olds, news)),
  delete: (ctx, id, props) => remove(ctx, id, props),
  // A create (or email change) to an email another user holds fails at preview, unless `adopt` takes it over.
  preflight: freeName("user"),
});
