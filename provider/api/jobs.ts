import { z } from "zod";
import { qList, Timestamp, undocumented, Uuid } from "./common";

export const JobStatus = z.enum(["pending", "in_progress", "completed", "failed"]);
export type JobStatus = z.infer<typeof JobStatus>;
export const ResourceType = z.enum(["vm", "volume", "network", "gpu"]);

export const Job = z.object({
  id: Uuid,
  status: JobStatus,
  progress: z.number().int().min(0).max(100),
  resourceType: z.string(),
  resourceId: z.string().nullable(),
  error: z.string().nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  completedAt: Timestamp.nullable(),
  operation: undocumented(z.string()),
});
export type Job = z.infer<typeof Job>;

export const JobsQueryBody = z.strictObject({ jobIds: z.array(Uuid).min(1).max(50) });
export const JobsQueryResult = z.object({ jobs: z.array(Job) });

/** GET /resource-jobs/status: the response shape is not shown by the spec; ours. */
export const JobStatusQuery = z.strictObject({
  jobIds: qList(Uuid).pipe(z.array(Uuid).max(50)),
  entityId: Uuid.optional(),
});
export const JobStatusResult = z.object({
  isCompleted: z.boolean(),
  jobs: z.array(
    z.object({
      id: Uuid,
      status: JobStatus,
      progress: z.number().int(),
      isCompleted: z.boolean(),
      resourceId: z.string().nullable(),
      error: z.string().nullable(),
    }),
  ),
});
