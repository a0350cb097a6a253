/**
 * What a Pulumi program imports from `@cloudinfra/pulumi`: the resource classes, the data functions, and the errors
 * they raise. The typed client is `@cloudinfra/pulumi/client` (its declarations carry the zod contract, which a
 * program's `tsc` should not have to check).
 */
export { Network, type NetworkArgs } from "./network";
export {
  VirtualMachine,
  type VirtualMachineArgs,
  type VirtualMachineNetworkInterface,
  type VirtualMachineNetworkInterfaceArgs,
} from "./virtual-machine";
export {
  GpuVirtualMachine,
  type GpuVirtualMachineArgs,
  type GpuVirtualMachineBaseArgs,
  type GpuVirtualMachineImageById,
  type GpuVirtualMachineImageByName,
} from "./gpu-virtual-machine";
export { Volume, type VolumeArgs } from "./volume";
export { VolumeAttachment, type VolumeAttachmentArgs } from "./volume-attachment";
export { ResourceGroup, type ResourceGroupArgs, type ResourceGroupRef } from "./resource-group";
export { User, type UserArgs } from "./user";
export { ApiKey, type ApiKeyArgs } from "./api-key";
export { ResourceGroupMember, type ResourceGroupMemberArgs } from "./resource-group-member";
export { UserRole, type UserRoleArgs } from "./user-role";
export * from "./data";
export * from "./lookups";
export { ApiError, JobFailedError, type JobRecord } from "../provider/client/errors";
