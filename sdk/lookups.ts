// Written by `npm run sdk-gen` from dataFunctions (provider/resources/lookups.ts): never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import type { GpuVirtualMachine } from "./gpu-virtual-machine";
import type { Network } from "./network";
import type { ResourceGroup } from "./resource-group";
import type { User } from "./user";
import type { VirtualMachine } from "./virtual-machine";
import type { Volume } from "./volume";
import { inProgram, providerModules } from "./data-context";

// The read side: one resource by id or exact name, lists with the API's filters, and who the caller is. The calls run
// in the program's process with its configuration (as getGpuInventory does); the plugin SDK offers the same functions
// as invokes `cloudinfra:index:<name>`. Types are written against the SDK classes, never the zod contract.

/** The plain value of each output of a resource class (what a lookup returns of it), with `id` as text. */
export type OutputsOf<R, Secret extends string = never> = {
  [
    K in Exclude<keyof R, "urn" | "id" | Secret> as R[K] extends pulumi.Output<unknown> ? K : never
  ]: R[K] extends pulumi.Output<infer T> ? T : never;
} & {
  /** The resource's id (its Pulumi id: use it where an input takes this resource's id). */
  id: string;
};

/** Arguments of a function, each of which may be an output of another resource. */
export type InputsOf<T> = { [K in keyof T]: pulumi.Input<T[K]> };

/** Where a function runs: `parent` is accepted for symmetry with the plugin SDK, whose invokes also take `provider`. */
export type LookupOptions = pulumi.InvokeOptions;

/** The arguments every function accepts. */
export interface EntityArgs {
  /** Entity (UUID) to read in: a child entity of the configured one. Default: the configured entity. */
  entityId?: string;
}

/** Validates the arguments as the plugin does (a failure names the argument and the fix), then calls the function. */
async function call<T>(name: string, args: object): Promise<T> {
  const fn = (await providerModules()).dataFunctions[name]!;
  const plain = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  const parsed = fn.args.safeParse(plain);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) => {
      const property = issue.path.join(".");
      return property ? `\`${property}\` ${issue.message}` : issue.message;
    });
    throw new pulumi.RunError(`${name}: ${reasons.join("; ")}`);
  }
  return inProgram(name, async (ctx) => (await fn.call(ctx, parsed.data as never)) as T);
}

function output<A extends object, T>(name: string, args: InputsOf<A>): pulumi.Output<T> {
  return pulumi.output(args).apply((plain) => call<T>(name, plain as object));
}

/** A VM with an interface on a network (`GET /resource/networks/{id}/virtual-machines`). */
export interface NetworkVirtualMachine {
  /** VM id (UUID). */
  id: string;
  /** VM name. */
  name: string;
  /** VM status, e.g. `Running`. */
  status: string;
  /** The VM's private address on this network. */
  privateIp: string;
  /** Whether this network is the VM's primary interface. */
  primary: boolean;
  /**
   * What the API reports of the VM beyond the members above (the spec does not name the fields of this answer), as it
   * sends it; absent when nothing more.
   */
  other?: Record<string, unknown>;
}

/**
 * A VM of a volume's data center, with its current and maximum volume counts (`GET
 * /resource/volumes/{id}/available-virtual-machines`).
 */
export interface AttachableVirtualMachine {
  /** VM id (UUID). */
  id: string;
  /** VM name. */
  name: string;
  /** The VM's data center (UUID): the volume's. */
  datacenterId: string;
  /** Volumes attached to the VM now. */
  currentVolumeCount: number;
  /** Most volumes the VM can have attached: below it, the volume can be attached. */
  maxVolumeCount: number;
  /**
   * What the API reports of the VM beyond the members above (the spec does not name the fields of this answer), as it
   * sends it; absent when nothing more.
   */
  other?: Record<string, unknown>;
}

/** An API key as `GET /auth/api-keys` lists it: never its secret. */
export interface ApiKeySummary {
  /** Key id. */
  id: string;
  /** Display name (not unique). */
  name: string;
  /** Leading characters of the key, its prefix `svc_` included: never the key. */
  start: string;
  /** `Active`, `Expiring` (within 30 days of expiry; still authenticates), `Suspended` or `Expired`. */
  status: "Active" | "Expiring" | "Suspended" | "Expired";
  /** Expiry (ISO 8601). */
  expiresAt: string;
  /** Creation time (ISO 8601). */
  createdAt: string;
  /** The role the key is limited to, when the API reports one. */
  roleId?: string;
  /** The user the key belongs to (UUID), when the API reports it. */
  userId?: string;
  /** Whether the key is enabled (not suspended), when the API reports it. */
  enabled?: boolean;
  /** Last use (ISO 8601), when the API reports one. */
  lastUsedAt?: string;
}

/** A role the signed-in user may give a new API key (`GET /auth/api-keys/options/roles`). */
export interface ApiKeyRoleOption {
  /** The role's id: what an ApiKey's `roleId` takes. */
  id: string;
  /** The role's name. */
  name: string;
  /** What the role may do. */
  description: string;
  /**
   * What the API reports of the role beyond the members above (the spec does not name the fields of this answer), as
   * it sends it; absent when nothing more.
   */
  other?: Record<string, unknown>;
}

/** An expiry the API offers for new API keys (`GET /auth/api-keys/options/expiration`). */
export interface ApiKeyExpirationOption {
  /** Days of validity: what an ApiKey's `expiresInDays` takes. */
  days: number;
  /** How the API names the choice, e.g. "90 days". */
  label: string;
  /**
   * What the API reports of the choice beyond the members above (the spec does not name the fields of this answer),
   * as it sends it; absent when nothing more.
   */
  other?: Record<string, unknown>;
}

/**
 * A VM as its list item reports it (the list does not carry the detail: look a VM up with getVirtualMachine for it).
 */
export interface VirtualMachineSummary {
  /** VM id (UUID). */
  id: string;
  /** Name (not unique). */
  name: string;
  /** Status, e.g. `Running`. */
  status: string;
  /** Data center (UUID). */
  datacenterId: string;
  /** Data center name. */
  datacenterName: string;
  /** Image name. */
  imageName: string;
  /** vCPUs. */
  cpu: number;
  /** RAM in GB. */
  ram: number;
  /** Disk in GB. */
  disk: number;
  /** Primary private address, or null. */
  privateIp: string | null;
  /** Primary public address, or null. */
  publicIp: string | null;
  /** Resource group (integer id), when the API reports it. */
  teamId?: number;
  /** Creation time (ISO 8601). */
  createdAt: string;
  /** Last change (ISO 8601). */
  updatedAt: string;
}

// ---------------------------------------------------------------- getCaller

/** The arguments of {@link getCaller}. */
export type GetCallerArgs = EntityArgs;

/** What {@link getCaller} returns. */
export interface GetCallerResult {
  /** The signed-in user (UUID); for an API key, the user it belongs to. */
  userId: string;
  /** The user's email. */
  email: string;
  /** The user's name. */
  name: string;
  /** The user's roles. */
  roles: string[];
  /** The user's permissions. */
  permissions: string[];
  /** The active entity (UUID): where the provider acts. */
  entityId: string;
  /** The active entity's name. */
  entityName: string;
}

/**
 * Who the configured credentials are (`GET /auth/check`): user, roles and permissions, and the entity acted in.
 *
 * @example
 * const caller = await getCaller();
 */
export function getCaller(args: GetCallerArgs = {}, opts?: LookupOptions): Promise<GetCallerResult> {
  void opts;
  return call("getCaller", args);
}

/** {@link getCaller} with arguments that may be outputs; the result is an output. */
export function getCallerOutput(
  args: InputsOf<GetCallerArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetCallerResult> {
  void opts;
  return output("getCaller", args);
}

// ---------------------------------------------------------------- getNetworkVirtualMachines

/** The arguments of {@link getNetworkVirtualMachines}. */
export interface GetNetworkVirtualMachinesArgs extends EntityArgs {
  /** The network's id (UUID). */
  id?: string;
  /** The network's name, matched exactly (as getNetwork matches it): an error when none or several match. */
  name?: string;
}

/** What {@link getNetworkVirtualMachines} returns. */
export interface GetNetworkVirtualMachinesResult {
  /** The network's id (UUID). */
  networkId: string;
  /** Every VM with an interface on the network, in the API's order. */
  virtualMachines: NetworkVirtualMachine[];
}

/**
 * The VMs with an interface on a network (`GET /resource/networks/{id}/virtual-machines`), the network by id or by
 * exact name (found as getNetwork finds it).
 *
 * @example
 * const { virtualMachines } = await getNetworkVirtualMachines({ name: "my-network" });
 */
export function getNetworkVirtualMachines(
  args: GetNetworkVirtualMachinesArgs,
  opts?: LookupOptions,
): Promise<GetNetworkVirtualMachinesResult> {
  void opts;
  return call("getNetworkVirtualMachines", args);
}

/** {@link getNetworkVirtualMachines} with arguments that may be outputs; the result is an output. */
export function getNetworkVirtualMachinesOutput(
  args: InputsOf<GetNetworkVirtualMachinesArgs>,
  opts?: LookupOptions,
): pulumi.Output<GetNetworkVirtualMachinesResult> {
  void opts;
  return output("getNetworkVirtualMachines", args);
}

// ---------------------------------------------------------------- getAttachableVirtualMachines

/** The arguments of {@link getAttachableVirtualMachines}. */
export interface GetAttachableVirtualMachinesArgs extends EntityArgs {
  /** The volume's id (UUID). */
  id?: string;
  /** The volume's name, matched exactly (as getVolume matches it): an error when none or several match. */
  name?: string;
}

/** What {@link getAttachableVirtualMachines} returns. */
export interface GetAttachableVirtualMachinesResult {
  /** The volume's id (UUID). */
  volumeId: string;
  /** Every VM in the volume's data center, with its current and maximum volume counts, in the API's order. */
  virtualMachines: AttachableVirtualMachine[];
}

/**
 * The VMs a volume can be attached to: those of its data center, with their current and maximum volume counts (`GET
 * /resource/volumes/{id}/available-virtual-machines`), the volume by id or by exact name (found as getVolume finds
 * it).
 *
 * @example
 * const { virtualMachines } = await getAttachableVirtualMachines({ name: "my-volume" });
 */
export function getAttachableVirtualMachines(
  args: GetAttachableVirtualMachinesArgs,
  opts?: LookupOptions,
): Promise<GetAttachableVirtualMachinesResult> {
  void opts;
  return call("getAttachableVirtualMachines", args);
}

/** {@link getAttachableVirtualMachines} with arguments that may be outputs; the result is an output. */
export function getAttachableVirtualMachinesOutput(
  args: InputsOf<GetAttachableVirtualMachinesArgs>,
  opts?: LookupOptions,
): pulumi.Output<GetAttachableVirtualMachinesResult> {
  void opts;
  return output("getAttachableVirtualMachines", args);
}

// ---------------------------------------------------------------- getApiKey

/** The arguments of {@link getApiKey}. */
export interface GetApiKeyArgs extends EntityArgs {
  /** The key's id. */
  id?: string;
  /** The key's name, matched exactly: an error when none or several match. */
  name?: string;
}

/** What {@link getApiKey} returns. */
export interface GetApiKeyResult {
  /** Key id. */
  id: string;
  /** Display name (not unique). */
  name: string;
  /** Leading characters of the key, its prefix `svc_` included: never the key. */
  start: string;
  /** `Active`, `Expiring` (within 30 days of expiry; still authenticates), `Suspended` or `Expired`. */
  status: "Active" | "Expiring" | "Suspended" | "Expired";
  /** Expiry (ISO 8601). */
  expiresAt: string;
  /** Creation time (ISO 8601). */
  createdAt: string;
  /** The role the key is limited to, when the API reports one. */
  roleId?: string;
  /** The user the key belongs to (UUID), when the API reports it. */
  userId?: string;
  /** Whether the key is enabled (not suspended), when the API reports it. */
  enabled?: boolean;
  /** Last use (ISO 8601), when the API reports one. */
  lastUsedAt?: string;
}

/**
 * One API key of the entity, by id or by exact name (`GET /auth/api-keys`, every page): its name, start, status,
 * expiry and role, never its secret. No match is an error naming the closest names; several an error listing their
 * ids (look up by id then).
 *
 * @example
 * const key = await getApiKey({ name: "ci" });
 */
export function getApiKey(args: GetApiKeyArgs, opts?: LookupOptions): Promise<GetApiKeyResult> {
  void opts;
  return call("getApiKey", args);
}

/** {@link getApiKey} with arguments that may be outputs; the result is an output. */
export function getApiKeyOutput(args: InputsOf<GetApiKeyArgs>, opts?: LookupOptions): pulumi.Output<GetApiKeyResult> {
  void opts;
  return output("getApiKey", args);
}

// ---------------------------------------------------------------- getApiKeys

/** The filters of {@link getApiKeys} (the API's filters of its list); every one is optional. */
export interface GetApiKeysArgs extends EntityArgs {
  /**
   * Only keys in this status (e.g. `Expiring`: every key within 30 days of its expiry), matched on what the list
   * reports (the route's query has no such filter).
   */
  status?: "Active" | "Expiring" | "Suspended" | "Expired";
  /**
   * The API's order of the list, `field:direction` (direction `asc` or `desc`); the API's default is
   * `createdAt:desc`. When given, the result keeps the API's order; without it the result is sorted by name, then id.
   */
  sort?: string;
  /** Only keys whose name contains this text (the API's case-insensitive partial match). */
  search?: string;
}

/** What {@link getApiKeys} returns. */
export interface GetApiKeysResult {
  /** Every key the arguments select (every page read): by name then id, or in the API's order when `sort` is given. */
  apiKeys: ApiKeySummary[];
  /** How many there are. */
  count: number;
}

/**
 * Every API key of the entity the arguments select (`GET /auth/api-keys`, the API's documented query; each page read,
 * 100 per request), and `status` among them: names, starts, statuses, expiries and roles, never a secret. Sorted by
 * name then id unless `sort` asks the API for its order.
 *
 * @example
 * const { apiKeys, count } = await getApiKeys({});
 */
export function getApiKeys(args: GetApiKeysArgs = {}, opts?: LookupOptions): Promise<GetApiKeysResult> {
  void opts;
  return call("getApiKeys", args);
}

/** {@link getApiKeys} with arguments that may be outputs; the result is an output. */
export function getApiKeysOutput(
  args: InputsOf<GetApiKeysArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetApiKeysResult> {
  void opts;
  return output("getApiKeys", args);
}

// ---------------------------------------------------------------- getApiKeyOptions

/** getApiKeyOptions takes no arguments. */
export type GetApiKeyOptionsArgs = Record<string, never>;

/** What {@link getApiKeyOptions} returns. */
export interface GetApiKeyOptionsResult {
  /** The roles the signed-in user may give a new key (an ApiKey's `roleId`), in the API's order. */
  roles: ApiKeyRoleOption[];
  /** The expiry choices the API offers for new keys (an ApiKey's `expiresInDays`), in the API's order. */
  expirations: ApiKeyExpirationOption[];
}

/**
 * What the API offers the signed-in user for new API keys: the roles (`GET /auth/api-keys/options/roles`) and the
 * expiry choices (`GET /auth/api-keys/options/expiration`). Session only: it needs `cloudinfra:email`,
 * `cloudinfra:password` and `cloudinfra:totpSecret` (or `cloudinfra:sessionToken`); with only an API key configured
 * it fails, saying so, before any request.
 *
 * @example
 * const { roles, expirations } = await getApiKeyOptions();
 */
export function getApiKeyOptions(
  args: GetApiKeyOptionsArgs = {},
  opts?: LookupOptions,
): Promise<GetApiKeyOptionsResult> {
  void opts;
  return call("getApiKeyOptions", args);
}

/** {@link getApiKeyOptions} with arguments that may be outputs; the result is an output. */
export function getApiKeyOptionsOutput(
  args: InputsOf<GetApiKeyOptionsArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetApiKeyOptionsResult> {
  void opts;
  return output("getApiKeyOptions", args);
}

// ---------------------------------------------------------------- getVirtualMachineMetrics

/** The arguments of {@link getVirtualMachineMetrics}. */
export interface GetVirtualMachineMetricsArgs extends EntityArgs {
  /** Start of the period measured (ISO 8601 with offset). The API's default: the start of the current month. */
  currentPeriodStart?: string;
  /** End of the period measured (ISO 8601 with offset). The API's default: now. */
  currentPeriodEnd?: string;
  /** Start of the period compared with (ISO 8601 with offset), for the trends. */
  comparisonPeriodStart?: string;
  /** End of the period compared with (ISO 8601 with offset), for the trends. */
  comparisonPeriodEnd?: string;
  /** Only these VM size categories (their codes, comma-separated). */
  categories?: string;
  /** Only these data centers (UUIDs). */
  datacenters?: string[];
  /** `true`: each data center lists the names of its VMs (the API's default: `false`). */
  includeVmNames?: boolean;
}

/** What {@link getVirtualMachineMetrics} returns. */
export interface GetVirtualMachineMetricsResult {
  /** The periods measured and compared (ISO 8601). */
  period: {
    /** Start of the current period (ISO 8601). */
    currentPeriodStart: string;
    /** End of the current period (ISO 8601). */
    currentPeriodEnd: string;
    /** Start of the comparison period (ISO 8601). */
    comparisonPeriodStart: string;
    /** End of the comparison period (ISO 8601). */
    comparisonPeriodEnd: string;
  };
  /** Totals of the period: VMs, vCPUs, RAM and disk (GB), with the trend of the VM count (`up`, `down` or `stable`). */
  summary: {
    /** VMs. */
    totalVms: number;
    /** vCPUs of all VMs. */
    totalCpu: number;
    /** RAM of all VMs, in GB. */
    totalRam: number;
    /** Disk of all VMs, in GB. */
    totalDisk: number;
    /** The trend of the VM count. */
    trend: {
      /** `up`, `down` or `stable`: the current period against the comparison period. */
      direction: "up" | "down" | "stable";
      /** The value in the current period. */
      current: number;
      /** The value in the comparison period. */
      previous: number;
      /** The change from the comparison period (percent). */
      change: number;
    };
  };
  /**
   * By VM size category: its tiers (configurations, with specs), each by region and data center, with VM counts and
   * trends.
   */
  categories: {
    /** The size category's code. */
    code: string;
    /** VMs of the category. */
    vmCount: number;
    /** The trend of the category's VM count. */
    trend: {
      /** `up`, `down` or `stable`: the current period against the comparison period. */
      direction: "up" | "down" | "stable";
      /** The value in the current period. */
      current: number;
      /** The value in the comparison period. */
      previous: number;
      /** The change from the comparison period (percent). */
      change: number;
    };
    /** By tier: the configurations of the category. */
    tiers: {
      /** The configuration (integer id). */
      configurationId: number;
      /** The configuration's name. */
      name: string;
      /** The configuration's size. */
      specs: {
        /** vCPUs. */
        cpu: number;
        /** RAM in GB. */
        ram: number;
        /** Disk in GB. */
        disk: number;
      };
      /** VMs of the configuration. */
      vmCount: number;
      /** The trend of the configuration's VM count. */
      trend: {
        /** `up`, `down` or `stable`: the current period against the comparison period. */
        direction: "up" | "down" | "stable";
        /** The value in the current period. */
        current: number;
        /** The value in the comparison period. */
        previous: number;
        /** The change from the comparison period (percent). */
        change: number;
      };
      /** By region. */
      regions: {
        /** The region. */
        region: string;
        /** VMs of the configuration in the region. */
        vmCount: number;
        /** By data center. */
        datacenters: {
          /** Data center (UUID). */
          id: string;
          /** Data center name. */
          name: string;
          /** VMs of the configuration in the data center. */
          vmCount: number;
          /** Their names (with `includeVmNames`). */
          vmNames?: string[];
        }[];
      }[];
    }[];
  }[];
  /**
   * What the API reports of the metrics beyond the members above (the spec does not name the fields of this answer),
   * as it sends it; absent when nothing more.
   */
  other?: Record<string, unknown>;
}

/**
 * VM metrics of a period (`GET /metrics/virtual-machines`, its documented query): totals, then by size category,
 * tier, region and data center, with VM counts, specs and trends against a comparison period.
 *
 * @example
 * const metrics = await getVirtualMachineMetrics({ includeVmNames: true });
 */
export function getVirtualMachineMetrics(
  args: GetVirtualMachineMetricsArgs = {},
  opts?: LookupOptions,
): Promise<GetVirtualMachineMetricsResult> {
  void opts;
  return call("getVirtualMachineMetrics", args);
}

/** {@link getVirtualMachineMetrics} with arguments that may be outputs; the result is an output. */
export function getVirtualMachineMetricsOutput(
  args: InputsOf<GetVirtualMachineMetricsArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetVirtualMachineMetricsResult> {
  void opts;
  return output("getVirtualMachineMetrics", args);
}

// ---------------------------------------------------------------- getEntityUsage

/** The arguments of {@link getEntityUsage}. */
export interface GetEntityUsageArgs extends EntityArgs {
  /** The entity (UUID) whose usage to read. Default: `entityId`, else the configured entity. */
  id?: string;
  /** The month (`YYYY-MM`, not in the future; see getUsageMonths). The API's default: the current month. */
  month?: string;
}

/** What {@link getEntityUsage} returns. */
export interface GetEntityUsageResult {
  /** The entity (UUID). */
  entityId: string;
  /** The month (`YYYY-MM`). */
  month: string;
  /** The month's usage: VMs, vCPU hours, RAM and disk GB hours. */
  summary: {
    /** VMs. */
    vmCount: number;
    /** vCPU hours. */
    cpuHours: number;
    /** RAM GB hours. */
    ramGbHours: number;
    /** Disk GB hours. */
    diskGbHours: number;
  };
  /** The usage by VM size category (its code). */
  byCategory: {
    /** VMs. */
    vmCount: number;
    /** vCPU hours. */
    cpuHours: number;
    /** RAM GB hours. */
    ramGbHours: number;
    /** Disk GB hours. */
    diskGbHours: number;
    /** The size category's code. */
    code: string;
  }[];
  /** The usage by region. */
  byRegion: {
    /** VMs. */
    vmCount: number;
    /** vCPU hours. */
    cpuHours: number;
    /** RAM GB hours. */
    ramGbHours: number;
    /** Disk GB hours. */
    diskGbHours: number;
    /** The region. */
    region: string;
  }[];
  /**
   * What the API reports of the usage beyond the members above (the spec does not name the fields of this answer), as
   * it sends it; absent when nothing more.
   */
  other?: Record<string, unknown>;
}

/**
 * An entity's usage of a month (`GET /metrics/entity/{id}/usage`): a summary, and the same by VM size category and by
 * region.
 *
 * @example
 * const usage = await getEntityUsage({ month: "2026-01" });
 */
export function getEntityUsage(args: GetEntityUsageArgs = {}, opts?: LookupOptions): Promise<GetEntityUsageResult> {
  void opts;
  return call("getEntityUsage", args);
}

/** {@link getEntityUsage} with arguments that may be outputs; the result is an output. */
export function getEntityUsageOutput(
  args: InputsOf<GetEntityUsageArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetEntityUsageResult> {
  void opts;
  return output("getEntityUsage", args);
}

// ---------------------------------------------------------------- getUsageMonths

/** The arguments of {@link getUsageMonths}. */
export interface GetUsageMonthsArgs extends EntityArgs {
  /** The entity (UUID) whose usage to read. Default: `entityId`, else the configured entity. */
  id?: string;
}

/** What {@link getUsageMonths} returns. */
export interface GetUsageMonthsResult {
  /** The months with usage to read (`YYYY-MM`), most recent first: the last 24. */
  months: string[];
}

/**
 * The months whose usage can be read with getEntityUsage (`GET /metrics/entity/{id}/available-months`): `YYYY-MM`,
 * most recent first.
 *
 * @example
 * const usageMonths = await getUsageMonths();
 */
export function getUsageMonths(args: GetUsageMonthsArgs = {}, opts?: LookupOptions): Promise<GetUsageMonthsResult> {
  void opts;
  return call("getUsageMonths", args);
}

/** {@link getUsageMonths} with arguments that may be outputs; the result is an output. */
export function getUsageMonthsOutput(
  args: InputsOf<GetUsageMonthsArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetUsageMonthsResult> {
  void opts;
  return output("getUsageMonths", args);
}

// ---------------------------------------------------------------- getNetwork

/** The arguments of {@link getNetwork}: `id` or `name`, exactly one. */
export interface GetNetworkArgs extends EntityArgs {
  /** The network's id. */
  id?: string;
  /** The network's name, matched exactly: an error when none or several match. */
  name?: string;
}

/** What {@link getNetwork} returns: the outputs of the {@link Network} found, as on the resource. */
export type GetNetworkResult = OutputsOf<Network>;

/**
 * One network, by id or by exact name (every page of the API's partial-match search is read, and only exact matches
 * kept): its outputs, as a `Network` has them. No match is an error naming the name and the closest found; several
 * matches an error listing their ids and creation times (look up by id then).
 *
 * @example
 * const found = await getNetwork({ name: "my-network" });
 */
export function getNetwork(args: GetNetworkArgs, opts?: LookupOptions): Promise<GetNetworkResult> {
  void opts;
  return call("getNetwork", args);
}

/** {@link getNetwork} with arguments that may be outputs; the result is an output. */
export function getNetworkOutput(
  args: InputsOf<GetNetworkArgs>,
  opts?: LookupOptions,
): pulumi.Output<GetNetworkResult> {
  void opts;
  return output("getNetwork", args);
}

// ---------------------------------------------------------------- getNetworks

/** The filters of {@link getNetworks} (the API's filters of its list); every one is optional. */
export interface GetNetworksArgs extends EntityArgs {
  /**
   * The API's order of the list, `field:direction` (direction `asc` or `desc`); the API's default is
   * `createdAt:desc`. When given, the result keeps the API's order; without it the result is sorted by name, then id.
   */
  sort?: string;
  /** Only networks whose name or CIDR block contains this text (the API's case-insensitive partial match). */
  search?: string;
  /** Only networks of this region (integer id). */
  regionId?: number;
  /** Only networks of this data center (UUID). */
  datacenterId?: string;
  /** Only networks of this type: `standard` or `custom`. */
  networkType?: "standard" | "custom";
}

/** What {@link getNetworks} returns. */
export interface GetNetworksResult {
  /**
   * Every network the arguments select (every page read): by name then id, or in the API's order when `sort` is
   * given.
   */
  networks: {
    id: string;
    name?: string;
    datacenterId?: string;
    networkType?: "standard" | "custom";
    description?: string;
    cidrBlock?: string;
    snatEnabled?: boolean;
    dhcpServerEnabled?: boolean;
    dhcpStartAddress?: string;
    dhcpEndAddress?: string;
    defaultRouteEnabled?: boolean;
    defaultRoute?: string;
    serveDNSServersEnabled?: boolean;
    dnsServers?: string[];
    /** Data center name, e.g. fra-1. */
    datacenterName: string;
    /** Status reported by the API (Active once created). */
    status: string;
    /** Gateway address of the network (the first host of the CIDR block). */
    gateway: string;
    /** Address ranges the API hands out to interfaces on this network. */
    allocationPools: {
      /** First address of the range. */
      start: string;
      /** Last address of the range. */
      end: string;
    }[];
    /** Creation time (ISO 8601). */
    createdAt: string;
    /** Last change (ISO 8601). */
    updatedAt: string;
  }[];
  /** How many there are. */
  count: number;
}

/**
 * Every network the arguments select, which are the API's documented query of its list (`/resource/networks`): each
 * page read (100 per request), sorted by name then id unless `sort` asks the API for its order.
 *
 * @example
 * const { networks, count } = await getNetworks({});
 */
export function getNetworks(args: GetNetworksArgs = {}, opts?: LookupOptions): Promise<GetNetworksResult> {
  void opts;
  return call("getNetworks", args);
}

/** {@link getNetworks} with arguments that may be outputs; the result is an output. */
export function getNetworksOutput(
  args: InputsOf<GetNetworksArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetNetworksResult> {
  void opts;
  return output("getNetworks", args);
}

// ---------------------------------------------------------------- getVolume

/** The arguments of {@link getVolume}: `id` or `name`, exactly one. */
export interface GetVolumeArgs extends EntityArgs {
  /** The volume's id. */
  id?: string;
  /** The volume's name, matched exactly: an error when none or several match. */
  name?: string;
}

/**
 * What {@link getVolume} returns: the outputs of the {@link Volume} found, as on the resource, and what the resource
 * leaves out because it moves with other resources (so that its refresh stays quiet): `status`, `virtualMachineId`.
 */
export type GetVolumeResult = OutputsOf<Volume> & {
  /**
   * The API's status: `Available` (attached to nothing; only then can it be deleted), `In-use` (attached), or one in
   * progress (`Creating`, `Attaching`, `Detaching`, `Resizing`, `Deleting`), or `Error`.
   */
  status: string;
  /** The VM the volume is attached to, if any. */
  virtualMachineId?: string;
};

/**
 * One volume, by id or by exact name (every page of the API's partial-match search is read, and only exact matches
 * kept): its outputs, as a `Volume` has them. No match is an error naming the name and the closest found; several
 * matches an error listing their ids and creation times (look up by id then).
 *
 * @example
 * const found = await getVolume({ name: "my-volume" });
 */
export function getVolume(args: GetVolumeArgs, opts?: LookupOptions): Promise<GetVolumeResult> {
  void opts;
  return call("getVolume", args);
}

/** {@link getVolume} with arguments that may be outputs; the result is an output. */
export function getVolumeOutput(args: InputsOf<GetVolumeArgs>, opts?: LookupOptions): pulumi.Output<GetVolumeResult> {
  void opts;
  return output("getVolume", args);
}

// ---------------------------------------------------------------- getVolumes

/** The filters of {@link getVolumes} (the API's filters of its list); every one is optional. */
export interface GetVolumesArgs extends EntityArgs {
  /**
   * The API's order of the list, `field:direction` (direction `asc` or `desc`); the API's default is
   * `createdAt:desc`. When given, the result keeps the API's order; without it the result is sorted by name, then id.
   */
  sort?: string;
  /** Only volumes whose name contains this text (the API's case-insensitive partial match). */
  search?: string;
  /** Only volumes attached to this VM (UUID). */
  virtualMachineId?: string;
  /** Only volumes in this status, e.g. `Available` or `In-use`. */
  status?: string;
  /** Only volumes of this resource group (integer id). */
  teamId?: number;
  /** Only volumes of this region (integer id). */
  regionId?: number;
  /** Only volumes of this data center (UUID). */
  datacenterId?: string;
  /** Only volumes of this volume type (its id; see `getVolumeSizes`). */
  volumeTypeId?: number;
  /** Only volumes of this volume size (its id; see `getVolumeSizes`). */
  volumeSizeId?: number;
  /** Only volumes of this size in GB. */
  sizeGb?: number;
}

/** What {@link getVolumes} returns. */
export interface GetVolumesResult {
  /**
   * Every volume the arguments select (every page read): by name then id, or in the API's order when `sort` is given.
   */
  volumes: {
    id: string;
    name?: string;
    datacenterId?: string;
    volumeTypeId?: number;
    sizeGb?: number;
    volumeSizeId?: number;
    teamId?: number;
    /** Data center name, e.g. `fra-1`. */
    datacenterName: string;
    /** Volume type name, e.g. `ssd`. */
    volumeTypeName: string;
    /** Creation time (ISO 8601). */
    createdAt: string;
    /**
     * The API's status: `Available` (attached to nothing; only then can it be deleted), `In-use` (attached), or one
     * in progress (`Creating`, `Attaching`, `Detaching`, `Resizing`, `Deleting`), or `Error`.
     */
    status: string;
    /** The VM the volume is attached to, if any. */
    virtualMachineId?: string;
  }[];
  /** How many there are. */
  count: number;
}

/**
 * Every volume the arguments select, which are the API's documented query of its list (`/resource/volumes`): each
 * page read (100 per request), sorted by name then id unless `sort` asks the API for its order.
 *
 * @example
 * const { volumes, count } = await getVolumes({});
 */
export function getVolumes(args: GetVolumesArgs = {}, opts?: LookupOptions): Promise<GetVolumesResult> {
  void opts;
  return call("getVolumes", args);
}

/** {@link getVolumes} with arguments that may be outputs; the result is an output. */
export function getVolumesOutput(
  args: InputsOf<GetVolumesArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetVolumesResult> {
  void opts;
  return output("getVolumes", args);
}

// ---------------------------------------------------------------- getVirtualMachine

/** The arguments of {@link getVirtualMachine}: `id` or `name`, exactly one. */
export interface GetVirtualMachineArgs extends EntityArgs {
  /** The virtual machine's id. */
  id?: string;
  /** The virtual machine's name, matched exactly: an error when none or several match. */
  name?: string;
}

/**
 * What {@link getVirtualMachine} returns: the outputs of the {@link VirtualMachine} found, as on the resource
 * (secrets excluded).
 */
export type GetVirtualMachineResult = OutputsOf<VirtualMachine, "sshPrivateKey">;

/**
 * One virtual machine, by id or by exact name (every page of the API's partial-match search is read, and only exact
 * matches kept): its outputs, as a `VirtualMachine` has them. No match is an error naming the name and the closest
 * found; several matches an error listing their ids and creation times (look up by id then).
 *
 * @example
 * const found = await getVirtualMachine({ name: "my-virtual-machine" });
 */
export function getVirtualMachine(args: GetVirtualMachineArgs, opts?: LookupOptions): Promise<GetVirtualMachineResult> {
  void opts;
  return call("getVirtualMachine", args);
}

/** {@link getVirtualMachine} with arguments that may be outputs; the result is an output. */
export function getVirtualMachineOutput(
  args: InputsOf<GetVirtualMachineArgs>,
  opts?: LookupOptions,
): pulumi.Output<GetVirtualMachineResult> {
  void opts;
  return output("getVirtualMachine", args);
}

// ---------------------------------------------------------------- getVirtualMachines

/** The filters of {@link getVirtualMachines} (the API's filters of its list); every one is optional. */
export interface GetVirtualMachinesArgs extends EntityArgs {
  /**
   * The API's order of the list, `field:direction` (direction `asc` or `desc`; fields `name`, `createdAt`,
   * `updatedAt`, `configuration`, `region`, `datacenter`); the API's default is `createdAt:desc`. When given, the
   * result keeps the API's order; without it the result is sorted by name, then id.
   */
  sort?: string;
  /** Only VMs whose name, private IP or public IP contains this text (the API's case-insensitive partial match). */
  search?: string;
  /** Only VMs of this resource group (integer id). */
  teamId?: number;
  /** Only VMs of this region (integer id). */
  regionId?: number;
  /** Only VMs of this data center (UUID). */
  datacenterId?: string;
  /** Only VMs of this configuration (integer id). */
  configurationId?: number;
  /** Only VMs of this image, by name. */
  imageName?: string;
  /** Only VMs in this status, e.g. `Running`. */
  status?: string;
}

/** What {@link getVirtualMachines} returns. */
export interface GetVirtualMachinesResult {
  /**
   * Every virtual machine the arguments select (every page read): by name then id, or in the API's order when `sort`
   * is given.
   */
  virtualMachines: VirtualMachineSummary[];
  /** How many there are. */
  count: number;
}

/**
 * Every virtual machine the arguments select, which are the API's documented query of its list
 * (`/resource/virtual-machines`): each page read (100 per request), sorted by name then id unless `sort` asks the API
 * for its order.
 *
 * @example
 * const { virtualMachines, count } = await getVirtualMachines({});
 */
export function getVirtualMachines(
  args: GetVirtualMachinesArgs = {},
  opts?: LookupOptions,
): Promise<GetVirtualMachinesResult> {
  void opts;
  return call("getVirtualMachines", args);
}

/** {@link getVirtualMachines} with arguments that may be outputs; the result is an output. */
export function getVirtualMachinesOutput(
  args: InputsOf<GetVirtualMachinesArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetVirtualMachinesResult> {
  void opts;
  return output("getVirtualMachines", args);
}

// ---------------------------------------------------------------- getGpuVirtualMachine

/** The arguments of {@link getGpuVirtualMachine}: `id` or `name`, exactly one. */
export interface GetGpuVirtualMachineArgs extends EntityArgs {
  /** The GPU virtual machine's id. */
  id?: string;
  /** The GPU virtual machine's name, matched exactly: an error when none or several match. */
  name?: string;
}

/**
 * What {@link getGpuVirtualMachine} returns: the outputs of the {@link GpuVirtualMachine} found, as on the resource
 * (secrets excluded).
 */
export type GetGpuVirtualMachineResult = OutputsOf<GpuVirtualMachine, "sshPrivateKey">;

/**
 * One GPU virtual machine, by id or by exact name (every page of the API's partial-match search is read, and only
 * exact matches kept): its outputs, as a `GpuVirtualMachine` has them. No match is an error naming the name and the
 * closest found; several matches an error listing their ids and creation times (look up by id then).
 *
 * @example
 * const found = await getGpuVirtualMachine({ name: "my-gpu-virtual-machine" });
 */
export function getGpuVirtualMachine(
  args: GetGpuVirtualMachineArgs,
  opts?: LookupOptions,
): Promise<GetGpuVirtualMachineResult> {
  void opts;
  return call("getGpuVirtualMachine", args);
}

/** {@link getGpuVirtualMachine} with arguments that may be outputs; the result is an output. */
export function getGpuVirtualMachineOutput(
  args: InputsOf<GetGpuVirtualMachineArgs>,
  opts?: LookupOptions,
): pulumi.Output<GetGpuVirtualMachineResult> {
  void opts;
  return output("getGpuVirtualMachine", args);
}

// ---------------------------------------------------------------- getGpuVirtualMachines

/** The filters of {@link getGpuVirtualMachines} (the API's filters of its list); every one is optional. */
export interface GetGpuVirtualMachinesArgs extends EntityArgs {
  /**
   * The API's order of the list, `field:direction` (direction `asc` or `desc`); the API's default is
   * `createdAt:desc`. When given, the result keeps the API's order; without it the result is sorted by name, then id.
   */
  sort?: string;
  /** Only GPU VMs whose name contains this text (the API's case-insensitive partial match). */
  search?: string;
  /** Only GPU VMs of this resource group (integer id). */
  teamId?: number;
}

/** What {@link getGpuVirtualMachines} returns. */
export interface GetGpuVirtualMachinesResult {
  /**
   * Every GPU virtual machine the arguments select (every page read): by name then id, or in the API's order when
   * `sort` is given.
   */
  gpuVirtualMachines: {
    id: string;
    name?: string;
    datacenterId?: string;
    seriesId?: number;
    gpuCount?: 1 | 2 | 4 | 8;
    teamId?: number;
    powerState?: "running" | "stopped";
    imageName?: string;
    /** Status reported by the API: Creating, Running, Stopped, Deleting or Error. */
    status: string;
    /** Public IPv4 address, once provisioned. */
    publicIp: string | null;
    /** URL of the GPU VM's JupyterLab, once it has its public IP. */
    jupyterLabUrl: string | null;
    /** The GPU series: integer id, name and code. */
    series: {
      /** Integer id of the series (the `seriesId` input). */
      id: number;
      /** Name of the series, e.g. NVIDIA A100. */
      name: string;
      /** Short code of the series, e.g. a100. */
      code: string;
    };
    /** The data center: id and name. */
    datacenter: {
      /** Data center (UUID). */
      id: string;
      /** Data center name, e.g. fra-1. */
      name: string;
    };
    /** Creation time (ISO 8601). */
    createdAt: string;
  }[];
  /** How many there are. */
  count: number;
}

/**
 * Every GPU virtual machine the arguments select, which are the API's documented query of its list (`/resource/gpu`):
 * each page read (100 per request), sorted by name then id unless `sort` asks the API for its order.
 *
 * @example
 * const { gpuVirtualMachines, count } = await getGpuVirtualMachines({});
 */
export function getGpuVirtualMachines(
  args: GetGpuVirtualMachinesArgs = {},
  opts?: LookupOptions,
): Promise<GetGpuVirtualMachinesResult> {
  void opts;
  return call("getGpuVirtualMachines", args);
}

/** {@link getGpuVirtualMachines} with arguments that may be outputs; the result is an output. */
export function getGpuVirtualMachinesOutput(
  args: InputsOf<GetGpuVirtualMachinesArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetGpuVirtualMachinesResult> {
  void opts;
  return output("getGpuVirtualMachines", args);
}

// ---------------------------------------------------------------- getResourceGroup

/** The arguments of {@link getResourceGroup}: `id` or `name`, exactly one. */
export interface GetResourceGroupArgs extends EntityArgs {
  /** The resource group's id. */
  id?: string;
  /** The resource group's name, matched exactly: an error when none or several match. */
  name?: string;
}

/** What {@link getResourceGroup} returns: the outputs of the {@link ResourceGroup} found, as on the resource. */
export type GetResourceGroupResult = OutputsOf<ResourceGroup>;

/**
 * One resource group, by id or by exact name (every page of the API's partial-match search is read, and only exact
 * matches kept): its outputs, as a `ResourceGroup` has them. No match is an error naming the name and the closest
 * found; several matches an error listing their ids and creation times (look up by id then).
 *
 * @example
 * const found = await getResourceGroup({ name: "my-resource-group" });
 */
export function getResourceGroup(args: GetResourceGroupArgs, opts?: LookupOptions): Promise<GetResourceGroupResult> {
  void opts;
  return call("getResourceGroup", args);
}

/** {@link getResourceGroup} with arguments that may be outputs; the result is an output. */
export function getResourceGroupOutput(
  args: InputsOf<GetResourceGroupArgs>,
  opts?: LookupOptions,
): pulumi.Output<GetResourceGroupResult> {
  void opts;
  return output("getResourceGroup", args);
}

// ---------------------------------------------------------------- getResourceGroups

/** The filters of {@link getResourceGroups} (the API's filters of its list); every one is optional. */
export interface GetResourceGroupsArgs extends EntityArgs {
  /**
   * The API's order of the list, `field:direction` (direction `asc` or `desc`); the API's default is `name:asc`. When
   * given, the result keeps the API's order; without it the result is sorted by name, then id.
   */
  sort?: string;
  /** Only resource groups whose name contains this text (the API's case-insensitive partial match). */
  search?: string;
  /**
   * Only resource groups of this entity (UUID): the active entity or one of its children (`entityId` instead acts in
   * that entity).
   */
  filterEntityId?: string;
}

/** What {@link getResourceGroups} returns. */
export interface GetResourceGroupsResult {
  /**
   * Every resource group the arguments select (every page read): by name then id, or in the API's order when `sort`
   * is given, without `members` (the list does not carry it: look one up for it).
   */
  resourceGroups: {
    id: string;
    name?: string;
    parentTeamId?: number;
    /** The integer group id (the Pulumi `id` is the same number as text). */
    teamId: number;
    /** The entity (UUID) the group belongs to. */
    entityId: string;
    /** Creation time (ISO 8601). */
    createdAt: string;
  }[];
  /** How many there are. */
  count: number;
}

/**
 * Every resource group the arguments select, which are the API's documented query of its list (`/teams`): each page
 * read (100 per request), sorted by name then id unless `sort` asks the API for its order.
 *
 * @example
 * const { resourceGroups, count } = await getResourceGroups({});
 */
export function getResourceGroups(
  args: GetResourceGroupsArgs = {},
  opts?: LookupOptions,
): Promise<GetResourceGroupsResult> {
  void opts;
  return call("getResourceGroups", args);
}

/** {@link getResourceGroups} with arguments that may be outputs; the result is an output. */
export function getResourceGroupsOutput(
  args: InputsOf<GetResourceGroupsArgs> = {},
  opts?: LookupOptions,
): pulumi.Output<GetResourceGroupsResult> {
  void opts;
  return output("getResourceGroups", args);
}

// ---------------------------------------------------------------- getUser

/** The arguments of {@link getUser}: `id` or `email`, exactly one. */
export interface GetUserArgs extends EntityArgs {
  /** The user's id. */
  id?: string;
  /** The user's email, matched exactly (case aside): an error when none or several match. */
  email?: string;
}

/** What {@link getUser} returns: the outputs of the {@link User} found, as on the resource (secrets excluded). */
export type GetUserResult = OutputsOf<User, "password">;

/**
 * One user, by id or by exact email (every page of the API's partial-match search is read, and only exact matches
 * kept): its outputs, as a `User` has them. No match is an error naming the email and the closest found; several
 * matches an error listing their ids and creation times (look up by id then).
 *
 * @example
 * const found = await getUser({ email: "someone@example.com" });
 */
export function getUser(args: GetUserArgs, opts?: LookupOptions): Promise<GetUserResult> {
  void opts;
  return call("getUser", args);
}

/** {@link getUser} with arguments that may be outputs; the result is an output. */
export function getUserOutput(args: InputsOf<GetUserArgs>, opts?: LookupOptions): pulumi.Output<GetUserResult> {
  void opts;
  return output("getUser", args);
}

// ---------------------------------------------------------------- getUsers

/** The filters of {@link getUsers} (the API's filters of its list); every one is optional. */
export interface GetUsersArgs extends EntityArgs {
  /**
   * The API's order of the list, `field:direction` (direction `asc` or `desc`); the API's default is
   * `createdAt:desc`. When given, the result keeps the API's order; without it the result is sorted by email, then
   * id.
   */
  sort?: string;
  /** Only users whose email, first name or last name contains this text (the API's case-insensitive partial match). */
  search?: string;
  /**
   * Only users of this entity (UUID): the active entity or one of its children (`entityId` instead acts in that
   * entity).
   */
  filterEntityId?: string;
  /** Leave out the members of this resource group (integer id). */
  excludeTeamId?: number;
  /**
   * Only users with one of these invite statuses: `activated`, `pending` (invitation not accepted yet), `expired`
   * (invitation older than 7 days).
   */
  inviteStatus?: ("activated" | "pending" | "expired")[];
  /** Only members of this resource group (integer id); `0`: only users in no resource group. */
  teamId?: number;
  /** Only users holding this role (its id, e.g. `tenant-admin`); `"0"`: only users with no role. */
  roleId?: string;
  /** `true`: only users in no resource group. */
  noTeam?: boolean;
  /** `true`: only users with no role. */
  noRole?: boolean;
  /** Deleted users: left out (`exclude`, the API's default), `include`d, or `only` them. */
  deletedFilter?: "exclude" | "include" | "only";
}

/** What {@link getUsers} returns. */
export interface GetUsersResult {
  /**
   * Every user the arguments select (every page read): by email then id, or in the API's order when `sort` is given.
   */
  users: {
    id: string;
    email?: string;
    firstName?: string;
    lastName?: string;
    /** Roles held, sorted. */
    roleNames: string[];
    /** Ids of the resource groups the user belongs to, ascending. */
    teamIds: number[];
    entityId?: string;
    /** Display name: "first last", or the email when the user has no name. */
    name: string;
    /** Roles held, as the API lists them. */
    roles: string[];
    /** `activated`, `pending` (invitation not accepted yet) or `expired` (invitation older than 7 days). */
    inviteStatus: "activated" | "pending" | "expired";
    /** Always true: two-factor authentication is mandatory. */
    twoFactorEnabled: boolean;
    /** Creation time (ISO 8601). */
    createdAt: string;
    /** Last change time (ISO 8601). */
    updatedAt: string;
  }[];
  /** How many there are. */
  count: number;
}

/**
 * Every user the arguments select, which are the API's documented query of its list (`/users`): each page read (100
 * per request), sorted by email then id unless `sort` asks the API for its order.
 *
 * @example
 * const { users, count } = await getUsers({});
 */
export function getUsers(args: GetUsersArgs = {}, opts?: LookupOptions): Promise<GetUsersResult> {
  void opts;
  return call("getUsers", args);
}

/** {@link getUsers} with arguments that may be outputs; the result is an output. */
export function getUsersOutput(args: InputsOf<GetUsersArgs> = {}, opts?: LookupOptions): pulumi.Output<GetUsersResult> {
  void opts;
  return output("getUsers", args);
}
