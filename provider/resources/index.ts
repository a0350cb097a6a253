import type { ResourceKind } from "./framework";
import { network } from "./network";

/** Every resource kind, by the name of its SDK class (and of its type token `cloudinfra:<Kind>`). */
export const kinds = {
  Network: network,
} satisfies Record<string, ResourceKind>;
export type KindName = keyof typeof kinds;

export * from "./framework";
