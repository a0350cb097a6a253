import type { FastifyInstance } from "fastify";
import type { Caller, EmulatorContext } from "../context";
import { jobView } from "../jobs";
import type { JobRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

/** The caller's jobs among `ids`, in the order asked, once each: unknown ids and other entities' jobs are absent. */
function visibleJobs(ctx: EmulatorContext, caller: Caller, ids: readonly string[]): JobRec[] {
  return [...new Set(ids)].flatMap((id) => {
    const job = ctx.state.jobs[id];
    return job && job.entityId === caller.entityId ? [job] : [];
  });
}

const isFinished = (job: JobRec) => job.status === "completed" || job.status === "failed";

function jobHandlers(ctx: EmulatorContext): RouteHandlers {
  return {
    queryJobs({ body, caller }) {
      return {
        jobs: visibleJobs(ctx, caller, body.jobIds).map(jobView),
      };
    },

    jobStatus({ query, caller }) {
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
    },
  };
}

/** Job queries: the caller's jobs by id, in full or as a completion summary. */
export async function jobRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  defineRoutes(app, ctx, jobHandlers(ctx));
}
