import { z } from "zod";
import { CreateVmBody, RescueBody } from "../../api";
import { uuidInput } from "../check";
import { diffSpecOf, type InputFields } from "../fields";
import type { State } from "../kind";
import { teamIdInput } from "../resource-group";
import { NetworkInterfaceInput, NetworkInterfaceReported } from "./interfaces";

/**
 * The create request's body (`POST /resource/virtual-machines`), with what a program has beyond it: `teamId` also takes
 * a ResourceGroup's `id` (or null for none), the power state, the rescue (the body of `POST .../rescue`), and what
 * steers the provider (shrink, adoption, delete, key, reset). The body's members are taken by `.shape`: the contract's
 * body carries a refinement (one primary interface), which `.pick` refuses.
 */
export const VirtualMachineInputs = z.strictObject({
  name: CreateVmBody.shape.name,
  datacenterId: CreateVmBody.shape.datacenterId,
  imageId: CreateVmBody.shape.imageId,
  configurationId: CreateVmBody.shape.configurationId,
  // A ResourceGroup's `id` (the team id as text) or `teamId`, or null for none.
  teamId: teamIdInput.nullable().optional(),
  powerState: z.enum(["running", "stopped"], { error: 'must be "running" or "stopped"' }).default("running"),
  allocatePublicIp: CreateVmBody.shape.allocatePublicIp,
  // The program's own list: `primary` may be left out (check marks the first interface, as the body needs exactly
  // one), and each refusal says how to fix it, down to an interface's members (the contract's have no message).
  networkInterfaces: z
    .array(NetworkInterfaceInput, { error: "must be a list of {networkId, primary}" })
    .min(1, "needs at least one interface (leave it out for the automatic interface)")
    .max(5, "at most 5 interfaces")
    .optional(),
  sshKeyIds: CreateVmBody.shape.sshKeyIds,
  allowReplaceOnShrink: z.boolean({ error: "must be true or false" }).optional(),
  // Read by create only: the VM to take over instead of creating one (e.g. the VM of a `pulumi up` killed mid-way).
  adoptId: uuidInput("the VM to take over").optional(),
  shutdownBeforeDelete: z.boolean({ error: "must be true or false" }).optional(),
  exposePrivateKey: z.boolean({ error: "must be true or false" }).optional(),
  resetTrigger: z.string({ error: "must be a string (any text: changing it resets the VM)" }).optional(),
  // The rescue request's body, its members described and with messages of their own.
  rescue: RescueBody.extend({
    sourceType: z
      .enum(RescueBody.shape.sourceType.options, { error: 'must be "catalog" or "custom"' })
      .describe("`catalog` (a rescue image of the catalog) or `custom` (a custom image)."),
    sourceImageId: uuidInput("a rescue image (catalog) or a custom image").describe("The image's UUID."),
  }).optional(),
});
export type VirtualMachineInputs = z.output<typeof VirtualMachineInputs> & {
  /** Set by check, never by the program: the cpu/ram/disk of `configurationId`, when they could be learned. */
  configurationSize?: Size;
};

export interface Size {
  cpu: number;
  ram: number;
  disk: number;
}

/**
 * How each input changes and what the API reports of it. The documented VM detail names the image but not its id,
 * nor the interfaces or SSH keys: those keep the program's value when the API does not send them. The public IP is
 * documented on the VM list items.
 */
export const inputFields = {
  name: {
    change: "inPlace",
    reported: "documented",
    description: "Name of the VM. Names need not be unique. Changed in place.",
    output: "Name of the VM.",
  },
  datacenterId: {
    change: "replace",
    reported: "documented",
    expects: "must be the UUID of a data center",
    description: "Data center (UUID). Changing it replaces the VM.",
    output: "Data center (UUID).",
  },
  imageId: {
    change: "replace",
    reported: "undocumented",
    expects: "must be the integer id of an image",
    description: "Image (integer id of the catalog) the VM boots from. Changing it replaces the VM.",
    output: "Image id.",
  },
  configurationId: {
    change: "inPlace",
    reported: "documented",
    expects: "must be the integer id of a configuration",
    description:
      "Configuration (integer id of the catalog: cpu, ram, disk). Growing it is changed in place by a resize job (the VM may stop and restart). A VM cannot shrink in place: a smaller configuration is a check failure, unless `allowReplaceOnShrink` is set, in which case the VM is replaced. The API lists no configurations, so the provider learns a configuration's size read-only from the VMs of the entity that use it; when no VM does, the shrink is only found when the API refuses the resize, which fails the update before anything else is changed.",
    output: "Configuration id.",
  },
  // `teamId` removed from the program takes the VM out of its resource group, as `null` does.
  teamId: {
    change: "inPlace",
    reported: "documented",
    clearable: true,
    description:
      "Resource group: its integer id, or a ResourceGroup's `id` or `teamId` (e.g. `group.id`). Left out or `null`: the VM belongs to no group (a group set outside the program is removed by the next `pulumi up`). Changed in place.",
    output: "Resource group (team id), or null.",
    reportedType: z.number().int().nullable(),
  },
  powerState: {
    change: "inPlace",
    reported: "documented",
    description:
      "`running` or `stopped`. Default `running`: a VM stopped behind the stack's back is started again by the next `pulumi up`. Changed in place (start/stop).",
    output: "`running` or `stopped`, or null while the VM is in any other status.",
    reportedType: z.enum(["running", "stopped"]).nullable(),
  },
  allocatePublicIp: {
    change: "replace",
    reported: "documented",
    expects: "must be true or false",
    description: "Give the VM a public IPv4 address. Default false. Changing it replaces the VM.",
    output: "Whether the VM has a public address.",
  },
  networkInterfaces: {
    change: "replace",
    reported: "undocumented",
    description:
      "Network interfaces, 1 to 5, one per network. Default: one automatic interface on a private range of no user network (not listed in `networkInterfaces`). Changing it replaces the VM.",
    output: "Network interfaces on user networks (the automatic interface is not listed).",
    reportedShape: NetworkInterfaceReported,
    reportedType: z.array(NetworkInterfaceReported),
  },
  sshKeyIds: {
    change: "replace",
    reported: "undocumented",
    expects: "must be a list of SSH key ids",
    description: "SSH key ids installed at creation. Default none. Changing it replaces the VM.",
    output: "SSH key ids installed at creation.",
    reportedType: z.array(z.string()),
  },
  allowReplaceOnShrink: {
    change: "ignored",
    reported: "never",
    description:
      "Allow a `configurationId` change that shrinks the VM to replace it (a new VM: disk content, addresses and id are not kept). Default false: such a change is refused. It steers the provider only; changing it changes nothing.",
    output: "`allowReplaceOnShrink` as given at the last create or update (changing it alone changes nothing).",
  },
  adoptId: {
    change: "ignored",
    reported: "never",
    description:
      "The id of an existing VM to take over instead of creating one, e.g. the VM a `pulumi up` killed mid-way created (the stack holds only a pending create). Read at creation only: the VM must not be in status Error nor differ in what replaces a VM; its name, size, resource group and power state are then brought to the program's. Changing it changes nothing; remove it once the VM is taken over (a replacement while it names the VM is refused).",
  },
  configurationSize: {
    change: "ignored",
    reported: "never",
    description:
      "Set by check, never by the program: the cpu/ram/disk of `configurationId`, when they could be learned.",
  },
  // Recorded by an update without a request, so that a delete (which sees the recorded outputs) follows the program.
  shutdownBeforeDelete: {
    change: "inPlace",
    reported: "never",
    description:
      "Stop the VM gracefully before deleting it (on destroy, and when a replacement deletes the old VM): a stop, then reads until the API reports it Stopped (bounded by `cloudinfra:jobTimeoutMs`, progress in the log), then the delete. A VM already stopped is deleted at once; one that does not stop in time is not deleted and the delete fails naming this setting. Default false: deleted as it is. Changed in place without a request (the value recorded at the last create or update is the one a delete follows).",
    output: "`shutdownBeforeDelete` as given at the last create or update: what a delete follows.",
  },
  // Read by the provider only (never sent): removing it from the program drops the key, as `false` does.
  exposePrivateKey: {
    change: "inPlace",
    reported: "never",
    clearable: true,
    description:
      "Read the private SSH key the cloud generated at creation into the secret output `sshPrivateKey` (one request, once: the key is then kept). Default false: the key is not read and `sshPrivateKey` is absent. Changed in place, never a replacement: set to true on an existing VM, the next `pulumi up` reads the key; set to false or removed, it drops the key from the outputs without reading it.",
    output: "`exposePrivateKey` as given at the last create or update: whether `sshPrivateKey` is held.",
  },
  resetTrigger: {
    change: "inPlace",
    reported: "never",
    description:
      "Any text; changing it hard-resets the VM (a power-cycle, `POST .../reset`) in place: same VM, same id. The first create does not reset, and neither does an update that starts or stops the VM; a stopped VM is not reset (a warning says so). Default none.",
    output: "`resetTrigger` as given at the last create or update.",
  },
  // GET .../rescue reports the rescue image; removing `rescue` from the program ends the rescue.
  rescue: {
    change: "inPlace",
    reported: "documented",
    expects: "must be an object {sourceType, sourceImageId}",
    clearable: true,
    description:
      "Rescue mode, declared: present, the VM boots the rescue image (its own disk kept as a secondary disk); removed, it leaves rescue and boots its own disk again (Running); a changed image leaves, then enters again. Each is a job, awaited. `sourceType` is `catalog` (a rescue image of the cloud's catalog: the documented API lists none, so no data function does; the emulator prints its own in `fixtures.rescueImages` of its `--json` start line, and a rescued VM's `rescueImage` output names the image it boots) or `custom` (a custom image); `sourceImageId` is the image's UUID. A rescued VM counts as running: `powerState: \"stopped\"` together with `rescue` is refused at check. Default none (not rescued; a rescue entered behind the stack's back shows on refresh and the next `up` ends it). Changed in place.",
    output:
      "The rescue as the API reports it (the image id; `sourceType` as the program gave it, else `catalog`), or undefined.",
  },
} as const satisfies InputFields<VirtualMachineInputs>;

// A VM whose creation failed (status Error) can only be replaced.
export const diffSpec = diffSpecOf(VirtualMachineInputs, inputFields, {
  failed: (olds) => (olds.status === "Error" ? "status" : undefined),
});

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const VirtualMachineOutputs = z.object({
  datacenterName: z.string().describe("Data center name, e.g. fra-1."),
  imageName: z.string().describe("Image name, e.g. ubuntu-24.04."),
  configurationName: z.string().describe("Configuration name, e.g. m-4vcpu-8gb."),
  configurationCategoryCode: z.string().describe("Category code of the configuration, e.g. general."),
  cpu: z.number().int().describe("Virtual CPUs."),
  ram: z.number().int().describe("RAM in GB."),
  disk: z.number().int().describe("Disk in GB."),
  status: z.string().describe("Status reported by the API: Running, Stopped, Resizing, Rescued, Error, ..."),
  consoleEnabled: z.boolean().describe("Whether the VM's console can be opened (as the API reports it)."),
  networkHotplug: z
    .boolean()
    .describe("Whether network interfaces can be added to and removed from the running VM (as the API reports it)."),
  privateIp: z.string().nullable().describe("Private address of the primary interface."),
  publicIp: z.string().nullable().describe("Public address, or null without `allocatePublicIp`."),
  sshPrivateKey: z
    .string()
    .optional()
    .describe("Private key generated by the cloud at creation (PEM). Secret. Only with `exposePrivateKey: true`."),
  createdAt: z.string().describe("Creation time (ISO 8601)."),
  updatedAt: z.string().describe("Last change (ISO 8601)."),
  rescued: z.boolean().describe("Whether the VM is in rescue mode (as `GET .../rescue` reports it)."),
  rescueImage: z
    .object({
      id: z.string().describe("The rescue image (UUID)."),
      name: z.string().describe("Name of the rescue image."),
      osFamily: z.string().describe("Operating system family of the rescue image, e.g. linux."),
    })
    .nullable()
    .describe("The rescue image the VM runs (`id`, `name`, `osFamily`), or null when it is not rescued."),
});

type Outputs = z.output<typeof VirtualMachineOutputs>;

/** A VM's outputs: the inputs as given, overlaid with what the API reports (kind.ts `State`). */
export type VirtualMachineState = State<VirtualMachineInputs, typeof inputFields, Outputs>;

/**
 * The outputs the VM's detail and addresses give (observe.ts `outputsOf`): all but the rescue's, which
 * `GET .../rescue` reports (rescue.ts `withRescue` adds them).
 */
export type ObservedState = State<
  Omit<VirtualMachineInputs, "rescue">,
  Omit<typeof inputFields, "rescue">,
  Omit<Outputs, "rescued" | "rescueImage">
>;
