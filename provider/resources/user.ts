import type { ResourceKind } from "./framework";

// Placeholder replaced by the User implementation (being written); it only keeps the registry compiling.
const pending = async (): Promise<never> => {
  throw new Error("User is under construction");
};

export const user: ResourceKind = {
  name: "User",
  check: (_olds, news) => ({ inputs: news, failures: [] }),
  diff: () => ({ changes: false, replaces: [], stables: [], deleteBeforeReplace: false }),
  create: pending,
  read: pending,
  update: pending,
  delete: pending,
};
