import type { FastifyInstance } from "fastify";
import { routes } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { defineRoute } from "../http";
import { jobView } from "../jobs";
import type { JobRec } from "../state";

/** The caller's jobs among `ids`, in the order asked, once each: unknown ids and other entities' jobs are absent. */
function visibleJobs(ctx: EmulatorContext, caller: Caller, ids: readonly string[]): JobRec[] {
  return [...new Set(ids)].flatMap((id) => {
    const job = ctx.state.jobs[id];
    return job && job.entityId === caller.entityId ? [job] : [];
  });
}

const isFinished = (job: JobRec) => job.status === "completed" || job.status === "failed";

export function registerJobRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  defineRoute(app, ctx, "queryJobs", routes.queryJobs, ({ body, caller }) => ({
    jobs: visibleJobs(ctx, caller, body.jobIds).map(jobView),
  }));

  defineRoute(app, ctx, "jobStatus", routes.jobStatus, ({ query, caller }) => {
    const jobs = visibleJobs(ctx, caller, query.jobIds);
    return {
      isCompleted: jobs.every(isFinished),
      jobs: jobs.map((job) => ({
        id: job.id,
        status: job.status,
        progress: job.progress,
        isCompleted: isFinished(job),
        resourceId: job.resourceId,
        error: job.error,
      })),
    };
  });
}
