import { z } from "zod";
import { DatacenterRef, listQueryShape, Name, PositiveInt, qInt, Timestamp, undocumented, Uuid } from "./common";

// ---- virtual machines ----
export const VmListItem = z.object({
  id: Uuid,
  name: z.string(),
  status: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  configuration: z.object({ cpu: z.number().int(), ram: z.number().int(), disk: z.number().int() }),
  datacenter: z.object({ id: Uuid, name: z.string(), region: z.string(), country: z.string() }),
  imageName: z.string(),
  primaryPrivateIp: z.string().nullable(),
  primaryPublicIp: z.string().nullable(),
  teamId: undocumented(z.number().int().nullable()),
});
export type VmListItem = z.infer<typeof VmListItem>;

export const NetworkInterface = z.object({
  id: Uuid,
  networkId: Uuid,
  primary: z.boolean(),
  privateIp: z.string(),
});

export const VmDetail = z.object({
  status: z.string(),
  virtualMachine: z.object({
    id: Uuid,
    name: z.string(),
    teamId: z.number().int().nullable(),
    cpu: z.number().int(),
    ram: z.number().int(),
    disk: z.number().int(),
    configurationId: z.number().int(),
    configuration: z.string(),
    configurationCategoryCode: z.string(),
    image: z.string(),
    datacenter: DatacenterRef,
    createdAt: Timestamp,
    updatedAt: Timestamp,
    imageId: undocumented(z.number().int()),
    networkInterfaces: undocumented(z.array(NetworkInterface)),
    primaryPrivateIp: undocumented(z.string().nullable()),
    primaryPublicIp: undocumented(z.string().nullable()),
    sshKeyIds: undocumented(z.array(z.string())),
  }),
  usage: z.unknown(),
  consoleEnabled: z.boolean(),
  networkHotplug: z.boolean(),
});
export type VmDetail = z.infer<typeof VmDetail>;

export const VmListQuery = z.strictObject({
  ...listQueryShape,
  "filter[teamId]": qInt().optional(),
  "filter[regionId]": qInt().optional(),
  "filter[datacenterId]": Uuid.optional(),
  "filter[configurationId]": qInt().optional(),
  "filter[imageName]": z.string().optional(),
  "filter[status]": z.string().optional(),
});

export const NetworkInterfaceInput = z.strictObject({ networkId: Uuid, primary: z.boolean() });
export const CreateVmBody = z
  .strictObject({
    name: Name,
    datacenterId: Uuid,
    imageId: PositiveInt,
    configurationId: PositiveInt,
    numberOfInstances: z.number().int().min(1).max(10).optional(),
    allocatePublicIp: z.boolean().optional(),
    teamId: PositiveInt.optional(),
    networkInterfaces: z.array(NetworkInterfaceInput).min(1).max(5).optional(),
    sshKeyIds: z.array(z.string().min(1)).optional(),
  })
  .refine((b) => !b.networkInterfaces || b.networkInterfaces.filter((n) => n.primary).length === 1, {
    message: "exactly one network interface must have primary: true",
    path: ["networkInterfaces"],
  });
export type CreateVmBody = z.infer<typeof CreateVmBody>;

export const UpdateVmBody = z.strictObject({ name: Name.optional(), teamId: PositiveInt.nullable().optional() });
export const ResizeVmBody = z.strictObject({ configurationId: PositiveInt });
export const RescueBody = z.strictObject({ sourceType: z.enum(["catalog", "custom"]), sourceImageId: Uuid });
export const RescueStatus = z.object({
  rescued: z.boolean(),
  image: z.object({ id: Uuid, name: z.string(), osFamily: z.string() }).nullable(),
});
export const SshKey = z.object({ privateKey: z.string() });
/** Result of the synchronous power operations (shape ours). */
export const PowerResult = z.object({ id: z.string(), status: z.string() });

// ---- GPU ----
export const GpuCount = z.union([z.literal(1), z.literal(2), z.literal(4), z.literal(8)]);
export type GpuCount = z.infer<typeof GpuCount>;
const Availability = z.object({ available: z.boolean() });
export const GpuInventoryEntry = z.object({
  seriesId: z.number().int(),
  seriesName: z.string(),
  seriesCode: z.string(),
  availability: z.array(
    z.object({
      datacenterId: Uuid,
      datacenterName: z.string(),
      gpuCounts: z.object({ "1": Availability, "2": Availability, "4": Availability, "8": Availability }),
    }),
  ),
});
export type GpuInventoryEntry = z.infer<typeof GpuInventoryEntry>;
export const GpuInventoryQuery = z.strictObject({
  code: z.string().min(1).optional(),
  datacenterId: Uuid.optional(),
  count: qInt()
    .refine((n) => [1, 2, 4, 8].includes(n), "count must be 1, 2, 4 or 8")
    .optional(),
  entityId: Uuid.optional(),
});

export const GpuVm = z.object({
  id: Uuid,
  name: z.string(),
  status: z.string(),
  publicIp: z.string().nullable(),
  jupyterLabUrl: z.string().nullable(),
  series: z.object({ id: z.number().int(), name: z.string(), code: z.string() }),
  gpuCount: z.number().int(),
  datacenter: DatacenterRef,
  teamId: z.number().int().nullable(),
  createdAt: Timestamp,
  imageName: undocumented(z.string().nullable()),
});
export type GpuVm = z.infer<typeof GpuVm>;
export const GpuListQuery = z.strictObject({ ...listQueryShape, "filter[teamId]": qInt().optional() });
export const CreateGpuBody = z.strictObject({
  name: Name,
  datacenterId: Uuid,
  seriesId: PositiveInt,
  gpuCount: GpuCount,
  teamId: PositiveInt.optional(),
  imageName: z.string().min(1).optional(),
  imageId: PositiveInt.optional(),
});
export type CreateGpuBody = z.infer<typeof CreateGpuBody>;
export const UpdateGpuBody = UpdateVmBody;
