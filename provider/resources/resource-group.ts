import type { ResourceKind } from "./framework";

// Placeholder replaced by the ResourceGroup implementation (being written); it only keeps the registry compiling.
const pending = async (): Promise<never> => {
  throw new Error("ResourceGroup is under construction");
};

export const resourceGroup: ResourceKind = {
  name: "ResourceGroup",
  check: (_olds, news) => ({ inputs: news, failures: [] }),
  diff: () => ({ changes: false, replaces: [], stables: [], deleteBeforeReplace: false }),
  create: pending,
  read: pending,
  update: pending,
  delete: pending,
};
