import type { PolicyConfigSchema, ResourceValidationPolicy } from "@pulumi/policy";
import {
  apiKeyOperations,
  capacityFailures,
  DECLARED,
  missingPermissions,
  vmOperations,
} from "../provider/resources/preflight";
import type { Props } from "../provider/resources/props";
import { apiAccess, apiAccessSchema, callerIn, inventoryOf, notChecked, type ApiAccessConfig } from "./api";
import { peek, validateKinds } from "./kinds";

// Policies that read the API, with the reads and the judgement of the provider's preview checks
// (provider/resources/preflight.ts). They judge each resource as the program declares it: the pack sees no state, so
// an existing resource is judged as if it were created now. A read that fails reports nothing but a note.

/** Config of settings, read the way the engine hands it over. */
function accessOf(args: { getConfig<T extends object>(): T }): ApiAccessConfig {
  return args.getConfig<ApiAccessConfig>();
}

/** When a read was made, for messages: what the policy saw was true then. */
const at = (time: Date) => `at ${time.toISOString()}, when the policy ran`;

/**
 * The props named, as plain values: a value not known yet (a preview) is left out, one partly known (an object with
 * an unknown member) counts as given (`{}`), since an operation it asks for is needed whatever it holds.
 */
function plain(props: object, keys: readonly string[]): Props {
  const result: Props = {};
  for (const key of keys) {
    const top = peek(() => (props as Record<string, unknown>)[key]);
    if (!top.known || top.value === undefined) continue;
    const deep = peek(() => JSON.parse(JSON.stringify(top.value)) as unknown);
    result[key] = deep.known ? deep.value : {};
  }
  return result;
}

/** Config of `gpu-capacity`: how it reaches the API. */
export type GpuCapacityConfig = ApiAccessConfig;

const gpuCapacitySchema: PolicyConfigSchema = { properties: { ...apiAccessSchema } };

/**
 * A GPU VM's series × count is available in its data center, per `GET /resource/gpu/inventory` (read once per run).
 * Capacity can change before the deployment, which still handles the API's 409.
 */
export const gpuCapacity: ResourceValidationPolicy = {
  name: "gpu-capacity",
  description: "GPU virtual machines ask for a GPU series and count that their data center has capacity for.",
  severity: "medium",
  configSchema: gpuCapacitySchema,
  validateResource: validateKinds(["GpuVirtualMachine"], async (gpu, args, reportViolation) => {
    const { datacenterId, seriesId, gpuCount } = plain(gpu, ["datacenterId", "seriesId", "gpuCount"]);
    if (datacenterId === undefined || seriesId === undefined || gpuCount === undefined) return; // not known yet
    const time = new Date();
    const found = await inventoryOf(apiAccess(accessOf(args)));
    if ("note" in found) return notChecked(args, "gpu-capacity", found.note);
    const seen =
      `(GET /resource/gpu/inventory ${at(time)}; capacity can change before the deployment, which still reports ` +
      "the API's 409)";
    for (const failure of capacityFailures(
      found.inventory,
      { datacenterId, seriesId, gpuCount },
      `GPU VM ${args.name}`,
      seen,
    )) {
      reportViolation(failure.reason);
    }
  }),
};

/** Config of `deploying-key-permissions`: how it reaches the API (by default, as the deploying stack). */
export type DeployingKeyPermissionsConfig = ApiAccessConfig;

const deployingKeyPermissionsSchema: PolicyConfigSchema = { properties: { ...apiAccessSchema } };

/** The inputs that ask for an operation needing a permission beyond create (the provider's preview check's). */
const operationInputs = ["powerState", "resetTrigger", "rescue", "shutdownBeforeDelete", "enabled", "rotation"];

/**
 * The deploying credentials have the permission of every operation the program asks for: a VM's or GPU VM's
 * `powerState` "stopped", `resetTrigger`, `rescue`, `shutdownBeforeDelete` (`vm:operate`), an ApiKey
 * (`api-keys:manage`), each route's permission as the API contract declares it, against `GET /auth/check` (read once
 * per run, and only when some resource asks for such an operation).
 */
export const deployingKeyPermissions: ResourceValidationPolicy = {
  name: "deploying-key-permissions",
  description:
    "The deploying credentials have the permissions the program's operations need (vm:operate, api-keys:manage).",
  severity: "medium",
  configSchema: deployingKeyPermissionsSchema,
  validateResource: validateKinds(
    ["VirtualMachine", "GpuVirtualMachine", "ApiKey"],
    async (props, args, reportViolation) => {
      const declared = plain(props, operationInputs);
      const ops =
        args.kind === "ApiKey"
          ? apiKeyOperations(DECLARED, declared)
          : vmOperations(DECLARED, declared, args.kind === "GpuVirtualMachine");
      if (ops.length === 0) return;
      const time = new Date();
      const found = await callerIn(apiAccess(accessOf(args), args.kind));
      if ("note" in found) return notChecked(args, "deploying-key-permissions", found.note);
      for (const failure of missingPermissions(found.caller, ops, `(GET /auth/check ${at(time)})`)) {
        reportViolation(`${args.kind} ${args.name}: ${failure.reason}`);
      }
    },
  ),
};
