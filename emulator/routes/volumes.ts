import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { BulkResultItem, Volume, VolumeStatus } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { ApiProblem, conflict, invalid, notFound } from "../errors";
import { iso, owned, paginate } from "../http";
import { operationJob, registerJobEffects, type JobEffect, startJob } from "../jobs";
import type { Catalog, JobRec, VmRec, VolumeRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

type Status = z.infer<typeof VolumeStatus>;
type VolumeType = Catalog["volumeTypes"][number];
type VolumeSize = VolumeType["sizes"][number];
type BulkItem = z.input<typeof BulkResultItem>;
interface Issue {
  field: string;
  message: string;
}

function setStatus(ctx: EmulatorContext, vol: VolumeRec, status: Status): void {
  vol.status = status;
  vol.updatedAt = ctx.now();
}

function volumeView(ctx: EmulatorContext, vol: VolumeRec): z.input<typeof Volume> {
  const type = ctx.state.catalog.volumeTypes.find((t) => t.id === vol.volumeTypeId);
  const dc = ctx.state.catalog.datacenters.find((d) => d.id === vol.datacenterId);
  const vm = vol.virtualMachineId === null ? undefined : ctx.state.vms[vol.virtualMachineId];
  return {
    id: vol.id,
    name: vol.name,
    status: vol.status,
    sizeGb: vol.sizeGb,
    volumeTypeId: vol.volumeTypeId,
    volumeTypeName: type?.name ?? "unknown",
    volumeSizeId: vol.volumeSizeId,
    datacenter: { id: vol.datacenterId, name: dc?.name ?? "unknown" },
    virtualMachineId: vol.virtualMachineId,
    virtualMachineName: vm?.name ?? null,
    teamId: vol.teamId,
    createdAt: iso(vol.createdAt),
    updatedAt: iso(vol.updatedAt),
  };
}

const describeSizes = (sizes: readonly VolumeSize[]) =>
  sizes.length === 0 ? "none" : sizes.map((s) => `${s.id} (${s.sizeGb} GB)`).join(", ");

/** One INVALID_REQUEST naming every problem found, shaped like the contract's own validation errors. */
function badBody(issues: Issue[]): ApiProblem {
  return invalid(`Invalid body: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, { issues });
}

function entityVm(ctx: EmulatorContext, caller: Caller, id: string): VmRec {
  const vm = ctx.state.vms[id];
  if (!vm || vm.entityId !== caller.entityId) throw new ApiProblem("NOT_FOUND", `Virtual machine ${id} not found`);
  return vm;
}

const volumesOn = (ctx: EmulatorContext, vmId: string) =>
  Object.values(ctx.state.volumes).filter((v) => v.virtualMachineId === vmId);

const maxVolumesOf = (ctx: EmulatorContext, vm: VmRec) =>
  ctx.state.catalog.configurations.find((c) => c.id === vm.configurationId)?.maxVolumes ?? 0;

function vmLabel(ctx: EmulatorContext, vmId: string): string {
  const vm = ctx.state.vms[vmId];
  return vm ? `virtual machine ${vm.name} (${vm.id})` : `virtual machine ${vmId}`;
}

function startDelete(ctx: EmulatorContext, caller: Caller, vol: VolumeRec): JobRec {
  // A volume whose create job failed (Error, never attached) can be deleted too, else it could never be cleaned up.
  const failedCreate = vol.status === "Error" && vol.virtualMachineId === null;
  if (vol.status !== "Available" && !failedCreate) {
    const where =
      vol.virtualMachineId !== null
        ? `it is attached to ${vmLabel(ctx, vol.virtualMachineId)} (status ${vol.status}); detach it first`
        : `it is ${vol.status}`;
    throw conflict(`Volume ${vol.name} cannot be deleted: ${where}. Only Available volumes can be deleted`);
  }
  const previousStatus = vol.status;
  setStatus(ctx, vol, "Deleting");
  return startJob(ctx, {
    entityId: caller.entityId,
    resourceType: "volume",
    operation: "volume.delete",
    targetId: vol.id,
    payload: { previousStatus },
  });
}

function startDetach(ctx: EmulatorContext, caller: Caller, vol: VolumeRec): JobRec {
  if (vol.status !== "In-use") {
    throw conflict(`Volume ${vol.name} cannot be detached: it is ${vol.status}, not In-use`);
  }
  setStatus(ctx, vol, "Detaching");
  return startJob(ctx, {
    entityId: caller.entityId,
    resourceType: "volume",
    operation: "volume.detach",
    targetId: vol.id,
  });
}

/** Runs one item of a bulk operation: a refusal becomes `success: false` with its reason. */
function bulkItem(id: string, run: () => JobRec): BulkItem {
  try {
    return { id, success: true, jobId: run().id, error: null };
  } catch (e) {
    if (!(e instanceof ApiProblem)) throw e;
    return { id, success: false, jobId: null, error: e.message };
  }
}

function volumeOf(ctx: EmulatorContext, job: JobRec): VolumeRec {
  const vol = ctx.state.volumes[job.targetId];
  if (!vol) throw new Error(`Volume ${job.targetId} no longer exists`);
  return vol;
}

/** What the volume operations do to the state when their jobs end. */
const volumeJobEffects: Record<string, JobEffect> = {
  "volume.create": {
    complete: (ctx, job) => setStatus(ctx, volumeOf(ctx, job), "Available"),
    fail: (ctx, job) => {
      const vol = ctx.state.volumes[job.targetId];
      if (vol) setStatus(ctx, vol, "Error");
    },
  },
  "volume.delete": {
    complete: (ctx, job) => {
      delete ctx.state.volumes[job.targetId];
    },
    fail: (ctx, job) => {
      const vol = ctx.state.volumes[job.targetId];
      if (vol) setStatus(ctx, vol, (job.payload.previousStatus as Status | undefined) ?? "Available");
    },
  },
  "volume.attach": {
    complete: (ctx, job) => {
      const vol = volumeOf(ctx, job);
      const vm = vol.virtualMachineId === null ? undefined : ctx.state.vms[vol.virtualMachineId];
      if (!vm || vm.status === "Deleting")
        throw new Error(`Virtual machine ${String(job.payload.virtualMachineId)} is gone`);
      setStatus(ctx, vol, "In-use");
    },
    fail: (ctx, job) => {
      const vol = ctx.state.volumes[job.targetId];
      if (!vol) return;
      vol.virtualMachineId = null;
      setStatus(ctx, vol, "Available");
    },
  },
  "volume.detach": {
    complete: (ctx, job) => {
      const vol = volumeOf(ctx, job);
      vol.virtualMachineId = null;
      setStatus(ctx, vol, "Available");
    },
    fail: (ctx, job) => {
      const vol = ctx.state.volumes[job.targetId];
      if (vol) setStatus(ctx, vol, "In-use");
    },
  },
  "volume.resize": {
    complete: (ctx, job) => {
      const vol = volumeOf(ctx, job);
      vol.sizeGb = job.payload.newSizeGb as number;
      vol.volumeSizeId = job.payload.newVolumeSizeId as number;
      setStatus(ctx, vol, job.payload.previousStatus as Status);
    },
    fail: (ctx, job) => {
      const vol = ctx.state.volumes[job.targetId];
      if (vol) setStatus(ctx, vol, job.payload.previousStatus as Status);
    },
  },
};

function volumeHandlers(ctx: EmulatorContext): RouteHandlers {
  return {
    listVolumes({ query, caller }) {
      const regionOf = (dcId: string) => ctx.state.catalog.datacenters.find((d) => d.id === dcId)?.regionId;
      const status = query["filter[status]"]?.toLowerCase();
      const rows = Object.values(ctx.state.volumes).filter(
        (v) =>
          v.entityId === caller.entityId &&
          (query["filter[virtualMachineId]"] === undefined ||
            v.virtualMachineId === query["filter[virtualMachineId]"]) &&
          (status === undefined || v.status.toLowerCase() === status) &&
          (query["filter[teamId]"] === undefined || v.teamId === query["filter[teamId]"]) &&
          (query["filter[regionId]"] === undefined || regionOf(v.datacenterId) === query["filter[regionId]"]) &&
          (query["filter[datacenterId]"] === undefined || v.datacenterId === query["filter[datacenterId]"]) &&
          (query["filter[volumeTypeId]"] === undefined || v.volumeTypeId === query["filter[volumeTypeId]"]) &&
          (query["filter[volumeSizeId]"] === undefined || v.volumeSizeId === query["filter[volumeSizeId]"]) &&
          (query["filter[sizeGb]"] === undefined || v.sizeGb === query["filter[sizeGb]"]),
      );
      return paginate(
        rows.map((v) => volumeView(ctx, v)),
        query,
        {
          sortFields: {
            name: (v) => v.name,
            createdAt: (v) => v.createdAt,
            sizeGb: (v) => v.sizeGb,
            status: (v) => v.status,
          },
          defaultSort: "createdAt:desc",
          searchFields: [(v) => v.name],
        },
      );
    },

    createVolume({ body, caller }) {
      const issues: Issue[] = [];
      if (!ctx.state.catalog.datacenters.some((d) => d.id === body.datacenterId)) {
        issues.push({
          field: "datacenterId",
          message: `data center ${body.datacenterId} does not exist; valid: ${ctx.state.catalog.datacenters.map((d) => `${d.id} (${d.name})`).join(", ")}`,
        });
      }
      const type = ctx.state.catalog.volumeTypes.find((t) => t.id === body.volumeTypeId);
      if (!type) {
        issues.push({
          field: "volumeTypeId",
          message: `volume type ${body.volumeTypeId} does not exist; valid: ${ctx.state.catalog.volumeTypes.map((t) => `${t.id} (${t.name})`).join(", ")}`,
        });
      } else {
        const size = type.sizes.find((s) => s.id === body.volumeSizeId);
        if (!size) {
          issues.push({
            field: "volumeSizeId",
            message: `size ${body.volumeSizeId} is not a size of volume type ${type.name}; valid: ${describeSizes(type.sizes)}`,
          });
        } else if (size.sizeGb !== body.sizeGb) {
          issues.push({
            field: "sizeGb",
            message: `size ${size.id} is ${size.sizeGb} GB, not ${body.sizeGb}; send sizeGb ${size.sizeGb} or the size id of ${body.sizeGb} GB (valid: ${describeSizes(type.sizes)})`,
          });
        }
      }
      if (body.teamId !== undefined && ctx.state.teams[String(body.teamId)]?.entityId !== caller.entityId) {
        issues.push({ field: "teamId", message: `resource group ${body.teamId} does not exist in this entity` });
      }
      if (issues.length > 0) throw badBody(issues);
      if (Object.values(ctx.state.volumes).some((v) => v.entityId === caller.entityId && v.name === body.name)) {
        throw conflict(`A volume named ${body.name} already exists`);
      }
      const now = ctx.now();
      const vol: VolumeRec = {
        id: randomUUID(),
        entityId: caller.entityId,
        name: body.name,
        status: "Creating",
        sizeGb: body.sizeGb,
        volumeTypeId: body.volumeTypeId,
        volumeSizeId: body.volumeSizeId,
        datacenterId: body.datacenterId,
        virtualMachineId: null,
        teamId: body.teamId ?? null,
        createdAt: now,
        updatedAt: now,
      };
      ctx.state.volumes[vol.id] = vol;
      const job = startJob(ctx, {
        entityId: caller.entityId,
        resourceType: "volume",
        operation: "volume.create",
        targetId: vol.id,
      });
      return { jobId: job.id, id: vol.id };
    },

    getVolume({ params, caller }) {
      return volumeView(ctx, owned(ctx.state.volumes, params.id, caller, "Volume"));
    },

    deleteVolume({ params, caller }) {
      return operationJob(startDelete(ctx, caller, owned(ctx.state.volumes, params.id, caller, "Volume")));
    },

    attachVolume({ params, body, caller }) {
      const vol = owned(ctx.state.volumes, params.id, caller, "Volume");
      if (vol.status !== "Available") {
        const where = vol.virtualMachineId !== null ? ` on ${vmLabel(ctx, vol.virtualMachineId)}` : "";
        throw conflict(`Volume ${vol.name} cannot be attached: it is ${vol.status}${where}, not Available`);
      }
      const vm = entityVm(ctx, caller, body.virtualMachineId);
      if (vm.datacenterId !== vol.datacenterId) {
        const dcName = (id: string) => ctx.state.catalog.datacenters.find((d) => d.id === id)?.name ?? id;
        throw invalid(
          `Volume ${vol.name} is in data center ${dcName(vol.datacenterId)} (${vol.datacenterId}) but virtual machine ${vm.name} is in ${dcName(vm.datacenterId)} (${vm.datacenterId}); a volume attaches only to a VM in its own data center`,
          { issues: [{ field: "virtualMachineId", message: "virtual machine is in another data center" }] },
        );
      }
      if (vm.status !== "Running" && vm.status !== "Stopped") {
        throw conflict(`Virtual machine ${vm.name} is ${vm.status}; volumes attach only to Running or Stopped VMs`);
      }
      const attached = volumesOn(ctx, vm.id);
      const maxVolumes = maxVolumesOf(ctx, vm);
      if (attached.length >= maxVolumes) {
        throw conflict(
          `Virtual machine ${vm.name} already has ${attached.length} volumes, the maximum of its configuration (${maxVolumes})`,
        );
      }
      const size = ctx.state.catalog.volumeTypes.flatMap((t) => t.sizes).find((s) => s.id === vol.volumeSizeId);
      const sameSize = attached.filter((v) => v.volumeSizeId === vol.volumeSizeId).length;
      if (size && sameSize >= size.maxVolumesPerVm) {
        throw conflict(
          `Virtual machine ${vm.name} already has ${sameSize} volumes of size ${size.displayName}, the maximum per VM for that size (${size.maxVolumesPerVm})`,
        );
      }
      vol.virtualMachineId = vm.id;
      setStatus(ctx, vol, "Attaching");
      const job = startJob(ctx, {
        entityId: caller.entityId,
        resourceType: "volume",
        operation: "volume.attach",
        targetId: vol.id,
        payload: { virtualMachineId: vm.id },
      });
      return operationJob(job);
    },

    detachVolume({ params, caller }) {
      return operationJob(startDetach(ctx, caller, owned(ctx.state.volumes, params.id, caller, "Volume")));
    },

    resizeVolume({ params, body, caller }) {
      const vol = owned(ctx.state.volumes, params.id, caller, "Volume");
      if (body.newSizeGb <= vol.sizeGb) {
        throw invalid(
          `newSizeGb must be larger than the current ${vol.sizeGb} GB (got ${body.newSizeGb}): volumes cannot shrink`,
          { issues: [{ field: "newSizeGb", message: "volumes cannot shrink" }] },
        );
      }
      const type = ctx.state.catalog.volumeTypes.find((t) => t.id === vol.volumeTypeId);
      const larger = (type?.sizes ?? []).filter((s) => s.sizeGb > vol.sizeGb);
      let size: VolumeSize | undefined;
      if (body.newVolumeSizeId !== undefined) {
        size = type?.sizes.find((s) => s.id === body.newVolumeSizeId);
        if (!size || size.sizeGb !== body.newSizeGb) {
          const what = size
            ? `is ${size.sizeGb} GB, not ${body.newSizeGb}`
            : `is not a size of volume type ${type?.name}`;
          throw badBody([
            {
              field: "newVolumeSizeId",
              message: `size ${body.newVolumeSizeId} ${what}; sizes available: ${describeSizes(larger)}`,
            },
          ]);
        }
      } else {
        size = type?.sizes.find((s) => s.sizeGb === body.newSizeGb);
        if (!size) {
          throw badBody([
            {
              field: "newSizeGb",
              message: `volume type ${type?.name} has no ${body.newSizeGb} GB size; sizes available: ${describeSizes(larger)}`,
            },
          ]);
        }
      }
      if (vol.status !== "Available" && vol.status !== "In-use") {
        throw conflict(
          `Volume ${vol.name} cannot be resized: it is ${vol.status}; only Available or In-use volumes can`,
        );
      }
      const previousStatus = vol.status;
      setStatus(ctx, vol, "Resizing");
      const job = startJob(ctx, {
        entityId: caller.entityId,
        resourceType: "volume",
        operation: "volume.resize",
        targetId: vol.id,
        payload: { previousStatus, newSizeGb: body.newSizeGb, newVolumeSizeId: size.id },
      });
      return operationJob(job);
    },

    attachableVms({ params, caller }) {
      const vol = owned(ctx.state.volumes, params.id, caller, "Volume");
      return Object.values(ctx.state.vms)
        .filter(
          (vm) => vm.entityId === caller.entityId && vm.datacenterId === vol.datacenterId && vm.status !== "Deleting",
        )
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((vm) => ({
          id: vm.id,
          name: vm.name,
          datacenterId: vm.datacenterId,
          currentVolumeCount: volumesOn(ctx, vm.id).length,
          maxVolumeCount: maxVolumesOf(ctx, vm),
        }));
    },

    bulkDeleteVolumes({ body, caller }) {
      return body.ids.map((id) =>
        bulkItem(id, () => startDelete(ctx, caller, owned(ctx.state.volumes, id, caller, "Volume"))),
      );
    },

    bulkDetachVolumes({ body, caller }) {
      return body.ids.map((id) =>
        bulkItem(id, () => startDetach(ctx, caller, owned(ctx.state.volumes, id, caller, "Volume"))),
      );
    },

    volumeSizes({ params }) {
      if (!ctx.state.catalog.datacenters.some((d) => d.id === params.id)) throw notFound("Data center", params.id);
      return {
        datacenterId: params.id,
        volumeTypes: ctx.state.catalog.volumeTypes.map((t) => ({
          id: t.id,
          name: t.name,
          description: t.description,
          availableSizes: t.sizes.map((s) => ({ ...s })),
        })),
      };
    },
  };
}

/** Volumes: CRUD, attach/detach/resize jobs, bulk operations and the volume-size catalog of a data center. */
export async function volumeRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  registerJobEffects(ctx, volumeJobEffects);
  defineRoutes(app, ctx, volumeHandlers(ctx));
}
