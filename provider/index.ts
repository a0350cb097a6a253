export * from "./client";
export * as api from "./api";
export { dynamicHandlers, dynamicProvider } from "./dynamic";
export { kinds, type KindName } from "./resources";
