import { z } from "zod";
import { DatacenterRef, listQueryShape, Name, qInt, Timestamp, Uuid } from "./common";

const ipv4 = z.ipv4();
export const CidrBlock = z.cidrv4();
const networkSettableShape = {
  description: z.string().max(500).optional(),
  cidrBlock: CidrBlock.optional(),
  dhcpServerEnabled: z.boolean().optional(),
  dhcpStartAddress: ipv4.optional(),
  dhcpEndAddress: ipv4.optional(),
  defaultRouteEnabled: z.boolean().optional(),
  defaultRoute: ipv4.optional(),
  serveDNSServersEnabled: z.boolean().optional(),
  dnsServers: z.array(ipv4).max(8).optional(),
};
export const NetworkType = z.enum(["standard", "custom"]);
/** The spec's rule of a network's create: source NAT is for standard networks only. */
export const snatRule = {
  property: "snatEnabled",
  holds: (body: { networkType?: string; snatEnabled?: boolean }) =>
    !(body.networkType === "custom" && body.snatEnabled === true),
  reason: 'is only allowed on standard networks: remove it or use networkType "standard"',
} as const;
export const CreateNetworkBody = z
  .strictObject({
    name: Name,
    datacenterId: Uuid,
    networkType: NetworkType,
    snatEnabled: z.boolean().optional(),
    ...networkSettableShape,
  })
  .refine(snatRule.holds, { message: `snatEnabled ${snatRule.reason}`, path: [snatRule.property] });
export type CreateNetworkBody = z.infer<typeof CreateNetworkBody>;
export const UpdateNetworkBody = z.strictObject({ name: Name.optional(), ...networkSettableShape });
export type UpdateNetworkBody = z.infer<typeof UpdateNetworkBody>;

export const Network = z.object({
  id: Uuid,
  name: z.string(),
  description: z.string().nullable(),
  status: z.string(),
  datacenter: DatacenterRef,
  networkType: z.string(),
  cidrBlock: z.string(),
  snatEnabled: z.boolean(),
  dhcpServerEnabled: z.boolean(),
  dhcpStartAddress: z.string().nullable(),
  dhcpEndAddress: z.string().nullable(),
  defaultRouteEnabled: z.boolean(),
  defaultRoute: z.string().nullable(),
  serveDNSServersEnabled: z.boolean(),
  dnsServers: z.array(z.string()),
  gateway: z.string(),
  allocationPools: z.array(z.object({ start: z.string(), end: z.string() })),
  connectedVmCount: z.number().int(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type Network = z.infer<typeof Network>;
export const NetworkListQuery = z.strictObject({
  ...listQueryShape,
  "filter[regionId]": qInt().optional(),
  "filter[datacenterId]": Uuid.optional(),
  "filter[networkType]": NetworkType.optional(),
});
export const NetworkVm = z.object({
  id: Uuid,
  name: z.string(),
  status: z.string(),
  privateIp: z.string(),
  primary: z.boolean(),
});
/** cidr-details: the spec does not name the query parameter; ours is `cidr`. */
export const CidrDetailsQuery = z.strictObject({ cidr: z.string().min(1).max(64), entityId: Uuid.optional() });
export const CidrDetails = z.object({
  cidr: z.string(),
  valid: z.boolean(),
  reason: z.string().nullable(),
  prefixLength: z.number().int().nullable(),
  networkAddress: z.string().nullable(),
  broadcastAddress: z.string().nullable(),
  netmask: z.string().nullable(),
  firstUsable: z.string().nullable(),
  lastUsable: z.string().nullable(),
  usableAddresses: z.number().int(),
});
export const DeletedResult = z.object({ id: z.string(), deleted: z.literal(true) });
