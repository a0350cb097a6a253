// Written by `npm run sdk-gen` from provider/resources/resource-group.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";

const provider = dynamicProvider("ResourceGroup");

/**
 * Every input and output of a ResourceGroup, each `undefined`: passed to Pulumi beside the arguments, so that each
 * one is an Output on the resource, set or not.
 */
const outputPlaceholders = {
  name: undefined,
  parentTeamId: undefined,
  members: undefined,
  adopt: undefined,
  teamId: undefined,
  entityId: undefined,
  createdAt: undefined,
};

/**
 * A reference to a resource group, the one type every `teamId`, `teamIds` and `parentTeamId` input takes: the integer
 * group id, or its decimal text. Both outputs of a {@link ResourceGroup} fit: `group.id` (the id as text, which also
 * tells Pulumi the dependency) and `group.teamId` (the number).
 */
export type ResourceGroupRef = number | string;

/** The arguments of a {@link ResourceGroup}. */
export interface ResourceGroupArgs {
  /** Name, unique within the entity ignoring case. Changed in place. */
  name: pulumi.Input<string>;
  /**
   * The parent group (the API's child groups): its integer id, or a ResourceGroup's `id` (e.g. `parent.id`, which
   * also makes Pulumi delete this child before its parent). Default: none (a top-level group). Changed in place;
   * removing it makes the group top-level again.
   */
  parentTeamId?: pulumi.Input<ResourceGroupRef>;
  /**
   * User ids (UUIDs, e.g. a User's `id`) that are the group's members: users are added and removed to match, in
   * place. Default: not managed (the members are left as they are). When given, the list is complete: a member added
   * by a ResourceGroupMember resource or a user's `teamIds` is removed. Manage a group's memberships in one place.
   */
  members?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * When a group of this name already exists, take it over instead of failing (its parent and members are aligned to
   * the program). The way to bring existing groups under management; `pulumi import` does not work for dynamic
   * resources. Default false. Never causes a change by itself.
   */
  adopt?: pulumi.Input<boolean>;
}

/**
 * A resource group (the API's team). Its Pulumi id is the integer group id as text. Deleting a group that still has
 * child groups is refused by the API: declare children with `parentTeamId: parent.id` so they are deleted first.
 */
export class ResourceGroup extends pulumi.dynamic.Resource {
  /** Name of the group. */
  declare readonly name: pulumi.Output<string>;
  /** Id of the parent group, if any. */
  declare readonly parentTeamId: pulumi.Output<number | undefined>;
  /** User ids of the members, sorted, when the program manages `members` (else undefined). */
  declare readonly members: pulumi.Output<string[] | undefined>;
  /** Whether an existing group of this name may be taken over (as given). */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /** The integer group id (the Pulumi `id` is the same number as text). */
  declare readonly teamId: pulumi.Output<number>;
  /** The entity (UUID) the group belongs to. */
  declare readonly entityId: pulumi.Output<string>;
  /** Creation time (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;

  constructor(name: string, args: ResourceGroupArgs, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { ...outputPlaceholders, ...args }, opts, "cloudinfra", "ResourceGroup");
  }
}
