import { ApiError, type CloudClient } from "../client";
import type { z } from "zod";
import { routes, type AttachableVm as AttachableVmSchema, type GpuInventoryEntry, type RouteSpec } from "../api";
import type { CheckFailure } from "./check";
import { callerOf, type Caller, type HandlerContext } from "./context";
import { sameValue } from "./diff";
import { containsUnknown, type Props } from "./props";
import type { Settings } from "./settings";

/**
 * Preview checks against the API's current state (DESIGN.md "Preview is a promise"): what `up` would be refused —
 * GPU capacity, attachability, permissions, names already held — fails the check, before anything is written. They
 * only read, and the reads are shared by the resources of a run (one per process: the plugin and the dynamic host
 * each serve one run): one GPU inventory, one caller check (the credentials check's own `GET /auth/check`), one name
 * index per kind, one list of attachable VMs per volume. A read that fails (5xx, timeout, refused) warns and lets the
 * preview go on. `cloudinfra:preflight` turns what they find into warnings (`warn`) or skips them (`off`).
 */

/** What one kind's preview check is given: the context, the previous inputs (empty on a create), the checked inputs. */
export interface PreflightCall {
  ctx: HandlerContext;
  /** The settings the kind calls the API with (an ApiKey's session). */
  used: Settings;
  olds: Props;
  news: Props;
  /** The reads shared by the resources of the run. */
  reads: RunReads;
  /**
   * The value of `read`, or undefined when it failed: then a warning names what could not be checked and why, and
   * the preview goes on.
   */
  read<T>(what: string, resource: string, read: () => Promise<T>): Promise<T | undefined>;
}

/** A kind's preview check: the failures `up` would meet (each naming the property, what the API holds and the fix). */
export type PreflightCheck = (call: PreflightCall) => Promise<CheckFailure[]>;

type AttachableVm = z.output<typeof AttachableVmSchema>;

/** No previous inputs: the resource is being created. */
export const isCreate = (olds: Props) => Object.keys(olds).filter((k) => k !== "__provider").length === 0;

const known = (...values: unknown[]) => values.every((v) => v !== undefined && v !== null && !containsUnknown(v));

/** The time of a read, for messages: what preview saw was true then. */
const at = (time: Date) => `at ${time.toISOString()}, when this preview ran`;

// ---------------------------------------------------------------- the reads of a run

/** Name lists of at most this many pages are read whole (once per run); longer ones are searched name by name. */
const WHOLE_LIST_PAGES = 3;

interface Named {
  id: string;
  name: string;
}
type ListOf = (page: number, search?: string) => Promise<{ data: Named[]; meta: { totalPages: number } }>;

/** Which names a kind's objects hold: the whole list when it is short, else one search per name (exact match). */
class NameIndex {
  private whole: Promise<Map<string, Named> | undefined> | undefined;
  private readonly searched = new Map<string, Promise<Named | undefined>>();
  constructor(private readonly list: ListOf) {}

  /** The object holding `name`, if any. */
  async holder(name: string): Promise<Named | undefined> {
    this.whole ??= this.readWhole();
    const all = await this.whole.catch((error: unknown) => {
      this.whole = undefined;
      throw error;
    });
    if (all) return all.get(name);
    let found = this.searched.get(name);
    if (!found) {
      found = this.search(name);
      this.searched.set(name, found);
      found.catch(() => this.searched.delete(name));
    }
    return found;
  }

  private async readWhole(): Promise<Map<string, Named> | undefined> {
    const first = await this.list(1);
    if (first.meta.totalPages > WHOLE_LIST_PAGES) return undefined;
    const all = new Map<string, Named>();
    const pages = [first];
    for (let page = 2; page <= first.meta.totalPages; page++) pages.push(await this.list(page));
    for (const item of pages.flatMap((p) => p.data)) all.set(item.name, item);
    return all;
  }

  private async search(name: string): Promise<Named | undefined> {
    for (let page = 1; ; page++) {
      const { data, meta } = await this.list(page, name);
      const exact = data.find((item) => item.name === name);
      if (exact) return exact;
      if (page >= meta.totalPages || data.length === 0) return undefined;
    }
  }
}

/** A VM's volume count as first seen in this run (before any attachment of the run was made) and its maximum. */
interface VmVolumes {
  name: string;
  current: number;
  max: number;
}

/** The reads one run shares, per client (so per credentials and process). */
export class RunReads {
  private inventory: Promise<GpuInventoryEntry[]> | undefined;
  private readonly names = new Map<string, NameIndex>();
  private readonly attachable = new Map<string, Promise<AttachableVm[] | null>>();
  /** Each VM's volume count as first seen in this run. */
  private readonly vmVolumes = new Map<string, VmVolumes>();
  /** The volumes the run's attachments attach to each VM. */
  private readonly planned = new Map<string, Set<string>>();
  /**
   * The names of each kind that resources of this stack hold: seen in a check with previous inputs. The engine checks
   * a replacement a second time without them, which must not count the resource's own name as taken.
   */
  readonly stackNames = new Map<string, Set<string>>();
  /** Whether the provider's own key was looked at (one warning per run at most). */
  keyLooked = false;

  constructor(private readonly api: CloudClient) {}

  /** The GPU inventory (all series, data centers and counts), read once per run. */
  gpuInventory(): Promise<GpuInventoryEntry[]> {
    this.inventory ??= this.api.gpuInventory();
    this.inventory.catch(() => (this.inventory = undefined));
    return this.inventory;
  }

  /** The volume or network holding `name`, if any. */
  nameHolder(kind: "volume" | "network", name: string): Promise<Named | undefined> {
    let index = this.names.get(kind);
    if (!index) {
      const api = this.api;
      const list: ListOf =
        kind === "volume"
          ? (page, search) => api.listVolumes({ query: { page, limit: 100, ...(search ? { search } : {}) } })
          : (page, search) => api.listNetworks({ query: { page, limit: 100, ...(search ? { search } : {}) } });
      this.names.set(kind, (index = new NameIndex(list)));
    }
    return index.holder(name);
  }

  /** The VMs a volume can attach to (its data center's, with their volume counts); null when the volume is gone. */
  attachableVms(volumeId: string): Promise<AttachableVm[] | null> {
    let found = this.attachable.get(volumeId);
    if (!found) {
      found = this.api.attachableVms({ params: { id: volumeId } }).then(
        (vms) => {
          for (const vm of vms) {
            if (!this.vmVolumes.has(vm.id)) {
              this.vmVolumes.set(vm.id, { name: vm.name, current: vm.currentVolumeCount, max: vm.maxVolumeCount });
            }
          }
          return vms;
        },
        (error: unknown) => {
          if (error instanceof ApiError && error.status === 404) return null;
          throw error;
        },
      );
      this.attachable.set(volumeId, found);
      found.catch(() => this.attachable.delete(volumeId));
    }
    return found;
  }

  /** A VM's volumes as first seen in this run. */
  volumesOf(vmId: string): VmVolumes | undefined {
    return this.vmVolumes.get(vmId);
  }

  /** Counts an attachment of the run; the volumes the run attaches to `vmId` (this one included). */
  plan(vmId: string, volumeId: string): string[] {
    let volumes = this.planned.get(vmId);
    if (!volumes) this.planned.set(vmId, (volumes = new Set()));
    volumes.add(volumeId);
    return [...volumes];
  }
}

const runs = new WeakMap<CloudClient, RunReads>();

/** The reads shared by the run of this client. */
export function runReadsOf(api: CloudClient): RunReads {
  let found = runs.get(api);
  if (!found) runs.set(api, (found = new RunReads(api)));
  return found;
}

// ---------------------------------------------------------------- running the checks

/** Why a read failed, for the warning: the API's message (never a secret: the client redacts them). */
const whyFailed = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Runs a kind's preview check under `cloudinfra:preflight`: `error` returns what it found as check failures, `warn`
 * logs each as a warning, `off` (or `skipCredentialsValidation`: no network at preview) reads nothing.
 */
export async function runPreflight(
  ctx: HandlerContext,
  check: PreflightCheck | undefined,
  used: Settings,
  olds: Props,
  news: Props,
): Promise<CheckFailure[]> {
  const mode = ctx.settings.preflight;
  // No network at preview (skipCredentialsValidation), or credentials that would sign in: signing in spends the TOTP
  // code that the `up` after the preview needs (as the credentials check, context.ts), so nothing is read.
  if (mode === "off" || used.skipCredentialsValidation || "password" in used.auth) return [];
  const api = used === ctx.settings ? ctx.api : ctx.clientFor(used);
  const reads = runReadsOf(api);
  await warnOfOwnKey(ctx, reads);
  if (!check) return [];
  const call: PreflightCall = {
    ctx,
    used,
    olds,
    news,
    reads,
    read: async (what, resource, read) => {
      try {
        return await read();
      } catch (error) {
        ctx.log.warn(
          `${resource}: preview could not check ${what}: ${whyFailed(error)}. The preview goes on; \`up\` meets ` +
            "whatever the API answers then",
          { resource },
        );
        return undefined;
      }
    },
  };
  const failures = await check(call);
  if (mode === "warn") {
    const resource = resourceLabel(news);
    for (const f of failures) {
      ctx.log.warn(`${resource}: ${f.property}: ${f.reason} (a warning: cloudinfra:preflight is "warn")`, {
        resource,
      });
    }
    return [];
  }
  return failures;
}

const resourceLabel = (news: Props) => (typeof news.name === "string" ? `"${news.name}"` : "resource");

/** How many pages of the key list are read, at most, to find the provider's own key. */
const KEY_PAGES = 2;

/**
 * The provider's own API key, once per run: Expiring (within 30 days of its expiry) warns with the date and how to
 * rotate. Read from the key list (`GET /auth/api-keys`), matched by the key's leading characters (`start`).
 */
async function warnOfOwnKey(ctx: HandlerContext, reads: RunReads): Promise<void> {
  if (reads.keyLooked || !("apiKey" in ctx.settings.auth)) return;
  reads.keyLooked = true;
  const secret = ctx.settings.auth.apiKey;
  try {
    let seen = 0;
    for await (const key of ctx.api.listAll("listApiKeys")) {
      // The newest first (the list's default order): a key this old is not looked for beyond two pages.
      if (++seen > KEY_PAGES * 100) return;
      if (!secret.startsWith(key.start)) continue;
      if (key.status === "Expiring") {
        ctx.log.warn(
          `The API key of this stack (cloudinfra:apiKey, "${key.name}", ${key.start}…) expires on ` +
            `${key.expiresAt.slice(0, 10)}: rotate it before then (\`POST /auth/api-keys/${key.id}/rotate\`, or a ` +
            "managed ApiKey's `rotation` input; a rotation keeps the expiry date) or create a new key, and " +
            "`pulumi config set --secret cloudinfra:apiKey <key>`",
          {},
        );
      }
      return;
    }
  } catch {
    // Not knowing the key's expiry blocks nothing: an Expired key is refused by the credentials check already.
  }
}

// ---------------------------------------------------------------- the checks of each kind

/** The inputs that replace a GPU VM: a create or a replacement orders capacity. */
const gpuCapacityInputs = ["datacenterId", "seriesId", "gpuCount"] as const;

/** GPU VM create or replacement: the series × count is available in the data center (the inventory, read once). */
export const gpuCapacity: PreflightCheck = async ({ olds, news, reads, read }) => {
  const { datacenterId, seriesId, gpuCount, name } = news;
  if (!known(datacenterId, seriesId, gpuCount)) return [];
  if (!isCreate(olds) && gpuCapacityInputs.every((k) => sameValue(olds[k], news[k]))) return [];
  const time = new Date();
  const what = "GPU capacity (GET /resource/gpu/inventory)";
  const inventory = await read(what, `GPU VM "${String(name)}"`, () => reads.gpuInventory());
  if (!inventory) return [];
  const entry = inventory.find((s) => s.seriesId === seriesId);
  const place = entry?.availability.find((a) => a.datacenterId === datacenterId);
  const count = String(gpuCount) as "1" | "2" | "4" | "8";
  if (place?.gpuCounts[count]?.available) return [];
  const seen = `(GET /resource/gpu/inventory ${at(time)}; capacity can change before \`up\`, which still reports the API's 409)`;
  if (!entry) {
    const series = inventory.map((s) => `${s.seriesCode} (seriesId ${s.seriesId})`).join(", ") || "none";
    return [
      {
        property: "seriesId",
        reason:
          `GPU VM "${String(name)}": the inventory has no GPU series ${String(seriesId)} ${seen}. The series are: ` +
          `${series}. Set seriesId to one of these`,
      },
    ];
  }
  const places = entry.availability.filter((a) =>
    (["1", "2", "4", "8"] as const).some((n) => a.gpuCounts[n].available),
  );
  const available = places.flatMap((a) =>
    (["1", "2", "4", "8"] as const).filter((n) => a.gpuCounts[n].available).map((n) => `${a.datacenterName} × ${n}`),
  );
  const ids = places.map((a) => `${a.datacenterName} = ${a.datacenterId}`).join(", ");
  const where = place ? `${place.datacenterName} (${place.datacenterId})` : `data center ${String(datacenterId)}`;
  return [
    {
      property: "gpuCount",
      reason:
        `GPU VM "${String(name)}": ${entry.seriesName} with ${count} GPU(s) is not available in ${where} ${seen}. ` +
        (available.length > 0
          ? `Available now for ${entry.seriesName}: ${available.join(", ")} (data center ids: ${ids}). Set ` +
            "datacenterId and gpuCount to one of these"
          : `No ${entry.seriesName} combination is available anywhere now. Choose another seriesId`) +
        ", or preview again later",
    },
  ];
};

/** Volume or network create (or rename): its unique name is free, unless `adopt` takes the holder over. */
export const freeName =
  (kind: "volume" | "network"): PreflightCheck =>
  async ({ olds, news, reads, read }) => {
    const { name } = news;
    const creating = isCreate(olds);
    let held = reads.stackNames.get(kind);
    if (!held) reads.stackNames.set(kind, (held = new Set()));
    if (!creating && typeof olds.name === "string") held.add(olds.name);
    if (typeof name !== "string" || !known(name)) return [];
    if (creating && news.adopt === true) return [];
    if (!creating && olds.name === name) return [];
    // A replacement's second check (no previous inputs): the name is the stack's own, freed by the replacement.
    if (creating && held.has(name)) return [];
    const time = new Date();
    const holder = await read(`whether the ${kind} name is free (GET the ${kind} list)`, `${kind} "${name}"`, () =>
      reads.nameHolder(kind, name),
    );
    if (!holder) return [];
    const fix = creating
      ? "Set `adopt: true` to manage it from this program, or choose another name"
      : "Choose another name";
    return [
      {
        property: "name",
        reason:
          `A ${kind} named "${name}" already exists (${holder.id}), and ${kind} names are unique: the API would ` +
          `refuse this ${creating ? "create" : "rename"} with a 409 (the ${kind} list ${at(time)}). ${fix}`,
      },
    ];
  };

/**
 * VolumeAttachment with both ids known: the VM is in the volume's data center and has room for one more volume,
 * counting the other attachments to it in this run. Ids not known at preview are checked by `up`'s own check, with
 * the ids known, just before the attach is sent.
 */
export const attachable: PreflightCheck = async ({ ctx, olds, news, reads, read }) => {
  const { volumeId, virtualMachineId } = news;
  if (typeof volumeId !== "string" || typeof virtualMachineId !== "string" || !known(volumeId, virtualMachineId)) {
    return [];
  }
  if (!isCreate(olds) && olds.volumeId === volumeId && olds.virtualMachineId === virtualMachineId) return [];
  const time = new Date();
  const resource = `VolumeAttachment ${volumeId}:${virtualMachineId}`;
  const route = "GET /resource/volumes/{id}/available-virtual-machines";
  const vms = await read(`where volume ${volumeId} can attach (${route})`, resource, () =>
    reads.attachableVms(volumeId),
  );
  if (vms === undefined) return [];
  if (vms === null) {
    return [
      {
        property: "volumeId",
        reason: `volume ${volumeId} does not exist (${route} answered 404 ${at(time)}): give the id of an existing volume`,
      },
    ];
  }
  const vm = vms.find((v) => v.id === virtualMachineId);
  if (!vm) {
    const there = vms.map((v) => `"${v.name}" (${v.id})`).join(", ");
    // Only on a failure: the two data centers, by name (each read may fail: the message then says less).
    const [volume, detail] = await Promise.all([
      ctx.api.getVolume({ params: { id: volumeId } }).catch(() => undefined),
      ctx.api.getVm({ params: { id: virtualMachineId } }).catch(() => undefined),
    ]);
    const volumeAt = volume ? ` "${volume.name}", in ${volume.datacenter.name}` : "";
    const vmAt = detail
      ? `"${detail.virtualMachine.name}" (${virtualMachineId}) is in ${detail.virtualMachine.datacenter.name}`
      : `${virtualMachineId} is not there`;
    return [
      {
        property: "virtualMachineId",
        reason:
          `virtual machine ${vmAt}, not in the data center of volume ${volumeId}${volumeAt} (${route} ${at(time)} ` +
          `lists ${vms.length === 0 ? "no VM there" : `only ${there}`}): the API attaches a volume only to a VM of ` +
          "its own data center and would refuse the attach. Attach the volume to a VM of its data center, or create " +
          "the volume in the VM's data center",
      },
    ];
  }
  const planned = reads.plan(virtualMachineId, volumeId);
  const first = reads.volumesOf(virtualMachineId) ?? {
    name: vm.name,
    current: vm.currentVolumeCount,
    max: vm.maxVolumeCount,
  };
  if (first.current + planned.length <= first.max) return [];
  const others = planned.filter((v) => v !== volumeId);
  return [
    {
      property: "virtualMachineId",
      reason:
        `virtual machine "${first.name}" (${virtualMachineId}) holds ${first.current} of its ${first.max} volumes ` +
        `(${route} ${at(time)})` +
        (others.length > 0 ? `, and this plan also attaches ${others.join(", ")} to it` : "") +
        `: there is no room for volume ${volumeId}, so the API would refuse the attach. Attach it to another VM of ` +
        "the data center, or detach a volume from this one first",
    },
  ];
};

/** An operation the plan would send, and the input that asks for it. */
interface Operation {
  property: string;
  what: string;
  /** The route's spec (not its name: the request is only planned here, not sent). */
  route: RouteSpec;
}

/** The operations a VM's or GPU VM's plan sends that need a permission beyond create (power, reset, rescue). */
function vmOperations(olds: Props, news: Props, gpu: boolean): Operation[] {
  const ops: Operation[] = [];
  const creating = isCreate(olds);
  const changed = (k: string) => news[k] !== undefined && known(news[k]) && !sameValue(olds[k], news[k]);
  const power = news.powerState;
  if (known(power) && (creating ? power === "stopped" : changed("powerState") && power !== undefined)) {
    const route =
      power === "stopped" ? (gpu ? routes.stopGpuVm : routes.stopVm) : gpu ? routes.startGpuVm : routes.startVm;
    ops.push({ property: "powerState", what: `powerState "${String(power)}" (${describe(route)})`, route });
  }
  if (!creating && changed("resetTrigger")) {
    const route = gpu ? routes.resetGpuVm : routes.resetVm;
    ops.push({
      property: "resetTrigger",
      what: `the reset a changed resetTrigger asks for (${describe(route)})`,
      route,
    });
  }
  if (!gpu) {
    if (known(news.rescue) && (creating ? news.rescue !== undefined : !sameValue(olds.rescue, news.rescue))) {
      const route = news.rescue === undefined ? routes.unrescueVm : routes.rescueVm;
      ops.push({ property: "rescue", what: `the rescue (${describe(route)})`, route });
    }
    if (news.shutdownBeforeDelete === true && olds.shutdownBeforeDelete !== true) {
      ops.push({
        property: "shutdownBeforeDelete",
        what: `shutdownBeforeDelete (the VM's delete stops it first: ${describe(routes.stopVm)})`,
        route: routes.stopVm,
      });
    }
  }
  return ops;
}

const describe = (spec: RouteSpec) => `${spec.method} ${spec.path.replace(/:(\w+)/g, "{$1}")}`;

/** Fails each operation the caller has none of the route's permissions for (the run's one `GET /auth/check`). */
async function permitted(call: PreflightCall, resource: string, ops: Operation[]): Promise<CheckFailure[]> {
  if (ops.length === 0) return [];
  const time = new Date();
  const caller = await call.read("the caller's permissions (GET /auth/check)", resource, () =>
    callerOf(call.ctx, call.used),
  );
  if (!caller) return [];
  const failures: CheckFailure[] = [];
  for (const op of ops) {
    const needed: readonly string[] = op.route.permission ?? [];
    if (needed.length === 0 || needed.some((p) => caller.user.permissions.includes(p))) continue;
    failures.push({ property: op.property, reason: lacking(caller, op, needed, time) });
  }
  return failures;
}

function lacking(caller: Caller, op: Operation, needed: readonly string[], time: Date): string {
  const roles = caller.user.roles.length > 0 ? caller.user.roles.join(", ") : "none";
  const permission = needed.length === 1 ? needed[0]! : `${needed.slice(0, -1).join(", ")} or ${needed.at(-1)!}`;
  return (
    `${op.what} needs the permission ${permission}, which the credentials of this stack lack: they act as ` +
    `${caller.user.email} with the role(s) ${roles} in entity "${caller.activeEntity.name}" (GET /auth/check ` +
    `${at(time)}). Use an API key that has ${needed[0]!}: one created (without a narrower roleId) by a user whose ` +
    `role grants it, or one given such a role (e.g. \`roleId: "vm-operator"\` for vm:operate, "tenant-admin" for ` +
    `api-keys:manage); or leave ${op.property} out of the program`
  );
}

/** VM: powerState, resetTrigger, rescue and shutdownBeforeDelete need the permission of their route. */
export const vmPermissions: PreflightCheck = (call) =>
  permitted(call, `VM "${String(call.news.name)}"`, vmOperations(call.olds, call.news, false));

/** GPU VM: capacity on create or replacement, and the permission of powerState and resetTrigger. */
export const gpuChecks: PreflightCheck = async (call) => [
  ...(await gpuCapacity(call)),
  ...(await permitted(call, `GPU VM "${String(call.news.name)}"`, vmOperations(call.olds, call.news, true))),
];

/** ApiKey: the session creating, suspending and rotating keys has the permission of each route. */
export const apiKeyPermissions: PreflightCheck = (call) => {
  const { olds, news } = call;
  const ops: Operation[] = [];
  const creating = isCreate(olds);
  if (creating) {
    ops.push({
      property: "name",
      what: `creating an API key (${describe(routes.createApiKey)})`,
      route: routes.createApiKey,
    });
  }
  if (!creating) {
    if (known(news.enabled) && news.enabled !== undefined && !sameValue(olds.enabled, news.enabled)) {
      ops.push({
        property: "enabled",
        what: `changing enabled (${describe(routes.setApiKeyStatus)})`,
        route: routes.setApiKeyStatus,
      });
    }
    if (known(news.rotation) && news.rotation !== undefined && !sameValue(olds.rotation, news.rotation)) {
      ops.push({
        property: "rotation",
        what: `the rotation (${describe(routes.rotateApiKey)})`,
        route: routes.rotateApiKey,
      });
    }
  }
  return permitted(call, `API key "${String(news.name)}"`, ops);
};
