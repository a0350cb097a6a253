import { CodedError, raiseJobTimeout } from "../../client/error-codes";
import type { VmDetail } from "../../api";
import { ApiError } from "../../client";
import type { HandlerContext } from "../context";
import { pollUntil } from "../jobs";
import { stateOf } from "../kind";
import { exposedPrivateKey, type Props } from "../props";
import { inputFields, type ObservedState } from "./declaration";
import { addressReader } from "./addresses";
import { reportedInterfaces } from "./interfaces";
import { knownSizes, sizeOfDetail } from "./sizes";

/** Statuses during which a job works on the VM: other state-changing calls answer 409 until it ends. */
const transitional = new Set(["Creating", "Resizing", "Rescuing", "Unrescuing", "Deleting"]);

export function powerStateOf(status: string): "running" | "stopped" | null {
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
 * document), else from the VM's list item, read with those of the other VMs read at about the same time (see
 * {@link AddressReader}: shared list pages, newest first; a VM they miss searched by name, matched by id).
 */
export async function observe(ctx: HandlerContext, detail: VmDetail): Promise<ObservedVm> {
  const vm = detail.virtualMachine;
  if (vm.primaryPublicIp !== undefined) {
    return { detail, addresses: { privateIp: vm.primaryPrivateIp ?? null, publicIp: vm.primaryPublicIp } };
  }
  const addresses = await addressReader(ctx.api).read(vm);
  return addresses ? { detail, addresses } : { detail };
}

/**
 * Outputs: the inputs as given (the program's, or the outputs on a read), overlaid with everything the VM's detail and
 * addresses report; the rescue's outputs come from `GET .../rescue` (rescue.ts).
 */
export function outputsOf(
  given: Props,
  { detail, addresses }: ObservedVm,
  sshPrivateKey: string | undefined,
): ObservedState {
  const vm = detail.virtualMachine;
  knownSizes.set(vm.configurationId, sizeOfDetail(vm));
  // Check's, for diff: never an output.
  const { configurationSize: _size, ...inputs } = given;
  // The public IP is documented on the list items: reported nowhere, the value given stays.
  const givenPublicIp = typeof inputs.allocatePublicIp === "boolean" ? inputs.allocatePublicIp : undefined;
  const state = stateOf(inputFields, inputs, {
    name: vm.name,
    teamId: vm.teamId,
    datacenterId: vm.datacenter.id,
    imageId: vm.imageId,
    configurationId: vm.configurationId,
    powerState: powerStateOf(detail.status),
    allocatePublicIp: addresses ? addresses.publicIp !== null : givenPublicIp,
    networkInterfaces: reportedInterfaces(vm.networkInterfaces, inputs.networkInterfaces, addresses?.privateIp),
    sshKeyIds: vm.sshKeyIds,
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
    privateIp: addresses?.privateIp ?? null,
    publicIp: addresses?.publicIp ?? null,
    sshPrivateKey,
    createdAt: vm.createdAt,
    updatedAt: vm.updatedAt,
  });
  return { ...state, networkInterfaces: state.networkInterfaces ?? [], sshKeyIds: state.sshKeyIds ?? [] };
}

export const getVm = (ctx: HandlerContext, id: string) => ctx.api.getVm({ params: { id } });

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
export const exposedKey = (ctx: HandlerContext, id: string, wanted: Props, known: Props) =>
  exposedPrivateKey(wanted, known, () => privateKeyOf(ctx, id));

/** The VM once no job works on it (bounded by cloudinfra:jobTimeoutMs). */
export function settledVm(ctx: HandlerContext, id: string): Promise<VmDetail> {
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
