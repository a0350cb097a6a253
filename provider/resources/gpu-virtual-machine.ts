import type { ResourceKind } from "./framework";

// Placeholder replaced by the GpuVirtualMachine implementation (being written); it only keeps the registry compiling.
const pending = async (): Promise<never> => {
  throw new Error("GpuVirtualMachine is under construction");
};

export const gpuVirtualMachine: ResourceKind = {
  name: "GpuVirtualMachine",
  check: (_olds, news) => ({ inputs: news, failures: [] }),
  diff: () => ({ changes: false, replaces: [], stables: [], deleteBeforeReplace: false }),
  create: pending,
  read: pending,
  update: pending,
  delete: pending,
};
