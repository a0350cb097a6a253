import { ApiError, type CloudClient } from "../client";
import type { z } from "zod";
import {
  routes,
  type ApiKey,
  type AttachableVm as AttachableVmSchema,
  type GpuInventoryEntry,
  type RouteSpec,
  type Volume,
  type VolumeSizes,
} from "../api";
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

/**
 * Which names a kind's objects hold: the whole list when it is short, else one search per name (exact match, after
 * `fold`: user emails are compared lower-case, as the API stores them).
 */
class NameIndex {
  private whole: Promise<Map<string, Named> | undefined> | undefined;
  private readonly searched = new Map<string, Promise<Named | undefined>>();
  constructor(
    private readonly list: ListOf,
    private readonly fold: (name: string) => string = (name) => name,
  ) {}

  /** The object holding `name`, if any. */
  async holder(name: string): Promise<Named | undefined> {
    this.whole ??= this.readWhole();
    const all = await this.whole.catch((error: unknown) => {
      this.whole = undefined;
      throw error;
    });
    if (all) return all.get(this.fold(name));
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
    for (const item of pages.flatMap((p) => p.data)) all.set(this.fold(item.name), item);
    return all;
  }

  private async search(name: string): Promise<Named | undefined> {
    for (let page = 1; ; page++) {
      const { data, meta } = await this.list(page, name);
      const exact = data.find((item) => this.fold(item.name) === this.fold(name));
      if (exact) return exact;
      if (page >= meta.totalPages || data.length === 0) return undefined;
    }
  }
}

/** The kinds whose names (a user's email) the API keeps unique. */
export type NameKind = "volume" | "network" | "user";

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
  private readonly volumes = new Map<string, Promise<Volume | null>>();
  private readonly sizes = new Map<string, Promise<VolumeSizes>>();
  private readonly onVm = new Map<string, Promise<Volume[]>>();
  private readonly keys = new Map<string, Promise<ApiKey[]>>();
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

  /**
   * The volume or network holding `name`, or the user (not deleted) holding the email `name` (in `entityId`, when
   * given: a user registered in a child entity), if any.
   */
  nameHolder(kind: NameKind, name: string, entityId?: string): Promise<Named | undefined> {
    const key = kind === "user" && entityId !== undefined ? `user:${entityId}` : kind;
    let index = this.names.get(key);
    if (!index) {
      const api = this.api;
      const query = (page: number, search?: string) => ({ page, limit: 100, ...(search ? { search } : {}) });
      const list: ListOf =
        kind === "volume"
          ? (page, search) => api.listVolumes({ query: query(page, search) })
          : kind === "network"
            ? (page, search) => api.listNetworks({ query: query(page, search) })
            : async (page, search) => {
                const found = await api.listUsers({
                  query: { ...query(page, search), ...(entityId !== undefined ? { entityId } : {}) },
                });
                const live = found.data.filter((u) => u.deletedAt === null);
                return { data: live.map((u) => ({ id: u.id, name: u.email })), meta: found.meta };
              };
      // The API stores emails lower-case (and its search ignores case): emails are compared lower-case.
      this.names.set(key, (index = new NameIndex(list, kind === "user" ? (n) => n.toLowerCase() : undefined)));
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

  /** A volume (its size and data center), read once per run; null when it is gone. */
  volume(volumeId: string): Promise<Volume | null> {
    return this.once(this.volumes, volumeId, () =>
      this.api.getVolume({ params: { id: volumeId } }).catch((error: unknown) => {
        if (error instanceof ApiError && error.status === 404) return null;
        throw error;
      }),
    );
  }

  /** The volume sizes of a data center (each with its `maxVolumesPerVm`), read once per data center per run. */
  volumeSizes(datacenterId: string): Promise<VolumeSizes> {
    return this.once(this.sizes, datacenterId, () => this.api.volumeSizes({ params: { id: datacenterId } }));
  }

  /** The volumes attached to a VM as first seen in this run (`GET /resource/volumes?filter[virtualMachineId]`). */
  volumesOn(vmId: string): Promise<Volume[]> {
    return this.once(this.onVm, vmId, async () => {
      const found: Volume[] = [];
      for await (const v of this.api.listAll("listVolumes", { "filter[virtualMachineId]": vmId })) found.push(v);
      return found;
    });
  }

  /** The keys of that name the credentials of this client see (`GET /auth/api-keys?search=`), once per name per run. */
  keysNamed(name: string): Promise<ApiKey[]> {
    return this.once(this.keys, name, async () => {
      const found: ApiKey[] = [];
      for await (const k of this.api.listAll("listApiKeys", { search: name })) if (k.name === name) found.push(k);
      return found;
    });
  }

  /** One read per key and run, shared; a failed read is forgotten (the next asks again). */
  private once<T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
    let found = cache.get(key);
    if (!found) {
      found = read();
      cache.set(key, found);
      found.catch(() => cache.delete(key));
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

/**
 * Whether the inventory offers `seriesId` × `gpuCount` in `datacenterId`: no failure when it does, else one naming
 * what is available now (the series, or the data centers and counts of the series). `resource` names the GPU VM;
 * `seen` says where and when the inventory was read. Shared by the preview check and the policy pack.
 */
export function capacityFailures(
  inventory: readonly GpuInventoryEntry[],
  wanted: { datacenterId: unknown; seriesId: unknown; gpuCount: unknown },
  resource: string,
  seen: string,
): CheckFailure[] {
  const { datacenterId, seriesId, gpuCount } = wanted;
  const entry = inventory.find((s) => s.seriesId === seriesId);
  const place = entry?.availability.find((a) => a.datacenterId === datacenterId);
  const count = String(gpuCount) as "1" | "2" | "4" | "8";
  if (place?.gpuCounts[count]?.available) return [];
  if (!entry) {
    const series = inventory.map((s) => `${s.seriesCode} (seriesId ${s.seriesId})`).join(", ") || "none";
    return [
      {
        property: "seriesId",
        reason:
          `${resource}: the inventory has no GPU series ${String(seriesId)} ${seen}. The series are: ` +
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
        `${resource}: ${entry.seriesName} with ${count} GPU(s) is not available in ${where} ${seen}. ` +
        (available.length > 0
          ? `Available now for ${entry.seriesName}: ${available.join(", ")} (data center ids: ${ids}). Set ` +
            "datacenterId and gpuCount to one of these"
          : `No ${entry.seriesName} combination is available anywhere now. Choose another seriesId`) +
        ", or preview again later",
    },
  ];
}

/** GPU VM create or replacement: the series × count is available in the data center (the inventory, read once). */
export const gpuCapacity: PreflightCheck = async ({ olds, news, reads, read }) => {
  const { datacenterId, seriesId, gpuCount, name } = news;
  if (!known(datacenterId, seriesId, gpuCount)) return [];
  if (!isCreate(olds) && gpuCapacityInputs.every((k) => sameValue(olds[k], news[k]))) return [];
  const time = new Date();
  const what = "GPU capacity (GET /resource/gpu/inventory)";
  const inventory = await read(what, `GPU VM "${String(name)}"`, () => reads.gpuInventory());
  if (!inventory) return [];
  const seen = `(GET /resource/gpu/inventory ${at(time)}; capacity can change before \`up\`, which still reports the API's 409)`;
  return capacityFailures(inventory, { datacenterId, seriesId, gpuCount }, `GPU VM "${String(name)}"`, seen);
};

/** How each kind's unique name is told in messages: the property, and the holder as a phrase. */
const nameKinds = {
  volume: { property: "name", noun: "volume", holder: (n: string) => `A volume named "${n}"`, plural: "volume names" },
  network: {
    property: "name",
    noun: "network",
    holder: (n: string) => `A network named "${n}"`,
    plural: "network names",
  },
  user: {
    property: "email",
    noun: "user",
    holder: (n: string) => `A user with the email "${n}"`,
    plural: "user emails (among users that are not deleted)",
  },
} as const satisfies Record<NameKind, object>;

/**
 * Volume or network create (or rename), user create (or email change): its unique name (email) is free, unless
 * `adopt` takes the holder over.
 */
export const freeName =
  (kind: NameKind): PreflightCheck =>
  async ({ olds, news, reads, read }) => {
    const { property, noun, holder: phrase, plural } = nameKinds[kind];
    const name = news[property];
    const old = olds[property];
    const creating = isCreate(olds);
    const entityId = kind === "user" && typeof news.entityId === "string" ? news.entityId : undefined;
    const stackKey = entityId === undefined ? kind : `${kind}:${entityId}`;
    let held = reads.stackNames.get(stackKey);
    if (!held) reads.stackNames.set(stackKey, (held = new Set()));
    if (!creating && typeof old === "string") held.add(old);
    if (typeof name !== "string" || !known(name)) return [];
    if (creating && news.adopt === true) return [];
    if (!creating && old === name) return [];
    // A replacement's second check (no previous inputs): the name is the stack's own, freed by the replacement.
    if (creating && held.has(name)) return [];
    // An entity not known yet (a child entity created in the same run) cannot be searched.
    if (kind === "user" && news.entityId !== undefined && entityId === undefined) return [];
    const time = new Date();
    const list = kind === "user" ? "GET /users" : `GET the ${noun} list`;
    const holder = await read(`whether the ${noun} ${property} is free (${list})`, `${noun} "${name}"`, () =>
      reads.nameHolder(kind, name, entityId),
    );
    if (!holder) return [];
    const another = property === "email" ? "another email" : "another name";
    const fix = creating
      ? `Set \`adopt: true\` to manage it from this program, or choose ${another}`
      : `Choose ${another}`;
    const change = creating ? "create" : property === "email" ? "email change" : "rename";
    return [
      {
        property,
        reason:
          `${phrase(name)} already exists (${holder.id}), and ${plural} are unique: the API would ` +
          `refuse this ${change} with a 409 (the ${noun} list ${at(time)}). ${fix}`,
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
  const others = planned.filter((v) => v !== volumeId);
  if (first.current + planned.length <= first.max) {
    return sizeRoom({
      volumeId,
      virtualMachineId,
      vmName: first.name,
      total: first.current,
      others,
      reads,
      read,
      time,
    });
  }
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

/**
 * The room of one volume size on the VM: the VM's volumes of the volume's size plus the plan's other attachments of
 * that size, against the size's `maxVolumesPerVm` (`GET /resource/data-centers/{id}/volume-sizes`, once per data center
 * per run). The volume is read once per run; the VM's volumes only when the VM's count with the plan's could reach the
 * size's maximum at all.
 */
async function sizeRoom(a: {
  volumeId: string;
  virtualMachineId: string;
  vmName: string;
  total: number;
  others: string[];
  reads: RunReads;
  read: PreflightCall["read"];
  time: Date;
}): Promise<CheckFailure[]> {
  const { volumeId, virtualMachineId, reads, read, time } = a;
  const resource = `VolumeAttachment ${volumeId}:${virtualMachineId}`;
  const volume = await read(`the size of volume ${volumeId} (GET /resource/volumes/{id})`, resource, () =>
    reads.volume(volumeId),
  );
  if (!volume) return [];
  const sizesRoute = "GET /resource/data-centers/{id}/volume-sizes";
  const catalog = await read(`the volume sizes' limits per VM (${sizesRoute})`, resource, () =>
    reads.volumeSizes(volume.datacenter.id),
  );
  const size = catalog?.volumeTypes.flatMap((t) => t.availableSizes).find((z) => z.id === volume.volumeSizeId);
  if (!size || a.total + 1 + a.others.length <= size.maxVolumesPerVm) return [];
  const listRoute = "GET /resource/volumes?filter[virtualMachineId]";
  const [onVm, planned] = await Promise.all([
    read(`the volumes of virtual machine ${virtualMachineId} (${listRoute})`, resource, () =>
      reads.volumesOn(virtualMachineId),
    ),
    // The plan's other attachments to this VM were checked before this one: their volumes are read already.
    Promise.all(a.others.map((id) => reads.volume(id).catch(() => null))),
  ]);
  if (!onVm) return [];
  const there = new Set(onVm.map((v) => v.id));
  const sameSize = onVm.filter((v) => v.id !== volumeId && v.volumeSizeId === size.id);
  const plannedSame = planned.filter((v): v is Volume => v !== null && v.volumeSizeId === size.id && !there.has(v.id));
  if (sameSize.length + plannedSame.length < size.maxVolumesPerVm) return [];
  return [
    {
      property: "virtualMachineId",
      reason:
        `virtual machine "${a.vmName}" (${virtualMachineId}) holds ${sameSize.length} volume(s) of size ` +
        `${size.displayName} (volumeSizeId ${size.id})` +
        (plannedSame.length > 0
          ? `, and this plan also attaches ${plannedSame.map((v) => `${v.id} "${v.name}"`).join(", ")} of that size`
          : "") +
        `; a VM may hold at most ${size.maxVolumesPerVm} volumes of that size (maxVolumesPerVm, ${sizesRoute} and ` +
        `${listRoute} ${at(time)}): there is no room for volume ${volumeId} "${volume.name}", so the API would ` +
        "refuse the attach. Attach it to another VM of the data center, detach a volume of that size from this one " +
        "first, or use a volume of another size",
    },
  ];
}

/** An operation the plan would send, and the input that asks for it. */
export interface Operation {
  property: string;
  what: string;
  /** The route's spec (not its name: the request is only planned here, not sent). */
  route: RouteSpec;
}

/**
 * The previous inputs of a resource judged as the program declares it (the policy pack, which sees no state): every
 * operation its inputs ask for at some time of its life counts, as on a create, and a `resetTrigger` too (it exists
 * to be changed).
 */
export const DECLARED = "declared";

/**
 * The operations a VM's or GPU VM's plan sends that need a permission beyond create (power, reset, rescue), from the
 * previous inputs (empty on a create) or {@link DECLARED}.
 */
export function vmOperations(olds: Props | typeof DECLARED, news: Props, gpu: boolean): Operation[] {
  const ops: Operation[] = [];
  const declared = olds === DECLARED;
  const before: Props = declared ? {} : olds;
  const creating = isCreate(before);
  const changed = (k: string) => news[k] !== undefined && known(news[k]) && !sameValue(before[k], news[k]);
  const power = news.powerState;
  if (known(power) && (creating ? power === "stopped" : changed("powerState") && power !== undefined)) {
    const route =
      power === "stopped" ? (gpu ? routes.stopGpuVm : routes.stopVm) : gpu ? routes.startGpuVm : routes.startVm;
    ops.push({ property: "powerState", what: `powerState "${String(power)}" (${describe(route)})`, route });
  }
  if ((declared || !creating) && changed("resetTrigger")) {
    const route = gpu ? routes.resetGpuVm : routes.resetVm;
    ops.push({
      property: "resetTrigger",
      what: `the reset a ${declared ? "" : "changed "}resetTrigger asks for (${describe(route)})`,
      route,
    });
  }
  if (!gpu) {
    if (known(news.rescue) && (creating ? news.rescue !== undefined : !sameValue(before.rescue, news.rescue))) {
      const route = news.rescue === undefined ? routes.unrescueVm : routes.rescueVm;
      ops.push({ property: "rescue", what: `the rescue (${describe(route)})`, route });
    }
    if (news.shutdownBeforeDelete === true && before.shutdownBeforeDelete !== true) {
      ops.push({
        property: "shutdownBeforeDelete",
        what: `shutdownBeforeDelete (the VM's delete stops it first: ${describe(routes.stopVm)})`,
        route: routes.stopVm,
      });
    }
  }
  return ops;
}

/** The operations an ApiKey's plan sends (create, enabled, rotation), from the previous inputs or {@link DECLARED}. */
export function apiKeyOperations(olds: Props | typeof DECLARED, news: Props): Operation[] {
  const ops: Operation[] = [];
  const before: Props = olds === DECLARED ? {} : olds;
  if (isCreate(before)) {
    ops.push({
      property: "name",
      what: `creating an API key (${describe(routes.createApiKey)})`,
      route: routes.createApiKey,
    });
    return ops;
  }
  if (known(news.enabled) && news.enabled !== undefined && !sameValue(before.enabled, news.enabled)) {
    ops.push({
      property: "enabled",
      what: `changing enabled (${describe(routes.setApiKeyStatus)})`,
      route: routes.setApiKeyStatus,
    });
  }
  if (known(news.rotation) && news.rotation !== undefined && !sameValue(before.rotation, news.rotation)) {
    ops.push({
      property: "rotation",
      what: `the rotation (${describe(routes.rotateApiKey)})`,
      route: routes.rotateApiKey,
    });
  }
  return ops;
}

const describe = (spec: RouteSpec) => `${spec.method} ${spec.path.replace(/:(\w+)/g, "{$1}")}`;

/**
 * The operations the caller has none of the route's permissions for, each as a failure naming the permission, the
 * caller's roles and the fix. `seen` says where and when the caller was read. Shared with the policy pack.
 */
export function missingPermissions(caller: Caller, ops: readonly Operation[], seen: string): CheckFailure[] {
  const failures: CheckFailure[] = [];
  for (const op of ops) {
    const needed: readonly string[] = op.route.permission ?? [];
    if (needed.length === 0 || needed.some((p) => caller.user.permissions.includes(p))) continue;
    failures.push({ property: op.property, reason: lacking(caller, op, needed, seen) });
  }
  return failures;
}

/** Fails each operation the caller has none of the route's permissions for (the run's one `GET /auth/check`). */
async function permitted(call: PreflightCall, resource: string, ops: Operation[]): Promise<CheckFailure[]> {
  if (ops.length === 0) return [];
  const time = new Date();
  const caller = await call.read("the caller's permissions (GET /auth/check)", resource, () =>
    callerOf(call.ctx, call.used),
  );
  if (!caller) return [];
  return missingPermissions(caller, ops, `(GET /auth/check ${at(time)})`);
}

function lacking(
  caller: Caller,
  op: Operation,
  needed: readonly string[],
  seen: string,
  otherwise = `leave ${op.property} out of the program`,
): string {
  const roles = caller.user.roles.length > 0 ? caller.user.roles.join(", ") : "none";
  const permission = needed.length === 1 ? needed[0]! : `${needed.slice(0, -1).join(", ")} or ${needed.at(-1)!}`;
  return (
    `${op.what} needs the permission ${permission}, which the credentials of this stack lack: they act as ` +
    `${caller.user.email} with the role(s) ${roles} in entity "${caller.activeEntity.name}" ${seen}. Use an API ` +
    `key that has ${needed[0]!}: one created (without a narrower roleId) by a user whose ` +
    `role grants it, or one given such a role (e.g. \`roleId: "vm-operator"\` for vm:operate, "tenant-admin" for ` +
    `api-keys:manage); or ${otherwise}`
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

/**
 * ApiKey: the credentials sending each operation have the permission of its route. The create is sent by the session
 * (the kind's settings); a suspension or rotation by the configured credentials, as `up` sends them. On a key of
 * another user, these need api-keys:manage ({@link foreignKey}).
 */
export const apiKeyPermissions: PreflightCheck = async (call) => {
  const resource = `API key "${String(call.news.name)}"`;
  const ops = apiKeyOperations(call.olds, call.news);
  const creates = ops.filter((op) => op.route === routes.createApiKey);
  const changes = ops.filter((op) => op.route !== routes.createApiKey);
  const asConfigured = { ...call, used: call.ctx.settings };
  const missing = await permitted(asConfigured, resource, changes);
  return [
    ...(await permitted(call, resource, creates)),
    ...missing,
    ...(missing.length > 0 ? [] : await foreignKey(asConfigured, resource, changes)),
  ];
};

/** The one permission that lets a caller act on any key of the entity. */
const MANAGE = "api-keys:manage";

/**
 * A suspension or rotation of a key that is not the caller's needs api-keys:manage: without it the API answers 404 (it
 * hides other users' keys). The key's owner is its `userId` when the previous inputs carry it (the spec does not
 * document the field: read when present, never required); otherwise the keys of its name that the caller sees (`GET
 * /auth/api-keys?search=`, once per name per run): none, or only keys of other users (by their `userId`, where sent),
 * and the key is not the caller's. A key of that name without a `userId`, or the caller's own, passes.
 */
async function foreignKey(call: PreflightCall, resource: string, ops: Operation[]): Promise<CheckFailure[]> {
  if (ops.length === 0) return [];
  const time = new Date();
  const caller = await call.read("the caller's permissions (GET /auth/check)", resource, () =>
    callerOf(call.ctx, call.used),
  );
  // Without api-keys:self the permission check has said so; with api-keys:manage any key of the entity is the caller's.
  const permissions = caller?.user.permissions ?? [];
  if (!caller || permissions.includes(MANAGE) || !permissions.includes("api-keys:self")) return [];
  let why: string;
  const owner = call.olds.userId;
  if (typeof owner === "string") {
    if (owner === caller.user.id) return [];
    why = `the key belongs to user ${owner} (its userId)`;
  } else {
    const name = call.olds.name;
    if (typeof name !== "string") return [];
    const keys = await call.read(`whose key "${name}" is (GET /auth/api-keys)`, resource, () =>
      runReadsOf(call.ctx.clientFor(call.used)).keysNamed(name),
    );
    if (!keys || keys.some((k) => k.userId === undefined || k.userId === caller.user.id)) return [];
    why =
      keys.length === 0
        ? `these credentials see no key named "${name}" (GET /auth/api-keys ${at(time)} shows a caller without ` +
          `${MANAGE} only its own keys), so the key is another user's (if it was deleted instead, \`pulumi ` +
          "refresh` forgets it)"
        : `the keys named "${name}" that GET /auth/api-keys shows belong to other users (their userId)`;
  }
  return ops.map((op) => ({
    property: op.property,
    reason: lacking(
      caller,
      { ...op, what: `${op.what} on a key that is not the caller's (${why})` },
      [MANAGE],
      `(GET /auth/check ${at(time)})`,
    ),
  }));
}

/**
 * The message of a suspension or rotation that `up` sent and the API answered 404 for, when the key is not the
 * caller's (the state's `userId`, or unknown) and the caller lacks api-keys:manage: the API hides other users' keys
 * from such a caller. Undefined when the 404 means the key is gone (the caller's own key, or a caller who sees all).
 */
export function foreignKeyRefusal(caller: Caller, keyId: string, owner: unknown, what: string): string | undefined {
  if (caller.user.permissions.includes(MANAGE)) return undefined;
  if (typeof owner === "string" && owner === caller.user.id) return undefined;
  const whose =
    typeof owner === "string"
      ? `belongs to user ${owner} (its userId in the stack), not to ${caller.user.email}`
      : `is not among the keys of ${caller.user.email}, the only ones the API shows a caller without ${MANAGE}: it ` +
        "is another user's key, or it was deleted (then `pulumi refresh` forgets it)";
  return lacking(
    caller,
    {
      property: "enabled",
      what: `${what} of API key ${keyId} answered 404: the key ${whose}. Acting on another user's key`,
      route: routes.setApiKeyStatus,
    },
    [MANAGE],
    "(GET /auth/check)",
    "the credentials of the key's owner",
  );
}
