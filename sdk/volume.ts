// Written by `npm run sdk-gen` from provider/resources/volume.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";
import type { ResourceGroupRef } from "./resource-group";

const provider = dynamicProvider("Volume");

/**
 * Every input and output of a Volume, each `undefined`: passed to Pulumi beside the arguments, so that each one is an
 * Output on the resource, set or not.
 */
const outputPlaceholders = {
  name: undefined,
  datacenterId: undefined,
  volumeTypeId: undefined,
  volumeSizeId: undefined,
  sizeGb: undefined,
  teamId: undefined,
  adopt: undefined,
  datacenterName: undefined,
  volumeTypeName: undefined,
  failed: undefined,
  createdAt: undefined,
};

/** The arguments of a {@link Volume}. */
export interface VolumeArgs {
  /** Name, unique within the entity. Changing it replaces the volume (the new one is created first). */
  name: pulumi.Input<string>;
  /** Data center (UUID). Changing it replaces the volume. */
  datacenterId: pulumi.Input<string>;
  /** Volume type id (e.g. SSD or NVMe; see `getVolumeSizes`). Changing it replaces the volume. */
  volumeTypeId: pulumi.Input<number>;
  /**
   * The API's id of the volume size (see `getVolumeSizes`). Optional: `sizeGb` decides it. When given it must be the
   * id of the `sizeGb` size of this type in this data center (a clear error names the right id otherwise); it changes
   * together with `sizeGb`.
   */
  volumeSizeId?: pulumi.Input<number>;
  /**
   * Size in GB: one of the sizes the volume type offers in the data center (see `getVolumeSizes`; a size that is not
   * offered fails at create/update time, naming the sizes that are). Growing it is done in place by a resize job;
   * shrinking it is refused by `check` (volumes cannot shrink).
   */
  sizeGb: pulumi.Input<number>;
  /**
   * Resource group: its integer id, or a ResourceGroup's `id` or `teamId` (e.g. `group.id`). Default: none. The API
   * has no volume update route, so this is set at creation only: changing it replaces the volume. Removing it from
   * the program leaves the volume as it is.
   */
  teamId?: pulumi.Input<ResourceGroupRef>;
  /**
   * When a volume of this name already exists, take it over instead of failing (its data center, type and resource
   * group must match; a smaller size is grown, a larger one is an error). The way to bring existing volumes under
   * management (`pulumi import` does not work for dynamic resources). Default false. Never a change by itself.
   */
  adopt?: pulumi.Input<boolean>;
}

/**
 * A block storage volume. Attach it to a virtual machine with a `VolumeAttachment`. Deleting it waits until it is
 * Available (its attachments, which depend on it, are deleted first), bounded by `cloudinfra:jobTimeoutMs`.
 */
export class Volume extends pulumi.dynamic.Resource {
  /** Name of the volume. */
  declare readonly name: pulumi.Output<string>;
  /** Data center (UUID). */
  declare readonly datacenterId: pulumi.Output<string>;
  /** Volume type id. */
  declare readonly volumeTypeId: pulumi.Output<number>;
  /** Size in GB, as the API reports it. */
  declare readonly sizeGb: pulumi.Output<number>;
  /** Id of the volume size the provider chose for `sizeGb` (from the data center's volume sizes). */
  declare readonly volumeSizeId: pulumi.Output<number>;
  /** Resource group (teamId), or null. */
  declare readonly teamId: pulumi.Output<number | null>;
  /**
   * When a volume of this name already exists, take it over instead of failing (its data center, type and resource
   * group must match; a smaller size is grown, a larger one is an error). The way to bring existing volumes under
   * management (`pulumi import` does not work for dynamic resources). Default false. Never a change by itself.
   */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /** Data center name, e.g. `fra-1`. */
  declare readonly datacenterName: pulumi.Output<string>;
  /** Volume type name, e.g. `ssd`. */
  declare readonly volumeTypeName: pulumi.Output<string>;
  /**
   * True when the API reports the volume in status Error (its creation failed): the next `up` replaces it. The
   * attachment state is on `VolumeAttachment`, so attaching does not read as drift of the volume.
   */
  declare readonly failed: pulumi.Output<boolean>;
  /** Creation time (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;

  constructor(name: string, args: VolumeArgs, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { ...outputPlaceholders, ...args }, opts, "cloudinfra", "Volume");
  }
}
