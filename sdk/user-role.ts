// Written by `npm run sdk-gen` from provider/resources/user-role.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";

const provider = dynamicProvider("UserRole");

/**
 * Every input and output of a UserRole, each `undefined`: passed to Pulumi beside the arguments, so that each one is
 * an Output on the resource, set or not.
 */
const outputPlaceholders = {
  userId: undefined,
  roleName: undefined,
};

/** The arguments of a {@link UserRole}. */
export interface UserRoleArgs {
  /** The user (UUID), e.g. a User's `id`. Changing it replaces the grant. */
  userId: pulumi.Input<string>;
  /** The role granted: tenant-admin, tenant-user or vm-operator. Changing it replaces the grant. */
  roleName: pulumi.Input<"tenant-admin" | "tenant-user" | "vm-operator">;
}

/**
 * One role of one user, managed on its own: creating it grants the role, deleting it revokes it. The id is
 * `<userId>:<roleName>`. A role the user already holds is simply taken over. `refresh` drops the grant when the role
 * was revoked (or the user deleted), and the next `up` grants it again. Declare the user without `roleNames` when its
 * roles are granted this way: `roleNames`, when given, is the complete list and would revoke this role.
 */
export class UserRole extends pulumi.dynamic.Resource {
  /** The user (UUID). */
  declare readonly userId: pulumi.Output<string>;
  /** The role's name. */
  declare readonly roleName: pulumi.Output<"tenant-admin" | "tenant-user" | "vm-operator">;

  constructor(name: string, args: UserRoleArgs, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { ...outputPlaceholders, ...args }, opts, "cloudinfra", "UserRole");
  }
}
