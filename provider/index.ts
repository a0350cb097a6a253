export * from "./client";
export * as api from "./api";
export { dynamicProvider } from "./dynamic-providers/of-kind";
// The handlers stacks written by earlier versions call by this name: the host module's, so one copy serves a host.
export { dynamicHandlers } from "./dynamic-providers/host";
export { kinds, type KindName } from "./resources";
