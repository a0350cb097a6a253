import type { IncomingHttpHeaders } from "node:http";
import { describe, expect, it } from "vitest";
import { Pacer, RateBudget, type Permit } from "../../provider/client";
import { clientHarness, sleep } from "./helpers";

/** Headers as the API sends them, for a window ending `resetInMs` from now. */
function limitHeaders(limit: number, remaining: number, resetAtMs: number): IncomingHttpHeaders {
  return {
    "x-ratelimit-limit": String(limit),
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset": String(Math.ceil(resetAtMs / 1000)),
  };
}

/** Requests that have been granted but not yet answered, in grant order. */
function grantTracker(budget: RateBudget, count: number) {
  const granted: Permit[] = [];
  const all = Array.from({ length: count }, () => budget.acquire().then((p) => granted.push(p)));
  return { granted, all };
}

const settle = () => sleep(5);

describe("RateBudget (unit)", () => {
  it("lets only a few requests through before the first response", async () => {
    const budget = new RateBudget({ initialConcurrency: 3, jitterMs: 0 });
    const { granted } = grantTracker(budget, 10);
    await settle();
    expect(granted).toHaveLength(3);
    expect(budget.snapshot()).toMatchObject({ state: "unknown", inFlight: 3, queued: 7 });
  });

  it("counts requests in flight against the remaining budget", async () => {
    const now = 1_000_000_000_000;
    const budget = new RateBudget({ initialConcurrency: 2, jitterMs: 0, now: () => now, slowStart: false });
    const { granted } = grantTracker(budget, 20);
    await settle();
    // First answer: 10 left in this window; one request is still in flight, so 9 more may go.
    granted[0].done(limitHeaders(12, 10, now + 60_000), 200);
    await settle();
    expect(granted).toHaveLength(2 + 9);
    expect(budget.snapshot()).toMatchObject({ state: "known", remaining: 10, inFlight: 10 });
    // A late answer of the same window with a higher figure does not raise the budget.
    granted[1].done(limitHeaders(12, 11, now + 60_000), 200);
    await settle();
    expect(granted).toHaveLength(12);
  });

  it("waits until the window resets when nothing is left, then probes again", async () => {
    const budget = new RateBudget({ initialConcurrency: 1, jitterMs: 0 });
    const { granted } = grantTracker(budget, 3);
    await settle();
    granted[0].done(limitHeaders(1, 0, Date.now() + 1000), 200);
    await settle();
    expect(granted).toHaveLength(1);
    const snapshot = budget.snapshot();
    expect(snapshot).toMatchObject({ state: "known", remaining: 0, queued: 2 });
    while (granted.length < 2) await sleep(20);
    expect(Date.now()).toBeGreaterThanOrEqual(snapshot.resetAt);
    // After the reset only a probe goes until new figures arrive.
    await settle();
    expect(granted).toHaveLength(2);
    granted[1].done(limitHeaders(5, 4, Date.now() + 60_000), 200);
    await settle();
    expect(granted).toHaveLength(3);
  });

  it("pauses the whole queue on a 429", async () => {
    const budget = new RateBudget({ initialConcurrency: 5, jitterMs: 0 });
    const first = await budget.acquire();
    first.done(limitHeaders(100, 50, Date.now() + 60_000), 429);
    const started = Date.now();
    budget.pause(150);
    const { granted } = grantTracker(budget, 3);
    await sleep(50);
    expect(granted).toHaveLength(0);
    while (granted.length < 3) await sleep(10);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it("stops pacing when the server sends no limit headers", async () => {
    const budget = new RateBudget({ initialConcurrency: 1, jitterMs: 0 });
    const { granted } = grantTracker(budget, 50);
    await settle();
    expect(granted).toHaveLength(1);
    granted[0].done({}, 200);
    await settle();
    expect(granted).toHaveLength(50);
    expect(budget.snapshot().state).toBe("unlimited");
  });

  it("does not conclude 'no limit' from an error answer without headers", async () => {
    const budget = new RateBudget({ initialConcurrency: 1, jitterMs: 0 });
    const { granted } = grantTracker(budget, 3);
    await settle();
    granted[0].done({}, 404);
    await settle();
    expect(budget.snapshot().state).toBe("unknown");
    expect(granted).toHaveLength(2);
  });

  it("drops a waiter whose signal aborts, and rejects everyone on close", async () => {
    const budget = new RateBudget({ initialConcurrency: 1, jitterMs: 0 });
    await budget.acquire();
    const controller = new AbortController();
    const aborted = budget.acquire(controller.signal);
    const closed = budget.acquire();
    controller.abort(new Error("cancelled"));
    await expect(aborted).rejects.toThrow("cancelled");
    expect(budget.snapshot().queued).toBe(1);
    budget.close();
    await expect(closed).rejects.toThrow(/closed/);
  });

  it("joining a window others have mostly spent, sends from what is left at once; its part shrinks as they go on", async () => {
    const now = 1_000_000_000_000;
    const budget = new RateBudget({ initialConcurrency: 4, jitterMs: 0, now: () => now });
    const { granted } = grantTracker(budget, 12);
    await settle();
    expect(granted).toHaveLength(4);
    // The first answer: 40 left of 100, of which this process spent one (the others 59, before it joined). Counted
    // from the window's start its part would be 1/60 of what is left (nothing: it would wait for the next window).
    granted[0].done(limitHeaders(100, 40, now + 60_000), 200);
    await settle();
    expect(granted).toHaveLength(5);
    // The next answer: the others spent 26 more meanwhile. Its part since it joined is now 5 (answered or in flight) of
    // 31: of the 13 left that is 2, and 3 of its requests are already in flight: none more now.
    granted[1].done(limitHeaders(100, 13, now + 60_000), 200);
    await settle();
    expect(granted).toHaveLength(5);
    expect(budget.snapshot()).toMatchObject({ remaining: 13, inFlight: 3, queued: 7 });
  });

  it("keeps the stricter per-route limits in budgets of their own", () => {
    const pacer = new Pacer();
    expect(pacer.budgetFor("getVm")).toBe(pacer.budgetFor("listVms"));
    expect(pacer.budgetFor("signIn")).not.toBe(pacer.budgetFor("getVm"));
    expect(pacer.budgetFor("verifyTotp")).not.toBe(pacer.budgetFor("signIn"));
    expect(pacer.budgetFor("signIn")).toBe(pacer.budgetFor("signIn"));
  });
});

describe("pacing against the emulator's rate limit", () => {
  it("spreads 300 concurrent GETs over the windows of a 100-per-2 s limit with zero 429s", async () => {
    const h = await clientHarness({ rateLimit: 100, rateLimitWindowMs: 2000 });
    const client = h.client();
    const results = await Promise.all(Array.from({ length: 300 }, () => client.check()));
    expect(results).toHaveLength(300);
    expect(results.every((r) => r.user.id === h.emulator.bootstrap.users.admin.id)).toBe(true);
    expect(h.exchanges.filter((e) => e.status === 429)).toHaveLength(0);
    const log = await h.requestLog({ route: "check" });
    expect(log).toHaveLength(300);
    expect(log.filter((e) => e.status === 429)).toHaveLength(0);
    expect(await h.requestLog({ status: "429" })).toHaveLength(0);
  });

  it("absorbs the 429s caused by another client of the same user: none reaches the caller", async () => {
    const h = await clientHarness({ rateLimit: 30, rateLimitWindowMs: 1000 });
    // Two clients with the same key but separate budgets: the server pools them, the clients cannot know.
    const a = h.client();
    const b = h.client();
    const results = await Promise.all([
      ...Array.from({ length: 30 }, () => a.me()),
      ...Array.from({ length: 30 }, () => b.me()),
    ]);
    expect(results).toHaveLength(60);
    expect((await h.requestLog({ route: "me", status: "200" })).length).toBe(60);
    // They did collide: the 429s happened, and were waited out and retried.
    expect((await h.requestLog({ route: "me", status: "429" })).length).toBeGreaterThan(0);
    expect(h.exchanges.filter((e) => e.status === 429).length).toBeGreaterThan(0);
  });

  it("five processes on one key collided (each spent the whole window the headers showed): each takes its share", async () => {
    const h = await clientHarness({ rateLimit: 100, rateLimitWindowMs: 2000 });
    // Five clients with pacers of their own stand for five processes (stacks in CI jobs) using one API key, all
    // starting at once. The provider's pacer probes with one request.
    const results = await Promise.allSettled(
      Array.from({ length: 5 }, () => {
        const client = h.client({ pacing: new Pacer({ initialConcurrency: 1 }) });
        return Promise.all(Array.from({ length: 80 }, () => client.me()));
      }),
    );
    expect(results.filter((r) => r.status === "rejected")).toEqual([]);
    expect(await h.requestLog({ route: "me", status: "200" })).toHaveLength(400);
    // Before: 303 429s (each process spent what remained as if alone); now a few at most: 0-8 on a quiet machine, 9
    // seen on one loaded by two other test runs (the processes read the figures later, so they collide more often).
    expect((await h.requestLog({ route: "me", status: "429" })).length).toBeLessThanOrEqual(12);
  });

  it("a process starting while another has spent most of the window sends at once from what is left, with no 429", async () => {
    // A window of 60 s: waiting for the next one would take far longer than the 10 s allowed below.
    const h = await clientHarness({ rateLimit: 100, rateLimitWindowMs: 60_000 });
    const busy = h.client({ pacing: new Pacer() });
    await Promise.all(Array.from({ length: 70 }, () => busy.me()));
    const late = h.client({ pacing: new Pacer() });
    const outcome = await Promise.race([
      Promise.all(Array.from({ length: 10 }, () => late.me())).then(() => "sent"),
      sleep(10_000).then(() => "waited for the next window"),
    ]);
    expect(outcome).toBe("sent");
    expect(await h.requestLog({ route: "me", status: "200" })).toHaveLength(80);
    expect(await h.requestLog({ status: "429" })).toHaveLength(0);
  }, 20_000);

  it("a Pacer shared by two clients of one credential avoids those 429s", async () => {
    const h = await clientHarness({ rateLimit: 30, rateLimitWindowMs: 1000 });
    const pacer = new Pacer();
    const a = h.client({ pacing: pacer });
    const b = h.client({ pacing: pacer });
    await Promise.all([...Array.from({ length: 30 }, () => a.me()), ...Array.from({ length: 30 }, () => b.me())]);
    expect(await h.requestLog({ status: "429" })).toHaveLength(0);
    expect((await h.requestLog({ route: "me" })).length).toBe(60);
    pacer.close();
  });
});
