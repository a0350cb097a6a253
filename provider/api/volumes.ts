import { z } from "zod";
import { DatacenterRef, listQueryShape, Name, PositiveInt, qInt, Timestamp, Uuid } from "./common";

/** Volume statuses (the spec shows only Available; the rest are ours). */
export const VolumeStatus = z.enum([
  "Creating",
  "Available",
  "Attaching",
  "In-use",
  "Detaching",
  "Resizing",
  "Deleting",
  "Error",
]);
export const Volume = z.object({
  id: Uuid,
  name: z.string(),
  status: z.string(),
  sizeGb: z.number().int(),
  volumeTypeId: z.number().int(),
  volumeTypeName: z.string(),
  volumeSizeId: z.number().int(),
  datacenter: DatacenterRef,
  virtualMachineId: Uuid.nullable(),
  virtualMachineName: z.string().nullable(),
  teamId: z.number().int().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Volume = z.infer<typeof Volume>;
export const VolumeListQuery = z.strictObject({
  ...listQueryShape,
  "filter[virtualMachineId]": Uuid.optional(),
  "filter[status]": z.string().optional(),
  "filter[teamId]": qInt().optional(),
  "filter[regionId]": qInt().optional(),
  "filter[datacenterId]": Uuid.optional(),
  "filter[volumeTypeId]": qInt().optional(),
  "filter[volumeSizeId]": qInt().optional(),
  "filter[sizeGb]": qInt().optional(),
});
export const CreateVolumeBody = z.strictObject({
  name: Name,
  datacenterId: Uuid,
  volumeTypeId: PositiveInt,
  volumeSizeId: PositiveInt,
  sizeGb: PositiveInt,
  teamId: PositiveInt.optional(),
});
export type CreateVolumeBody = z.infer<typeof CreateVolumeBody>;
export const AttachVolumeBody = z.strictObject({ virtualMachineId: Uuid });
export const ResizeVolumeBody = z.strictObject({ newSizeGb: PositiveInt, newVolumeSizeId: PositiveInt.optional() });
export const AttachableVm = z.object({
  id: Uuid,
  name: z.string(),
  datacenterId: Uuid,
  currentVolumeCount: z.number().int(),
  maxVolumeCount: z.number().int(),
});
export const VolumeSize = z.object({
  id: z.number().int(),
  sizeGb: z.number().int(),
  displayName: z.string(),
  maxVolumesPerVm: z.number().int(),
});
export const VolumeSizes = z.object({
  datacenterId: Uuid,
  volumeTypes: z.array(
    z.object({
      id: z.number().int(),
      name: z.string(),
      description: z.string().nullable(),
      availableSizes: z.array(VolumeSize),
    }),
  ),
});
export type VolumeSizes = z.infer<typeof VolumeSizes>;
