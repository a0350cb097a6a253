/**
 * `@cloudinfra/pulumi/policy`: reusable @pulumi/policy policies on the sizes and hygiene of cloudinfra resources,
 * and {@link CloudinfraGuard}, the pack that serves them all. See README.md beside this file.
 */
export { CloudinfraGuard, cloudinfraPolicies, guardConfig } from "./guard";
export type { CloudinfraGuardArgs, PolicySetting, ValidationLevel } from "./guard";
export {
  policies,
  allowedVmConfigurations,
  maxVmSize,
  maxReportedVmSize,
  maxInstances,
  maxGpuCount,
  allowedGpuSeries,
  maxVolumeSize,
  noPublicIp,
  requireResourceGroup,
  maxApiKeyLifetime,
  singleMembershipOwner,
  groupedKinds,
} from "./policies";
export { gpuCapacity, deployingKeyPermissions } from "./api-policies";
export type { GpuCapacityConfig, DeployingKeyPermissionsConfig } from "./api-policies";
export type { ApiAccessConfig } from "./api";
export type {
  PolicyKey,
  SizeLimits,
  AllowedVmConfigurationsConfig,
  MaxVmSizeConfig,
  MaxReportedVmSizeConfig,
  MaxInstancesConfig,
  MaxGpuCountConfig,
  AllowedGpuSeriesConfig,
  MaxVolumeSizeConfig,
  NoPublicIpConfig,
  RequireResourceGroupConfig,
  MaxApiKeyLifetimeConfig,
} from "./policies";
export { defaultConfigurations, defaultGpuSeries } from "./catalogue";
export type { ConfigurationCatalogue, ConfigurationSize, GpuSeriesCatalogue } from "./catalogue";
export {
  TYPE_PREFIX,
  PLUGIN_TYPE_PREFIX,
  type Host,
  typeToken,
  kindOf,
  validateKinds,
  remediateKinds,
  validateStackKinds,
  peek,
} from "./kinds";
export type { Kind, KindInputs, KindOutputs, StackResourceOf, Peeked } from "./kinds";
