import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { compilePathPattern, type FaultRule, parseFaultSpec } from "../../emulator/faults";
import { advanceJobs, startJob } from "../../emulator/jobs";
import { startEmulator } from "../../emulator/server";
import { type TestEmulator, testEmulator } from "../helpers/emulator";

describe("fault spec syntax", () => {
  it("parses the target shorthands and every field", () => {
    expect(
      parseFaultSpec(
        "createVolume,status=503,count=2; GET /resource/virtual-machines/*,latency=300ms,p=0.2;" +
          "/auth/**,error=SERVER_ERROR,message=boom,latency=1s;" +
          "job=volume.create,fail=Provider quota exceeded;job=vm.*,stall,p=0.1\nmethod=delete,status=500",
      ),
    ).toEqual([
      { kind: "request", route: "createVolume", status: 503, count: 2 },
      { kind: "request", method: "GET", path: "/resource/virtual-machines/*", latencyMs: 300, probability: 0.2 },
      { kind: "request", path: "/auth/**", error: "SERVER_ERROR", message: "boom", latencyMs: 1000 },
      { kind: "job", operation: "volume.create", outcome: "fail", message: "Provider quota exceeded" },
      { kind: "job", operation: "vm.*", outcome: "stall", probability: 0.1 },
      { kind: "request", method: "DELETE", status: 500 },
    ]);
    expect(parseFaultSpec(" ; ")).toEqual([]);
    expect(
      parseFaultSpec("createVm,status=503,after,count=1;method=DELETE,drop,after,p=0.3;attachVolume,drop"),
    ).toEqual([
      { kind: "request", route: "createVm", status: 503, after: true, count: 1 },
      { kind: "request", method: "DELETE", drop: true, after: true, probability: 0.3 },
      { kind: "request", route: "attachVolume", drop: true },
    ]);
  });

  it.each([
    ["check,colour=red", /unknown field "colour"/],
    ["check,latency=soon", /latency must be like/],
    ["noSuchRoute,status=500", /route must be the name of a contract route/],
    ["check", /needs status, error, latency or drop/],
    ["status=500", /needs route, method or path/],
    ["check,status=200", /status/],
    ["check,p=2", /probability/],
    ["check,count=0", /count/],
    ["job=vm.create", /outcome/],
    ["job=vm.create,stall=yes", /stall takes no value/],
    ["check,status=", /status needs a value/],
    ["createVm,status=429,after", /after: .*needs a 5xx status/],
    ["createVm,error=CONFLICT,after", /after: .*needs a 5xx status/],
    ["createVm,after", /needs status, error, latency or drop/],
    ["createVm,drop,status=503", /drop sends no answer/],
    ["createVm,drop=yes", /drop takes no value/],
    ["createVm,status=503,after=1", /after takes no value/],
  ])("rejects %j", (spec, message) => {
    expect(() => parseFaultSpec(spec)).toThrow(message);
  });

  it("matches path patterns relative to /v1 with *, ** and :name", () => {
    const m = (pattern: string, path: string) => compilePathPattern(pattern).test(path);
    expect(m("/resource/volumes/*", "/resource/volumes/abc")).toBe(true);
    expect(m("/v1/resource/volumes/:id", "/resource/volumes/abc")).toBe(true);
    expect(m("/resource/volumes/*", "/resource/volumes/abc/attach")).toBe(false);
    expect(m("/resource/**", "/resource/volumes/abc/attach")).toBe(true);
    expect(m("/resource/vol*", "/resource/volumes")).toBe(true);
    expect(m("/resource/volumes", "/resource/volumes/")).toBe(true);
    expect(m("/resource/volumes", "/resource/networks")).toBe(false);
    expect(m("/a.b", "/axb")).toBe(false);
  });
});

const faultsOf = async (em: TestEmulator) => (await em.call<FaultRule[]>("GET", "/__admin/faults")).body.data!;

describe("request faults", () => {
  it("from --faults answer the error envelope before the handler, for the next N matches only", async () => {
    const em = await testEmulator({ faults: "check,status=503,count=2" });
    const first = await em.call("GET", "/auth/check");
    expect(first.status).toBe(503);
    expect(first.body).toEqual({ success: false, error: "SERVER_ERROR", message: "Injected fault: 503 SERVER_ERROR" });
    expect((await em.call("GET", "/auth/check")).status).toBe(503);
    expect((await em.call("GET", "/auth/check")).status).toBe(200);
    expect((await em.call("GET", "/auth/check")).status).toBe(200);
    expect(await faultsOf(em)).toMatchObject([{ id: 1, kind: "request", route: "check", fired: 2, count: 0 }]);
    const logged = (await em.call<{ status: number }[]>("GET", "/__admin/requests?route=check")).body.data!;
    expect(logged.map((e) => e.status)).toEqual([503, 503, 200, 200]);
  });

  it("answer even invalid or unauthenticated requests, and only those that match method and path", async () => {
    const em = await testEmulator({ faults: "POST /auth/**,status=500" });
    const hit = await em.call("POST", "/auth/sign-in/email", { as: null, body: { bogus: true } });
    expect(hit.status).toBe(500);
    expect(hit.body.error).toBe("SERVER_ERROR");
    expect((await em.call("GET", "/auth/check")).status).toBe(200);
  });

  it("create nothing: the handler never runs", async () => {
    const em = await testEmulator({ faults: "POST /resource/networks,status=503;POST /resource/volumes,status=500" });
    const counts = () => [
      Object.keys(em.ctx.state.networks).length,
      Object.keys(em.ctx.state.volumes).length,
      Object.keys(em.ctx.state.jobs).length,
    ];
    const dc = em.bootstrap.fixtures.datacenters[0].id;
    const net = await em.call("POST", "/resource/networks", {
      body: { name: "faulted-net", datacenterId: dc, networkType: "standard" },
    });
    expect(net.status).toBe(503);
    const vol = await em.call("POST", "/resource/volumes", {
      body: { name: "faulted-vol", datacenterId: dc, volumeTypeId: 1, volumeSizeId: 101, sizeGb: 10 },
    });
    expect(vol.status).toBe(500);
    expect(counts()).toEqual([0, 0, 0]);
  });

  it("are managed through the admin API: add, replace, delete one, clear", async () => {
    const em = await testEmulator();
    const added = await em.call<FaultRule[]>("POST", "/__admin/faults", {
      body: { spec: "GET /auth/check,status=500" },
    });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject([{ kind: "request", method: "GET", path: "/auth/check", status: 500 }]);
    expect((await em.call("GET", "/auth/check")).status).toBe(500);

    const replaced = await em.call<FaultRule[]>("PUT", "/__admin/faults", {
      body: { rules: [{ kind: "request", route: "check", error: "RATE_LIMIT_EXCEEDED" }] },
    });
    expect(replaced.status).toBe(200);
    expect(await faultsOf(em)).toHaveLength(1);
    const limited = await em.call("GET", "/auth/check");
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ error: "RATE_LIMIT_EXCEEDED", data: { retryAfter: 1 } });
    expect(limited.headers["retry-after"]).toBe("1");

    const single = await em.call<FaultRule[]>("POST", "/__admin/faults", {
      body: { kind: "request", route: "me", status: 502, message: "upstream, down; really" },
    });
    const id = single.body.data![0].id;
    expect((await em.call("GET", "/users/me")).body).toMatchObject({
      error: "SERVER_ERROR",
      message: "upstream, down; really",
    });
    expect((await em.call("DELETE", `/__admin/faults/${id}`)).status).toBe(200);
    expect((await em.call("DELETE", `/__admin/faults/${id}`)).status).toBe(404);
    expect((await faultsOf(em)).map((r) => r.id)).not.toContain(id);

    expect((await em.call("DELETE", "/__admin/faults")).body.data).toEqual({ cleared: 1 });
    expect(await faultsOf(em)).toEqual([]);
    expect((await em.call("GET", "/auth/check")).status).toBe(200);
  });

  it("refuse malformed admin bodies with 400 INVALID_REQUEST and keep the rules unchanged", async () => {
    const em = await testEmulator({ faults: "check,latency=1" });
    const bad = [
      { spec: "check,colour=red" },
      { spec: "check", extra: 1 },
      { kind: "request", route: "check", status: 200 },
      { kind: "job", operation: "vm.create", outcome: "explode" },
      { rules: [{ kind: "request" }] },
      [1, 2],
    ];
    for (const body of bad) {
      const r = await em.call("PUT", "/__admin/faults", { body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body).toMatchObject({ success: false, error: "INVALID_REQUEST" });
    }
    const noType = await em.call("POST", "/__admin/faults", {
      body: JSON.stringify({ spec: "check,status=500" }),
      headers: { "content-type": "text/plain" },
    });
    expect(noType.status).toBe(400);
    expect(await faultsOf(em)).toMatchObject([{ route: "check", latencyMs: 1 }]);
  });

  it("draw probabilities from the seeded random source: same seed, same outcomes", async () => {
    const run = async (seed: number) => {
      const em = await testEmulator({ seed, faults: "check,status=500,p=0.5" });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) statuses.push((await em.call("GET", "/auth/check")).status);
      return statuses;
    };
    const a = await run(42);
    expect(await run(42)).toEqual(a);
    expect(a).toContain(200);
    expect(a).toContain(500);
    expect(await run(7)).not.toEqual(a);
  });

  it("add latency (alone or before an error)", async () => {
    const em = await testEmulator({ faults: "check,latency=150ms;me,latency=100,status=500" });
    let started = performance.now();
    expect((await em.call("GET", "/auth/check")).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    started = performance.now();
    expect((await em.call("GET", "/users/me")).status).toBe(500);
    expect(performance.now() - started).toBeGreaterThanOrEqual(95);
  });
});

describe("lost answers: faults after the handler", () => {
  const networkBody = (em: TestEmulator, name: string) => ({
    name,
    datacenterId: em.bootstrap.fixtures.datacenters[0].id,
    networkType: "standard",
  });
  const named = (em: TestEmulator, name: string) => Object.values(em.ctx.state.networks).filter((n) => n.name === name);

  it("with a 5xx: the request takes effect (record and job made), the answer is the error envelope", async () => {
    const em = await testEmulator({ faults: "createNetwork,status=503,after,count=1;deleteNetwork,status=500,after" });
    const jobs = Object.keys(em.ctx.state.jobs).length;
    const lost = await em.call("POST", "/resource/networks", { body: networkBody(em, "lost-answer") });
    expect(lost.status).toBe(503);
    expect(lost.body).toEqual({ success: false, error: "SERVER_ERROR", message: "Injected fault: 503 SERVER_ERROR" });
    expect(named(em, "lost-answer")).toHaveLength(1);
    expect(Object.keys(em.ctx.state.jobs)).toHaveLength(jobs + 1);
    // The rule has fired once: the same request now answers as usual (a duplicate name: 409).
    expect((await em.call("POST", "/resource/networks", { body: networkBody(em, "lost-answer") })).status).toBe(409);
    await em.settle();
    const [network] = named(em, "lost-answer");
    const deleted = await em.call("DELETE", `/resource/networks/${network!.id}`);
    expect(deleted.status).toBe(500);
    await em.settle();
    expect(named(em, "lost-answer")).toEqual([]);
    const logged = (await em.call<{ route: string; status: number }[]>("GET", "/__admin/requests")).body.data!;
    expect(
      logged.filter((e) => e.route !== null && e.route.endsWith("Network")).map((e) => `${e.route} ${e.status}`),
    ).toEqual(["createNetwork 503", "createNetwork 409", "deleteNetwork 500"]);
    expect(await faultsOf(em)).toMatchObject([{ fired: 1, count: 0 }, { fired: 1 }]);
  });

  it("with drop: the connection closes without an answer, after the handler (record made) or before it (none)", async () => {
    const em = await startEmulator({ port: 0, jobDurationMs: 20, rateLimit: 0, strictLimits: false });
    try {
      const admin = em.baseUrl.replace(/\/v1$/, "/__admin");
      const faults = await fetch(`${admin}/faults`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ spec: "createNetwork,drop,after,count=1;createNetwork,drop,count=1" }),
      });
      expect(faults.status).toBe(200);
      const post = (name: string) =>
        fetch(`${em.baseUrl}/resource/networks`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": em.bootstrap.users.admin.apiKey },
          body: JSON.stringify({
            name,
            datacenterId: em.bootstrap.fixtures.datacenters[0]!.id,
            networkType: "standard",
          }),
        });
      const names = () =>
        Object.values(em.ctx.state.networks)
          .map((n) => n.name)
          .filter((n) => n.startsWith("dropped-"))
          .sort();
      await expect(post("dropped-after")).rejects.toThrow(/fetch failed/);
      expect(names()).toEqual(["dropped-after"]);
      await expect(post("dropped-before")).rejects.toThrow(/fetch failed/);
      expect(names()).toEqual(["dropped-after"]);
      const answered = await post("dropped-never");
      expect(answered.status).toBe(202);
      expect(names()).toEqual(["dropped-after", "dropped-never"]);
      const log = (await (await fetch(`${admin}/requests?route=createNetwork`)).json()) as {
        data: { status: number }[];
      };
      // The dropped requests are logged with status 0 (no answer).
      expect(log.data.map((e) => e.status)).toEqual([0, 0, 202]);
    } finally {
      await em.close();
    }
  });
});

describe("job faults", () => {
  const start = (em: TestEmulator, operation: string) =>
    startJob(em.ctx, {
      entityId: em.bootstrap.entityId,
      resourceType: "volume",
      operation,
      targetId: randomUUID(),
    });

  it("make started jobs fail with the message, for the next N jobs only", async () => {
    const em = await testEmulator({ faults: "job=probe.*,fail=Provider quota exceeded,count=1" });
    const failing = start(em, "probe.create");
    const fine = start(em, "probe.create");
    const other = start(em, "other.create");
    expect(failing.inject).toEqual({ kind: "fail", error: "Provider quota exceeded" });
    await em.settle();
    expect(em.ctx.state.jobs[failing.id]).toMatchObject({ status: "failed", error: "Provider quota exceeded" });
    expect(em.ctx.state.jobs[fine.id]).toMatchObject({ status: "completed", error: null, progress: 100 });
    expect(em.ctx.state.jobs[other.id].status).toBe("completed");
  });

  it("stall jobs: they stay in progress past their end and fail after stallTimeoutMs", async () => {
    const em = await testEmulator({ stallTimeoutMs: 60_000 });
    await em.call("POST", "/__admin/faults", { body: { spec: "job=probe.create,stall" } });
    const job = start(em, "probe.create");
    em.advance(5_000);
    advanceJobs(em.ctx);
    expect(em.ctx.state.jobs[job.id]).toMatchObject({ status: "in_progress", completedAt: null });
    expect(em.ctx.state.jobs[job.id].progress).toBeLessThanOrEqual(50);
    em.advance(60_000);
    await em.call("GET", "/__health");
    const stalled = em.ctx.state.jobs[job.id];
    expect(stalled.status).toBe("failed");
    expect(stalled.error).toMatch(/stalled/);
    expect(stalled.completedAt).not.toBeNull();
  });

  it("reach jobs started through the API and show in job queries", async () => {
    const em = await testEmulator({ faults: "job=network.create,fail=No capacity in this data center" });
    const created = await em.call<{ jobId: string; id: string }>("POST", "/resource/networks", {
      body: { name: "doomed", datacenterId: em.bootstrap.fixtures.datacenters[0].id, networkType: "standard" },
    });
    expect(created.status).toBe(202);
    await em.settle();
    const jobs = await em.call<{ jobs: { id: string; status: string; error: string }[] }>("POST", "/resource/jobs", {
      body: { jobIds: [created.body.data!.jobId] },
    });
    expect(jobs.body.data!.jobs).toMatchObject([
      { id: created.body.data!.jobId, status: "failed", error: "No capacity in this data center" },
    ]);
  });

  it("with a probability are deterministic for a seed", async () => {
    const run = async (seed: number) => {
      const em = await testEmulator({ seed, faults: "job=probe.*,fail,p=0.3" });
      return Array.from({ length: 30 }, () => start(em, "probe.x").inject?.kind ?? "none");
    };
    const a = await run(3);
    expect(await run(3)).toEqual(a);
    expect(a).toContain("fail");
    expect(a).toContain("none");
  });
});
