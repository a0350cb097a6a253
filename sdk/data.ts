import * as pulumi from "@pulumi/pulumi";
import type { CloudClient } from "../provider/client";
import type { GpuCount, GpuInventoryEntry, VolumeSizes } from "../provider/api";
import { client, configure } from "../provider/resources/framework";

export type { GpuCount, GpuInventoryEntry, VolumeSizes };

/**
 * The client of the program's configuration, read at each call: stack config `cloudinfra:*` (the same keys as the
 * provider's, secrets included), else the `CLOUDINFRA_*` environment variables.
 */
function programClient(): CloudClient {
  const config = new pulumi.Config("cloudinfra");
  configure((key) => config.get(key.replace(/^cloudinfra:/, "")));
  return client();
}

export interface GetGpuInventoryArgs {
  /** Only this GPU series, by code (e.g. `a100`), case-insensitive. Default: every series. */
  code?: string;
  /** Only this data center (UUID). Default: every data center. */
  datacenterId?: string;
  /** Only data centers where this many GPUs (1, 2, 4 or 8) can be ordered now. Default: any count. */
  count?: GpuCount;
}

/** `GetGpuInventoryArgs` whose values may be outputs of other resources. */
export interface GetGpuInventoryOutputArgs {
  /** Only this GPU series, by code (e.g. `a100`), case-insensitive. Default: every series. */
  code?: pulumi.Input<string>;
  /** Only this data center (UUID). Default: every data center. */
  datacenterId?: pulumi.Input<string>;
  /** Only data centers where this many GPUs (1, 2, 4 or 8) can be ordered now. Default: any count. */
  count?: pulumi.Input<GpuCount>;
}

/** One GPU VM configuration that can be ordered now. */
export interface GpuCombination {
  /** GPU series id: the `seriesId` of a GpuVirtualMachine. */
  seriesId: number;
  /** Series name, e.g. `NVIDIA A100`. */
  seriesName: string;
  /** Series code, e.g. `a100`. */
  seriesCode: string;
  /** Data center (UUID): the `datacenterId` of a GpuVirtualMachine. */
  datacenterId: string;
  /** Data center name. */
  datacenterName: string;
  /** Number of GPUs: the `gpuCount` of a GpuVirtualMachine. */
  gpuCount: GpuCount;
}

export interface GetGpuInventoryResult {
  /** The inventory as the API returns it (`GET /resource/gpu/inventory`, never cached): one entry per series. */
  series: GpuInventoryEntry[];
  /** Every series × data center × GPU count available now, flattened, in inventory order and ascending count. */
  available: GpuCombination[];
}

const gpuCounts = [1, 2, 4, 8] as const;

/**
 * The GPU inventory now: which series, data centers and GPU counts can be ordered. Read at each call (the API never
 * caches it), with the provider's configuration.
 */
export async function getGpuInventory(args: GetGpuInventoryArgs = {}): Promise<GetGpuInventoryResult> {
  const query = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  const series = await programClient().gpuInventory({ query });
  const available = series.flatMap((s) =>
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
  return { series, available };
}

/** {@link getGpuInventory} with arguments that may be outputs; the result is an output. */
export function getGpuInventoryOutput(args: GetGpuInventoryOutputArgs = {}): pulumi.Output<GetGpuInventoryResult> {
  return pulumi.output(args).apply((plain) => getGpuInventory(plain as GetGpuInventoryArgs));
}

export interface GetVolumeSizesArgs {
  /** Data center (UUID) whose volume types and sizes to list. */
  datacenterId: string;
}

/** `GetVolumeSizesArgs` whose values may be outputs of other resources. */
export interface GetVolumeSizesOutputArgs {
  /** Data center (UUID) whose volume types and sizes to list. */
  datacenterId: pulumi.Input<string>;
}

/**
 * The volume types of a data center and the sizes each offers (`volumeTypeId`, and `volumeSizeId` / `sizeGb` of a
 * Volume), with the provider's configuration.
 */
export async function getVolumeSizes(args: GetVolumeSizesArgs): Promise<VolumeSizes> {
  return programClient().volumeSizes({ params: { id: args.datacenterId } });
}

/** {@link getVolumeSizes} with arguments that may be outputs; the result is an output. */
export function getVolumeSizesOutput(args: GetVolumeSizesOutputArgs): pulumi.Output<VolumeSizes> {
  return pulumi.output(args).apply((plain) => getVolumeSizes(plain));
}
