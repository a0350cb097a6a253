import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import type { GpuInventoryEntry, GpuVm } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { ApiProblem, conflict } from "../errors";
import { Envelope, iso, owned, paginate } from "../http";
import { operationJob, registerJobEffects, type JobEffect, startJob } from "../jobs";
import type { Catalog, GpuVmRec, State } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";
import { type FieldIssue, invalidFields, newPrivateKey, nextPublicIp, takenPublicIps, teamOf } from "./vms";

const transitional = new Set(["Creating", "Deleting"]);
const gpuCounts = [1, 2, 4, 8] as const;

function isAvailable(catalog: Catalog, seriesId: number, datacenterId: string, gpuCount: number): boolean {
  return catalog.gpuAvailability.some(
    (a) => a.seriesId === seriesId && a.datacenterId === datacenterId && a.gpuCount === gpuCount && a.available,
  );
}

/** Every combination of a series that can be ordered now. */
function availableNow(catalog: Catalog, seriesId: number) {
  return catalog.gpuAvailability
    .filter((a) => a.seriesId === seriesId && a.available)
    .map((a) => ({
      datacenterId: a.datacenterId,
      datacenterName: catalog.datacenters.find((d) => d.id === a.datacenterId)?.name ?? a.datacenterId,
      gpuCount: a.gpuCount,
    }));
}

function inventory(
  catalog: Catalog,
  filter: { code?: string; datacenterId?: string; count?: number },
): z.input<typeof GpuInventoryEntry>[] {
  const filtered = filter.datacenterId !== undefined || filter.count !== undefined;
  return catalog.gpuSeries
    .filter((s) => filter.code === undefined || s.code.toLowerCase() === filter.code.toLowerCase())
    .map((s) => {
      const offered = new Set(catalog.gpuAvailability.filter((a) => a.seriesId === s.id).map((a) => a.datacenterId));
      const availability = catalog.datacenters
        .filter((dc) => offered.has(dc.id))
        .filter((dc) => filter.datacenterId === undefined || dc.id === filter.datacenterId)
        .filter((dc) => filter.count === undefined || isAvailable(catalog, s.id, dc.id, filter.count))
        .map((dc) => {
          const counts = Object.fromEntries(
            gpuCounts.map((n) => [String(n), { available: isAvailable(catalog, s.id, dc.id, n) }]),
          ) as Record<"1" | "2" | "4" | "8", { available: boolean }>;
          return { datacenterId: dc.id, datacenterName: dc.name, gpuCounts: counts };
        });
      return { seriesId: s.id, seriesName: s.name, seriesCode: s.code, availability };
    })
    .filter((entry) => !filtered || entry.availability.length > 0);
}

function seriesOf(catalog: Catalog, id: number) {
  const series = catalog.gpuSeries.find((s) => s.id === id);
  if (!series) throw new ApiProblem("SERVER_ERROR", `Catalog has no GPU series ${id}`);
  return series;
}

function view(state: State, gpu: GpuVmRec): z.input<typeof GpuVm> {
  const series = seriesOf(state.catalog, gpu.seriesId);
  const dc = state.catalog.datacenters.find((d) => d.id === gpu.datacenterId);
  return {
    id: gpu.id,
    name: gpu.name,
    status: gpu.status,
    publicIp: gpu.publicIp,
    jupyterLabUrl: gpu.publicIp ? `https://${gpu.publicIp}:8888/lab` : null,
    series: { id: series.id, name: series.name, code: series.code },
    gpuCount: gpu.gpuCount,
    datacenter: { id: gpu.datacenterId, name: dc?.name ?? gpu.datacenterId },
    teamId: gpu.teamId,
    createdAt: iso(gpu.createdAt),
    imageName: gpu.imageName,
  };
}

function requireStatus(gpu: GpuVmRec, allowed: string, action: string): void {
  if (transitional.has(gpu.status)) {
    throw conflict(`GPU VM ${gpu.name} is ${gpu.status}; wait for its job to finish`, { status: gpu.status });
  }
  if (gpu.status !== allowed) {
    throw conflict(`Cannot ${action} GPU VM ${gpu.name}: it is ${gpu.status}; ${action} needs ${allowed}`, {
      status: gpu.status,
    });
  }
}

/** What the GPU VM operations do to the state when their jobs end. */
const gpuJobEffects: Record<string, JobEffect> = {
  "gpu.create": {
    complete(ctx, job) {
      const gpu = ctx.state.gpuVms[job.targetId];
      if (!gpu) throw new Error(`GPU VM ${job.targetId} no longer exists`);
      gpu.publicIp = nextPublicIp(takenPublicIps(ctx.state));
      gpu.status = "Running";
      gpu.updatedAt = ctx.now();
    },
    fail(ctx, job) {
      const gpu = ctx.state.gpuVms[job.targetId];
      if (!gpu) return;
      gpu.status = "Error";
      gpu.updatedAt = ctx.now();
    },
  },
  "gpu.delete": {
    complete(ctx, job) {
      delete ctx.state.gpuVms[job.targetId];
    },
    fail(ctx, job) {
      const gpu = ctx.state.gpuVms[job.targetId];
      if (!gpu) return;
      gpu.status = String(job.payload.previousStatus);
      gpu.updatedAt = ctx.now();
    },
  },
};

function gpuHandlers(ctx: EmulatorContext): RouteHandlers {
  const { state } = ctx;
  const gpuOf = (id: string, caller: Caller) => owned(state.gpuVms, id, caller, "GPU VM");

  return {
    gpuInventory({ query, reply }) {
      reply.header("Cache-Control", "no-store");
      return inventory(state.catalog, query);
    },

    listGpuVms({ query, caller }) {
      const teamId = query["filter[teamId]"];
      const rows = Object.values(state.gpuVms).filter(
        (g) => g.entityId === caller.entityId && (teamId === undefined || g.teamId === teamId),
      );
      const page = paginate(rows, query, {
        sortFields: { name: (g) => g.name.toLowerCase(), createdAt: (g) => g.createdAt },
        defaultSort: "createdAt:desc",
        searchFields: [(g) => g.name],
      });
      return new Envelope(
        (page.data as GpuVmRec[]).map((g) => view(state, g)),
        page.meta,
      );
    },

    createGpuVm({ body, caller }) {
      const { catalog } = state;
      const issues: FieldIssue[] = [];
      const dc = catalog.datacenters.find((d) => d.id === body.datacenterId);
      if (!dc) issues.push({ field: "datacenterId", message: `data center ${body.datacenterId} does not exist` });
      const series = catalog.gpuSeries.find((s) => s.id === body.seriesId);
      if (!series) issues.push({ field: "seriesId", message: `GPU series ${body.seriesId} does not exist` });
      if (body.teamId !== undefined && !teamOf(state, caller.entityId, body.teamId)) {
        issues.push({ field: "teamId", message: `resource group ${body.teamId} does not exist` });
      }
      const image = body.imageId === undefined ? undefined : catalog.images.find((i) => i.id === body.imageId);
      if (body.imageId !== undefined && !image) {
        issues.push({ field: "imageId", message: `image ${body.imageId} does not exist` });
      }
      if (issues.length > 0 || !dc || !series) throw invalidFields(issues);
      if (!isAvailable(catalog, series.id, dc.id, body.gpuCount)) {
        const available = availableNow(catalog, series.id);
        const listed = available.map((a) => `${a.datacenterName} × ${a.gpuCount}`).join(", ") || "none";
        throw conflict(
          `${series.name} with ${body.gpuCount} GPU(s) is no longer available in ${dc.name}; available now: ${listed}`,
          { available },
        );
      }
      const now = ctx.now();
      const gpu: GpuVmRec = {
        id: randomUUID(),
        entityId: caller.entityId,
        name: body.name,
        status: "Creating",
        datacenterId: dc.id,
        seriesId: series.id,
        gpuCount: body.gpuCount,
        teamId: body.teamId ?? null,
        imageName: body.imageName ?? image?.name ?? null,
        imageId: body.imageId ?? null,
        publicIp: null,
        privateKey: newPrivateKey(),
        createdAt: now,
        updatedAt: now,
      };
      state.gpuVms[gpu.id] = gpu;
      const job = startJob(ctx, {
        entityId: caller.entityId,
        resourceType: "gpu",
        operation: "gpu.create",
        targetId: gpu.id,
        payload: { name: gpu.name },
      });
      return { jobId: job.id, id: gpu.id };
    },

    getGpuVm({ params, caller }) {
      return view(state, gpuOf(params.id, caller));
    },

    updateGpuVm({ params, body, caller }) {
      const gpu = gpuOf(params.id, caller);
      if (body.teamId !== undefined && body.teamId !== null && !teamOf(state, caller.entityId, body.teamId)) {
        throw invalidFields([{ field: "teamId", message: `resource group ${body.teamId} does not exist` }]);
      }
      if (gpu.status === "Deleting") throw conflict(`GPU VM ${gpu.name} is being deleted`, { status: gpu.status });
      if (body.name !== undefined) gpu.name = body.name;
      if (body.teamId !== undefined) gpu.teamId = body.teamId;
      gpu.updatedAt = ctx.now();
      return view(state, gpu);
    },

    deleteGpuVm({ params, caller }) {
      const gpu = gpuOf(params.id, caller);
      if (transitional.has(gpu.status)) {
        throw conflict(`GPU VM ${gpu.name} is ${gpu.status}; wait for its job to finish`, { status: gpu.status });
      }
      const previousStatus = gpu.status;
      gpu.status = "Deleting";
      gpu.updatedAt = ctx.now();
      const job = startJob(ctx, {
        entityId: gpu.entityId,
        resourceType: "gpu",
        operation: "gpu.delete",
        targetId: gpu.id,
        payload: { previousStatus },
      });
      return new Envelope(operationJob(job), undefined, `Deletion of GPU VM ${gpu.name} started`);
    },

    startGpuVm({ params, caller }) {
      const gpu = gpuOf(params.id, caller);
      const series = seriesOf(state.catalog, gpu.seriesId);
      if (!series.startSupported) {
        throw new ApiProblem("NOT_IMPLEMENTED", `The provider does not support starting ${series.name} GPU VMs`);
      }
      requireStatus(gpu, "Stopped", "start");
      gpu.status = "Running";
      gpu.updatedAt = ctx.now();
      return { id: gpu.id, status: gpu.status };
    },

    stopGpuVm({ params, caller }) {
      const gpu = gpuOf(params.id, caller);
      requireStatus(gpu, "Running", "stop");
      gpu.status = "Stopped";
      gpu.updatedAt = ctx.now();
      return { id: gpu.id, status: gpu.status };
    },

    resetGpuVm({ params, caller }) {
      const gpu = gpuOf(params.id, caller);
      requireStatus(gpu, "Running", "reset");
      gpu.updatedAt = ctx.now();
      return { id: gpu.id, status: gpu.status };
    },

    getGpuSshKey({ params, caller }) {
      return {
        privateKey: gpuOf(params.id, caller).privateKey,
      };
    },
  };
}

/** The GPU VM routes of the contract (gpuInventory … getGpuSshKey). */
export async function gpuRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  registerJobEffects(ctx, gpuJobEffects);
  defineRoutes(app, ctx, gpuHandlers(ctx));
}
