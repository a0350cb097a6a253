import type { PolicyConfigSchema, ResourceValidationPolicy, StackValidationPolicy } from "@pulumi/policy";
import type { PolicyConfigJSONSchema } from "@pulumi/policy/schema";
import {
  defaultConfigurations,
  defaultGpuSeries,
  type ConfigurationCatalogue,
  type ConfigurationSize,
  type GpuSeriesCatalogue,
} from "./catalogue";
import { deployingKeyPermissions, gpuCapacity } from "./api-policies";
import { kindOf, peek, remediateKinds, validateKinds, validateStackKinds, type Kind } from "./kinds";

// ---------------------------------------------------------------- config

/** Config of a policy, read the way the engine hands it over, with the schema's defaults under it. */
function settings<C>(args: { getConfig<T extends object>(): T }, schema: PolicyConfigSchema): C {
  const defaults = Object.fromEntries(
    Object.entries(schema.properties)
      .filter(([, property]) => property.default !== undefined)
      .map(([key, property]) => [key, property.default]),
  );
  return { ...defaults, ...args.getConfig<object>() } as C;
}

const catalogueSchema: PolicyConfigJSONSchema = {
  type: "object",
  description:
    "VM configurations by id (the key, as a string): { name?, cpu, ram (GB), disk (GB) }. The API lists no " +
    "configurations; the default is the local emulator's catalog.",
  propertyNames: { pattern: "^[0-9]+$" },
  additionalProperties: {
    type: "object",
    required: ["cpu", "ram", "disk"],
    properties: {
      name: { type: "string" },
      cpu: { type: "integer", minimum: 1 },
      ram: { type: "number", minimum: 0 },
      disk: { type: "number", minimum: 0 },
    },
    additionalProperties: false,
  },
  default: defaultConfigurations,
};

const sizeLimits = {
  maxCpu: { type: "integer", minimum: 1, default: 8, description: "Most virtual CPUs a VM may have." },
  maxRam: { type: "number", minimum: 1, default: 32, description: "Most RAM (GB) a VM may have." },
  maxDisk: { type: "number", minimum: 1, default: 200, description: "Largest boot disk (GB) a VM may have." },
} satisfies Record<string, PolicyConfigJSONSchema>;

/** Limits on a VM's size (`max-vm-size`, `max-reported-vm-size`). */
export interface SizeLimits {
  /** Most virtual CPUs. Default 8. */
  maxCpu: number;
  /** Most RAM in GB. Default 32. */
  maxRam: number;
  /** Largest boot disk in GB. Default 200. */
  maxDisk: number;
}

function describeSize(id: number | string, size: ConfigurationSize): string {
  const name = size.name === undefined ? "" : ` ${size.name}`;
  return `configuration ${id}${name} (${size.cpu} vCPU, ${size.ram} GB RAM, ${size.disk} GB disk)`;
}

/** The limits a size exceeds, as text ("16 vCPU > 8"), empty when none. */
function exceeded(size: { cpu: number; ram: number; disk: number }, limits: SizeLimits): string[] {
  const over: string[] = [];
  if (size.cpu > limits.maxCpu) over.push(`${size.cpu} vCPU > maxCpu ${limits.maxCpu}`);
  if (size.ram > limits.maxRam) over.push(`${size.ram} GB RAM > maxRam ${limits.maxRam}`);
  if (size.disk > limits.maxDisk) over.push(`${size.disk} GB disk > maxDisk ${limits.maxDisk}`);
  return over;
}

function catalogueIds(catalogue: ConfigurationCatalogue): string {
  return Object.entries(catalogue)
    .map(([id, size]) => (size.name === undefined ? id : `${id} (${size.name})`))
    .join(", ");
}

// ---------------------------------------------------------------- VM sizes

/** Config of `allowed-vm-configurations`. */
export interface AllowedVmConfigurationsConfig {
  /** Configurations a VM may use, by id or by catalogue name. Default: every configuration of the catalogue. */
  allowed?: (number | string)[];
  /** VM configurations by id. Default: the local emulator's catalog. */
  catalogue: ConfigurationCatalogue;
}

const allowedVmConfigurationsSchema: PolicyConfigSchema = {
  properties: {
    allowed: {
      type: "array",
      items: { type: ["integer", "string"] },
      description:
        "Configurations a VM may use, by id or by catalogue name. Default: every configuration of the catalogue.",
    },
    catalogue: catalogueSchema,
  },
};

/** A VM's `configurationId` must be on an allow-list (by id or catalogue name). */
export const allowedVmConfigurations: ResourceValidationPolicy = {
  name: "allowed-vm-configurations",
  description: "Virtual machines use an allowed configuration.",
  severity: "medium",
  configSchema: allowedVmConfigurationsSchema,
  validateResource: validateKinds(["VirtualMachine"], (vm, args, reportViolation) => {
    const config = settings<AllowedVmConfigurationsConfig>(args, allowedVmConfigurationsSchema);
    const id = vm.configurationId;
    const size = config.catalogue[String(id)] as ConfigurationSize | undefined;
    const allowed = config.allowed ?? Object.keys(config.catalogue).map(Number);
    const ok = allowed.some((a) => String(a) === String(id) || (size?.name !== undefined && a === size.name));
    if (ok) return;
    if (config.allowed === undefined) {
      reportViolation(
        `configuration ${id} is not in the policy's catalogue (${catalogueIds(config.catalogue)}): add it to ` +
          "`catalogue` or use one of those.",
      );
    } else {
      const what = size === undefined ? `configuration ${id}` : describeSize(id, size);
      reportViolation(`${what} is not allowed; allowed: ${config.allowed.join(", ")}.`);
    }
  }),
};

/** Config of `max-vm-size`. */
export interface MaxVmSizeConfig extends SizeLimits {
  /** VM configurations by id. Default: the local emulator's catalog. */
  catalogue: ConfigurationCatalogue;
}

const maxVmSizeSchema: PolicyConfigSchema = { properties: { ...sizeLimits, catalogue: catalogueSchema } };

/**
 * A VM's configuration, looked up in the catalogue, stays within maximum cpu, ram and disk. Judged from the program
 * before anything is created; a configuration missing from the catalogue cannot be judged and is a violation.
 */
export const maxVmSize: ResourceValidationPolicy = {
  name: "max-vm-size",
  description: "Virtual machines stay within the maximum vCPU, RAM and disk (sizes from the policy's catalogue).",
  severity: "medium",
  configSchema: maxVmSizeSchema,
  validateResource: validateKinds(["VirtualMachine"], (vm, args, reportViolation) => {
    const config = settings<MaxVmSizeConfig>(args, maxVmSizeSchema);
    const id = vm.configurationId;
    const size = config.catalogue[String(id)] as ConfigurationSize | undefined;
    if (size === undefined) {
      reportViolation(
        `configuration ${id} is not in the policy's catalogue (${catalogueIds(config.catalogue)}), so its size is ` +
          "unknown: add it to `catalogue`.",
      );
      return;
    }
    const over = exceeded(size, config);
    if (over.length > 0) reportViolation(`${describeSize(id, size)} is too large: ${over.join("; ")}.`);
  }),
};

/** Config of `max-reported-vm-size`. */
export interface MaxReportedVmSizeConfig extends SizeLimits {
  /**
   * Also report VMs whose reported size differs from the catalogue entry of their configuration (the catalogue
   * that `max-vm-size` relies on is out of date). Default true.
   */
  checkCatalogue: boolean;
  /** VM configurations by id. Default: the local emulator's catalog. */
  catalogue: ConfigurationCatalogue;
}

const maxReportedVmSizeSchema: PolicyConfigSchema = {
  properties: {
    ...sizeLimits,
    checkCatalogue: {
      type: "boolean",
      default: true,
      description: "Also report VMs whose reported size differs from the catalogue entry of their configuration.",
    },
    catalogue: catalogueSchema,
  },
};

/**
 * Stack policy on the sizes the provider reports (the VM's `cpu`, `ram` and `disk` outputs), once known: VMs not
 * created yet (a preview) are skipped, every other one is checked against the limits, and (by default) against
 * the catalogue entry of its configuration.
 */
export const maxReportedVmSize: StackValidationPolicy = {
  name: "max-reported-vm-size",
  description: "Virtual machines, as the API reports them, stay within the maximum vCPU, RAM and disk.",
  severity: "medium",
  configSchema: maxReportedVmSizeSchema,
  validateStack: validateStackKinds(["VirtualMachine"], (vms, args, reportViolation) => {
    const config = settings<MaxReportedVmSizeConfig>(args, maxReportedVmSizeSchema);
    for (const vm of vms) {
      const cpu = peek(() => vm.props.cpu);
      const ram = peek(() => vm.props.ram);
      const disk = peek(() => vm.props.disk);
      if (!cpu.known || !ram.known || !disk.known) continue;
      if (typeof cpu.value !== "number" || typeof ram.value !== "number" || typeof disk.value !== "number") continue;
      const size = { cpu: cpu.value, ram: ram.value, disk: disk.value };
      const over = exceeded(size, config);
      if (over.length > 0) {
        reportViolation(
          `VM ${vm.name} is reported with ${size.cpu} vCPU, ${size.ram} GB RAM, ${size.disk} GB disk: ${over.join("; ")}.`,
          vm.urn,
        );
      }
      const id = peek(() => vm.props.configurationId);
      const entry = id.known ? (config.catalogue[String(id.value)] as ConfigurationSize | undefined) : undefined;
      if (config.checkCatalogue && id.known && entry !== undefined) {
        const { cpu: c, ram: r, disk: d } = entry;
        if (c !== size.cpu || r !== size.ram || d !== size.disk) {
          reportViolation(
            `VM ${vm.name}: the catalogue says ${describeSize(id.value, entry)}, the API reports ${size.cpu} vCPU, ` +
              `${size.ram} GB RAM, ${size.disk} GB disk: update \`catalogue\` (max-vm-size relies on it).`,
            vm.urn,
          );
        }
      }
    }
  }),
};

/** Config of `max-instances`. */
export interface MaxInstancesConfig {
  /** Most VirtualMachine resources in one stack. Default 10. */
  maxVirtualMachines: number;
  /** Most GpuVirtualMachine resources in one stack. Default 2. */
  maxGpuVirtualMachines: number;
}

const maxInstancesSchema: PolicyConfigSchema = {
  properties: {
    maxVirtualMachines: {
      type: "integer",
      minimum: 0,
      default: 10,
      description: "Most VirtualMachine resources in one stack.",
    },
    maxGpuVirtualMachines: {
      type: "integer",
      minimum: 0,
      default: 2,
      description: "Most GpuVirtualMachine resources in one stack.",
    },
  },
};

/** Stack policy: at most so many VMs and GPU VMs in one stack. */
export const maxInstances: StackValidationPolicy = {
  name: "max-instances",
  description: "A stack holds at most the maximum number of virtual machines and GPU virtual machines.",
  severity: "medium",
  configSchema: maxInstancesSchema,
  validateStack: validateStackKinds(["VirtualMachine", "GpuVirtualMachine"], (instances, args, reportViolation) => {
    const config = settings<MaxInstancesConfig>(args, maxInstancesSchema);
    const limits: [Kind, number][] = [
      ["VirtualMachine", config.maxVirtualMachines],
      ["GpuVirtualMachine", config.maxGpuVirtualMachines],
    ];
    for (const [kind, max] of limits) {
      const names = instances.filter((r) => r.kind === kind).map((r) => r.name);
      if (names.length > max) {
        const setting = kind === "VirtualMachine" ? "maxVirtualMachines" : "maxGpuVirtualMachines";
        reportViolation(`${names.length} ${kind} resources (${names.join(", ")}) > ${setting} ${max}.`);
      }
    }
  }),
};

// ---------------------------------------------------------------- GPU VMs

/** Config of `max-gpu-count`. */
export interface MaxGpuCountConfig {
  /** Most GPUs one GPU VM may have (1, 2, 4 or 8 can be ordered). Default 4. */
  max: number;
}

const maxGpuCountSchema: PolicyConfigSchema = {
  properties: {
    max: { type: "integer", minimum: 1, default: 4, description: "Most GPUs one GPU VM may have." },
  },
};

/** A GPU VM's `gpuCount` stays within a maximum. */
export const maxGpuCount: ResourceValidationPolicy = {
  name: "max-gpu-count",
  description: "GPU virtual machines have at most the maximum number of GPUs.",
  severity: "high",
  configSchema: maxGpuCountSchema,
  validateResource: validateKinds(["GpuVirtualMachine"], (gpu, args, reportViolation) => {
    const { max } = settings<MaxGpuCountConfig>(args, maxGpuCountSchema);
    if (gpu.gpuCount > max) reportViolation(`gpuCount ${gpu.gpuCount} > max ${max}.`);
  }),
};

/** Config of `allowed-gpu-series`. */
export interface AllowedGpuSeriesConfig {
  /** GPU series a GPU VM may use, by id or code. Default: every series of `series`. */
  allowed?: (number | string)[];
  /** GPU series codes by series id. Default: the local emulator's catalog (`1`: a100, `2`: h100). */
  series: GpuSeriesCatalogue;
}

const allowedGpuSeriesSchema: PolicyConfigSchema = {
  properties: {
    allowed: {
      type: "array",
      items: { type: ["integer", "string"] },
      description: "GPU series a GPU VM may use, by id or code (e.g. a100). Default: every series of `series`.",
    },
    series: {
      type: "object",
      description: "GPU series codes by series id (the key, as a string). Default: the local emulator's catalog.",
      propertyNames: { pattern: "^[0-9]+$" },
      additionalProperties: { type: "string" },
      default: defaultGpuSeries,
    },
  },
};

/** A GPU VM's `seriesId` must be on an allow-list (by id or code). */
export const allowedGpuSeries: ResourceValidationPolicy = {
  name: "allowed-gpu-series",
  description: "GPU virtual machines use an allowed GPU series.",
  severity: "medium",
  configSchema: allowedGpuSeriesSchema,
  validateResource: validateKinds(["GpuVirtualMachine"], (gpu, args, reportViolation) => {
    const config = settings<AllowedGpuSeriesConfig>(args, allowedGpuSeriesSchema);
    const id = gpu.seriesId;
    const code = config.series[String(id)] as string | undefined;
    const allowed = config.allowed ?? Object.keys(config.series).map(Number);
    const matches = (a: number | string) =>
      String(a) === String(id) || (code !== undefined && String(a).toLowerCase() === code.toLowerCase());
    if (allowed.some(matches)) return;
    const what = code === undefined ? `GPU series ${id}` : `GPU series ${id} (${code})`;
    const known = Object.entries(config.series)
      .map(([i, c]) => `${i} (${c})`)
      .join(", ");
    reportViolation(
      config.allowed === undefined
        ? `${what} is not in the policy's series (${known}): add it to \`series\` or use one of those.`
        : `${what} is not allowed; allowed: ${config.allowed.join(", ")}.`,
    );
  }),
};

// ---------------------------------------------------------------- volumes

/** Config of `max-volume-size`. */
export interface MaxVolumeSizeConfig {
  /** Largest volume in GB. Default 500. */
  maxSizeGb: number;
}

const maxVolumeSizeSchema: PolicyConfigSchema = {
  properties: {
    maxSizeGb: { type: "number", minimum: 1, default: 500, description: "Largest volume (GB)." },
  },
};

/** A Volume's `sizeGb` stays within a maximum. */
export const maxVolumeSize: ResourceValidationPolicy = {
  name: "max-volume-size",
  description: "Volumes are at most the maximum size.",
  severity: "medium",
  configSchema: maxVolumeSizeSchema,
  validateResource: validateKinds(["Volume"], (volume, args, reportViolation) => {
    const { maxSizeGb } = settings<MaxVolumeSizeConfig>(args, maxVolumeSizeSchema);
    if (volume.sizeGb > maxSizeGb) reportViolation(`sizeGb ${volume.sizeGb} > maxSizeGb ${maxSizeGb}.`);
  }),
};

// ---------------------------------------------------------------- hygiene

/** Config of `no-public-ip`. */
export interface NoPublicIpConfig {
  /** Pulumi resource names (the first argument of `new VirtualMachine(name, …)`) allowed a public IP. Default none. */
  allowedNames: string[];
}

const noPublicIpSchema: PolicyConfigSchema = {
  properties: {
    allowedNames: {
      type: "array",
      items: { type: "string" },
      default: [],
      description: "Pulumi resource names of the VMs allowed a public IP (e.g. a bastion).",
    },
  },
};

function publicIpNotAllowed(vm: { allocatePublicIp?: boolean }, name: string, config: NoPublicIpConfig): boolean {
  return vm.allocatePublicIp === true && !config.allowedNames.includes(name);
}

/**
 * A VM has no public IP (`allocatePublicIp`) unless its resource name is allowed. Remediation turns
 * `allocatePublicIp` off (on an existing VM that is a replacement).
 */
export const noPublicIp: ResourceValidationPolicy = {
  name: "no-public-ip",
  description: "Virtual machines have no public IP address unless allowed by name.",
  severity: "high",
  configSchema: noPublicIpSchema,
  validateResource: validateKinds(["VirtualMachine"], (vm, args, reportViolation) => {
    const config = settings<NoPublicIpConfig>(args, noPublicIpSchema);
    if (publicIpNotAllowed(vm, args.name, config)) {
      reportViolation(
        `VM ${args.name} asks for a public IP (allocatePublicIp: true); reach it through a VM allowed one, or ` +
          "add its name to `allowedNames`.",
      );
    }
  }),
  remediateResource: remediateKinds(["VirtualMachine"], (vm, args) => {
    if (!publicIpNotAllowed(vm, args.name, settings<NoPublicIpConfig>(args, noPublicIpSchema))) return false;
    vm.allocatePublicIp = false;
    return true;
  }),
};

/** The kinds that have a `teamId` (a resource group). */
export const groupedKinds = ["VirtualMachine", "GpuVirtualMachine", "Volume"] as const;
type GroupedKind = (typeof groupedKinds)[number];

/** Config of `require-resource-group`. */
export interface RequireResourceGroupConfig {
  /** The kinds checked. Default: every kind with a `teamId`: VirtualMachine, GpuVirtualMachine, Volume. */
  kinds: GroupedKind[];
  /** Resource group (team id) that remediation sets on resources without one. Default none: no remediation. */
  defaultTeamId?: number;
}

const requireResourceGroupSchema: PolicyConfigSchema = {
  properties: {
    kinds: {
      type: "array",
      items: { type: "string", enum: [...groupedKinds] },
      default: [...groupedKinds],
      description: "The kinds checked (those with a teamId).",
    },
    defaultTeamId: {
      type: "integer",
      minimum: 1,
      description: "Resource group (team id) that remediation sets on resources without one.",
    },
  },
};

/** Whether a `teamId` is given: a value not known yet (an output of a group being created) counts as given. */
function hasTeam(props: { teamId?: number | string | null }): boolean {
  const teamId = peek(() => props.teamId);
  return !teamId.known || (teamId.value !== undefined && teamId.value !== null);
}

/**
 * Every VM, GPU VM and volume is in a resource group (`teamId` set). A `teamId` that is an output of a group being
 * created in the same preview counts as set. Remediation sets `defaultTeamId`, when configured.
 */
export const requireResourceGroup: ResourceValidationPolicy = {
  name: "require-resource-group",
  description: "Virtual machines, GPU virtual machines and volumes belong to a resource group (teamId).",
  severity: "low",
  configSchema: requireResourceGroupSchema,
  validateResource: validateKinds(groupedKinds, (props, args, reportViolation) => {
    const config = settings<RequireResourceGroupConfig>(args, requireResourceGroupSchema);
    if (!config.kinds.includes(args.kind) || hasTeam(props)) return;
    reportViolation(
      `${args.kind} ${args.name} has no teamId: give it a resource group (e.g. a ResourceGroup's teamId).`,
    );
  }),
  remediateResource: remediateKinds(groupedKinds, (props, args) => {
    const config = settings<RequireResourceGroupConfig>(args, requireResourceGroupSchema);
    if (config.defaultTeamId === undefined || !config.kinds.includes(args.kind) || hasTeam(props)) return false;
    props.teamId = config.defaultTeamId;
    return true;
  }),
};

/** Config of `max-api-key-lifetime`. */
export interface MaxApiKeyLifetimeConfig {
  /** Most days an API key may be valid (`expiresInDays`; left out, the API gives 90). Default 90. */
  maxDays: number;
}

const maxApiKeyLifetimeSchema: PolicyConfigSchema = {
  properties: {
    maxDays: {
      type: "integer",
      minimum: 1,
      maximum: 3650,
      default: 90,
      description: "Most days an API key may be valid.",
    },
  },
};

/** The API's validity of a key created without `expiresInDays`. */
const API_DEFAULT_DAYS = 90;

/**
 * An API key expires within `maxDays` (`expiresInDays`, 90 when left out, as the API does). Remediation sets
 * `expiresInDays` to `maxDays` (on an existing key that is a replacement).
 */
export const maxApiKeyLifetime: ResourceValidationPolicy = {
  name: "max-api-key-lifetime",
  description: "API keys expire within the maximum number of days.",
  severity: "high",
  configSchema: maxApiKeyLifetimeSchema,
  validateResource: validateKinds(["ApiKey"], (key, args, reportViolation) => {
    const { maxDays } = settings<MaxApiKeyLifetimeConfig>(args, maxApiKeyLifetimeSchema);
    const days = key.expiresInDays ?? API_DEFAULT_DAYS;
    if (days <= maxDays) return;
    const given = key.expiresInDays === undefined ? `no expiresInDays (the API gives ${API_DEFAULT_DAYS})` : "";
    reportViolation(`${given === "" ? `expiresInDays ${days}` : given} > maxDays ${maxDays}.`);
  }),
  remediateResource: remediateKinds(["ApiKey"], (key, args) => {
    const { maxDays } = settings<MaxApiKeyLifetimeConfig>(args, maxApiKeyLifetimeSchema);
    if ((key.expiresInDays ?? API_DEFAULT_DAYS) <= maxDays) return false;
    key.expiresInDays = maxDays;
    return true;
  }),
};

// ---------------------------------------------------------------- memberships

/** The values of a list output, or [] while unknown or not given. */
function known(read: () => unknown): unknown[] {
  const value = peek(read);
  return value.known && Array.isArray(value.value) ? value.value : [];
}
const idOf = (read: () => unknown): string | undefined => {
  const value = peek(read);
  return value.known && value.value !== undefined && value.value !== null ? String(value.value) : undefined;
};

/**
 * Stack policy: a group's memberships (or a user's roles) are managed in one place. A ResourceGroup whose `members`
 * the program gives makes them match on every `up`, removing a member added by a ResourceGroupMember or a User's
 * `teamIds` of the same stack; a User whose `roleNames` the program gives revokes a role granted by a UserRole.
 * Only what one stack holds is seen.
 */
export const singleMembershipOwner: StackValidationPolicy = {
  name: "single-membership-owner",
  description:
    "A resource group's members and a user's roles are managed in one place: the inline list, or the ResourceGroupMember and UserRole resources, not both.",
  severity: "medium",
  validateStack: validateStackKinds(
    ["ResourceGroup", "ResourceGroupMember", "User", "UserRole"],
    (resources, args, reportViolation) => {
      const owners = new Map<string, string>();
      for (const r of resources) {
        if (r.kind !== "ResourceGroup") continue;
        const members = peek(() => (r.props as { members?: unknown }).members);
        const teamId = idOf(() => (r.props as { teamId?: unknown }).teamId);
        if (members.known && members.value !== undefined && teamId !== undefined) owners.set(teamId, r.name);
      }
      for (const r of resources) {
        if (r.kind !== "User") continue;
        const props = r.props as { teamIds?: unknown };
        for (const teamId of known(() => props.teamIds).map(String)) {
          const group = owners.get(teamId);
          if (group !== undefined) {
            reportViolation(
              `User ${r.name} joins resource group ${teamId} through teamIds, whose members ResourceGroup ${group} ` +
                "lists: the group's `members` remove whoever it does not list. Manage the membership in one place.",
              r.urn,
            );
          }
        }
      }
      for (const r of resources) {
        const props = r.props as { teamId?: unknown; userId?: unknown };
        if (r.kind === "ResourceGroupMember") {
          const teamId = idOf(() => props.teamId);
          const group = teamId === undefined ? undefined : owners.get(teamId);
          if (group !== undefined) {
            reportViolation(
              `ResourceGroupMember ${r.name} adds a member to resource group ${teamId}, whose members ResourceGroup ` +
                `${group} lists: the group's \`members\` remove it again. Leave \`members\` out of ${group}, or list the user there.`,
              r.urn,
            );
          }
        }
        if (r.kind === "UserRole") {
          // The stack's resources carry no ids: the User is the one `userId` was taken from.
          const from = args.resources.find((x) => x.urn === r.urn)?.propertyDependencies?.userId ?? [];
          const user = from.find((u) => {
            if (kindOf(u.type) !== "User") return false;
            const roles = peek(() => (u.props as { roleNames?: unknown }).roleNames);
            return roles.known && roles.value !== undefined;
          })?.name;
          if (user !== undefined) {
            reportViolation(
              `UserRole ${r.name} grants a role to user ${user}, whose roleNames the program gives: they revoke ` +
                `it again. Leave \`roleNames\` out of ${user}, or list the role there.`,
              r.urn,
            );
          }
        }
      }
    },
  ),
};

/** Every policy of the pack, by the name of its setting in `CloudinfraGuardArgs`. */
export const policies = {
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
  gpuCapacity,
  deployingKeyPermissions,
};

/** The setting names of {@link policies}. */
export type PolicyKey = keyof typeof policies;
