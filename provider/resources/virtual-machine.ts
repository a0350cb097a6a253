import type { ResourceKind } from "./framework";

// Placeholder replaced by the VirtualMachine implementation (being written); it only keeps the registry compiling.
const pending = async (): Promise<never> => {
  throw new Error("VirtualMachine is under construction");
};

export const virtualMachine: ResourceKind = {
  name: "VirtualMachine",
  check: (_olds, news) => ({ inputs: news, failures: [] }),
  diff: () => ({ changes: false, replaces: [], stables: [], deleteBeforeReplace: false }),
  create: pending,
  read: pending,
  update: pending,
  delete: pending,
};
