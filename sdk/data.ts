import * as pulumi from "@pulumi/pulumi";
import type * as api from "../provider/api";
import { inProgram, providerModules } from "./data-context";

// The types below are written out rather than re-exported from the zod contract: a program's declarations must not
// reach zod's (which fail `tsc` without `skipLibCheck`/`esModuleInterop`, the settings of Pulumi's templates). The
// assertions after them keep them equal to the contract.

/** A number of GPUs that can be ordered: 1, 2, 4 or 8. */
export type GpuCount = 1 | 2 | 4 | 8;

/** Whether a GPU count can be ordered now. */
export interface GpuAvailability {
  /** True when this count can be ordered now. */
  available: boolean;
}

/** One GPU series of the inventory (`GET /resource/gpu/inventory`). */
export interface GpuInventoryEntry {
  /** GPU series id: the `seriesId` of a GpuVirtualMachine. */
  seriesId: number;
  /** Series name, e.g. `NVIDIA A100`. */
  seriesName: string;
  /** Series code, e.g. `a100`. */
  seriesCode: string;
  /** Per data center: which GPU counts can be ordered now. */
  availability: {
    /** Data center (UUID). */
    datacenterId: string;
    /** Data center name. */
    datacenterName: string;
    /** Availability per GPU count. */
    gpuCounts: {
      /** Whether a GPU VM with 1 GPU of this series can be ordered here now. */
      "1": GpuAvailability;
      /** Whether a GPU VM with 2 GPUs of this series can be ordered here now. */
      "2": GpuAvailability;
      /** Whether a GPU VM with 4 GPUs of this series can be ordered here now. */
      "4": GpuAvailability;
      /** Whether a GPU VM with 8 GPUs of this series can be ordered here now. */
      "8": GpuAvailability;
    };
  }[];
}

/** One size a volume type offers. */
export interface VolumeSizeOption {
  /** Size id: the `volumeSizeId` of a Volume. */
  id: number;
  /** Size in GB. */
  sizeGb: number;
  /** Display name, e.g. `100 GB`. */
  displayName: string;
  /** How many volumes of this size one VM may have attached. */
  maxVolumesPerVm: number;
}

/** The volume types of a data center and the sizes each offers. */
export interface VolumeSizes {
  /** Data center (UUID). */
  datacenterId: string;
  /** The volume types offered there. */
  volumeTypes: {
    /** Volume type id: the `volumeTypeId` of a Volume. */
    id: number;
    /** Type name. */
    name: string;
    /** Free text, or null. */
    description: string | null;
    /** The sizes this type offers. */
    availableSizes: VolumeSizeOption[];
  }[];
}

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const contractMatches: [
  Same<GpuCount, api.GpuCount>,
  Same<GpuInventoryEntry, api.GpuInventoryEntry>,
  Same<VolumeSizes, api.VolumeSizes>,
] = [true, true, true];
void contractMatches;

/** Filters of {@link getGpuInventory}; every one is optional. */
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

/** What {@link getGpuInventory} returns. */
export interface GetGpuInventoryResult {
  /** The inventory as the API returns it (`GET /resource/gpu/inventory`, never cached): one entry per series. */
  series: GpuInventoryEntry[];
  /** Every series × data center × GPU count available now, flattened, in inventory order and ascending count. */
  available: GpuCombination[];
}

/**
 * The GPU inventory now: which series, data centers and GPU counts can be ordered. Read at each call (the API never
 * caches it), with the provider's configuration.
 */
export async function getGpuInventory(args: GetGpuInventoryArgs = {}): Promise<GetGpuInventoryResult> {
  const query = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  return inProgram("getGpuInventory", async (ctx) => {
    const { availableCombinations } = await providerModules();
    const series = await ctx.api.gpuInventory({ query });
    return { series, available: availableCombinations(series) };
  });
}

/** {@link getGpuInventory} with arguments that may be outputs; the result is an output. */
export function getGpuInventoryOutput(args: GetGpuInventoryOutputArgs = {}): pulumi.Output<GetGpuInventoryResult> {
  return pulumi.output(args).apply((plain) => getGpuInventory(plain as GetGpuInventoryArgs));
}

/** The argument of {@link getVolumeSizes}. */
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
  return inProgram("getVolumeSizes", (ctx) => ctx.api.volumeSizes({ params: { id: args.datacenterId } }));
}

/** {@link getVolumeSizes} with arguments that may be outputs; the result is an output. */
export function getVolumeSizesOutput(args: GetVolumeSizesOutputArgs): pulumi.Output<VolumeSizes> {
  return pulumi.output(args).apply((plain) => getVolumeSizes(plain));
}
