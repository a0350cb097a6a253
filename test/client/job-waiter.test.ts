import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Job } from "../../provider/api";
import {
  ApiError,
  ClientClosedError,
  JobFailedError,
  JobNotFoundError,
  JobTimeoutError,
  JobWaiter,
} from "../../provider/client";
import type { Pool } from "undici";
import { clientHarness, sleep } from "./helpers";

/** A fake job store behind a fake POST /resource/jobs that records every call. */
function fakeJobs() {
  const jobs = new Map<string, Job>();
  const calls: string[][] = [];
  let failNext: unknown[] = [];
  const beforeCall = new Map<number, () => void>();
  const now = new Date().toISOString();
  return {
    calls,
    add(status: Job["status"] = "pending", progress = 0): string {
      const id = randomUUID();
      jobs.set(id, {
        id,
        status,
        progress,
        resourceType: "volume",
        resourceId: null,
        error: null,
        createdAt: now,
        updatedAt: now,
        completedAt: null,
      });
      return id;
    },
    set(id: string, patch: Partial<Job>) {
      jobs.set(id, { ...jobs.get(id)!, ...patch });
    },
    failWith(...errors: unknown[]) {
      failNext = errors;
    },
    /** Runs `action` just before answering the n-th query (1-based). */
    onCall(n: number, action: () => void) {
      beforeCall.set(n, action);
    },
    query: async (ids: string[]): Promise<Job[]> => {
      calls.push(ids);
      beforeCall.get(calls.length)?.();
      if (failNext.length > 0) throw failNext.shift();
      return ids.flatMap((id) => (jobs.has(id) ? [structuredClone(jobs.get(id)!)] : []));
    },
  };
}

const fast = { pollIntervalMs: 10, maxPollIntervalMs: 40, backoffFactor: 2 };

describe("JobWaiter (unit)", () => {
  it("puts polls off while requests wait for rate budget (at most maxPollIntervalMs), then one poll answers for every job that ended meanwhile", async () => {
    const store = fakeJobs();
    let bound = true;
    const waiter = new JobWaiter(store.query, {
      pollIntervalMs: 10,
      maxPollIntervalMs: 200,
      budgetBound: () => bound,
    });
    const ids = Array.from({ length: 5 }, () => store.add());
    const done = Promise.all(ids.map((id) => waiter.wait(id)));
    await sleep(60);
    expect(store.calls).toEqual([]);
    for (const id of ids) store.set(id, { status: "completed", progress: 100, resourceId: id });
    bound = false;
    await done;
    expect(store.calls).toHaveLength(1);
    expect(waiter.stats.deferred).toBeGreaterThan(2);

    // A budget that stays bound delays a poll by at most maxPollIntervalMs.
    bound = true;
    const late = store.add("completed", 100);
    const started = Date.now();
    await waiter.wait(late);
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(store.calls).toHaveLength(2);
    waiter.close();
  });

  it("polls every awaited job together, in batches of at most 50", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const ids = Array.from({ length: 120 }, () => store.add());
    const done = Promise.all(ids.map((id) => waiter.wait(id)));
    await sleep(25);
    for (const id of ids) store.set(id, { status: "completed", progress: 100, resourceId: id });
    const jobs = await done;
    expect(jobs.map((j) => j.id)).toEqual(ids);
    expect(store.calls.every((batch) => batch.length <= 50)).toBe(true);
    expect(waiter.tickLog.every((t) => t.requests === Math.ceil(t.jobs / 50))).toBe(true);
    expect(waiter.stats.maxRequestsPerTick).toBe(3);
    expect(waiter.stats.requests).toBe(store.calls.length);
    // No id polled twice in one tick.
    expect(store.calls.flat().length).toBeLessThanOrEqual(waiter.stats.ticks * 120);
    expect(waiter.active).toBe(false);
  });

  it("shares one poll between callers waiting for the same job", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const id = store.add();
    const both = Promise.all([waiter.wait(id), waiter.wait(id)]);
    await sleep(15);
    store.set(id, { status: "completed", progress: 100 });
    const [a, b] = await both;
    expect(a.id).toBe(id);
    expect(b.id).toBe(id);
    expect(store.calls.every((batch) => batch.length === 1)).toBe(true);
  });

  it("backs off while nothing changes and returns to the minimum on a change or a new job", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, { pollIntervalMs: 10, maxPollIntervalMs: 40, backoffFactor: 2 });
    const first = store.add("pending", 0);
    let second: Promise<Job> | undefined;
    // It starts at call 5: a change, with no rise of its progress to time it by yet.
    store.onCall(5, () => store.set(first, { status: "in_progress", progress: 10 }));
    store.onCall(8, () => {
      second = waiter.wait(store.add("completed", 100));
    });
    store.onCall(9, () => store.set(first, { status: "completed", progress: 100 }));
    await waiter.wait(first);
    await second;
    // tickLog[i].intervalMs is the delay before tick i: the first tick meets a new job, then 10 → 20 → 40 while
    // nothing changes; tick 5 sees a change, back to 10 → 20; a job added during tick 8 brings it back to 10.
    // Each delay is measured when its timer is armed, so a millisecond may already have passed: up to 2 ms less counts.
    const expected = [10, 10, 20, 40, 40, 10, 20, 40];
    const delays = waiter.tickLog
      .slice(0, 8)
      .map((t, i) => (t.intervalMs <= expected[i]! && t.intervalMs >= expected[i]! - 2 ? expected[i] : t.intervalMs));
    expect(delays).toEqual(expected);
    // The new job's first poll: 10 ms after it was added (during tick 8), not after the first job's 40.
    expect(waiter.tickLog.at(-1)!.intervalMs).toBeLessThanOrEqual(10);
    expect(waiter.tickLog.map((t) => t.jobs)).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 2]);
    expect(waiter.active).toBe(false);
  });

  it("polls a job added while waiting out a long interval at the minimum interval", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, { pollIntervalMs: 10, maxPollIntervalMs: 1000, backoffFactor: 100 });
    const slow = store.add("in_progress", 5);
    const waiting = waiter.wait(slow);
    while (waiter.tickLog.length < 2) await sleep(5);
    // The next tick is due in 1 s; a new job must not wait that long.
    const added = Date.now();
    const quick = await waiter.wait(store.add("completed", 100));
    expect(quick.status).toBe("completed");
    // The timer is armed for the new job's due time (added + 10 ms), measured when it is armed: 10 ms or a little less.
    expect(waiter.tickLog.at(-1)!.intervalMs).toBeLessThanOrEqual(10);
    expect(waiter.tickLog.at(-1)!.at - added).toBeLessThan(500);
    store.set(slow, { status: "completed", progress: 100 });
    await waiting;
  });

  it("rejects with JobFailedError carrying the job", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const id = store.add();
    store.set(id, { status: "failed", error: "volume quota exceeded" });
    const error = await waiter.wait(id).catch((e) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error.code).toBe("JOB_FAILED");
    expect(error.job).toMatchObject({ id, status: "failed" });
    expect(error.message).toContain("volume quota exceeded");
  });

  it("refuses a job id that is not a UUID with JOB_ID_INVALID, without polling", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const error = await waiter.wait("job-42").catch((e) => e);
    expect(error).toMatchObject({ code: "JOB_ID_INVALID" });
    expect(error.message).toContain('"job-42"');
    expect(store.calls).toHaveLength(0);
  });

  it("reports an id absent from several consecutive polls, and stops polling", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, { ...fast, missingPollsLimit: 3 });
    const ghost = randomUUID();
    const error = await waiter.wait(ghost).catch((e) => e);
    expect(error).toBeInstanceOf(JobNotFoundError);
    expect(error).toMatchObject({ code: "JOB_NOT_FOUND", jobId: ghost, polls: 3 });
    expect(error.message).toContain(ghost);
    expect(store.calls).toHaveLength(3);
    expect(waiter.active).toBe(false);
  });

  it("times out a wait with an error naming the job and its last state, and leaves no timer", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const id = store.add("in_progress", 42);
    const error = await waiter.wait(id, { timeoutMs: 60 }).catch((e) => e);
    expect(error).toBeInstanceOf(JobTimeoutError);
    expect(error).toMatchObject({ code: "JOB_TIMEOUT", jobId: id, timeoutMs: 60 });
    expect(error.message).toContain(id);
    expect(error.message).toContain("in_progress at 42%");
    expect(waiter.awaited).toEqual([]);
    expect(waiter.active).toBe(false);
    const calls = store.calls.length;
    await sleep(50);
    expect(store.calls.length).toBe(calls);
  });

  it("rejects an id that is not a UUID without polling it", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    await expect(waiter.wait("job-1")).rejects.toThrow(/UUID/);
    expect(store.calls).toHaveLength(0);
  });

  it("waitAll rejects on the first failure and abandons the other waits", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const ok = store.add();
    const bad = store.add();
    store.set(bad, { status: "failed", error: "boom" });
    await expect(waiter.waitAll([ok, bad])).rejects.toBeInstanceOf(JobFailedError);
    expect(waiter.awaited).toEqual([]);
    expect(waiter.active).toBe(false);
  });

  it("fails the waits of a batch at once on a permanent error, after retries on transient ones", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, { ...fast, maxConsecutiveErrors: 3 });
    const forbidden = new ApiError({
      status: 403,
      code: "INSUFFICIENT_PERMISSIONS",
      message: "no",
      method: "POST",
      path: "/resource/jobs",
    });
    store.failWith(forbidden);
    await expect(waiter.wait(store.add())).rejects.toBe(forbidden);
    expect(store.calls).toHaveLength(1);

    const flaky = new ApiError({
      status: 503,
      code: "SERVER_ERROR",
      message: "down",
      method: "POST",
      path: "/resource/jobs",
    });
    store.failWith(flaky, flaky);
    const id = store.add();
    const done = waiter.wait(id);
    await sleep(40);
    store.set(id, { status: "completed", progress: 100 });
    expect((await done).id).toBe(id);
    expect(waiter.stats.failedRequests).toBe(3);

    store.failWith(flaky, flaky, flaky);
    await expect(waiter.wait(store.add())).rejects.toBe(flaky);
  });

  it("close rejects pending waits and stops polling", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const pending = waiter.wait(store.add());
    await sleep(15);
    waiter.close();
    await expect(pending).rejects.toBeInstanceOf(ClientClosedError);
    await expect(pending).rejects.toMatchObject({ code: "CLIENT_CLOSED" });
    expect(waiter.active).toBe(false);
    await expect(waiter.wait(store.add())).rejects.toBeInstanceOf(ClientClosedError);
  });

  it("honours an abort signal", async () => {
    const store = fakeJobs();
    const waiter = new JobWaiter(store.query, fast);
    const controller = new AbortController();
    const pending = waiter.wait(store.add(), { signal: controller.signal });
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
    expect(waiter.active).toBe(false);
  });
});

/** Jobs that complete on their own `durationMs` after they were added, as the API's do. */
function timedJobs() {
  const jobs = new Map<string, { createdAt: number; durationMs: number }>();
  const calls: string[][] = [];
  return {
    calls,
    add(durationMs: number): string {
      const id = randomUUID();
      jobs.set(id, { createdAt: Date.now(), durationMs });
      return id;
    },
    query: async (ids: string[]): Promise<Job[]> => {
      calls.push(ids);
      const now = Date.now();
      return ids.flatMap((id) => {
        const job = jobs.get(id);
        if (!job) return [];
        const done = now >= job.createdAt + job.durationMs;
        const iso = (ms: number) => new Date(ms).toISOString();
        return [
          {
            id,
            status: done ? ("completed" as const) : ("in_progress" as const),
            progress: done ? 100 : Math.floor(((now - job.createdAt) / job.durationMs) * 100),
            resourceType: "volume",
            resourceId: done ? id : null,
            error: null,
            createdAt: iso(job.createdAt),
            updatedAt: iso(now),
            completedAt: done ? iso(job.createdAt + job.durationMs) : null,
          },
        ];
      });
    },
  };
}

describe("JobWaiter: polls timed by the kind's duration", () => {
  it("learns how long a kind of job takes, then polls the next ones of that kind once, when they are done", async () => {
    const store = timedJobs();
    const waiter = new JobWaiter(store.query, { pollIntervalMs: 10, maxPollIntervalMs: 40, backoffFactor: 2 });
    const first = store.add(120);
    waiter.started([first], "createVolume");
    await waiter.wait(first);
    const learning = store.calls.length;
    expect(learning).toBeGreaterThan(2);
    expect(waiter.expectedDurationMs("createVolume")).toBe(120);

    const next = store.add(120);
    waiter.started([next], "createVolume");
    await waiter.wait(next);
    expect(store.calls.length - learning).toBe(1);
  });

  it("answers jobs that end close together with one poll (requests follow time, not the jobs in flight)", async () => {
    const store = timedJobs();
    const waiter = new JobWaiter(store.query, { pollIntervalMs: 10, maxPollIntervalMs: 40, coalesceFraction: 0.25 });
    const seed = store.add(200);
    waiter.started([seed], "createVm");
    await waiter.wait(seed);
    const before = store.calls.length;
    // Eight jobs started 10 ms apart (as the engine starts them): each may wait 50 ms for the others.
    const waits: Promise<Job>[] = [];
    for (let i = 0; i < 8; i++) {
      const id = store.add(200);
      waiter.started([id], "createVm");
      waits.push(waiter.wait(id));
      await sleep(10);
    }
    const jobs = await Promise.all(waits);
    expect(jobs.every((j) => j.status === "completed")).toBe(true);
    const polls = store.calls.length - before;
    // Without coalescing it would be one poll per job (8); ends 10 ms apart within 50 ms of slack share polls.
    expect(polls).toBeLessThanOrEqual(4);
    expect(store.calls.slice(before).every((batch) => batch.length <= 8)).toBe(true);
  });

  it("waits for others only when one becomes due within the slack: a job alone in it is polled when due", async () => {
    const store = timedJobs();
    // A 200 ms kind may wait 100 ms (coalesceFraction 0.5) for others.
    const waiter = new JobWaiter(store.query, { pollIntervalMs: 10, maxPollIntervalMs: 40, coalesceFraction: 0.5 });
    const seed = store.add(200);
    waiter.started([seed], "createVm");
    await waiter.wait(seed);
    const ticksBefore = waiter.tickLog.length;

    // The jobs below end a little before they are due (195 ms): a timer firing a millisecond early still finds them done.
    const alone = store.add(195);
    waiter.started([alone], "createVm");
    await waiter.wait(alone);
    const [lone] = waiter.tickLog.slice(ticksBefore);
    // Armed for its due time (200 ms after it started), not for the end of its slack (300 ms).
    expect(lone.intervalMs).toBeLessThanOrEqual(200);
    expect(lone.due).toBe(1);

    // A job due 40 ms after another, within the other's 100 ms of slack: one tick, when the later one is due.
    const pollsBefore = store.calls.length;
    const ticksBeforePair = waiter.tickLog.length;
    const first = store.add(195);
    waiter.started([first], "createVm");
    const firstDone = waiter.wait(first);
    await sleep(40);
    const second = store.add(195);
    waiter.started([second], "createVm");
    await Promise.all([firstDone, waiter.wait(second)]);
    expect(store.calls.length - pollsBefore).toBe(1);
    const [pair] = waiter.tickLog.slice(ticksBeforePair);
    expect(pair.due).toBe(2);
    // Armed (when the second job started, ~40 ms in) for the second's due time: ~200 ms later, not the first's
    // deadline (300 ms after the first started, ~260 ms later).
    expect(pair.intervalMs).toBeLessThanOrEqual(200);
  });

  it("the client tells the poller which operation started each job (202 answers)", async () => {
    const h = await clientHarness({ jobDurationMs: 9000 });
    const client = h.client({ jobs: { pollIntervalMs: 50, maxPollIntervalMs: 200 } });
    const dc = h.emulator.bootstrap.fixtures.datacenters[0].id;
    const create = (name: string) =>
      client.createVolume({ body: { name, datacenterId: dc, volumeTypeId: 1, volumeSizeId: 101, sizeGb: 10 } });
    await client.jobs.wait((await create("timed-1")).jobId);
    const learned = client.jobs.expectedDurationMs("createVolume");
    // volume.create is 10 s of the longest 90 s: 1 s here, measured on the emulator's clock.
    expect(learned).toBeGreaterThanOrEqual(990);
    expect(learned).toBeLessThanOrEqual(1010);
    const before = (await h.requestLog({ route: "queryJobs" })).length;
    await client.jobs.wait((await create("timed-2")).jobId);
    const polls = (await h.requestLog({ route: "queryJobs" })).slice(before);
    expect(polls).toHaveLength(1);
  });
});

describe("JobWaiter: polls timed by a running job's progress", () => {
  /** One job that waits `queuedMs` (pending, progress 0), then reports `progressAt(ms in progress)` until `endMs`. */
  function progressingJob(endMs: number, queuedMs: number, progressAt: (ms: number) => number) {
    const createdAt = Date.now();
    const id = randomUUID();
    const calls: number[] = [];
    const iso = (ms: number) => new Date(ms).toISOString();
    const query = async (ids: string[]): Promise<Job[]> => {
      const elapsed = Date.now() - createdAt;
      calls.push(elapsed);
      const done = elapsed >= endMs;
      const running = elapsed >= queuedMs;
      return ids.map((jobId) => ({
        id: jobId,
        status: done ? "completed" : running ? "in_progress" : "pending",
        progress: done ? 100 : running ? Math.min(99, Math.max(1, Math.floor(progressAt(elapsed - queuedMs)))) : 0,
        resourceType: "volume",
        resourceId: done ? jobId : null,
        error: null,
        createdAt: iso(createdAt),
        updatedAt: iso(Date.now()),
        completedAt: done ? iso(createdAt + endMs) : null,
      }));
    };
    return { id, calls, query };
  }
  // While a job's progress changes, the interval stays at its minimum: 10 ms here, ~40 polls for a 400 ms job.
  const options = { pollIntervalMs: 10, maxPollIntervalMs: 5_000, backoffFactor: 1.5 };

  it("a job of a kind not seen before is polled when its progress says it is done: a few polls, not one per interval", async () => {
    // 40 ms queued, then 360 ms of progress rising evenly (as the emulator's jobs do).
    const job = progressingJob(400, 40, (ms) => (ms / 360) * 100);
    const waiter = new JobWaiter(job.query, options);
    const done = await waiter.wait(job.id);
    expect(done.status).toBe("completed");
    const seenAt = job.calls.at(-1)!;
    expect(seenAt - 400).toBeLessThan(60); // seen done soon after its end
    expect(job.calls.length).toBeLessThanOrEqual(12);
  });

  it("a job whose progress speeds up late is still seen done soon: it looks no further ahead than it watched", async () => {
    // 1 % to 5 % over 300 ms (a rate that predicts seconds more), then done at 400 ms.
    const job = progressingJob(400, 0, (ms) => 1 + (ms / 300) * 4);
    const waiter = new JobWaiter(job.query, options);
    await waiter.wait(job.id);
    expect(job.calls.at(-1)!).toBeLessThan(800); // the estimate alone would wait until the 5 s maximum interval
  });
});

describe("JobWaiter against the emulator", () => {
  it("awaits 120 concurrent volume creates with at most ⌈120/50⌉ = 3 job queries per tick", async () => {
    // Volume creates take ~0.9 s here, so that many jobs are awaited at the same time.
    const h = await clientHarness({ jobDurationMs: 8000 });
    const client = h.client({ jobs: { pollIntervalMs: 100, maxPollIntervalMs: 400 } });
    const dc = h.emulator.bootstrap.fixtures.datacenters[0].id;
    const jobs = await Promise.all(
      Array.from({ length: 120 }, async (_, i) => {
        const created = await client.createVolume({
          body: { name: `bulk-${i}`, datacenterId: dc, volumeTypeId: 1, volumeSizeId: 101, sizeGb: 10 },
        });
        return client.jobs.wait(created.jobId, { timeoutMs: 30_000 });
      }),
    );
    expect(jobs).toHaveLength(120);
    expect(jobs.every((j) => j.status === "completed")).toBe(true);
    const volumes = Object.values(h.emulator.ctx.state.volumes).filter((v) => v.name.startsWith("bulk-"));
    expect(volumes).toHaveLength(120);
    expect(volumes.every((v) => v.status === "Available")).toBe(true);

    const { stats, tickLog } = client.jobs;
    expect(stats.maxJobsPerTick).toBeGreaterThan(100);
    expect(stats.maxRequestsPerTick).toBe(3);
    expect(tickLog.every((t) => t.requests <= Math.ceil(t.jobs / 50))).toBe(true);

    // The emulator's own log: queryJobs requests, grouped into ticks (ticks are ≥ 100 ms apart).
    const logged = await h.requestLog({ route: "queryJobs" });
    expect(logged).toHaveLength(stats.requests);
    const ticks: number[][] = [];
    for (const entry of logged) {
      const last = ticks.at(-1);
      if (last && entry.at - last[0] < 50) last.push(entry.at);
      else ticks.push([entry.at]);
    }
    expect(ticks).toHaveLength(stats.ticks);
    expect(Math.max(...ticks.map((t) => t.length))).toBe(3);
    expect(client.jobs.active).toBe(false);
  });

  it("reports another tenant's job as not found instead of polling forever", async () => {
    const h = await clientHarness();
    const outsider = h.client({ as: "outsider" });
    const created = await outsider.createVolume({
      body: {
        name: "theirs",
        datacenterId: h.emulator.bootstrap.fixtures.datacenters[0].id,
        volumeTypeId: 1,
        volumeSizeId: 101,
        sizeGb: 10,
      },
    });
    const admin = h.client({ jobs: { pollIntervalMs: 10, maxPollIntervalMs: 20, missingPollsLimit: 3 } });
    const error = await admin.jobs.wait(created.jobId).catch((e) => e);
    expect(error).toBeInstanceOf(JobNotFoundError);
    expect(admin.jobs.stats.requests).toBe(3);
    expect(h.emulator.ctx.state.jobs[created.jobId]).toBeDefined();
  });

  it("client.close() rejects pending waits and later calls, and closes the client's own dispatcher", async () => {
    const h = await clientHarness({ jobDurationMs: 60_000 });
    const client = h.client();
    const created = await client.createVolume({
      body: {
        name: "slow",
        datacenterId: h.emulator.bootstrap.fixtures.datacenters[0].id,
        volumeTypeId: 1,
        volumeSizeId: 101,
        sizeGb: 10,
      },
    });
    const pending = client.jobs.wait(created.jobId);
    while (client.jobs.stats.ticks < 1) await sleep(10);
    // Attach the expectation before closing: close() rejects the wait while it is still closing the dispatcher.
    const rejected = expect(pending).rejects.toBeInstanceOf(ClientClosedError);
    await client.close();
    await rejected;
    await expect(client.check()).rejects.toBeInstanceOf(ClientClosedError);
    expect(client.jobs.active).toBe(false);
    expect((client.dispatcher as Pool).closed).toBe(true);
  });
});
