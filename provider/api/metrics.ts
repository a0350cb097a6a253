import { z } from "zod";
import { qBool, qList, Uuid } from "./common";

/** Field names of the metrics responses are not shown by the spec; these are ours (emulator/README.md). */
export const Trend = z.object({
  direction: z.enum(["up", "down", "stable"]),
  current: z.number(),
  previous: z.number(),
  change: z.number(),
});
const Specs = z.object({ cpu: z.number().int(), ram: z.number().int(), disk: z.number().int() });

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

export const VmMetrics = z.object({
  period: z.object({
    currentPeriodStart: z.string(),
    currentPeriodEnd: z.string(),
    comparisonPeriodStart: z.string(),
    comparisonPeriodEnd: z.string(),
  }),
  summary: z.object({
    totalVms: z.number().int(),
    totalCpu: z.number().int(),
    totalRam: z.number().int(),
    totalDisk: z.number().int(),
    trend: Trend,
  }),
  categories: z.array(
    z.object({
      code: z.string(),
      vmCount: z.number().int(),
      trend: Trend,
      tiers: z.array(
        z.object({
          configurationId: z.number().int(),
          name: z.string(),
          specs: Specs,
          vmCount: z.number().int(),
          trend: Trend,
          regions: z.array(
            z.object({
              region: z.string(),
              vmCount: z.number().int(),
              datacenters: z.array(
                z.object({
                  id: Uuid,
                  name: z.string(),
                  vmCount: z.number().int(),
                  vmNames: z.array(z.string()).optional(),
                }),
              ),
            }),
          ),
        }),
      ),
    }),
  ),
});
export type VmMetrics = z.infer<typeof VmMetrics>;

const UsageFigures = z.object({
  vmCount: z.number().int(),
  cpuHours: z.number(),
  ramGbHours: z.number(),
  diskGbHours: z.number(),
});
export const EntityUsage = z.object({
  entityId: Uuid,
  month: z.string(),
  summary: UsageFigures,
  byCategory: z.array(UsageFigures.extend({ code: z.string() })),
  byRegion: z.array(UsageFigures.extend({ region: z.string() })),
});
export const UsageQuery = z.strictObject({
  month: z
    .string()
    .regex(/^\d{4}-(0[1-9]|1[0-2])$/, "month must be YYYY-MM")
    .optional(),
  entityId: Uuid.optional(),
});
export const AvailableMonths = z.array(z.string());
