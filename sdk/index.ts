/**
 * What a Pulumi program imports from `@cloudinfra/pulumi`: the resource classes, the data functions, and the client
 * they are built on.
 */
export { Network, type NetworkArgs } from "./network";
export {
  VirtualMachine,
  type VirtualMachineArgs,
  type VirtualMachineNetworkInterface,
  type VirtualMachineNetworkInterfaceArgs,
} from "./virtual-machine";
export { GpuVirtualMachine, type GpuVirtualMachineArgs } from "./gpu-virtual-machine";
export { Volume, type VolumeArgs } from "./volume";
export { VolumeAttachment, type VolumeAttachmentArgs } from "./volume-attachment";
export { ResourceGroup, type ResourceGroupArgs } from "./resource-group";
export { User, type UserArgs } from "./user";
export { ApiKey, type ApiKeyArgs } from "./api-key";
export * from "./data";
export { CloudClient, ApiError, JobFailedError } from "../provider/client";
export type { CloudClientOptions } from "../provider/client";
