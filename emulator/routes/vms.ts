import { generateKeyPairSync, randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { routes, type JobArrayItem, type VmDetail, type VmListItem } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { ApiProblem, conflict, invalid } from "../errors";
import { Envelope, iso, owned, paginate } from "../http";
import { operationJob, registerJobEffects, type JobEffect, startJob } from "../jobs";
import type { Catalog, NetworkRec, NicRec, State, VmRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

/** Statuses during which a job is working on the VM: other state-changing operations must wait (409). */
const transitional = new Set(["Creating", "Resizing", "Rescuing", "Unrescuing", "Deleting"]);

/**
 * `networkId` of the interface a VM gets when created without `networkInterfaces`: an address from 10.255.0.0/16,
 * which belongs to no user network. Such interfaces are kept in `VmRec.nics` but not listed as `networkInterfaces`.
 */
export const AUTOMATIC_NETWORK_ID = "automatic";
const automaticCidr = "10.255.0.0/16";
const publicPools = ["203.0.113.0/24", "198.51.100.0/24"];
const maxNameLength = 128;

export interface FieldIssue {
  field: string;
  message: string;
}

/** One INVALID_REQUEST naming every problem found, in the same shape as the contract's validation errors. */
export function invalidFields(issues: FieldIssue[]): ApiProblem {
  return invalid(`Invalid body: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, { issues });
}

/** A fresh ed25519 private key (PKCS#8 PEM), generated once per VM and served by GET ssh-key. */
export function newPrivateKey(): string {
  return generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
}

const ipToInt = (ip: string) => ip.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
const intToIp = (n: number) => [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");

/** The first host address of `cidr` not in `taken` (from .10 upwards when the block is big enough), or null. */
function firstFreeAddress(cidr: string, taken: Set<string>): string | null {
  const [base, bits] = cidr.split("/");
  const size = 2 ** (32 - Number(bits));
  const network = ipToInt(base) - (ipToInt(base) % size);
  const first = size > 16 ? 10 : 2;
  for (let offset = first; offset <= size - 2; offset++) {
    const ip = intToIp(network + offset);
    if (!taken.has(ip)) return ip;
  }
  return null;
}

/** Every public address held by a VM or a GPU VM. */
export function takenPublicIps(state: State): Set<string> {
  const taken = new Set<string>();
  for (const vm of Object.values(state.vms)) if (vm.publicIp) taken.add(vm.publicIp);
  for (const gpu of Object.values(state.gpuVms)) if (gpu.publicIp) taken.add(gpu.publicIp);
  return taken;
}

/** Takes the next free public address (203.0.113.0/24, then 198.51.100.0/24) and marks it taken. */
export function nextPublicIp(taken: Set<string>): string {
  for (const pool of publicPools) {
    const ip = firstFreeAddress(pool, taken);
    if (ip) {
      taken.add(ip);
      return ip;
    }
  }
  throw conflict("No public IPv4 address is left to allocate");
}

/** A team (resource group) of the entity, or undefined. */
export function teamOf(state: State, entityId: string, teamId: number) {
  const team = state.teams[String(teamId)];
  return team && team.entityId === entityId ? team : undefined;
}

function catalogEntry<T extends { id: unknown }>(items: T[], id: unknown, what: string): T {
  const item = items.find((i) => i.id === id);
  if (!item) throw new ApiProblem("SERVER_ERROR", `Catalog has no ${what} ${String(id)}`);
  return item;
}

const datacenterOf = (catalog: Catalog, id: string) => catalogEntry(catalog.datacenters, id, "data center");
const configurationOf = (catalog: Catalog, id: number) => catalogEntry(catalog.configurations, id, "configuration");
const imageOf = (catalog: Catalog, id: number) => catalogEntry(catalog.images, id, "image");
const primaryPrivateIp = (vm: VmRec) => vm.nics.find((n) => n.primary)?.privateIp ?? null;

function listItem(catalog: Catalog, vm: VmRec): z.input<typeof VmListItem> {
  const dc = datacenterOf(catalog, vm.datacenterId);
  const conf = configurationOf(catalog, vm.configurationId);
  return {
    id: vm.id,
    name: vm.name,
    status: vm.status,
    createdAt: iso(vm.createdAt),
    updatedAt: iso(vm.updatedAt),
    configuration: { cpu: conf.cpu, ram: conf.ram, disk: conf.disk },
    datacenter: { id: dc.id, name: dc.name, region: dc.region, country: dc.country },
    imageName: imageOf(catalog, vm.imageId).name,
    primaryPrivateIp: primaryPrivateIp(vm),
    primaryPublicIp: vm.publicIp,
    teamId: vm.teamId,
  };
}

/** A stable pseudo-random number in [0, 1) derived from the VM id, so usage figures do not jump between reads. */
function idFraction(id: string, salt: number): number {
  let h = salt;
  for (const ch of id) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return (h % 1000) / 1000;
}

function detail(state: State, vm: VmRec): z.input<typeof VmDetail> {
  const { catalog } = state;
  const dc = datacenterOf(catalog, vm.datacenterId);
  const conf = configurationOf(catalog, vm.configurationId);
  const running = vm.status === "Running" || vm.status === "Rescued";
  const attachedVolumes = Object.values(state.volumes).filter((v) => v.virtualMachineId === vm.id);
  return {
    status: vm.status,
    virtualMachine: {
      id: vm.id,
      name: vm.name,
      teamId: vm.teamId,
      cpu: conf.cpu,
      ram: conf.ram,
      disk: conf.disk,
      configurationId: conf.id,
      configuration: conf.name,
      configurationCategoryCode: conf.categoryCode,
      image: imageOf(catalog, vm.imageId).name,
      datacenter: { id: dc.id, name: dc.name },
      createdAt: iso(vm.createdAt),
      updatedAt: iso(vm.updatedAt),
      imageId: vm.imageId,
      networkInterfaces: vm.nics.filter((n) => n.networkId !== AUTOMATIC_NETWORK_ID).map((n) => ({ ...n })),
      primaryPrivateIp: primaryPrivateIp(vm),
      primaryPublicIp: vm.publicIp,
      sshKeyIds: [...vm.sshKeyIds],
    },
    usage: {
      cpuPercent: running ? Math.round(5 + idFraction(vm.id, 1) * 60) : 0,
      ramUsedGb: running ? Math.round(conf.ram * (0.2 + idFraction(vm.id, 2) * 0.6) * 10) / 10 : 0,
      diskUsedGb: Math.round(conf.disk * (0.1 + idFraction(vm.id, 3) * 0.5)),
      attachedVolumes: attachedVolumes.length,
      attachedVolumeGb: attachedVolumes.reduce((sum, v) => sum + v.sizeGb, 0),
    },
    consoleEnabled: true,
    networkHotplug: true,
  };
}

function requireSettled(vm: VmRec): void {
  if (transitional.has(vm.status)) {
    throw conflict(`VM ${vm.name} is ${vm.status}; wait for its job to finish`, { status: vm.status });
  }
}

function requireStatus(vm: VmRec, allowed: string[], action: string): void {
  requireSettled(vm);
  if (!allowed.includes(vm.status)) {
    throw conflict(`Cannot ${action} VM ${vm.name}: it is ${vm.status}; ${action} needs ${allowed.join(" or ")}`, {
      status: vm.status,
    });
  }
}

type CreateBody = z.output<typeof routes.createVm.body>;

function validateCreate(state: State, caller: Caller, body: CreateBody): FieldIssue[] {
  const { catalog } = state;
  const issues: FieldIssue[] = [];
  const dc = catalog.datacenters.find((d) => d.id === body.datacenterId);
  if (!dc) issues.push({ field: "datacenterId", message: `data center ${body.datacenterId} does not exist` });
  if (!catalog.images.some((i) => i.id === body.imageId)) {
    issues.push({ field: "imageId", message: `image ${body.imageId} does not exist` });
  }
  if (!catalog.configurations.some((c) => c.id === body.configurationId)) {
    issues.push({ field: "configurationId", message: `configuration ${body.configurationId} does not exist` });
  }
  if (body.teamId !== undefined && !teamOf(state, caller.entityId, body.teamId)) {
    issues.push({ field: "teamId", message: `resource group ${body.teamId} does not exist` });
  }
  const count = body.numberOfInstances ?? 1;
  if (count > 1 && `${body.name}-${count}`.length > maxNameLength) {
    issues.push({
      field: "name",
      message: `with numberOfInstances ${count} the instance names (${body.name}-1 …) exceed ${maxNameLength} characters`,
    });
  }
  const seen = new Set<string>();
  body.networkInterfaces?.forEach((nic, i) => {
    const field = `networkInterfaces.${i}.networkId`;
    const net = state.networks[nic.networkId];
    if (!net || net.entityId !== caller.entityId) {
      issues.push({ field, message: `network ${nic.networkId} does not exist` });
    } else if (dc && net.datacenterId !== dc.id) {
      const netDc = catalog.datacenters.find((d) => d.id === net.datacenterId)?.name ?? net.datacenterId;
      issues.push({ field, message: `network ${nic.networkId} is in data center ${netDc}, not ${dc.name}` });
    } else if (net.status !== "Active") {
      issues.push({ field, message: `network ${nic.networkId} is ${net.status}, not Active` });
    } else if (seen.has(nic.networkId)) {
      issues.push({ field, message: `network ${nic.networkId} is named by more than one interface` });
    }
    seen.add(nic.networkId);
  });
  return issues;
}

/** Addresses in use on each network (and on the automatic range), filled lazily while planning a create. */
class AddressBook {
  private readonly taken = new Map<string, Set<string>>();
  constructor(private readonly state: State) {}

  take(networkId: string, cidr: string, reserved: (string | null)[] = []): string {
    let set = this.taken.get(networkId);
    if (!set) {
      set = new Set(reserved.filter((ip): ip is string => ip !== null));
      for (const vm of Object.values(this.state.vms)) {
        for (const nic of vm.nics) if (nic.networkId === networkId) set.add(nic.privateIp);
      }
      this.taken.set(networkId, set);
    }
    const ip = firstFreeAddress(cidr, set);
    if (!ip) throw conflict(`No free private address is left in ${cidr} (network ${networkId})`);
    set.add(ip);
    return ip;
  }

  onNetwork(net: NetworkRec): string {
    return this.take(net.id, net.cidrBlock, [net.defaultRoute]);
  }
}

function volumesOf(state: State, vmId: string) {
  return Object.values(state.volumes).filter((v) => v.virtualMachineId === vmId);
}

function restorePreviousStatus(ctx: EmulatorContext, vmId: string, status: unknown): void {
  const vm = ctx.state.vms[vmId];
  if (!vm) return;
  vm.status = String(status);
  vm.updatedAt = ctx.now();
}

/** What the VM operations do to the state when their jobs end. */
const vmJobEffects: Record<string, JobEffect> = {
  "vm.create": {
    complete(ctx, job) {
      const vm = ctx.state.vms[job.targetId];
      if (!vm) throw new Error(`VM ${job.targetId} no longer exists`);
      vm.status = "Running";
      vm.updatedAt = ctx.now();
    },
    fail(ctx, job) {
      const vm = ctx.state.vms[job.targetId];
      if (!vm) return;
      vm.status = "Error";
      vm.updatedAt = ctx.now();
    },
  },
  "vm.delete": {
    complete(ctx, job) {
      const vm = ctx.state.vms[job.targetId];
      if (!vm) return;
      const now = ctx.now();
      for (const volume of volumesOf(ctx.state, vm.id)) {
        volume.virtualMachineId = null;
        volume.status = "Available";
        volume.updatedAt = now;
      }
      // Removing the record releases its public address and network interfaces.
      delete ctx.state.vms[vm.id];
    },
    fail: (ctx, job) => restorePreviousStatus(ctx, job.targetId, job.payload.previousStatus),
  },
  "vm.resize": {
    complete(ctx, job) {
      const vm = ctx.state.vms[job.targetId];
      if (!vm) throw new Error(`VM ${job.targetId} no longer exists`);
      vm.configurationId = Number(job.payload.configurationId);
      vm.status = String(job.payload.previousStatus);
      vm.updatedAt = ctx.now();
    },
    fail: (ctx, job) => restorePreviousStatus(ctx, job.targetId, job.payload.previousStatus),
  },
  "vm.rescue": {
    complete(ctx, job) {
      const vm = ctx.state.vms[job.targetId];
      if (!vm) throw new Error(`VM ${job.targetId} no longer exists`);
      vm.rescueImageId = String(job.payload.imageId);
      vm.status = "Rescued";
      vm.updatedAt = ctx.now();
    },
    fail: (ctx, job) => restorePreviousStatus(ctx, job.targetId, job.payload.previousStatus),
  },
  "vm.unrescue": {
    complete(ctx, job) {
      const vm = ctx.state.vms[job.targetId];
      if (!vm) throw new Error(`VM ${job.targetId} no longer exists`);
      vm.rescueImageId = null;
      vm.status = "Running";
      vm.updatedAt = ctx.now();
    },
    fail: (ctx, job) => restorePreviousStatus(ctx, job.targetId, "Rescued"),
  },
};

function vmHandlers(ctx: EmulatorContext): RouteHandlers {
  const { state } = ctx;
  const vmOf = (id: string, caller: Caller) => owned(state.vms, id, caller, "VM");

  const startOperation = (vm: VmRec, operation: string, payload: Record<string, unknown>, message: string) => {
    const job = startJob(ctx, { entityId: vm.entityId, resourceType: "vm", operation, targetId: vm.id, payload });
    return new Envelope(operationJob(job), undefined, message);
  };

  const power = (id: string, caller: Caller, from: string, to: string, action: string) => {
    const vm = vmOf(id, caller);
    requireStatus(vm, [from], action);
    vm.status = to;
    vm.updatedAt = ctx.now();
    return { id: vm.id, status: vm.status };
  };

  return {
    listVms({ query, caller }) {
      const { catalog } = state;
      const dc = (vm: VmRec) => datacenterOf(catalog, vm.datacenterId);
      const lower = (s: string | undefined) => s?.toLowerCase();
      const rows = Object.values(state.vms).filter(
        (vm) =>
          vm.entityId === caller.entityId &&
          (query["filter[teamId]"] === undefined || vm.teamId === query["filter[teamId]"]) &&
          (query["filter[regionId]"] === undefined || dc(vm).regionId === query["filter[regionId]"]) &&
          (query["filter[datacenterId]"] === undefined || vm.datacenterId === query["filter[datacenterId]"]) &&
          (query["filter[configurationId]"] === undefined || vm.configurationId === query["filter[configurationId]"]) &&
          (query["filter[imageName]"] === undefined ||
            imageOf(catalog, vm.imageId).name.toLowerCase() === lower(query["filter[imageName]"])) &&
          (query["filter[status]"] === undefined || vm.status.toLowerCase() === lower(query["filter[status]"])),
      );
      const page = paginate(rows, query, {
        sortFields: {
          name: (vm) => vm.name.toLowerCase(),
          createdAt: (vm) => vm.createdAt,
          updatedAt: (vm) => vm.updatedAt,
          configuration: (vm) => configurationOf(catalog, vm.configurationId).cpu,
          region: (vm) => dc(vm).region,
          datacenter: (vm) => dc(vm).name,
        },
        defaultSort: "createdAt:desc",
        searchFields: [(vm) => vm.name, (vm) => vm.nics.map((n) => n.privateIp).join(" "), (vm) => vm.publicIp],
      });
      return new Envelope(
        (page.data as VmRec[]).map((vm) => listItem(catalog, vm)),
        page.meta,
      );
    },

    getVm({ params, caller }) {
      return detail(state, vmOf(params.id, caller));
    },

    createVm({ body, caller }) {
      const issues = validateCreate(state, caller, body);
      if (issues.length > 0) throw invalidFields(issues);
      const count = body.numberOfInstances ?? 1;
      const names = count === 1 ? [body.name] : Array.from({ length: count }, (_, i) => `${body.name}-${i + 1}`);
      // Plan every address first so that running out fails the whole request and creates nothing.
      const addresses = new AddressBook(state);
      const publicTaken = takenPublicIps(state);
      const plans = names.map((name) => {
        const nics: NicRec[] = body.networkInterfaces
          ? body.networkInterfaces.map((nic) => ({
              id: randomUUID(),
              networkId: nic.networkId,
              primary: nic.primary,
              privateIp: addresses.onNetwork(state.networks[nic.networkId]),
            }))
          : [
              {
                id: randomUUID(),
                networkId: AUTOMATIC_NETWORK_ID,
                primary: true,
                privateIp: addresses.take(AUTOMATIC_NETWORK_ID, automaticCidr),
              },
            ];
        return { name, nics, publicIp: body.allocatePublicIp ? nextPublicIp(publicTaken) : null };
      });
      const now = ctx.now();
      return plans.map((plan): z.input<typeof JobArrayItem> => {
        const vm: VmRec = {
          id: randomUUID(),
          entityId: caller.entityId,
          name: plan.name,
          status: "Creating",
          datacenterId: body.datacenterId,
          imageId: body.imageId,
          configurationId: body.configurationId,
          teamId: body.teamId ?? null,
          publicIp: plan.publicIp,
          nics: plan.nics,
          sshKeyIds: [...(body.sshKeyIds ?? [])],
          privateKey: newPrivateKey(),
          rescueImageId: null,
          createdAt: now,
          updatedAt: now,
        };
        state.vms[vm.id] = vm;
        const job = startJob(ctx, {
          entityId: caller.entityId,
          resourceType: "vm",
          operation: "vm.create",
          targetId: vm.id,
          payload: { name: vm.name },
        });
        return { id: job.id, status: "pending", resourceType: "vm", createdAt: iso(job.createdAt) };
      });
    },

    updateVm({ params, body, caller }) {
      const vm = vmOf(params.id, caller);
      if (body.teamId !== undefined && body.teamId !== null && !teamOf(state, caller.entityId, body.teamId)) {
        throw invalidFields([{ field: "teamId", message: `resource group ${body.teamId} does not exist` }]);
      }
      if (vm.status === "Deleting") throw conflict(`VM ${vm.name} is being deleted`, { status: vm.status });
      if (body.name !== undefined) vm.name = body.name;
      if (body.teamId !== undefined) vm.teamId = body.teamId;
      vm.updatedAt = ctx.now();
      return detail(state, vm);
    },

    deleteVm({ params, caller }) {
      const vm = vmOf(params.id, caller);
      requireSettled(vm);
      const previousStatus = vm.status;
      vm.status = "Deleting";
      vm.updatedAt = ctx.now();
      return startOperation(vm, "vm.delete", { previousStatus }, `Deletion of VM ${vm.name} started`);
    },

    startVm({ params, caller }) {
      return power(params.id, caller, "Stopped", "Running", "start");
    },

    stopVm({ params, caller }) {
      return power(params.id, caller, "Running", "Stopped", "stop");
    },

    resetVm({ params, caller }) {
      return power(params.id, caller, "Running", "Running", "reset");
    },

    resizeVm({ params, body, caller }) {
      const vm = vmOf(params.id, caller);
      const target = state.catalog.configurations.find((c) => c.id === body.configurationId);
      if (!target) {
        throw invalidFields([
          { field: "configurationId", message: `configuration ${body.configurationId} does not exist` },
        ]);
      }
      const current = configurationOf(state.catalog, vm.configurationId);
      const shrinks = (["cpu", "ram", "disk"] as const)
        .filter((k) => target[k] < current[k])
        .map((k) => `${k} ${current[k]} → ${target[k]}`);
      if (shrinks.length > 0) {
        throw invalidFields([
          {
            field: "configurationId",
            message: `a VM can only grow in place (${current.name} → ${target.name} would shrink ${shrinks.join(", ")})`,
          },
        ]);
      }
      requireStatus(vm, ["Running", "Stopped"], "resize");
      const previousStatus = vm.status;
      vm.status = "Resizing";
      vm.updatedAt = ctx.now();
      return startOperation(
        vm,
        "vm.resize",
        { configurationId: target.id, previousStatus },
        `Resize of VM ${vm.name} to ${target.name} started`,
      );
    },

    getRescue({ params, caller }) {
      const vm = vmOf(params.id, caller);
      if (vm.rescueImageId === null) return { rescued: false, image: null };
      const image = state.catalog.rescueImages.find((i) => i.id === vm.rescueImageId) ?? {
        id: vm.rescueImageId,
        name: "custom",
        osFamily: "unknown",
      };
      return { rescued: true, image: { ...image } };
    },

    rescueVm({ params, body, caller }) {
      const vm = vmOf(params.id, caller);
      if (body.sourceType === "catalog" && !state.catalog.rescueImages.some((i) => i.id === body.sourceImageId)) {
        throw invalidFields([
          { field: "sourceImageId", message: `${body.sourceImageId} is not a rescue image of the catalog` },
        ]);
      }
      if (vm.status === "Rescued") throw conflict(`VM ${vm.name} is already rescued`, { status: vm.status });
      requireStatus(vm, ["Running", "Stopped"], "rescue");
      const previousStatus = vm.status;
      vm.status = "Rescuing";
      vm.updatedAt = ctx.now();
      return startOperation(
        vm,
        "vm.rescue",
        { imageId: body.sourceImageId, sourceType: body.sourceType, previousStatus },
        `Rescue of VM ${vm.name} started; its disk stays attached as a secondary disk`,
      );
    },

    unrescueVm({ params, caller }) {
      const vm = vmOf(params.id, caller);
      requireSettled(vm);
      if (vm.status !== "Rescued") throw conflict(`VM ${vm.name} is not rescued`, { status: vm.status });
      vm.status = "Unrescuing";
      vm.updatedAt = ctx.now();
      return startOperation(vm, "vm.unrescue", {}, `VM ${vm.name} is leaving rescue mode`);
    },

    getVmSshKey({ params, caller }) {
      return {
        privateKey: vmOf(params.id, caller).privateKey,
      };
    },
  };
}

/** The virtual machine routes of the contract (listVms … getVmSshKey). */
export async function vmRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  registerJobEffects(ctx, vmJobEffects);
  defineRoutes(app, ctx, vmHandlers(ctx));
}
