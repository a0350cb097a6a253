// Written by `npm run sdk-gen` from provider/resources/resource-group-member.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";
import type { ResourceGroupRef } from "./resource-group";

const provider = dynamicProvider("ResourceGroupMember");

/**
 * Every input and output of a ResourceGroupMember, each `undefined`: passed to Pulumi beside the arguments, so that
 * each one is an Output on the resource, set or not.
 */
const outputPlaceholders = {
  teamId: undefined,
  userId: undefined,
};

/** The arguments of a {@link ResourceGroupMember}. */
export interface ResourceGroupMemberArgs {
  /**
   * The resource group: its integer id, or a ResourceGroup's `id` (e.g. `group.id`), possibly one another stack owns
   * (read through a StackReference). Changing it replaces the membership.
   */
  teamId: pulumi.Input<ResourceGroupRef>;
  /** The user (UUID), e.g. a User's `id`. Changing it replaces the membership. */
  userId: pulumi.Input<string>;
}

/**
 * One user's membership of one resource group, managed on its own: creating it adds the user to the group, deleting
 * it removes the user. The id is `<teamId>:<userId>`. A user already a member is simply taken over. `refresh` drops
 * the membership when the user was removed from the group (or the user or group deleted), and the next `up` adds the
 * user again. Lets an application stack add its users to a group another stack owns: declare the group there without
 * `members` (which, when given, is the complete list and would remove this member), and the user here without
 * `teamIds` for that group.
 */
export class ResourceGroupMember extends pulumi.dynamic.Resource {
  /** The resource group's integer id. */
  declare readonly teamId: pulumi.Output<number>;
  /** The member (UUID). */
  declare readonly userId: pulumi.Output<string>;

  constructor(name: string, args: ResourceGroupMemberArgs, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { ...outputPlaceholders, ...args }, opts, "cloudinfra", "ResourceGroupMember");
  }
}
