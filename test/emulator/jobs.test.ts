import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { Job, JobStatusResult } from "../../provider/api";
import { startJob } from "../../emulator/jobs";
import type { EmulatorContext } from "../../emulator/context";
import type { Bootstrap, JobRec } from "../../emulator/state";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
let bootstrap: Bootstrap;
let ctx: EmulatorContext;
beforeAll(async () => {
  emu = await testEmulator();
  ({ bootstrap, ctx } = emu);
});
afterAll(() => emu.app.close());
const HOUR = 3600_000;
const outsiderEntityId = () => ctx.state.users[bootstrap.users.outsider.id].entityId;

/** A job on the emulator's clock that starts in 30 minutes and ends in an hour, so each state can be observed. */
function slowJob(entityId: string, inject: JobRec["inject"] = null): JobRec {
  const job = startJob(ctx, { entityId, resourceType: "vm", operation: "test.slow", targetId: randomUUID() });
  job.startsAt = ctx.now() + HOUR / 2;
  job.endsAt = ctx.now() + HOUR;
  job.inject = inject;
  return job;
}

const queryJobs = (jobIds: string[], as: "admin" | "member" | "outsider" = "admin") =>
  emu.call<{ jobs: z.infer<typeof Job>[] }>("POST", "/resource/jobs", { as, body: { jobIds } });
const jobStatus = (query: string, as: "admin" | "member" | "outsider" = "admin") =>
  emu.call<z.infer<typeof JobStatusResult>>("GET", `/resource-jobs/status?${query}`, { as });

describe("POST /resource/jobs", () => {
  it("returns the caller's jobs through their lifecycle", async () => {
    const job = slowJob(bootstrap.entityId);
    const pending = await queryJobs([job.id]);
    expect(pending.status).toBe(200);
    expect(pending.body.data!.jobs).toEqual([
      expect.objectContaining({ id: job.id, status: "pending", progress: 0, resourceId: null, completedAt: null }),
    ]);
    emu.advance(HOUR * 0.75);
    const running = (await queryJobs([job.id])).body.data!.jobs[0];
    expect(running.status).toBe("in_progress");
    expect(running.progress).toBeGreaterThan(0);
    expect(running.progress).toBeLessThan(100);
    emu.advance(HOUR);
    const done = (await queryJobs([job.id])).body.data!.jobs[0];
    expect(done).toMatchObject({ status: "completed", progress: 100, resourceId: job.targetId, error: null });
    expect(done.completedAt).not.toBeNull();
    expect(ctx.state.jobs[job.id].status).toBe("completed");
  });

  it("leaves out unknown ids and other tenants' jobs, keeps the order asked and drops repeats", async () => {
    const mine1 = slowJob(bootstrap.entityId);
    const mine2 = slowJob(bootstrap.entityId);
    const theirs = slowJob(outsiderEntityId());
    const unknown = randomUUID();
    const res = await queryJobs([mine2.id, theirs.id, unknown, mine1.id, mine2.id]);
    expect(res.body.data!.jobs.map((j) => j.id)).toEqual([mine2.id, mine1.id]);
    const outsider = await queryJobs([mine1.id, theirs.id], "outsider");
    expect(outsider.body.data!.jobs.map((j) => j.id)).toEqual([theirs.id]);
    const member = await queryJobs([mine1.id], "member");
    expect(member.body.data!.jobs.map((j) => j.id)).toEqual([mine1.id]);
  });

  it("validates jobIds: 1-50 UUIDs", async () => {
    expect((await queryJobs([])).status).toBe(400);
    expect((await queryJobs(["not-a-uuid"])).status).toBe(400);
    expect((await queryJobs(Array.from({ length: 51 }, () => randomUUID()))).status).toBe(400);
    expect((await queryJobs(Array.from({ length: 50 }, () => randomUUID()))).status).toBe(200);
  });

  it("needs authentication", async () => {
    const res = await emu.call("POST", "/resource/jobs", { as: null, body: { jobIds: [randomUUID()] } });
    expect(res.status).toBe(401);
  });

  it("reports a failed job with its error", async () => {
    const job = slowJob(bootstrap.entityId, { kind: "fail", error: "provider refused" });
    emu.advance(2 * HOUR);
    const failed = (await queryJobs([job.id])).body.data!.jobs[0];
    expect(failed).toMatchObject({ status: "failed", error: "provider refused" });
  });
});

describe("GET /resource-jobs/status", () => {
  it("is completed only when every listed visible job has finished", async () => {
    const a = slowJob(bootstrap.entityId);
    const b = slowJob(bootstrap.entityId, { kind: "fail", error: "boom" });
    b.endsAt = ctx.now() + 3 * HOUR;
    const first = await jobStatus(`jobIds=${a.id},${b.id}`);
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ isCompleted: false });
    expect(first.body.data!.jobs.map((j) => [j.id, j.status, j.isCompleted])).toEqual([
      [a.id, "pending", false],
      [b.id, "pending", false],
    ]);
    emu.advance(2 * HOUR);
    const half = await jobStatus(`jobIds=${a.id}&jobIds=${b.id}`);
    expect(half.body.data!.isCompleted).toBe(false);
    expect(half.body.data!.jobs.map((j) => j.isCompleted)).toEqual([true, false]);
    emu.advance(2 * HOUR);
    const all = await jobStatus(`jobIds=${a.id}&jobIds=${b.id}`);
    expect(all.body.data!.isCompleted).toBe(true);
    expect(all.body.data!.jobs[1]).toMatchObject({ status: "failed", error: "boom", isCompleted: true });
    expect(all.body.data!.jobs[0]).toMatchObject({ status: "completed", progress: 100, resourceId: a.targetId });
  });

  it("hides other tenants' jobs", async () => {
    const theirs = slowJob(outsiderEntityId());
    const mine = slowJob(bootstrap.entityId);
    const res = await jobStatus(`jobIds=${theirs.id},${mine.id}`);
    expect(res.body.data!.jobs.map((j) => j.id)).toEqual([mine.id]);
    expect(res.body.data!.isCompleted).toBe(false);
  });

  it("validates the query", async () => {
    expect((await jobStatus("")).status).toBe(400);
    expect((await jobStatus("jobIds=nope")).status).toBe(400);
  });
});
