import { randomUUID } from "node:crypto";
import type { z } from "zod";
import type { Job, OperationJob } from "../provider/api";
import type { EmulatorContext } from "./context";
import { iso, iso0 } from "./http";
import type { JobRec } from "./state";

/** Realistic durations per operation (ms). `--job-duration-ms` rescales them so the longest takes that long. */
export const realisticDurationMs: Record<string, number> = {
  "vm.create": 45_000,
  "vm.delete": 20_000,
  "vm.resize": 30_000,
  "vm.rescue": 20_000,
  "vm.unrescue": 20_000,
  "gpu.create": 90_000,
  "gpu.delete": 30_000,
  "volume.create": 10_000,
  "volume.delete": 6_000,
  "volume.attach": 5_000,
  "volume.detach": 5_000,
  "volume.resize": 8_000,
  "network.create": 8_000,
};
const longest = Math.max(...Object.values(realisticDurationMs));
const completedRetentionMs = 48 * 3600_000;

export interface JobEffect {
  /** Applied when the job completes; throwing makes the job fail with the thrown message instead. */
  complete(ctx: EmulatorContext, job: JobRec): void;
  /** Applied when the job fails (injected failure, stall, or a throwing `complete`). */
  fail?(ctx: EmulatorContext, job: JobRec): void;
}
/** The effect of each operation, per emulator (its context): every emulator of a process has its own. */
const effectsByContext = new WeakMap<EmulatorContext, Map<string, JobEffect>>();

/** A route group declares, when it is registered, what its operations do to the state when their jobs end. */
export function registerJobEffects(ctx: EmulatorContext, effects: Record<string, JobEffect>): void {
  let registered = effectsByContext.get(ctx);
  if (!registered) effectsByContext.set(ctx, (registered = new Map()));
  for (const [operation, effect] of Object.entries(effects)) registered.set(operation, effect);
}

export function durationOf(ctx: EmulatorContext, operation: string): number {
  const realistic = realisticDurationMs[operation] ?? 10_000;
  const scale = ctx.options.jobDurationMs;
  return scale === null ? realistic : Math.max(1, Math.round((scale * realistic) / longest));
}

export interface StartJob {
  entityId: string;
  resourceType: "vm" | "volume" | "network" | "gpu";
  operation: string;
  targetId: string;
  payload?: Record<string, unknown>;
}

export function startJob(ctx: EmulatorContext, input: StartJob): JobRec {
  const now = ctx.now();
  const duration = durationOf(ctx, input.operation);
  const job: JobRec = {
    id: randomUUID(),
    entityId: input.entityId,
    resourceType: input.resourceType,
    operation: input.operation,
    targetId: input.targetId,
    payload: input.payload ?? {},
    status: "pending",
    progress: 0,
    resourceId: null,
    error: null,
    createdAt: now,
    updatedAt: now,
    completedAt: null,
    startsAt: now + Math.round(duration * 0.1),
    endsAt: now + duration,
    inject: ctx.jobFault(input.operation),
  };
  ctx.state.jobs[job.id] = job;
  ctx.touch();
  return job;
}

function finish(ctx: EmulatorContext, job: JobRec, at: number, error: string | null): void {
  const effect = effectsByContext.get(ctx)?.get(job.operation);
  if (error === null) {
    try {
      effect?.complete(ctx, job);
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
  }
  if (error !== null) {
    effect?.fail?.(ctx, job);
    job.status = "failed";
    job.error = error;
    // A failed create leaves its resource (status Error): point the job at it so it can be found and cleaned up.
    if (job.operation.endsWith(".create")) job.resourceId ??= job.targetId;
  } else {
    job.status = "completed";
    job.progress = 100;
    job.resourceId ??= job.targetId;
  }
  job.completedAt = at;
  job.updatedAt = at;
}

/** Moves every job along to the current time, applying effects in the order jobs end. */
export function advanceJobs(ctx: EmulatorContext): void {
  const now = ctx.now();
  const active = Object.values(ctx.state.jobs)
    .filter((j) => j.status === "pending" || j.status === "in_progress")
    .sort((a, b) => a.endsAt - b.endsAt);
  for (const job of active) {
    const stalled = job.inject?.kind === "stall";
    if (now >= job.endsAt && !stalled) {
      finish(ctx, job, job.endsAt, job.inject?.kind === "fail" ? job.inject.error : null);
    } else if (stalled && now >= job.endsAt + ctx.options.stallTimeoutMs) {
      finish(ctx, job, now, "Job stalled: no progress reported by the provider; it was abandoned");
    } else if (now >= job.startsAt) {
      const span = Math.max(1, job.endsAt - job.startsAt);
      const progress = Math.min(99, Math.max(1, Math.floor(((now - job.startsAt) / span) * 100)));
      const capped = stalled ? Math.min(progress, 50) : progress;
      if (job.status !== "in_progress" || job.progress !== capped) {
        job.status = "in_progress";
        job.progress = capped;
        job.updatedAt = now;
      }
    } else {
      continue;
    }
    ctx.touch();
  }
  for (const job of Object.values(ctx.state.jobs)) {
    if (job.completedAt !== null && now - job.completedAt > completedRetentionMs) {
      delete ctx.state.jobs[job.id];
      ctx.touch();
    }
  }
}

/** The job record of the contract. */
export function jobView(job: JobRec): z.input<typeof Job> {
  return {
    id: job.id,
    status: job.status,
    progress: job.progress,
    resourceType: job.resourceType,
    resourceId: job.resourceId,
    error: job.error,
    createdAt: iso(job.createdAt),
    updatedAt: iso(job.updatedAt),
    completedAt: iso0(job.completedAt),
    operation: job.operation,
  };
}

const trackingResourceType: Record<string, string> = {
  vm: "virtual_machine",
  gpu: "gpu_virtual_machine",
  volume: "volume",
  network: "network",
};

/** The "operation" tracking shape of a 202 response. */
export function operationJob(job: JobRec): z.input<typeof OperationJob> {
  return {
    jobId: job.id,
    resourceType: trackingResourceType[job.resourceType] ?? job.resourceType,
    operation: job.operation.split(".")[1] ?? job.operation,
    stage: "initializing",
    progressPercentage: 0,
  };
}
