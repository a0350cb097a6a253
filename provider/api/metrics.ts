import { z } from "zod";
import { qBool, qList, Uuid } from "./common";

/**
 * Field names of the metrics responses are not shown by the spec; these are ours (emulator/README.md). Their
 * descriptions are what the data functions (getVirtualMachineMetrics, getEntityUsage) and their reference say.
 */
export const Trend = z.object({
  direction: z
    .enum(["up", "down", "stable"])
    .describe("`up`, `down` or `stable`: the current period against the comparison period."),
  current: z.number().describe("The value in the current period."),
  previous: z.number().describe("The value in the comparison period."),
  change: z.number().describe("The change from the comparison period (percent)."),
});
const Specs = z.object({
  cpu: z.number().int().describe("vCPUs."),
  ram: z.number().int().describe("RAM in GB."),
  disk: z.number().int().describe("Disk in GB."),
});

export const VmMetricsQuery = z.strictObject({
  currentPeriodStart: z.iso.datetime({ offset: true }).optional(),
  currentPeriodEnd: z.iso.datetime({ offset: true }).optional(),
  comparisonPeriodStart: z.iso.datetime({ offset: true }).optional(),
  comparisonPeriodEnd: z.iso.datetime({ offset: true }).optional(),
  categories: z.string().min(1).optional(),
  datacenters: qList(Uuid).optional(),
  includeVmNames: qBool.optional(),
  entityId: Uuid.optional(),
});

const trendOf = (what: string) => Trend.describe(`The trend of ${what}.`);
export const VmMetrics = z.object({
  period: z.object({
    currentPeriodStart: z.string().describe("Start of the current period (ISO 8601)."),
    currentPeriodEnd: z.string().describe("End of the current period (ISO 8601)."),
    comparisonPeriodStart: z.string().describe("Start of the comparison period (ISO 8601)."),
    comparisonPeriodEnd: z.string().describe("End of the comparison period (ISO 8601)."),
  }),
  summary: z.object({
    totalVms: z.number().int().describe("VMs."),
    totalCpu: z.number().int().describe("vCPUs of all VMs."),
    totalRam: z.number().int().describe("RAM of all VMs, in GB."),
    totalDisk: z.number().int().describe("Disk of all VMs, in GB."),
    trend: trendOf("the VM count"),
  }),
  categories: z.array(
    z.object({
      code: z.string().describe("The size category's code."),
      vmCount: z.number().int().describe("VMs of the category."),
      trend: trendOf("the category's VM count"),
      tiers: z
        .array(
          z.object({
            configurationId: z.number().int().describe("The configuration (integer id)."),
            name: z.string().describe("The configuration's name."),
            specs: Specs.describe("The configuration's size."),
            vmCount: z.number().int().describe("VMs of the configuration."),
            trend: trendOf("the configuration's VM count"),
            regions: z
              .array(
                z.object({
                  region: z.string().describe("The region."),
                  vmCount: z.number().int().describe("VMs of the configuration in the region."),
                  datacenters: z
                    .array(
                      z.object({
                        id: Uuid.describe("Data center (UUID)."),
                        name: z.string().describe("Data center name."),
                        vmCount: z.number().int().describe("VMs of the configuration in the data center."),
                        vmNames: z.array(z.string()).optional().describe("Their names (with `includeVmNames`)."),
                      }),
                    )
                    .describe("By data center."),
                }),
              )
              .describe("By region."),
          }),
        )
        .describe("By tier: the configurations of the category."),
    }),
  ),
});
export type VmMetrics = z.infer<typeof VmMetrics>;

const UsageFigures = z.object({
  vmCount: z.number().int().describe("VMs."),
  cpuHours: z.number().describe("vCPU hours."),
  ramGbHours: z.number().describe("RAM GB hours."),
  diskGbHours: z.number().describe("Disk GB hours."),
});
export const EntityUsage = z.object({
  entityId: Uuid,
  month: z.string(),
  summary: UsageFigures,
  byCategory: z.array(UsageFigures.extend({ code: z.string().describe("The size category's code.") })),
  byRegion: z.array(UsageFigures.extend({ region: z.string().describe("The region.") })),
});
export const UsageQuery = z.strictObject({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, "month must be YYYY-MM")
    .optional(),
  entityId: Uuid.optional(),
});
export const AvailableMonths = z.array(z.string());
