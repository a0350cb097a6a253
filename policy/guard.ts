import { PolicyPack, type EnforcementLevel, type PolicyPackConfig } from "@pulumi/policy";
import type { ApiAccessConfig } from "./api";
import type { DeployingKeyPermissionsConfig, GpuCapacityConfig } from "./api-policies";
import type { ConfigurationCatalogue } from "./catalogue";
import {
  policies,
  type AllowedGpuSeriesConfig,
  type AllowedVmConfigurationsConfig,
  type MaxApiKeyLifetimeConfig,
  type MaxGpuCountConfig,
  type MaxInstancesConfig,
  type MaxReportedVmSizeConfig,
  type MaxVmSizeConfig,
  type MaxVolumeSizeConfig,
  type NoPublicIpConfig,
  type PolicyKey,
  type RequireResourceGroupConfig,
} from "./policies";

/** An enforcement level for a policy that has no remediation (`remediate` would only act as `mandatory`). */
export type ValidationLevel = Exclude<EnforcementLevel, "remediate">;

/** A policy's setting: its enforcement level, or an object with the level and any of its config properties. */
export type PolicySetting<C, L extends EnforcementLevel = ValidationLevel> =
  L | ({ enforcementLevel?: L } & Partial<C>);

/**
 * Arguments of {@link CloudinfraGuard}: the enforcement level of every policy (`all`) and, per policy, its level or
 * its level and config. What is left out keeps the policy's defaults (advisory, and the defaults in the README).
 * The stack's policy config (`pulumi up --policy-pack-config`, or the Pulumi Cloud) is applied on top.
 */
export interface CloudinfraGuardArgs {
  /** Enforcement level of every policy, before the per-policy settings below. Default advisory. */
  all?: EnforcementLevel;
  /**
   * The VM size catalogue (configuration id → { name?, cpu, ram, disk }) of the policies that read one
   * (`allowedVmConfigurations`, `maxVmSize`, `maxReportedVmSize`), unless their own setting gives one. Default: the
   * local emulator's catalog.
   */
  catalogue?: ConfigurationCatalogue;
  /** `allowed-vm-configurations`: VMs use a configuration on the allow-list. */
  allowedVmConfigurations?: PolicySetting<AllowedVmConfigurationsConfig>;
  /** `max-vm-size`: VMs' configurations (from the catalogue) stay within maxCpu / maxRam / maxDisk. */
  maxVmSize?: PolicySetting<MaxVmSizeConfig>;
  /** `max-reported-vm-size` (stack): the cpu / ram / disk the API reports stay within the limits. */
  maxReportedVmSize?: PolicySetting<MaxReportedVmSizeConfig>;
  /** `max-instances` (stack): at most so many VMs and GPU VMs per stack. */
  maxInstances?: PolicySetting<MaxInstancesConfig>;
  /** `max-gpu-count`: GPU VMs have at most `max` GPUs. */
  maxGpuCount?: PolicySetting<MaxGpuCountConfig>;
  /** `allowed-gpu-series`: GPU VMs use a series on the allow-list. */
  allowedGpuSeries?: PolicySetting<AllowedGpuSeriesConfig>;
  /** `max-volume-size`: volumes are at most `maxSizeGb`. */
  maxVolumeSize?: PolicySetting<MaxVolumeSizeConfig>;
  /** `no-public-ip`: VMs have no public IP unless their name is allowed (`remediate` turns it off). */
  noPublicIp?: PolicySetting<NoPublicIpConfig, EnforcementLevel>;
  /** `require-resource-group`: VMs, GPU VMs and volumes have a teamId (`remediate` sets `defaultTeamId`). */
  requireResourceGroup?: PolicySetting<RequireResourceGroupConfig, EnforcementLevel>;
  /** `max-api-key-lifetime`: API keys expire within `maxDays` (`remediate` sets `expiresInDays`). */
  maxApiKeyLifetime?: PolicySetting<MaxApiKeyLifetimeConfig, EnforcementLevel>;
  /** `single-membership-owner` (stack): a group's members and a user's roles are managed inline or as resources. */
  singleMembershipOwner?: PolicySetting<Record<string, never>>;
  /**
   * How the policies that read the API (`gpuCapacity`, `deployingKeyPermissions`) reach it, unless their own setting
   * says: `baseUrl`, `entityId`, `apiKeyVariable`. Default: the deploying stack's cloudinfra settings.
   */
  api?: ApiAccessConfig;
  /** `gpu-capacity`: GPU VMs ask for a series × count their data center has capacity for (the API's inventory). */
  gpuCapacity?: PolicySetting<GpuCapacityConfig>;
  /** `deploying-key-permissions`: the deploying credentials have the permissions the operations need. */
  deployingKeyPermissions?: PolicySetting<DeployingKeyPermissionsConfig>;
}

const levels: readonly string[] = ["advisory", "mandatory", "remediate", "disabled"] satisfies EnforcementLevel[];
const catalogueKeys: readonly PolicyKey[] = ["allowedVmConfigurations", "maxVmSize", "maxReportedVmSize"];
const apiKeys: readonly PolicyKey[] = ["gpuCapacity", "deployingKeyPermissions"];

/**
 * The pack's initial policy config (policy name → level, or { enforcementLevel, ...config }) for `args`, as the
 * engine receives it from the pack. Every mistake (an unknown setting, policy or level) is reported at once.
 */
export function guardConfig(args: CloudinfraGuardArgs = {}): PolicyPackConfig {
  const problems: string[] = [];
  const config: PolicyPackConfig = {};
  const level = (where: string, value: unknown) => {
    if (typeof value !== "string" || !levels.includes(value)) {
      problems.push(`${where}: ${JSON.stringify(value)} is not an enforcement level (${levels.join(", ")})`);
    }
  };
  const { all, catalogue, api, ...settings } = args;
  // The engine reads a setting given without a level as "advisory", overriding `all`: every setting gets its level.
  const defaultLevel: EnforcementLevel = all ?? "advisory";
  if (all !== undefined) {
    level("all", all);
    config.all = all;
  }
  for (const [key, setting] of Object.entries(settings) as [string, unknown][]) {
    if (!(key in policies)) {
      problems.push(
        `unknown setting "${key}"; the settings are all, catalogue, api, ${Object.keys(policies).join(", ")}`,
      );
      continue;
    }
    if (setting === undefined) continue;
    const policy = policies[key as PolicyKey];
    if (typeof setting === "string") {
      level(key, setting);
      config[policy.name] = setting as EnforcementLevel;
      continue;
    }
    if (typeof setting !== "object" || setting === null) {
      problems.push(`${key}: give an enforcement level or an object of { enforcementLevel, ...config }`);
      continue;
    }
    const known = Object.keys(policy.configSchema?.properties ?? {});
    // Left-out values (undefined) are dropped: the pack's config travels as a protobuf Struct, which refuses them.
    const given = Object.entries(setting).filter(([, value]) => value !== undefined);
    for (const [property, value] of given) {
      if (property === "enforcementLevel") level(`${key}.enforcementLevel`, value);
      else if (!known.includes(property)) {
        problems.push(`${key}: unknown config "${property}"; its config is ${known.join(", ")}`);
      }
    }
    config[policy.name] = { enforcementLevel: defaultLevel, ...Object.fromEntries(given) };
  }
  if (catalogue !== undefined) {
    for (const key of catalogueKeys) {
      const name = policies[key].name;
      const given = config[name] ?? defaultLevel;
      if (typeof given === "object" && "catalogue" in given) continue;
      config[name] = typeof given === "string" ? { enforcementLevel: given, catalogue } : { ...given, catalogue };
    }
  }
  if (api !== undefined) {
    const known = Object.keys(policies.gpuCapacity.configSchema?.properties ?? {});
    if (typeof api !== "object" || api === null)
      problems.push("api: give an object of { baseUrl, entityId, apiKeyVariable }");
    else {
      for (const property of Object.keys(api)) {
        if (!known.includes(property)) problems.push(`api: unknown config "${property}"; it is ${known.join(", ")}`);
      }
      const given = Object.fromEntries(Object.entries(api).filter(([, value]) => value !== undefined));
      for (const key of apiKeys) {
        const name = policies[key].name;
        const current = config[name] ?? defaultLevel;
        // A policy's own setting wins over `api`.
        config[name] = typeof current === "string" ? { enforcementLevel: current, ...given } : { ...given, ...current };
      }
    }
  }
  if (problems.length > 0) throw new TypeError(`CloudinfraGuard:\n  ${problems.join("\n  ")}`);
  return config;
}

/** Every policy of the pack, in the order the settings are listed. */
export const cloudinfraPolicies = Object.values(policies);

/**
 * The cloudinfra policy pack, in the style of AWSGuard: one line in a policy pack project's `index.ts` serves every
 * policy with the given levels and config.
 *
 * ```ts
 * new CloudinfraGuard({ all: "advisory", maxGpuCount: { enforcementLevel: "mandatory", max: 4 } });
 * ```
 *
 * Constructing it serves the pack (it is a `PolicyPack`): only in a policy pack program, once per process.
 */
export class CloudinfraGuard extends PolicyPack {
  /** A pack named `cloudinfra-guard`. */
  constructor(args?: CloudinfraGuardArgs);
  /** A pack with its own name (letters, digits, `-`, `_`, `.`). */
  constructor(name: string, args?: CloudinfraGuardArgs);
  constructor(nameOrArgs?: string | CloudinfraGuardArgs, maybeArgs?: CloudinfraGuardArgs) {
    const [name, args] = typeof nameOrArgs === "string" ? [nameOrArgs, maybeArgs] : ["cloudinfra-guard", nameOrArgs];
    super(
      name,
      {
        policies: cloudinfraPolicies,
        enforcementLevel: "advisory",
        displayName: "cloudinfra guard",
        description:
          "Sizes and hygiene of cloudinfra resources: VM, GPU and volume sizes, public IPs, groups, keys; GPU " +
          "capacity and the deploying key's permissions, read from the API.",
        provider: "cloudinfra",
        tags: ["cloudinfra", "cost", "security"],
      },
      guardConfig(args),
    );
  }
}
