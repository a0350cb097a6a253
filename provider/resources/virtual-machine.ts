import { z } from "zod";
import { CodedError, raiseJobTimeout } from "../client/error-codes";
import type { VmDetail, VmListItem } from "../api";
import { ApiError, JobFailedError, type CloudClient } from "../client";
import { type CheckFailure, checkInputs, type CheckResult, uuidInput } from "./check";
import { type HandlerContext, progressAbout, warnAbout } from "./context";
import { AMBIGUOUS_CREATE_SKEW_MS, resendAfterFailedCreate } from "./create-recovery";
import { changedInputs, diffInputs, type DiffResult } from "./diff";
import { codeOfCause, isConflict, isNotFound, ResourceInitError, settledText } from "./errors";
import { awaitJob, batchedRead, pollUntil, resendAfterFailedJob, sleep } from "./jobs";
import type { OutputName, ResourceKind } from "./kind";
import { containsUnknown, exposedPrivateKey, keptPrivateKey, plainInputs, type Props, UNKNOWN } from "./props";
import { diffSpecOf, inputsAsReported, sdkTypes, type InputFields } from "./fields";
import { teamIdInput } from "./resource-group";

const catalogId = (what: string) =>
  z
    .number({ error: `must be the integer id of ${what}` })
    .int({ error: `must be the integer id of ${what}` })
    .positive({ error: `must be the positive integer id of ${what}` });

const NetworkInterfaceInput = z
  .strictObject({
    networkId: uuidInput("a network").describe("Network (UUID) to connect, in the VM's data center and Active."),
    primary: z
      .boolean({ error: "must be true or false" })
      .optional()
      .describe(
        "Whether this is the primary interface. Exactly one may be; when none is marked, the first interface is.",
      ),
  })
  .describe("One network interface of a VM.")
  .register(sdkTypes, { name: "VirtualMachineNetworkInterfaceArgs", io: "input" });

/** A network interface in the outputs (described for the schema and the SDK; the values are the API's). */
const NetworkInterfaceReported = z
  .object({
    id: z.string().describe("Interface id."),
    networkId: z.string().describe("Network (UUID) the interface is connected to."),
    primary: z.boolean().describe("Whether it is the VM's primary interface."),
    privateIp: z.string().describe("Static private address from the network's CIDR block."),
  })
  .describe("A network interface as the API reports it.")
  .register(sdkTypes, { name: "VirtualMachineNetworkInterface", io: "output" });

export const VirtualMachineInputs = z.strictObject({
  name: z.string().trim().min(1, "must not be empty").max(128, "must be at most 128 characters"),
  datacenterId: uuidInput("a data center"),
  imageId: catalogId("an image"),
  configurationId: catalogId("a configuration"),
  // A ResourceGroup's `id` (the team id as text) or `teamId`, or null for none.
  teamId: teamIdInput.nullable().optional(),
  powerState: z.enum(["running", "stopped"], { error: 'must be "running" or "stopped"' }).default("running"),
  allocatePublicIp: z.boolean({ error: "must be true or false" }).optional(),
  networkInterfaces: z
    .array(NetworkInterfaceInput, { error: "must be a list of {networkId, primary}" })
    .min(1, "needs at least one interface (leave it out for the automatic interface)")
    .max(5, "at most 5 interfaces")
    .optional(),
  sshKeyIds: z.array(z.string().min(1, "ids must not be empty"), { error: "must be a list of SSH key ids" }).optional(),
  allowReplaceOnShrink: z.boolean({ error: "must be true or false" }).optional(),
  // Read by create only: the VM to take over instead of creating one (e.g. the VM of a `pulumi up` killed mid-way).
  adoptId: uuidInput("the VM to take over").optional(),
  shutdownBeforeDelete: z.boolean({ error: "must be true or false" }).optional(),
  exposePrivateKey: z.boolean({ error: "must be true or false" }).optional(),
  resetTrigger: z.string({ error: "must be a string (any text: changing it resets the VM)" }).optional(),
  rescue: z
    .strictObject(
      {
        sourceType: z
          .enum(["catalog", "custom"], { error: 'must be "catalog" or "custom"' })
          .describe("`catalog` (a rescue image of the catalog) or `custom` (a custom image)."),
        sourceImageId: uuidInput("a rescue image (catalog) or a custom image").describe("The image's UUID."),
      },
      { error: "must be an object {sourceType, sourceImageId}" },
    )
    .optional(),
});
export type VirtualMachineInputs = z.output<typeof VirtualMachineInputs> & {
  /** Set by check, never by the program: the cpu/ram/disk of `configurationId`, when they could be learned. */
  configurationSize?: Size;
};

interface Size {
  cpu: number;
  ram: number;
  disk: number;
}

/**
 * How each input changes and what the API reports of it. The documented VM detail names the image but not its id,
 * nor the interfaces or SSH keys: those keep the program's value when the API does not send them. The public IP is
 * documented on the VM list items.
 */
const inputFields = {
  name: {
    change: "inPlace",
    reported: "documented",
    description: "Name of the VM. Names need not be unique. Changed in place.",
    output: "Name of the VM.",
  },
  datacenterId: {
    change: "replace",
    reported: "documented",
    description: "Data center (UUID). Changing it replaces the VM.",
    output: "Data center (UUID).",
  },
  imageId: {
    change: "replace",
    reported: "undocumented",
    description: "Image (integer id of the catalog) the VM boots from. Changing it replaces the VM.",
    output: "Image id.",
  },
  configurationId: {
    change: "inPlace",
    reported: "documented",
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
    clearable: true,
    description:
      "Rescue mode, declared: present, the VM boots the rescue image (its own disk kept as a secondary disk); removed, it leaves rescue and boots its own disk again (Running); a changed image leaves, then enters again. Each is a job, awaited. `sourceType` is `catalog` (a rescue image of the cloud's catalog: the documented API lists none, so no data function does; the emulator prints its own in `fixtures.rescueImages` of its `--json` start line, and a rescued VM's `rescueImage` output names the image it boots) or `custom` (a custom image); `sourceImageId` is the image's UUID. A rescued VM counts as running: `powerState: \"stopped\"` together with `rescue` is refused at check. Default none (not rescued; a rescue entered behind the stack's back shows on refresh and the next `up` ends it). Changed in place.",
    output:
      "The rescue as the API reports it (the image id; `sourceType` as the program gave it, else `catalog`), or undefined.",
  },
} as const satisfies InputFields<VirtualMachineInputs>;

// A VM whose creation failed (status Error) can only be replaced.
const diffSpec = diffSpecOf(VirtualMachineInputs, inputFields, {
  failed: (olds) => (olds.status === "Error" ? "status" : undefined),
});

/** Statuses during which a job works on the VM: other state-changing calls answer 409 until it ends. */
const transitional = new Set(["Creating", "Resizing", "Rescuing", "Unrescuing", "Deleting"]);

// ---------------------------------------------------------------- configuration sizes

/**
 * cpu/ram/disk per configuration id. The API has no configuration list: sizes are learned from the VMs it reports
 * (a VM detail, or a VM list item filtered by configuration). Configurations of a catalog do not change size.
 */
const knownSizes = new Map<number, Size>();

const sizeOfDetail = (vm: VmDetail["virtualMachine"]): Size => ({ cpu: vm.cpu, ram: vm.ram, disk: vm.disk });

/** The size of a configuration, learned read-only from any VM of the entity that uses it; undefined when none does. */
async function sizeOf(ctx: HandlerContext | undefined, configurationId: number): Promise<Size | undefined> {
  const known = knownSizes.get(configurationId);
  if (known) return known;
  // Without a context (a host with no usable configuration yet), nothing is read.
  if (!ctx) return undefined;
  try {
    const page = await ctx.api.listVms({ query: { "filter[configurationId]": configurationId, limit: 1 } });
    const size = page.data[0]?.configuration;
    if (size) knownSizes.set(configurationId, { cpu: size.cpu, ram: size.ram, disk: size.disk });
    return size;
  } catch {
    // Not knowing is allowed: the resize call's own refusal is the last line.
    return undefined;
  }
}

function shrinks(from: Size, to: Size): string[] {
  return (["cpu", "ram", "disk"] as const).filter((k) => to[k] < from[k]).map((k) => `${k} ${from[k]} → ${to[k]}`);
}

function shrinkMessage(from: number, to: number, what: string[]): string {
  return (
    `can only grow in place: ${from} → ${to} would shrink the VM (${what.join(", ")}). Choose a ` +
    "configuration at least as large, or set `allowReplaceOnShrink: true` to replace the VM (a new VM, its disk " +
    "content is not kept)"
  );
}

// ---------------------------------------------------------------- check

function crossChecks(known: Partial<VirtualMachineInputs>, failures: CheckFailure[]): void {
  const nics = known.networkInterfaces;
  if (!nics) return;
  if (nics.filter((n) => n.primary === true).length > 1) {
    failures.push({
      property: "networkInterfaces",
      reason: "exactly one interface may have `primary: true` (none marked: the first is primary): unmark the others",
    });
  }
  const seen = new Set<string>();
  nics.forEach((nic, i) => {
    if (seen.has(nic.networkId)) {
      failures.push({
        property: `networkInterfaces.${i}.networkId`,
        reason: `network ${nic.networkId} is named twice; a VM has one interface per network: remove the repeat`,
      });
    }
    seen.add(nic.networkId);
  });
}

/** Fills in `primary` (the first interface when none is marked), as the API needs exactly one. */
function normalizeInterfaces(value: unknown): unknown {
  if (!Array.isArray(value) || value.some((n) => n === null || typeof n !== "object")) return value;
  const nics = value as { networkId: unknown; primary?: unknown }[];
  const marked = nics.some((n) => n.primary === true || n.primary === UNKNOWN);
  return nics.map((n, i) => ({ networkId: n.networkId, primary: n.primary ?? (!marked && i === 0) }));
}

/**
 * Schema and cross-field checks; then, when `configurationId` changes on an existing VM, what can be learned
 * read-only about the two sizes: a known shrink is a failure unless `allowReplaceOnShrink` is set, and the target's
 * size is passed on (as `configurationSize`) so that diff can turn the change into a replacement.
 */
async function check(ctx: HandlerContext | undefined, olds: Props, news: Props): Promise<CheckResult<Props>> {
  const { adopt, ...given } = news;
  const result = checkInputs(VirtualMachineInputs, given, crossChecks);
  if (adopt !== undefined) {
    result.failures.push({
      property: "adopt",
      reason:
        "VM names are not unique in the API, so an existing VM cannot be taken over by name; remove `adopt` " +
        "(this program creates its own VM), or give the id of the VM to take over in `adoptId`",
    });
  }
  const inputs: Props = { ...result.inputs };
  if (inputs.networkInterfaces !== undefined) inputs.networkInterfaces = normalizeInterfaces(inputs.networkInterfaces);
  const target = inputs.configurationId;
  const previous = olds.configurationId;
  if (
    result.failures.length === 0 &&
    typeof target === "number" &&
    typeof previous === "number" &&
    target !== previous
  ) {
    const [from, to] = await Promise.all([sizeOf(ctx, previous), sizeOf(ctx, target)]);
    if (to) inputs.configurationSize = to;
    const shrinking = from && to ? shrinks(from, to) : [];
    if (shrinking.length > 0 && inputs.allowReplaceOnShrink !== true && inputs.allowReplaceOnShrink !== UNKNOWN) {
      result.failures.push({ property: "configurationId", reason: shrinkMessage(previous, target, shrinking) });
    }
  }
  return { inputs, failures: result.failures };
}

// ---------------------------------------------------------------- diff

const byNetwork = (a: { networkId: unknown }, b: { networkId: unknown }) =>
  String(a.networkId).localeCompare(String(b.networkId));

/** The comparable form of interfaces (outputs carry ids and addresses; order does not matter). */
function comparableInterfaces(value: unknown): unknown {
  if (!Array.isArray(value) || containsUnknown(value)) return value;
  return (value as { networkId: unknown; primary?: unknown }[])
    .map((n) => ({ networkId: n.networkId, primary: n.primary === true }))
    .sort(byNetwork);
}

const comparableKeys = (value: unknown) =>
  Array.isArray(value) && !containsUnknown(value) ? [...(value as string[])].sort() : value;

function comparable(props: Props): Props {
  const out: Props = { ...props };
  if (props.networkInterfaces !== undefined) out.networkInterfaces = comparableInterfaces(props.networkInterfaces);
  if (props.sshKeyIds !== undefined) out.sshKeyIds = comparableKeys(props.sshKeyIds);
  return out;
}

function isSize(value: unknown): value is Size {
  return (
    value !== null &&
    typeof value === "object" &&
    ["cpu", "ram", "disk"].every((k) => typeof (value as Props)[k] === "number")
  );
}

/**
 * `olds` are the outputs. A configuration change is in place, unless it is a known shrink and the program allows
 * replacement; a VM whose creation failed (status Error) can only be replaced.
 */
function diff(id: string, olds: Props, news: Props): DiffResult {
  const result = diffInputs(comparable(olds), comparable(news), diffSpec);
  const replaces = [...result.replaces];
  const current = { cpu: olds.cpu, ram: olds.ram, disk: olds.disk };
  if (
    news.configurationId !== olds.configurationId &&
    news.allowReplaceOnShrink === true &&
    isSize(news.configurationSize) &&
    isSize(current) &&
    shrinks(current, news.configurationSize).length > 0
  ) {
    replaces.push("configurationId");
  }
  if (replaces.length > 0 && news.adoptId === id) {
    throw new CodedError(
      "REPLACE_BLOCKED",
      `VM ${id} was taken over with \`adoptId\` and must now be replaced (${replaces.join(", ")} changed): remove ` +
        "`adoptId` from the program first, else the new VM would take over this one, which the replacement deletes",
    );
  }
  return {
    changes: result.changes || replaces.length > 0,
    replaces,
    stables: result.stables.filter((k) => !replaces.includes(k)),
    deleteBeforeReplace: false,
  };
}

// ---------------------------------------------------------------- outputs

function powerStateOf(status: string): "running" | "stopped" | null {
  return status === "Running" ? "running" : status === "Stopped" ? "stopped" : null;
}

/** A VM as the API reports it: its detail, and its addresses (documented on the list items, not on the detail). */
export interface ObservedVm {
  detail: VmDetail;
  /** Undefined when the API reported them nowhere (the VM left the list between two reads). */
  addresses?: { privateIp: string | null; publicIp: string | null };
}

/**
 * The VM's detail with its addresses: from the detail when the API sends them there (a field the spec does not
 * document), else from the VM's list item (searched by name, matched by id).
 */
export async function observe(ctx: HandlerContext, detail: VmDetail): Promise<ObservedVm> {
  const vm = detail.virtualMachine;
  if (vm.primaryPublicIp !== undefined) {
    return { detail, addresses: { privateIp: vm.primaryPrivateIp ?? null, publicIp: vm.primaryPublicIp } };
  }
  const query = { search: vm.name, "filter[datacenterId]": vm.datacenter.id };
  for await (const item of ctx.api.listAll("listVms", query)) {
    if (item.id === vm.id)
      return { detail, addresses: { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp } };
  }
  return { detail };
}

/** Outputs: the inputs as given, overlaid with everything the API reports. */
export function outputsOf(inputs: Props, { detail, addresses }: ObservedVm, sshPrivateKey: string | undefined): Props {
  const vm = detail.virtualMachine;
  knownSizes.set(vm.configurationId, sizeOfDetail(vm));
  const { configurationSize: _size, ...given } = plainInputs(inputs);
  const reported: Props = {
    name: vm.name,
    teamId: vm.teamId,
    datacenterId: vm.datacenter.id,
    imageId: vm.imageId,
    configurationId: vm.configurationId,
    powerState: powerStateOf(detail.status),
    networkInterfaces: vm.networkInterfaces,
    sshKeyIds: vm.sshKeyIds,
  };
  if (addresses) reported.allocatePublicIp = addresses.publicIp !== null;
  const declared = inputsAsReported(inputFields, given, reported);
  return {
    ...declared,
    datacenterName: vm.datacenter.name,
    imageName: vm.image,
    configurationName: vm.configuration,
    configurationCategoryCode: vm.configurationCategoryCode,
    cpu: vm.cpu,
    ram: vm.ram,
    disk: vm.disk,
    status: detail.status,
    consoleEnabled: detail.consoleEnabled,
    networkHotplug: detail.networkHotplug,
    networkInterfaces: declared.networkInterfaces ?? [],
    privateIp: addresses?.privateIp ?? null,
    publicIp: addresses?.publicIp ?? null,
    sshKeyIds: declared.sshKeyIds ?? [],
    sshPrivateKey,
    createdAt: vm.createdAt,
    updatedAt: vm.updatedAt,
  };
}

const getVm = (ctx: HandlerContext, id: string) => ctx.api.getVm({ params: { id } });

/** The private key generated at creation; undefined when the caller may not read it. */
async function privateKeyOf(ctx: HandlerContext, id: string): Promise<string | undefined> {
  try {
    return (await ctx.api.getVmSshKey({ params: { id } })).privateKey;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 403 || error.status === 404)) return undefined;
    throw error;
  }
}

/** `sshPrivateKey` as the outputs hold it (see exposedPrivateKey). */
const exposedKey = (ctx: HandlerContext, id: string, wanted: Props, known: Props) =>
  exposedPrivateKey(wanted, known, () => privateKeyOf(ctx, id));

/** The VM once no job works on it (bounded by cloudinfra:jobTimeoutMs). */
function settledVm(ctx: HandlerContext, id: string): Promise<VmDetail> {
  return pollUntil(
    ctx,
    () => getVm(ctx, id),
    (detail) => !transitional.has(detail.status),
    (detail, timeoutMs) =>
      new CodedError(
        "JOB_TIMEOUT",
        `VM "${detail.virtualMachine.name}" (${id}) stayed ${detail.status} for more than ${timeoutMs} ms; ` +
          raiseJobTimeout("run `pulumi refresh` and `pulumi up`"),
      ),
  );
}

// ---------------------------------------------------------------- create

function createBody(inputs: VirtualMachineInputs) {
  return {
    name: inputs.name,
    datacenterId: inputs.datacenterId,
    imageId: inputs.imageId,
    configurationId: inputs.configurationId,
    numberOfInstances: 1,
    ...(inputs.allocatePublicIp !== undefined ? { allocatePublicIp: inputs.allocatePublicIp } : {}),
    ...(typeof inputs.teamId === "number" ? { teamId: inputs.teamId } : {}),
    ...(inputs.networkInterfaces
      ? {
          networkInterfaces: inputs.networkInterfaces.map((n) => ({
            networkId: n.networkId,
            primary: n.primary === true,
          })),
        }
      : {}),
    ...(inputs.sshKeyIds ? { sshKeyIds: inputs.sshKeyIds } : {}),
  };
}

/**
 * VMs that may be the one a create request made, when its id is not known (names are not unique): same name, data
 * center and configuration, created within `windowMs` of `at` (the job's creation time on the API's clock), or at
 * `at` or later when `windowMs` is `"since"`.
 */
async function candidates(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  at: number,
  windowMs: number | "since",
): Promise<string[]> {
  const found: string[] = [];
  const query = {
    search: inputs.name,
    "filter[datacenterId]": inputs.datacenterId,
    "filter[configurationId]": inputs.configurationId,
  };
  for await (const vm of ctx.api.listAll("listVms", query)) {
    const created = Date.parse(vm.createdAt);
    const inWindow = windowMs === "since" ? created >= at : Math.abs(created - at) <= windowMs;
    if (vm.name === inputs.name && inWindow) found.push(vm.id);
  }
  return found;
}

/**
 * Records the VM that exists but did not become ready (its key is left out: a read fetches it later, when asked), with the code of
 * `cause` (the error that stopped it: a timeout, a cancel…), JOB_FAILED without one.
 */
async function failedCreate(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  id: string,
  message: string,
  cause?: unknown,
): Promise<never> {
  const observed = await getVm(ctx, id)
    .then((detail) => observe(ctx, detail))
    .catch(() => undefined);
  const failure = new ResourceInitError(
    message,
    id,
    observed ? outputsOf(inputs, observed, undefined) : plainInputs(inputs),
  ).codedBy(cause);
  // Found in status Error with no other cause (settled after a lost answer): its create job failed, unseen.
  throw cause === undefined && observed?.detail.status === "Error" ? failure.ofFailedJob() : failure;
}

/** Brings a freshly created VM to the declared power state and reads its outputs; failures keep its id. */
async function finishCreate(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  id: string,
): Promise<{ id: string; outs: Props }> {
  try {
    let detail = await settledVm(ctx, id);
    if (detail.status === "Error") {
      return await failedCreate(ctx, inputs, id, `Creating VM "${inputs.name}" failed: the VM is in status Error`);
    }
    if (inputs.powerState === "stopped" && detail.status === "Running") {
      await ctx.api.stopVm({ params: { id } });
      detail = await getVm(ctx, id);
    }
    return { id, outs: outputsOf(inputs, await observe(ctx, detail), await exposedKey(ctx, id, inputs, {})) };
  } catch (error) {
    if (error instanceof ResourceInitError) throw error;
    return failedCreate(
      ctx,
      inputs,
      id,
      `VM "${inputs.name}" was created but not finished: ${(error as Error).message}`,
      error,
    );
  }
}

/**
 * Sends the create request; an answer lost on the way (5xx, connection closed: the VM may have been made) is settled
 * by looking for the VM. Names are not unique, so a VM is ours when it has the name, data center and configuration,
 * was not there before the first request (listed first: a replacement's namesake is not taken for it) and was
 * created since that request was sent (give or take clock skew). None: nothing was made, and the request
 * is sent once more; a second lost answer with still nothing made is an error saying so. A VM found is finished (its
 * job awaited through its status) and its id returned; the job, when the API answered.
 */
async function sendCreate(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
): Promise<{ job: { id: string; createdAt: string } } | { id: string }> {
  const what = `VM "${inputs.name}"`;
  const since = Date.now() - AMBIGUOUS_CREATE_SKEW_MS;
  const before = new Set(await candidates(ctx, inputs, 0, "since"));
  for (let attempt = 1; ; attempt++) {
    try {
      const jobs = await ctx.api.createVm({ body: createBody(inputs) });
      if (jobs.length !== 1)
        throw new CodedError("INVALID_RESPONSE", `Creating ${what}: expected one job, the API answered ${jobs.length}`);
      return { job: jobs[0] };
    } catch (error) {
      if (!(error instanceof ApiError && error.mayHaveSucceeded)) throw error;
      const checked =
        `VMs named "${inputs.name}" in data center ${inputs.datacenterId} with configuration ${inputs.configurationId}, ` +
        "created since the request was sent";
      let found: string[];
      try {
        found = (await candidates(ctx, inputs, since, "since")).filter((id) => !before.has(id));
      } catch (lookup) {
        throw new CodedError(
          "OUTCOME_UNKNOWN",
          `Creating ${what} got no answer (${settledText(error)}), and looking for ${checked} failed too ` +
            `(${settledText(lookup)}): the VM may exist. Look for it before running \`pulumi up\` again (a VM the ` +
            "stack does not hold can be taken over with `adoptId`)",
          { cause: error },
        );
      }
      if (found.length === 1) return { id: found[0]! };
      if (found.length > 1) {
        throw new CodedError(
          "DUPLICATES_CREATED",
          `Creating ${what} got no answer (${settledText(error)}), and several ${checked} could be it: ` +
            `${found.join(", ")}. Delete the unwanted ones (or keep one and set \`adoptId\` to it), then run ` +
            "`pulumi up` again",
          { cause: error },
        );
      }
      if (attempt >= 2) {
        throw new CodedError(
          "NOTHING_CHANGED",
          `Creating ${what} failed twice without an answer (${settledText(error)}). No VM was made: there are no ` +
            `${checked}. The next \`pulumi up\` creates it`,
          { cause: error },
        );
      }
      warnAbout(
        ctx,
        what,
        `the create got no answer (${settledText(error)}) and there are no ${checked}: sending it again`,
      );
    }
  }
}

/**
 * Takes over the VM `adoptId` names instead of creating one: once no job works on it, it must not be in status Error
 * nor differ from the program in what only a replacement changes; the rest (name, size, group, power) is converged as
 * by an update.
 */
async function adopt(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  id: string,
): Promise<{ id: string; outs: Props }> {
  let detail: VmDetail;
  try {
    detail = await settledVm(ctx, id);
  } catch (error) {
    if (isNotFound(error)) {
      throw new CodedError(
        "INPUT_INVALID",
        `adoptId: no VM ${id} is visible to these credentials; give the id of an existing VM, or remove \`adoptId\` ` +
          "to create one",
        { cause: error },
      );
    }
    throw error;
  }
  const found = `VM "${detail.virtualMachine.name}" (${id})`;
  if (detail.status === "Error") {
    throw new CodedError(
      "ADOPT_MISMATCH",
      `adoptId: ${found} is in status Error (its creation failed) and cannot be taken over; delete it and remove ` +
        "`adoptId` to create a new VM",
    );
  }
  const outs = outputsOf(inputs, await observe(ctx, detail), undefined);
  const given: Props = inputs;
  const { replaces } = diffInputs(comparable(outs), comparable(given), diffSpec);
  if (replaces.length > 0) {
    const differences = replaces.map((k) => `${k}: ${JSON.stringify(outs[k])} ≠ ${JSON.stringify(given[k])}`);
    throw new CodedError(
      "ADOPT_MISMATCH",
      `adoptId: ${found} differs from the program where only a new VM could follow it (${differences.join("; ")}): ` +
        "change the program to match it, or remove `adoptId` to create a new VM",
    );
  }
  warnAbout(ctx, `VM "${inputs.name}"`, `taking over ${found} (adoptId) instead of creating a VM`);
  return { id, outs: await update(ctx, id, outs, inputs) };
}

export async function create(ctx: HandlerContext, inputs: VirtualMachineInputs): Promise<{ id: string; outs: Props }> {
  if (inputs.adoptId !== undefined) return adopt(ctx, inputs, inputs.adoptId);
  // A create job that fails: the VM it left in status Error is deleted and the create sent once more.
  return resendAfterFailedCreate(
    ctx,
    `VM "${inputs.name}"`,
    () => createOnce(ctx, inputs),
    (id) => remove(ctx, id),
  );
}

async function createOnce(ctx: HandlerContext, inputs: VirtualMachineInputs): Promise<{ id: string; outs: Props }> {
  const sent = await sendCreate(ctx, inputs);
  if ("id" in sent) return finishCreate(ctx, inputs, sent.id);
  const { job } = sent;
  let id: string;
  try {
    const done = await awaitJob(ctx, job.id, `Creating VM "${inputs.name}"`);
    if (!done.resourceId)
      throw new CodedError("INVALID_RESPONSE", `Creating VM "${inputs.name}": job ${job.id} completed without a VM id`);
    id = done.resourceId;
  } catch (error) {
    // The VM exists whatever went wrong while waiting: find it to record it (no orphan).
    const failedId = error instanceof JobFailedError ? error.job.resourceId : null;
    const found = failedId
      ? [failedId]
      : await candidates(ctx, inputs, Date.parse(job.createdAt), 2_000).catch(() => []);
    const message = (error as Error).message;
    if (found.length === 1) return failedCreate(ctx, inputs, found[0], message, error);
    const note =
      found.length > 1
        ? ` VMs that may be it: ${found.join(", ")}; delete the one of job ${job.id}.`
        : ` Its VM could not be found (job ${job.id}).`;
    throw new CodedError(codeOfCause(error, "JOB_FAILED"), `${message}.${note}`, { cause: error });
  }
  return finishCreate(ctx, inputs, id);
}

// ---------------------------------------------------------------- read

/** A VM as a read finds it: its list item (read in batches through the list), or its detail when the list missed it. */
interface FoundVm {
  id: string;
  item?: VmListItem;
  detail?: VmDetail;
}

/** VMs are read in batches through the list endpoint (pages gathered across reads); a VM it misses, by id. */
const vmReads = (ctx: HandlerContext) =>
  batchedRead<FoundVm>(ctx, "vms", (api) => ({
    list: async (page, limit) => {
      const { data, meta } = await api.listVms({ query: { page, limit, sort: "createdAt:asc" } });
      return { data: data.map((item) => ({ id: item.id, item })), meta };
    },
    get: async (id) => ({ id, detail: await api.getVm({ params: { id } }) }),
  }));

/**
 * The VM's detail as it stands when its list item shows it unchanged since the outputs were read (same `updatedAt`,
 * which every change of the VM's settings moves): the fields the list lacks (team, configuration id and name, category
 * code, console and hotplug flags) are those outputs, the rest (name, status, size, image name, data center, addresses) is the list's. Undefined
 * when the list item cannot vouch for them: the detail is read then.
 */
function unchangedDetail(props: Props, item: VmListItem): ObservedVm | undefined {
  const { teamId, configurationId, configurationName, configurationCategoryCode } = props;
  if (
    typeof props.updatedAt !== "string" ||
    Date.parse(props.updatedAt) !== Date.parse(item.updatedAt) ||
    (teamId !== null && typeof teamId !== "number") ||
    typeof configurationId !== "number" ||
    typeof configurationName !== "string" ||
    typeof configurationCategoryCode !== "string" ||
    typeof props.consoleEnabled !== "boolean" ||
    typeof props.networkHotplug !== "boolean"
  ) {
    return undefined;
  }
  const detail: VmDetail = {
    status: item.status,
    virtualMachine: {
      id: item.id,
      name: item.name,
      teamId,
      cpu: item.configuration.cpu,
      ram: item.configuration.ram,
      disk: item.configuration.disk,
      configurationId,
      configuration: configurationName,
      configurationCategoryCode,
      image: item.imageName,
      datacenter: { id: item.datacenter.id, name: item.datacenter.name },
      createdAt: item.createdAt,
      updatedAt: item.updatedAt,
    },
    usage: props.usage,
    consoleEnabled: props.consoleEnabled,
    networkHotplug: props.networkHotplug,
  };
  return { detail, addresses: { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp } };
}

/**
 * Reads the VM through the batched list reader: when its list item shows it unchanged since the outputs (and the key
 * is known, when `exposePrivateKey` asks for it), no other request; else its detail (and addresses from the item).
 * Without `exposePrivateKey` the outputs hold no key: one an earlier version kept is dropped, without a request.
 */
export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: Props } | null> {
  const found = await vmReads(ctx).read(id);
  if (!found) return null;
  const keyMissing = props.exposePrivateKey === true && typeof props.sshPrivateKey !== "string";
  const fromList = found.item && !keyMissing ? unchangedDetail(props, found.item) : undefined;
  if (fromList) return { id, props: outputsOf(props, fromList, await exposedKey(ctx, id, props, props)) };
  try {
    const detail = found.detail ?? (await getVm(ctx, id));
    const key = await exposedKey(ctx, id, props, props);
    const item = found.item;
    const observed: ObservedVm = item
      ? { detail, addresses: { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp } }
      : await observe(ctx, detail);
    return { id, props: outputsOf(props, observed, key) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

// ---------------------------------------------------------------- update

async function resize(ctx: HandlerContext, detail: VmDetail, news: VirtualMachineInputs, attempt = 1): Promise<void> {
  const vm = detail.virtualMachine;
  const target = news.configurationId;
  const to = isSize(news.configurationSize) ? news.configurationSize : await sizeOf(ctx, target);
  const shrinking = to ? shrinks(sizeOfDetail(vm), to) : [];
  const replaceHint =
    "; `allowReplaceOnShrink` is set, but the shrink was not known when the change was planned: run " +
    "`pulumi up --replace <urn of this VM>` to replace it";
  if (shrinking.length > 0) {
    throw new CodedError(
      "CANNOT_SHRINK",
      shrinkMessage(vm.configurationId, target, shrinking) + (news.allowReplaceOnShrink ? replaceHint : ""),
    );
  }
  let jobId: string;
  try {
    jobId = (await ctx.api.resizeVm({ params: { id: vm.id }, body: { configurationId: target } })).jobId;
  } catch (error) {
    if (error instanceof ApiError && error.mayHaveSucceeded) {
      // The answer was lost: the configuration the VM shows once no job runs on it says whether the resize took
      // effect. Not resized (the request was not carried out, or its job failed): sent once more, as an attach is.
      const after = await settledVm(ctx, vm.id);
      const still = after.virtualMachine.configurationId;
      if (still === target) return;
      if (attempt < 2) {
        warnAbout(
          ctx,
          `VM "${vm.name}"`,
          `the resize got no answer (${settledText(error)}) and the VM still has configuration ${still}: sending it again`,
        );
        return resize(ctx, after, news, attempt + 1);
      }
      throw new CodedError(
        "NOTHING_CHANGED",
        `Resizing VM "${vm.name}" to configuration ${target} got no answer twice (${settledText(error)}), and the VM ` +
          `still has configuration ${still}: nothing was resized; the next \`pulumi up\` resizes it`,
        { cause: error },
      );
    }
    if (error instanceof ApiError && error.status === 400) {
      throw new CodedError(
        "CANNOT_SHRINK",
        `configurationId: the API refused to resize VM "${vm.name}" from configuration ${vm.configurationId} ` +
          `(${vm.configuration}) to ${target}: ${error.apiMessage}. A VM can only grow in place: choose a ` +
          "configuration at least as large, or set `allowReplaceOnShrink: true`" +
          (news.allowReplaceOnShrink ? replaceHint : ""),
        { cause: error },
      );
    }
    throw error;
  }
  await awaitJob(ctx, jobId, `Resizing VM "${vm.name}" to configuration ${target}`);
}

async function setPower(ctx: HandlerContext, detail: VmDetail, wanted: "running" | "stopped"): Promise<void> {
  const id = detail.virtualMachine.id;
  const from = wanted === "running" ? "Stopped" : "Running";
  // A rescued VM runs its rescue image: running, as far as powerState goes.
  if (powerStateOf(detail.status) === wanted || (wanted === "running" && detail.status === "Rescued")) return;
  if (detail.status !== from) {
    throw new CodedError(
      "STATE_CONFLICT",
      `Cannot make VM "${detail.virtualMachine.name}" (${id}) ${wanted}: it is ${detail.status}, and only a ` +
        `${from} VM can be ${wanted === "running" ? "started" : "stopped"}` +
        (detail.status === "Rescued" ? "; end its rescue mode first" : ""),
    );
  }
  try {
    if (wanted === "running") await ctx.api.startVm({ params: { id } });
    else await ctx.api.stopVm({ params: { id } });
  } catch (error) {
    if (isConflict(error)) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `Cannot make VM "${detail.virtualMachine.name}" ${wanted}: ${(error as ApiError).apiMessage}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

/**
 * Converges the live VM to the inputs, resize first: a refused resize (the last line against a shrink) then leaves
 * everything else untouched.
 */
export async function update(ctx: HandlerContext, id: string, olds: Props, news: VirtualMachineInputs): Promise<Props> {
  const key = keptPrivateKey(news, olds);
  let detail = await settledVm(ctx, id);
  if (detail.status === "Error") {
    throw new ResourceInitError(
      `VM "${detail.virtualMachine.name}" (${id}) is in status Error (its creation failed); the next \`pulumi up\` ` +
        "replaces it",
      id,
      outputsOf(news, await observe(ctx, detail), key),
    );
  }
  if (news.configurationId !== detail.virtualMachine.configurationId) {
    await resize(ctx, detail, news);
    detail = await getVm(ctx, id);
  }
  const body: { name?: string; teamId?: number | null } = {};
  if (news.name !== detail.virtualMachine.name) body.name = news.name;
  const teamId = news.teamId ?? null;
  if (teamId !== detail.virtualMachine.teamId) body.teamId = teamId;
  if (Object.keys(body).length > 0) {
    // The answer of the update is not shown by the spec: the VM is read again.
    await ctx.api.updateVm({ params: { id }, body });
    detail = await getVm(ctx, id);
  }
  const wasRunning = detail.status === "Running";
  if (news.powerState) {
    await setPower(ctx, detail, news.powerState);
    detail = await getVm(ctx, id);
  }
  if (changedInputs(olds, news, diffSpec).includes("resetTrigger")) {
    await reset(ctx, detail, wasRunning);
    detail = await getVm(ctx, id);
  }
  return outputsOf(news, await observe(ctx, detail), await exposedKey(ctx, id, news, olds));
}

/**
 * The hard reset a changed `resetTrigger` asks for: a running VM is power-cycled; a VM started or stopped by this
 * same update, or stopped, has nothing to reset (a warning says so).
 */
async function reset(ctx: HandlerContext, detail: VmDetail, wasRunning: boolean): Promise<void> {
  const { id, name } = detail.virtualMachine;
  if (detail.status !== "Running" || !wasRunning) {
    if (detail.status === "Running" || detail.status === "Stopped") {
      warnAbout(
        ctx,
        `VM "${name}"`,
        `resetTrigger changed, but the VM was ${wasRunning ? "stopped" : "started"} by this update (or is stopped): not reset`,
      );
      return;
    }
    throw new CodedError(
      "STATE_CONFLICT",
      `resetTrigger changed, but VM "${name}" (${id}) is ${detail.status}: only a Running VM can be reset` +
        (detail.status === "Rescued" ? "; end its rescue mode first" : ""),
    );
  }
  try {
    await ctx.api.resetVm({ params: { id } });
  } catch (error) {
    if (isConflict(error)) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `Cannot reset VM "${name}" (resetTrigger changed): ${(error as ApiError).apiMessage}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

/**
 * `shutdownBeforeDelete`: stops a running VM and waits until the API reports it Stopped (bounded by
 * cloudinfra:jobTimeoutMs), so that the delete finds it shut down. A VM already stopped, or in a status where it
 * cannot be stopped (Error), is deleted at once; a VM gone is left to the delete.
 */
async function shutDown(ctx: HandlerContext, id: string): Promise<void> {
  let detail: VmDetail;
  try {
    detail = await settledVm(ctx, id);
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  const what = `VM "${detail.virtualMachine.name}"`;
  if (detail.status !== "Running") {
    if (detail.status !== "Stopped") {
      warnAbout(
        ctx,
        what,
        `shutdownBeforeDelete: the VM is ${detail.status}, which cannot be stopped: deleting it as it is`,
      );
    }
    return;
  }
  progressAbout(ctx, what, "shutdownBeforeDelete: stopping the VM before deleting it");
  try {
    await ctx.api.stopVm({ params: { id } });
  } catch (error) {
    if (isNotFound(error)) return;
    if (!isConflict(error)) throw error; // stopped meanwhile: the wait below sees it
  }
  let polls = 0;
  await pollUntil(
    ctx,
    async () => {
      const current = await getVm(ctx, id);
      if (++polls % 5 === 0)
        progressAbout(ctx, what, `shutdownBeforeDelete: waiting for the VM to stop (${current.status})`);
      return current;
    },
    (current) => current.status === "Stopped",
    (current, timeoutMs) =>
      new CodedError(
        "JOB_TIMEOUT",
        `shutdownBeforeDelete: ${what} (${id}) was not Stopped within ${timeoutMs} ms (it is ${current.status}); it ` +
          "was not deleted. Raise cloudinfra:jobTimeoutMs if it shuts down slowly, or set `shutdownBeforeDelete: " +
          "false` to delete it without a shutdown, then run the command again",
      ),
  );
  progressAbout(ctx, what, "shutdownBeforeDelete: the VM is stopped; deleting it");
}

// ---------------------------------------------------------------- delete

/**
 * Deletes the VM and waits for its job; while another job works on it, waits (bounded) and tries again. With
 * `shutdownBeforeDelete` (as recorded in `props`) the VM is stopped first.
 */
export async function remove(ctx: HandlerContext, id: string, props: Props = {}): Promise<void> {
  if (props.shutdownBeforeDelete === true) await shutDown(ctx, id);
  const current = ctx.settings;
  const deadline = Date.now() + current.jobTimeoutMs;
  // A delete job that failed leaves the VM as it was (its previous status): the delete is sent once more.
  const resendAfter = resendAfterFailedJob(ctx, `VM ${id}`, "delete");
  for (;;) {
    let jobId: string;
    try {
      jobId = (await ctx.api.deleteVm({ params: { id } })).jobId;
    } catch (error) {
      if (isNotFound(error)) return;
      if (!isConflict(error)) throw error;
      if (Date.now() > deadline) {
        throw new CodedError(
          "JOB_TIMEOUT",
          `VM ${id} could not be deleted within ${current.jobTimeoutMs} ms: ${(error as ApiError).apiMessage}`,
          { cause: error },
        );
      }
      await sleep(current.pollIntervalMs, ctx.signal);
      continue;
    }
    try {
      await awaitJob(ctx, jobId, `Deleting VM ${id}`);
      return;
    } catch (error) {
      if (!resendAfter(error)) throw error;
    }
  }
}

// ---------------------------------------------------------------- rescue

type Rescue = NonNullable<VirtualMachineInputs["rescue"]>;
type RescueStatus = Awaited<ReturnType<CloudClient["getRescue"]>>;

/** Where the rescue stands: read only when the VM's status says it is (or is getting) rescued. */
async function rescueOf(ctx: HandlerContext, id: string, status: unknown): Promise<RescueStatus> {
  if (status !== "Rescued" && status !== "Rescuing" && status !== "Unrescuing") return { rescued: false, image: null };
  return ctx.api.getRescue({ params: { id } });
}

/**
 * The outputs with the rescue as the API reports it: `rescued`, `rescueImage`, and `rescue` (the image as the input
 * names it; the API does not say whether it came from the catalog: the program's `sourceType` is kept, else catalog).
 * A rescued VM counts as running.
 */
async function withRescue(ctx: HandlerContext, id: string, given: Props, outs: Props): Promise<Props> {
  const status = await rescueOf(ctx, id, outs.status);
  const declared = given.rescue as Rescue | undefined;
  return {
    ...outs,
    powerState: outs.status === "Rescued" ? "running" : outs.powerState,
    rescued: status.rescued,
    rescueImage: status.image,
    rescue: status.image
      ? { sourceType: declared?.sourceType ?? "catalog", sourceImageId: status.image.id }
      : undefined,
  };
}

/** Enters, leaves or changes the rescue to match `wanted` (a changed image: leave, then enter), each job awaited. */
async function convergeRescue(ctx: HandlerContext, id: string, wanted: Rescue | undefined): Promise<void> {
  const detail = await settledVm(ctx, id);
  const name = `VM "${detail.virtualMachine.name}"`;
  const current = await rescueOf(ctx, id, detail.status);
  const same = current.rescued && wanted !== undefined && current.image?.id === wanted.sourceImageId;
  if (same || (!current.rescued && wanted === undefined)) return;
  const refused = (what: string) => (error: unknown) => {
    if (error instanceof ApiError && error.status < 500) {
      throw new CodedError("REQUEST_REFUSED", `rescue: ${what} ${name} (${id}) was refused: ${error.apiMessage}`, {
        cause: error,
      });
    }
    throw error;
  };
  if (current.rescued) {
    const { jobId } = await ctx.api.unrescueVm({ params: { id } }).catch(refused("ending the rescue of"));
    await awaitJob(ctx, jobId, `Ending the rescue of ${name}`);
  }
  if (wanted !== undefined) {
    const { jobId } = await ctx.api
      .rescueVm({ params: { id }, body: wanted })
      .catch(refused(`rescuing (image ${wanted.sourceImageId})`));
    await awaitJob(ctx, jobId, `Rescuing ${name} with image ${wanted.sourceImageId}`);
  }
}

/** `rescue` with `powerState: "stopped"`: a rescued VM runs its rescue image, so it cannot be stopped. */
function rescueChecks(news: Props, result: CheckResult<Props>): CheckResult<Props> {
  if (news.rescue !== undefined && news.rescue !== null && news.powerState === "stopped") {
    result.failures.push({
      property: "rescue",
      reason:
        'cannot go with powerState "stopped": a VM in rescue mode runs its rescue image. Remove powerState (or set ' +
        '"running") while the VM is rescued, or remove rescue to stop it',
    });
  }
  return result;
}

/** Creates the VM, then enters the rescue asked for; the VM is recorded even when the rescue fails. */
async function createWithRescue(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
): Promise<{ id: string; outs: Props }> {
  const created = await create(ctx, inputs);
  if (inputs.rescue === undefined) return { ...created, outs: await withRescue(ctx, created.id, inputs, created.outs) };
  try {
    await convergeRescue(ctx, created.id, inputs.rescue);
    const found = await read(ctx, created.id, created.outs);
    return { ...created, outs: await withRescue(ctx, created.id, inputs, found?.props ?? created.outs) };
  } catch (error) {
    throw new ResourceInitError(
      `VM "${inputs.name}" (${created.id}) was created but did not enter rescue mode: ${(error as Error).message}; ` +
        "the next `pulumi up` tries again",
      created.id,
      { ...created.outs, rescued: false, rescueImage: null, rescue: undefined },
    );
  }
}

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

export const virtualMachine: ResourceKind = {
  name: "VirtualMachine",
  description:
    "A virtual machine (one per resource). Adoption by name (`adopt`) does not apply: VM names are not unique in the API, so a program creates its own VM, unless it names one to take over by id (`adoptId`). Its creation waits for the create job; a failed job records the VM (status Error) in the stack, and the next `pulumi up` replaces it.",
  inputs: { schema: VirtualMachineInputs, fields: inputFields },
  outputs: VirtualMachineOutputs,
  secretOutputs: ["sshPrivateKey"] satisfies OutputName<typeof VirtualMachineInputs, typeof VirtualMachineOutputs>[],
  check: async (olds: Props, news: Props, ctx?: HandlerContext) => rescueChecks(news, await check(ctx, olds, news)),
  diff: (id: string, olds: Props, news: Props) => diff(id, olds, news),
  create: (ctx: HandlerContext, inputs: Props) => createWithRescue(ctx, inputs as VirtualMachineInputs),
  read: async (ctx: HandlerContext, id: string, props: Props) => {
    const found = await read(ctx, id, props);
    return found && { ...found, props: await withRescue(ctx, id, props, found.props) };
  },
  // The rescue first: a VM leaving it comes back Running, and a power change then applies to it.
  update: async (ctx: HandlerContext, id: string, olds: Props, news: Props) => {
    await convergeRescue(ctx, id, (news as VirtualMachineInputs).rescue);
    return withRescue(ctx, id, news, await update(ctx, id, olds, news as VirtualMachineInputs));
  },
  delete: (ctx: HandlerContext, id: string, props: Props) => remove(ctx, id, props),
};
