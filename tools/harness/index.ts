/**
 * A test tool, not a Pulumi engine: runs Pulumi programs against the real dynamic-provider host, with a JSON state
 * file between runs. See README.md beside this file.
 */
export {
  up,
  preview,
  refresh,
  destroy,
  RunError,
  DYNAMIC_TYPE_PREFIX,
  type ConfigValue,
  type DiffDetails,
  type Operation,
  type Program,
  type RunErrorEntry,
  type RunOptions,
  type RunResult,
  type StepResult,
} from "./engine";
export { ProviderHost, HostError, type HostOptions, type InitFailure } from "./host";
export {
  STACK_TYPE,
  loadState,
  readStateFile,
  saveState,
  providerOf,
  type StackState,
  type StateResource,
  type ResourceOptions,
} from "./state";
export { UNKNOWN, PROVIDER_KEY, isSecret, reveal, secretPaths, type Wire, type WireMap } from "./wire";
