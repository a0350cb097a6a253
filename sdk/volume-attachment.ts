// Written by `npm run sdk-gen` from provider/resources/volume-attachment.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";

const provider = dynamicProvider("VolumeAttachment");

/**
 * Every input and output of a VolumeAttachment, each `undefined`: passed to Pulumi beside the arguments, so that each
 * one is an Output on the resource, set or not.
 */
const outputPlaceholders = {
  volumeId: undefined,
  virtualMachineId: undefined,
  datacenterId: undefined,
  datacenterName: undefined,
  status: undefined,
};

/** The arguments of a {@link VolumeAttachment}. */
export interface VolumeAttachmentArgs {
  /** The volume (UUID), e.g. `volume.id`. Changing it replaces the attachment (the new volume is attached first). */
  volumeId: pulumi.Input<string>;
  /**
   * The virtual machine (UUID), in the volume's data center (else the API refuses the attach, naming both data
   * centers: this cannot be checked before a request is made). Changing it replaces the attachment: the volume is
   * detached from the old VM before it is attached to the new one.
   */
  virtualMachineId: pulumi.Input<string>;
}

/**
 * Attaches a volume to a virtual machine (an attach job; deleting it runs a detach job, and a volume already
 * detached, or a VM or volume already gone, counts as deleted). The id is `<volumeId>:<virtualMachineId>`. Nothing
 * changes in place. When the volume is already attached to that VM, the attachment is simply taken over: no `adopt`
 * flag is needed. `refresh` drops the attachment when the volume is no longer attached to that VM.
 */
export class VolumeAttachment extends pulumi.dynamic.Resource {
  /** The attached volume (UUID). */
  declare readonly volumeId: pulumi.Output<string>;
  /** The virtual machine (UUID). */
  declare readonly virtualMachineId: pulumi.Output<string>;
  /** Data center of the volume and VM (UUID). */
  declare readonly datacenterId: pulumi.Output<string>;
  /** Data center name, e.g. `fra-1`. */
  declare readonly datacenterName: pulumi.Output<string>;
  /** The volume's status: In-use once attached (Resizing or Detaching while such a job runs). */
  declare readonly status: pulumi.Output<string>;

  constructor(name: string, args: VolumeAttachmentArgs, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { ...outputPlaceholders, ...args }, opts, "cloudinfra", "VolumeAttachment");
  }
}
