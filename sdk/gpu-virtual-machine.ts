// Written by `npm run sdk-gen` from provider/resources/gpu-virtual-machine.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";
import type { ResourceGroupRef } from "./resource-group";

const provider = dynamicProvider("GpuVirtualMachine");

/**
 * Every input and output of a GpuVirtualMachine, each `undefined`: passed to Pulumi beside the arguments, so that
 * each one is an Output on the resource, set or not.
 */
const outputPlaceholders = {
  name: undefined,
  datacenterId: undefined,
  seriesId: undefined,
  gpuCount: undefined,
  teamId: undefined,
  powerState: undefined,
  imageName: undefined,
  imageId: undefined,
  shutdownBeforeDelete: undefined,
  exposePrivateKey: undefined,
  resetTrigger: undefined,
  status: undefined,
  publicIp: undefined,
  jupyterLabUrl: undefined,
  series: undefined,
  datacenter: undefined,
  sshPrivateKey: undefined,
  createdAt: undefined,
};

/** The arguments of a GpuVirtualMachine other than its image (see {@link GpuVirtualMachineArgs}). */
export interface GpuVirtualMachineBaseArgs {
  /** Display name. Not unique: GPU VMs cannot be adopted by name. Changed in place. */
  name: pulumi.Input<string>;
  /**
   * Data center (UUID); the series and GPU count must be available there (see `getGpuInventory`). Changing it
   * replaces the GPU VM.
   */
  datacenterId: pulumi.Input<string>;
  /** GPU series id (an inventory entry's `seriesId`). Changing it replaces the GPU VM. */
  seriesId: pulumi.Input<number>;
  /**
   * Number of GPUs: 1, 2, 4 or 8. When the combination is not available in the data center, create fails with the
   * combinations available now. Changing it replaces the GPU VM.
   */
  gpuCount: pulumi.Input<1 | 2 | 4 | 8>;
  /**
   * Resource group: the integer team id, or a ResourceGroup's `id` (the same number as a string). Default: none.
   * Changed in place; removing it takes the GPU VM out of its group.
   */
  teamId?: pulumi.Input<ResourceGroupRef>;
  /**
   * `running` or `stopped`; the provider starts or stops the GPU VM to match. Default: no opinion (a new GPU VM runs,
   * and later power changes are left alone). Some series cannot be started by the cloud provider (the API answers
   * 501): `running` then fails with an error saying so. Changed in place.
   */
  powerState?: pulumi.Input<"running" | "stopped">;
  /**
   * Stop the GPU VM before deleting it (on destroy, and when a replacement deletes the old one): a stop, then reads
   * until the API reports it Stopped (bounded by `cloudinfra:jobTimeoutMs`), then the delete. One already stopped is
   * deleted at once; one that does not stop in time is not deleted and the delete fails naming this setting. Default
   * false. Changed in place without a request.
   */
  shutdownBeforeDelete?: pulumi.Input<boolean>;
  /**
   * Read the private SSH key the cloud generated at creation into the secret output `sshPrivateKey` (one request,
   * once: the key is then kept). Default false: the key is not read and `sshPrivateKey` is absent. Changed in place,
   * never a replacement: set to true on an existing GPU VM, the next `pulumi up` reads the key; set to false or
   * removed, it drops the key from the outputs without reading it.
   */
  exposePrivateKey?: pulumi.Input<boolean>;
  /**
   * Any text; changing it hard-resets the GPU VM (`POST .../reset`) in place: same GPU VM, same id. The first create
   * does not reset, nor does an update that starts or stops it; a stopped one is not reset (a warning says so).
   * Default none.
   */
  resetTrigger?: pulumi.Input<string>;
}

/** The image of a GPU VM given by name (or not at all). */
export interface GpuVirtualMachineImageByName {
  /**
   * Image by name, e.g. `ubuntu-24.04`; give this or `imageId`, not both. Default: the cloud's default image.
   * Changing it replaces the GPU VM.
   */
  imageName?: pulumi.Input<string>;
  /** Not with `imageName`: one image only. */
  imageId?: never;
}

/** The image of a GPU VM given by id. */
export interface GpuVirtualMachineImageById {
  /**
   * Image by integer id; give this or `imageName`, not both. Default: the cloud's default image. Changing it replaces
   * the GPU VM.
   */
  imageId: pulumi.Input<number>;
  /** Not with `imageId`: one image only. */
  imageName?: never;
}

/**
 * The arguments of a GpuVirtualMachine. The image is given by `imageName` or by `imageId`, never both (a program
 * giving both does not compile).
 */
export type GpuVirtualMachineArgs = GpuVirtualMachineBaseArgs &
  (GpuVirtualMachineImageByName | GpuVirtualMachineImageById);

/**
 * A GPU virtual machine. GPU VM names are not unique, so there is no adoption of existing GPU VMs: a program always
 * creates its own. A GPU VM whose creation failed (status Error) is replaced by the next `up`.
 */
export class GpuVirtualMachine extends pulumi.dynamic.Resource {
  /** Display name. */
  declare readonly name: pulumi.Output<string>;
  /** Data center (UUID). */
  declare readonly datacenterId: pulumi.Output<string>;
  /** GPU series id. */
  declare readonly seriesId: pulumi.Output<number>;
  /** Number of GPUs. */
  declare readonly gpuCount: pulumi.Output<number>;
  /** Resource group (integer team id), null when none. */
  declare readonly teamId: pulumi.Output<number | null>;
  /** `running` or `stopped` as the API reports it; undefined in other statuses (Creating, Deleting, Error). */
  declare readonly powerState: pulumi.Output<"running" | "stopped" | undefined>;
  /** Image name reported by the API. */
  declare readonly imageName: pulumi.Output<string | undefined>;
  /** Image id, as given in the program (the API does not report it). */
  declare readonly imageId: pulumi.Output<number | undefined>;
  /** `shutdownBeforeDelete` as given at the last create or update: what a delete follows. */
  declare readonly shutdownBeforeDelete: pulumi.Output<boolean | undefined>;
  /** `exposePrivateKey` as given at the last create or update: whether `sshPrivateKey` is held. */
  declare readonly exposePrivateKey: pulumi.Output<boolean | undefined>;
  /** `resetTrigger` as given at the last create or update. */
  declare readonly resetTrigger: pulumi.Output<string | undefined>;
  /** Status reported by the API: Creating, Running, Stopped, Deleting or Error. */
  declare readonly status: pulumi.Output<string>;
  /** Public IPv4 address, once provisioned. */
  declare readonly publicIp: pulumi.Output<string | null>;
  /** URL of the GPU VM's JupyterLab, once it has its public IP. */
  declare readonly jupyterLabUrl: pulumi.Output<string | null>;
  /** The GPU series: integer id, name and code. */
  declare readonly series: pulumi.Output<{
    /** Integer id of the series (the `seriesId` input). */
    id: number;
    /** Name of the series, e.g. NVIDIA A100. */
    name: string;
    /** Short code of the series, e.g. a100. */
    code: string;
  }>;
  /** The data center: id and name. */
  declare readonly datacenter: pulumi.Output<{
    /** Data center (UUID). */
    id: string;
    /** Data center name, e.g. fra-1. */
    name: string;
  }>;
  /** Private SSH key generated at creation (secret). Only with `exposePrivateKey: true`. */
  declare readonly sshPrivateKey: pulumi.Output<string | undefined>;
  /** Creation time (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;

  constructor(name: string, args: GpuVirtualMachineArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      { ...outputPlaceholders, ...args },
      pulumi.mergeOptions(opts, { additionalSecretOutputs: ["sshPrivateKey"] }),
      "cloudinfra",
      "GpuVirtualMachine",
    );
  }
}
