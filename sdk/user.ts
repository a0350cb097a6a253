// Written by `npm run sdk-gen` from provider/resources/user.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";
import type { ResourceGroupRef } from "./resource-group";

const provider = dynamicProvider("User");

/**
 * Every input and output of a User, each `undefined`: passed to Pulumi beside the arguments, so that each one is an
 * Output on the resource, set or not.
 */
const outputPlaceholders = {
  email: undefined,
  action: undefined,
  password: undefined,
  firstName: undefined,
  lastName: undefined,
  roleNames: undefined,
  teamIds: undefined,
  entityId: undefined,
  adopt: undefined,
  resendInviteTrigger: undefined,
  name: undefined,
  roles: undefined,
  inviteStatus: undefined,
  twoFactorEnabled: undefined,
  createdAt: undefined,
  updatedAt: undefined,
};

/** The arguments of a {@link User}. */
export interface UserArgs {
  /**
   * Email address, unique among the users that are not deleted (stored lower-case). Changed in place. It is also how
   * `adopt` finds an existing user.
   */
  email: pulumi.Input<string>;
  /**
   * `invite` (default: the user gets an invitation mail and sets a password) or `register` (the user is created
   * active, with `password`). Changing it replaces the user.
   */
  action?: pulumi.Input<"invite" | "register">;
  /**
   * First password, with `action: "register"` only (required then): 12-50 characters, upper- and lower-case letters,
   * a number and a special character. Always stored as a secret. Used when the user is created only: later changes
   * are ignored (users change their own password), and an adopted user keeps theirs.
   */
  password?: pulumi.Input<string>;
  /** First name. Default none. Changed in place; removing it keeps the current value. */
  firstName?: pulumi.Input<string>;
  /** Last name. Default none. Changed in place; removing it keeps the current value. */
  lastName?: pulumi.Input<string>;
  /**
   * Roles: `tenant-admin`, `tenant-user`, `vm-operator` (at most 3). Default `["tenant-user"]` when created, and not
   * managed afterwards while left out. Changed in place: roles are granted and revoked to match. When given, the list
   * is complete (a role granted by a UserRole resource is revoked): grant roles either here or with UserRole.
   */
  roleNames?: pulumi.Input<pulumi.Input<"tenant-admin" | "tenant-user" | "vm-operator">[]>;
  /**
   * Resource groups the user belongs to: integer ids or ResourceGroup `id`s, at most 50. Default: not managed.
   * Changed in place: memberships are added and removed to match. Manage a membership either here or in the group's
   * `members` or a ResourceGroupMember resource, not more than one (when given, the list is complete).
   */
  teamIds?: pulumi.Input<pulumi.Input<ResourceGroupRef>[]>;
  /**
   * Entity (UUID) to register the user in, a child of the configured entity; `action: "register"` only. Default: the
   * configured entity. Changing it replaces the user.
   */
  entityId?: pulumi.Input<string>;
  /**
   * When a user with this email already exists, take it over instead of failing (names and, when given, roles and
   * groups are aligned to the program). The way to bring existing users under management; `pulumi import` does not
   * work for dynamic resources. Default false. Never causes a change by itself.
   */
  adopt?: pulumi.Input<boolean>;
  /**
   * Any text; changing it re-sends the invitation (`POST /users/{id}/resend-invite`) in place: same user, same id, a
   * new invitation valid 7 days, so an `expired` one becomes `pending` again. The create does not re-send (it
   * invites), nor does adopting a user; a user who already accepted is not re-sent one (a warning says so). Removing
   * it does nothing. Default none.
   */
  resendInviteTrigger?: pulumi.Input<string>;
}

/**
 * A user of the entity. Deleting it is the API's soft delete; a new user with the same email may be created after it.
 * Replacing a user (new `action` or `entityId`) deletes the old one first, since emails are unique.
 */
export class User extends pulumi.dynamic.Resource {
  /** Email address (lower-case). */
  declare readonly email: pulumi.Output<string>;
  /** How the user was created, as given: `invite` or `register`. */
  declare readonly action: pulumi.Output<"invite" | "register">;
  /** The password the user was registered with by this resource (secret); absent for invited or adopted users. */
  declare readonly password: pulumi.Output<string | undefined>;
  /** First name, if any. */
  declare readonly firstName: pulumi.Output<string | undefined>;
  /** Last name, if any. */
  declare readonly lastName: pulumi.Output<string | undefined>;
  /**
   * Roles held, sorted, when the program manages `roleNames` (else undefined: roles granted elsewhere are not drift).
   */
  declare readonly roleNames: pulumi.Output<string[] | undefined>;
  /** Ids of the resource groups the user belongs to, ascending, when the program manages `teamIds` (else undefined). */
  declare readonly teamIds: pulumi.Output<number[] | undefined>;
  /** The entity (UUID) the user belongs to. */
  declare readonly entityId: pulumi.Output<string>;
  /** Whether an existing user of this email may be taken over (as given). */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /** `resendInviteTrigger` as given at the last create or update. */
  declare readonly resendInviteTrigger: pulumi.Output<string | undefined>;
  /** Display name: "first last", or the email when the user has no name. */
  declare readonly name: pulumi.Output<string>;
  /** Roles held, as the API lists them, when the program manages `roleNames` (else undefined: see `getUser`). */
  declare readonly roles: pulumi.Output<string[] | undefined>;
  /** `activated`, `pending` (invitation not accepted yet) or `expired` (invitation older than 7 days). */
  declare readonly inviteStatus: pulumi.Output<"activated" | "pending" | "expired">;
  /** Always true: two-factor authentication is mandatory. */
  declare readonly twoFactorEnabled: pulumi.Output<boolean>;
  /** Creation time (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;
  /**
   * Last change time (ISO 8601), when the program manages `roleNames` (else undefined: every role grant moves it, and
   * a UserRole of another stack would show as drift).
   */
  declare readonly updatedAt: pulumi.Output<string | undefined>;

  constructor(name: string, args: UserArgs, opts?: pulumi.CustomResourceOptions) {
    // Its secret inputs are secrets wherever they are stored, even when the program passes them in clear.
    const inputs = {
      ...outputPlaceholders,
      ...args,
      password: args.password === undefined ? undefined : pulumi.secret(args.password),
    };
    super(
      provider,
      name,
      inputs,
      pulumi.mergeOptions(opts, { additionalSecretOutputs: ["password"] }),
      "cloudinfra",
      "User",
    );
  }
}
