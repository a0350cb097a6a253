import type { VmDetail } from "../../api";
import type { HandlerContext } from "../context";
import type { Props } from "../props";
import type { Size } from "./declaration";

/**
 * cpu/ram/disk per configuration id. The API has no configuration list: sizes are learned from the VMs it reports
 * (a VM detail, or a VM list item filtered by configuration). Configurations of a catalog do not change size.
 */
export const knownSizes = new Map<number, Size>();

export const sizeOfDetail = (vm: VmDetail["virtualMachine"]): Size => ({ cpu: vm.cpu, ram: vm.ram, disk: vm.disk });

/** The size of a configuration, learned read-only from any VM of the entity that uses it; undefined when none does. */
export async function sizeOf(ctx: HandlerContext | undefined, configurationId: number): Promise<Size | undefined> {
  const known = knownSizes.get(configurationId);
  if (known) return known;
  // Without a context (a host with no usable configuration yet), nothing is read.
  if (!ctx) return undefined;
  try {
    const page = await ctx.api.listVms({ query: { "filter[configurationId]": configurationId, limit: 1 } });
    const size = page.data[0]?.configuration;
    if (size) knownSizes.set(configurationId, { cpu: size.cpu, ram: size.ram, disk: size.disk });
    return size;
  } catch {
    // Not knowing is allowed: the resize call's own refusal is the last line.
    return undefined;
  }
}

export function shrinks(from: Size, to: Size): string[] {
  return (["cpu", "ram", "disk"] as const).filter((k) => to[k] < from[k]).map((k) => `${k} ${from[k]} → ${to[k]}`);
}

export function shrinkMessage(from: number, to: number, what: string[]): string {
  return (
    `can only grow in place: ${from} → ${to} would shrink the VM (${what.join(", ")}). Choose a ` +
    "configuration at least as large, or set `allowReplaceOnShrink: true` to replace the VM (a new VM, its disk " +
    "content is not kept)"
  );
}

export function isSize(value: unknown): value is Size {
  return (
    value !== null &&
    typeof value === "object" &&
    ["cpu", "ram", "disk"].every((k) => typeof (value as Props)[k] === "number")
  );
}
