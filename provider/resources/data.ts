import { z } from "zod";
import { GpuCount, GpuInventoryEntry, Uuid, VolumeSizes } from "../api";
import type { HandlerContext } from "./context";

/**
 * The data functions, host-agnostic like the resource kinds: arguments and results as zod schemas (a host's schema is
 * generated from them) and the call itself, with the settings in force.
 */

export const GetGpuInventoryArgs = z.strictObject({
  code: z.string().min(1).optional(),
  datacenterId: Uuid.optional(),
  count: GpuCount.optional(),
});
export type GetGpuInventoryArgs = z.output<typeof GetGpuInventoryArgs>;

export const GpuCombination = z.object({
  seriesId: z.number().int(),
  seriesName: z.string(),
  seriesCode: z.string(),
  datacenterId: Uuid,
  datacenterName: z.string(),
  gpuCount: GpuCount,
});

export const GetGpuInventoryResult = z.object({
  series: z.array(GpuInventoryEntry),
  available: z.array(GpuCombination),
});
export type GetGpuInventoryResult = z.output<typeof GetGpuInventoryResult>;

const gpuCounts = [1, 2, 4, 8] as const;

/** The GPU inventory now (never cached), and every series × data center × count available, flattened. */
export async function gpuInventory(ctx: HandlerContext, args: GetGpuInventoryArgs): Promise<GetGpuInventoryResult> {
  const query = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  const series = await ctx.api.gpuInventory({ query });
  return { series, available: availableCombinations(series) };
}

/** Every series × data center × GPU count of an inventory that can be ordered now, in order, ascending count. */
export function availableCombinations(series: GetGpuInventoryResult["series"]): GetGpuInventoryResult["available"] {
  return series.flatMap((s) =>
    s.availability.flatMap((a) =>
      gpuCounts
        .filter((n) => a.gpuCounts[n].available)
        .map((gpuCount) => ({
          seriesId: s.seriesId,
          seriesName: s.seriesName,
          seriesCode: s.seriesCode,
          datacenterId: a.datacenterId,
          datacenterName: a.datacenterName,
          gpuCount,
        })),
    ),
  );
}

export const GetVolumeSizesArgs = z.strictObject({ datacenterId: Uuid });
export type GetVolumeSizesArgs = z.output<typeof GetVolumeSizesArgs>;
export { VolumeSizes as GetVolumeSizesResult };

/** The volume types of a data center and the sizes each offers. */
export function volumeSizes(ctx: HandlerContext, args: GetVolumeSizesArgs): Promise<VolumeSizes> {
  return ctx.api.volumeSizes({ params: { id: args.datacenterId } });
}
