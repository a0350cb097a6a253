import type { ResourceKind } from "./kind";
import { network } from "./network";
import { virtualMachine } from "./virtual-machine";
import { gpuVirtualMachine } from "./gpu-virtual-machine";
import { volume } from "./volume";
import { volumeAttachment } from "./volume-attachment";
import { resourceGroup } from "./resource-group";
import { user } from "./user";
import { apiKey } from "./api-key";
import { resourceGroupMember } from "./resource-group-member";
import { userRole } from "./user-role";

/** Every resource kind, by the name of its SDK class (and of its type token `cloudinfra:<Kind>`). */
export const kinds = {
  Network: network,
  VirtualMachine: virtualMachine,
  GpuVirtualMachine: gpuVirtualMachine,
  Volume: volume,
  VolumeAttachment: volumeAttachment,
  ResourceGroup: resourceGroup,
  User: user,
  ApiKey: apiKey,
  ResourceGroupMember: resourceGroupMember,
  UserRole: userRole,
} satisfies Record<string, ResourceKind>;
export type KindName = keyof typeof kinds;

export * from "./props";
export * from "./settings";
export * from "./context";
export * from "./check";
export * from "./diff";
export * from "./errors";
export * from "./jobs";
export * from "./create-recovery";
export * from "./kind";
