// Written by `npm run sdk-gen` from provider/resources/virtual-machine.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";
import type { ResourceGroupRef } from "./resource-group";

const provider = dynamicProvider("VirtualMachine");

/**
 * Every input and output of a VirtualMachine, each `undefined`: passed to Pulumi beside the arguments, so that each
 * one is an Output on the resource, set or not.
 */
const outputPlaceholders = {
  name: undefined,
  datacenterId: undefined,
  imageId: undefined,
  configurationId: undefined,
  teamId: undefined,
  powerState: undefined,
  allocatePublicIp: undefined,
  networkInterfaces: undefined,
  sshKeyIds: undefined,
  allowReplaceOnShrink: undefined,
  adoptId: undefined,
  shutdownBeforeDelete: undefined,
  exposePrivateKey: undefined,
  resetTrigger: undefined,
  rescue: undefined,
  datacenterName: undefined,
  imageName: undefined,
  configurationName: undefined,
  configurationCategoryCode: undefined,
  cpu: undefined,
  ram: undefined,
  disk: undefined,
  status: undefined,
  consoleEnabled: undefined,
  networkHotplug: undefined,
  privateIp: undefined,
  publicIp: undefined,
  sshPrivateKey: undefined,
  createdAt: undefined,
  updatedAt: undefined,
  rescued: undefined,
  rescueImage: undefined,
};

/** One network interface of a VM. */
export interface VirtualMachineNetworkInterfaceArgs {
  /** Network (UUID) to connect, in the VM's data center and Active. */
  networkId: pulumi.Input<string>;
  /** Whether this is the primary interface. Exactly one may be; when none is marked, the first interface is. */
  primary?: pulumi.Input<boolean>;
}

/** A network interface as the API reports it. */
export interface VirtualMachineNetworkInterface {
  /** Interface id. */
  id: string;
  /** Network (UUID) the interface is connected to. */
  networkId: string;
  /** Whether it is the VM's primary interface. */
  primary: boolean;
  /** Static private address from the network's CIDR block. */
  privateIp: string;
}

/** The arguments of a {@link VirtualMachine}. */
export interface VirtualMachineArgs {
  /** Name of the VM. Names need not be unique. Changed in place. */
  name: pulumi.Input<string>;
  /** Data center (UUID). Changing it replaces the VM. */
  datacenterId: pulumi.Input<string>;
  /** Image (integer id of the catalog) the VM boots from. Changing it replaces the VM. */
  imageId: pulumi.Input<number>;
  /**
   * Configuration (integer id of the catalog: cpu, ram, disk). Growing it is changed in place by a resize job (the VM
   * may stop and restart). A VM cannot shrink in place: a smaller configuration is a check failure, unless
   * `allowReplaceOnShrink` is set, in which case the VM is replaced. The API lists no configurations, so the provider
   * learns a configuration's size read-only from the VMs of the entity that use it; when no VM does, the shrink is
   * only found when the API refuses the resize, which fails the update before anything else is changed.
   */
  configurationId: pulumi.Input<number>;
  /**
   * Resource group: its integer id, or a ResourceGroup's `id` or `teamId` (e.g. `group.id`). Left out or `null`: the
   * VM belongs to no group (a group set outside the program is removed by the next `pulumi up`). Changed in place.
   */
  teamId?: pulumi.Input<ResourceGroupRef | null>;
  /**
   * `running` or `stopped`. Default `running`: a VM stopped behind the stack's back is started again by the next
   * `pulumi up`. Changed in place (start/stop).
   */
  powerState?: pulumi.Input<"running" | "stopped">;
  /** Give the VM a public IPv4 address. Default false. Changing it replaces the VM. */
  allocatePublicIp?: pulumi.Input<boolean>;
  /**
   * Network interfaces, 1 to 5, one per network. Default: one automatic interface on a private range of no user
   * network (not listed in `networkInterfaces`). Changing it replaces the VM.
   */
  networkInterfaces?: pulumi.Input<pulumi.Input<VirtualMachineNetworkInterfaceArgs>[]>;
  /** SSH key ids installed at creation. Default none. Changing it replaces the VM. */
  sshKeyIds?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * Allow a `configurationId` change that shrinks the VM to replace it (a new VM: disk content, addresses and id are
   * not kept). Default false: such a change is refused. It steers the provider only; changing it changes nothing.
   */
  allowReplaceOnShrink?: pulumi.Input<boolean>;
  /**
   * The id of an existing VM to take over instead of creating one, e.g. the VM a `pulumi up` killed mid-way created
   * (the stack holds only a pending create). Read at creation only: the VM must not be in status Error nor differ in
   * what replaces a VM; its name, size, resource group and power state are then brought to the program's. Changing it
   * changes nothing; remove it once the VM is taken over (a replacement while it names the VM is refused).
   */
  adoptId?: pulumi.Input<string>;
  /**
   * Stop the VM gracefully before deleting it (on destroy, and when a replacement deletes the old VM): a stop, then
   * reads until the API reports it Stopped (bounded by `cloudinfra:jobTimeoutMs`, progress in the log), then the
   * delete. A VM already stopped is deleted at once; one that does not stop in time is not deleted and the delete
   * fails naming this setting. Default false: deleted as it is. Changed in place without a request (the value
   * recorded at the last create or update is the one a delete follows).
   */
  shutdownBeforeDelete?: pulumi.Input<boolean>;
  /**
   * Read the private SSH key the cloud generated at creation into the secret output `sshPrivateKey` (one request,
   * once: the key is then kept). Default false: the key is not read and `sshPrivateKey` is absent. Changed in place,
   * never a replacement: set to true on an existing VM, the next `pulumi up` reads the key; set to false or removed,
   * it drops the key from the outputs without reading it.
   */
  exposePrivateKey?: pulumi.Input<boolean>;
  /**
   * Any text; changing it hard-resets the VM (a power-cycle, `POST .../reset`) in place: same VM, same id. The first
   * create does not reset, and neither does an update that starts or stops the VM; a stopped VM is not reset (a
   * warning says so). Default none.
   */
  resetTrigger?: pulumi.Input<string>;
  /**
   * Rescue mode, declared: present, the VM boots the rescue image (its own disk kept as a secondary disk); removed,
   * it leaves rescue and boots its own disk again (Running); a changed image leaves, then enters again. Each is a
   * job, awaited. `sourceType` is `catalog` (a rescue image of the cloud's catalog: the documented API lists none, so
   * no data function does; the emulator prints its own in `fixtures.rescueImages` of its `--json` start line, and a
   * rescued VM's `rescueImage` output names the image it boots) or `custom` (a custom image); `sourceImageId` is the
   * image's UUID. A rescued VM counts as running: `powerState: "stopped"` together with `rescue` is refused at check.
   * Default none (not rescued; a rescue entered behind the stack's back shows on refresh and the next `up` ends it).
   * Changed in place.
   */
  rescue?: pulumi.Input<{
    /** `catalog` (a rescue image of the catalog) or `custom` (a custom image). */
    sourceType: pulumi.Input<"catalog" | "custom">;
    /** The image's UUID. */
    sourceImageId: pulumi.Input<string>;
  }>;
}

/**
 * A virtual machine (one per resource). Adoption by name (`adopt`) does not apply: VM names are not unique in the
 * API, so a program creates its own VM, unless it names one to take over by id (`adoptId`). Its creation waits for
 * the create job; a failed job records the VM (status Error) in the stack, and the next `pulumi up` replaces it.
 */
export class VirtualMachine extends pulumi.dynamic.Resource {
  /** Name of the VM. */
  declare readonly name: pulumi.Output<string>;
  /** Data center (UUID). */
  declare readonly datacenterId: pulumi.Output<string>;
  /** Image id. */
  declare readonly imageId: pulumi.Output<number>;
  /** Configuration id. */
  declare readonly configurationId: pulumi.Output<number>;
  /** Resource group (team id), or null. */
  declare readonly teamId: pulumi.Output<number | null>;
  /** `running` or `stopped`, or null while the VM is in any other status. */
  declare readonly powerState: pulumi.Output<"running" | "stopped" | null>;
  /** Whether the VM has a public address. */
  declare readonly allocatePublicIp: pulumi.Output<boolean | undefined>;
  /** Network interfaces on user networks (the automatic interface is not listed). */
  declare readonly networkInterfaces: pulumi.Output<VirtualMachineNetworkInterface[]>;
  /** SSH key ids installed at creation. */
  declare readonly sshKeyIds: pulumi.Output<string[]>;
  /** `allowReplaceOnShrink` as given at the last create or update (changing it alone changes nothing). */
  declare readonly allowReplaceOnShrink: pulumi.Output<boolean | undefined>;
  /**
   * The id of an existing VM to take over instead of creating one, e.g. the VM a `pulumi up` killed mid-way created
   * (the stack holds only a pending create). Read at creation only: the VM must not be in status Error nor differ in
   * what replaces a VM; its name, size, resource group and power state are then brought to the program's. Changing it
   * changes nothing; remove it once the VM is taken over (a replacement while it names the VM is refused).
   */
  declare readonly adoptId: pulumi.Output<string | undefined>;
  /** `shutdownBeforeDelete` as given at the last create or update: what a delete follows. */
  declare readonly shutdownBeforeDelete: pulumi.Output<boolean | undefined>;
  /** `exposePrivateKey` as given at the last create or update: whether `sshPrivateKey` is held. */
  declare readonly exposePrivateKey: pulumi.Output<boolean | undefined>;
  /** `resetTrigger` as given at the last create or update. */
  declare readonly resetTrigger: pulumi.Output<string | undefined>;
  /**
   * The rescue as the API reports it (the image id; `sourceType` as the program gave it, else `catalog`), or
   * undefined.
   */
  declare readonly rescue: pulumi.Output<
    | {
        /** `catalog` (a rescue image of the catalog) or `custom` (a custom image). */
        sourceType: "catalog" | "custom";
        /** The image's UUID. */
        sourceImageId: string;
      }
    | undefined
  >;
  /** Data center name, e.g. fra-1. */
  declare readonly datacenterName: pulumi.Output<string>;
  /** Image name, e.g. ubuntu-24.04. */
  declare readonly imageName: pulumi.Output<string>;
  /** Configuration name, e.g. m-4vcpu-8gb. */
  declare readonly configurationName: pulumi.Output<string>;
  /** Category code of the configuration, e.g. general. */
  declare readonly configurationCategoryCode: pulumi.Output<string>;
  /** Virtual CPUs. */
  declare readonly cpu: pulumi.Output<number>;
  /** RAM in GB. */
  declare readonly ram: pulumi.Output<number>;
  /** Disk in GB. */
  declare readonly disk: pulumi.Output<number>;
  /** Status reported by the API: Running, Stopped, Resizing, Rescued, Error, ... */
  declare readonly status: pulumi.Output<string>;
  /** Whether the VM's console can be opened (as the API reports it). */
  declare readonly consoleEnabled: pulumi.Output<boolean>;
  /** Whether network interfaces can be added to and removed from the running VM (as the API reports it). */
  declare readonly networkHotplug: pulumi.Output<boolean>;
  /** Private address of the primary interface. */
  declare readonly privateIp: pulumi.Output<string | null>;
  /** Public address, or null without `allocatePublicIp`. */
  declare readonly publicIp: pulumi.Output<string | null>;
  /** Private key generated by the cloud at creation (PEM). Secret. Only with `exposePrivateKey: true`. */
  declare readonly sshPrivateKey: pulumi.Output<string | undefined>;
  /** Creation time (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;
  /** Last change (ISO 8601). */
  declare readonly updatedAt: pulumi.Output<string>;
  /** Whether the VM is in rescue mode (as `GET .../rescue` reports it). */
  declare readonly rescued: pulumi.Output<boolean>;
  /** The rescue image the VM runs (`id`, `name`, `osFamily`), or null when it is not rescued. */
  declare readonly rescueImage: pulumi.Output<{
    /** The rescue image (UUID). */
    id: string;
    /** Name of the rescue image. */
    name: string;
    /** Operating system family of the rescue image, e.g. linux. */
    osFamily: string;
  } | null>;

  constructor(name: string, args: VirtualMachineArgs, opts?: pulumi.CustomResourceOptions) {
    super(
      provider,
      name,
      { ...outputPlaceholders, ...args },
      pulumi.mergeOptions(opts, { additionalSecretOutputs: ["sshPrivateKey"] }),
      "cloudinfra",
      "VirtualMachine",
    );
  }
}
