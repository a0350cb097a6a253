import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashSecret } from "../../emulator/http";
import { RequestLog, type RequestLogEntry } from "../../emulator/operator";
import { keyStart, newApiKeySecret } from "../../emulator/secrets";
import type { Bootstrap } from "../../emulator/state";
import { type TestEmulator, testEmulator } from "../helpers/emulator";

type Logged = RequestLogEntry & { time: string };
const requests = async (em: TestEmulator, query = "") =>
  (await em.call<Logged[]>("GET", `/__admin/requests${query}`)).body.data!;

const adminKeyOf = (em: TestEmulator) =>
  Object.values(em.ctx.state.apiKeys).find((k) => k.secretHash === hashSecret(em.bootstrap.users.admin.apiKey))!;

describe("request log", () => {
  it("records every /v1 request without headers or bodies, and nothing else", async () => {
    const em = await testEmulator();
    const at = em.ctx.now();
    await em.call("GET", `/auth/check?entityId=${em.bootstrap.entityId}`);
    await em.call("GET", "/auth/check", { as: null });
    await em.call("POST", "/auth/sign-in/email", {
      as: null,
      body: { email: "admin@acme.example", password: "not-the-password" },
    });
    await em.call("GET", "/no/such/thing?x=1");
    await em.call("GET", "/__health");
    await em.call("GET", "/__admin/faults");

    const rows = await requests(em);
    expect(rows.map((r) => [r.method, r.path, r.route, r.status])).toEqual([
      ["GET", "/v1/auth/check", "check", 200],
      ["GET", "/v1/auth/check", "check", 401],
      ["POST", "/v1/auth/sign-in/email", "signIn", 401],
      ["GET", "/v1/no/such/thing", null, 404],
    ]);
    const [first, anonymous, signIn, unknown] = rows;
    expect(Object.keys(first).sort()).toEqual(
      ["at", "caller", "durationMs", "ip", "method", "path", "query", "route", "seq", "status", "time"].sort(),
    );
    expect(first.query).toBe(`entityId=${em.bootstrap.entityId}`);
    expect(first.caller).toEqual({ userId: em.bootstrap.users.admin.id, apiKeyId: adminKeyOf(em).id, kind: "apiKey" });
    expect(first.ip).toBe("127.0.0.1");
    expect(first.at).toBeGreaterThanOrEqual(at);
    expect(first.time).toBe(new Date(first.at).toISOString());
    expect(anonymous.caller).toBeNull();
    expect(unknown.query).toBe("x=1");
    expect(rows.map((r) => r.seq)).toEqual([...rows.map((r) => r.seq)].sort((a, b) => a - b));

    const text = JSON.stringify(rows);
    expect(text).not.toContain(em.bootstrap.users.admin.apiKey);
    expect(text).not.toContain("not-the-password");
    expect(signIn.caller).toBeNull();
  });

  it("filters by route, method, path pattern, status, user and time, keeps the latest N, and can be cleared", async () => {
    const em = await testEmulator();
    await em.call("GET", "/auth/check");
    await em.call("GET", "/users/me", { as: "member" });
    em.advance(10_000);
    const since = em.ctx.now();
    const mark = ((await em.call("GET", "/__admin/requests/mark")).body.data as { seq: number }).seq;
    expect(mark).toBe(em.ctx.requestMark());
    await em.call("GET", "/auth/check", { as: "member" });
    await em.call("GET", "/auth/check", { as: null });

    expect((await requests(em, "?route=check")).length).toBe(3);
    expect((await requests(em, "?path=/users/*")).map((r) => r.route)).toEqual(["me"]);
    expect((await requests(em, "?method=get&status=401")).length).toBe(1);
    expect((await requests(em, `?userId=${em.bootstrap.users.member.id}`)).map((r) => r.route)).toEqual([
      "me",
      "check",
    ]);
    expect((await requests(em, `?since=${since}`)).map((r) => r.status)).toEqual([200, 401]);
    expect((await requests(em, `?after=${mark}`)).map((r) => [r.seq, r.status])).toEqual([
      [mark + 1, 200],
      [mark + 2, 401],
    ]);
    expect((await requests(em, "?limit=1")).map((r) => r.status)).toEqual([401]);

    const bad = await em.call("GET", "/__admin/requests?colour=red");
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("INVALID_REQUEST");
    expect((await em.call("GET", "/__admin/requests?since=yesterday")).status).toBe(400);

    expect((await em.call("DELETE", "/__admin/requests")).body.data).toEqual({ cleared: 4 });
    expect(await requests(em)).toEqual([]);
  });

  it("is a bounded ring that keeps the newest entries", () => {
    const log = new RequestLog(3);
    for (let i = 0; i < 5; i++) {
      log.record({
        seq: log.arrived(),
        at: i,
        method: "GET",
        path: `/v1/${i}`,
        query: "",
        route: null,
        status: 200,
        durationMs: 0,
        caller: null,
        ip: "127.0.0.1",
      });
    }
    expect(log.list().map((e) => [e.seq, e.path])).toEqual([
      [3, "/v1/2"],
      [4, "/v1/3"],
      [5, "/v1/4"],
    ]);
  });
});

describe("admin reset", () => {
  it("wipes everything but the seeded users and their bootstrap credentials", async () => {
    const em = await testEmulator({ faults: "job=never.*,stall" });
    const { state } = em.ctx;
    const dc = em.bootstrap.fixtures.datacenters[0].id;
    const created = await em.call<{ id: string }>("POST", "/resource/networks", {
      body: { name: "to-be-wiped", datacenterId: dc, networkType: "standard" },
    });
    expect(created.status).toBe(202);
    await em.settle();

    // A stranger with a key, a spent seeded key, a deleted seeded user, an outbox mail, a GPU change.
    const strangerId = randomUUID();
    state.users[strangerId] = { ...structuredClone(state.users[em.bootstrap.users.member.id]), id: strangerId };
    const secret = newApiKeySecret();
    const strangerKey = randomUUID();
    state.apiKeys[strangerKey] = {
      ...structuredClone(adminKeyOf(em)),
      id: strangerKey,
      userId: strangerId,
      secretHash: hashSecret(secret),
      start: keyStart(secret),
    };
    adminKeyOf(em).enabled = false;
    state.users[em.bootstrap.users.member.id].deletedAt = em.ctx.now();
    state.outbox.push({ at: 1, to: "x@y.example", kind: "invite", subject: "Hi", secret: "s" });
    state.catalog.gpuAvailability.forEach((a) => (a.available = false));
    expect((await em.call("GET", "/auth/check")).status).toBe(401);
    const entities = Object.keys(state.entities).sort();

    const reset = await em.call("POST", "/__admin/reset");
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual({ success: true, data: { reset: true } });

    const after = em.ctx.state;
    expect(Object.keys(after.networks)).toEqual([]);
    expect(Object.keys(after.jobs)).toEqual([]);
    expect(after.outbox).toEqual([]);
    expect(after.audit).toEqual([]);
    expect(Object.keys(after.sessions)).toEqual([]);
    expect(after.users[strangerId]).toBeUndefined();
    expect(after.apiKeys[strangerKey]).toBeUndefined();
    expect(Object.keys(after.users).sort()).toEqual(
      Object.values(em.bootstrap.users)
        .map((u) => u.id)
        .sort(),
    );
    expect(Object.keys(after.apiKeys)).toHaveLength(3);
    expect(Object.keys(after.entities).sort()).toEqual(entities);
    expect(after.catalog.gpuAvailability.some((a) => a.available)).toBe(true);
    expect(after.bootstrap).toEqual(em.bootstrap);

    for (const who of ["admin", "member", "outsider"] as const) {
      expect((await em.call("GET", "/auth/check", { as: who })).status).toBe(200);
    }
    expect((await em.call("GET", `/resource/networks/${created.body.data!.id}`)).status).toBe(404);
    // The seeded password and TOTP secret work again: sign-in asks for the second factor.
    const signIn = await em.call("POST", "/auth/sign-in/email", {
      as: null,
      body: { email: em.bootstrap.users.member.email, password: em.bootstrap.users.member.password },
    });
    expect(signIn.body.error).toBe("TWO_FACTOR_REQUIRED");
    // Fault rules are operator configuration: they survive a reset.
    expect((await em.call<unknown[]>("GET", "/__admin/faults")).body.data).toHaveLength(1);
  });
});

describe("admin API", () => {
  it("GET /__health answers ok", async () => {
    const em = await testEmulator();
    const r = await em.call("GET", "/__health", { as: null });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ success: true, data: { status: "ok" } });
  });

  it("GET /__admin/bootstrap returns the start contract with the base URL of the request", async () => {
    const em = await testEmulator();
    const r = await em.call<Bootstrap>("GET", "/__admin/bootstrap", { as: null, headers: { host: "127.0.0.1:9999" } });
    expect(r.body.data).toEqual({ ...em.bootstrap, baseUrl: "http://127.0.0.1:9999/v1" });
  });

  it("GET /__admin/outbox and /__admin/audit show mails (with their codes) and audit events, filtered", async () => {
    const em = await testEmulator();
    await em.call("POST", "/auth/forget-password", { as: null, body: { email: em.bootstrap.users.member.email } });
    await em.call("POST", "/auth/sign-in/email", {
      as: null,
      body: { email: em.bootstrap.users.admin.email, password: "wrong" },
    });
    em.ctx.state.outbox.push({
      at: em.ctx.now(),
      to: "z@z.example",
      kind: "invite",
      subject: "Welcome",
      secret: "abc",
    });

    const all = (await em.call<{ to: string; secret: string; time: string }[]>("GET", "/__admin/outbox")).body.data!;
    expect(all.length).toBe(em.ctx.state.outbox.length);
    expect(all.at(-1)).toMatchObject({ to: "z@z.example", secret: "abc", kind: "invite" });
    const mine = (await em.call<{ to: string }[]>("GET", `/__admin/outbox?to=Z@Z.EXAMPLE`)).body.data!;
    expect(mine).toHaveLength(1);
    expect((await em.call("GET", "/__admin/outbox?bogus=1")).status).toBe(400);

    const audit = (await em.call<{ event: string; userId: string | null }[]>("GET", "/__admin/audit")).body.data!;
    expect(audit.length).toBe(em.ctx.state.audit.length);
    expect(audit.length).toBeGreaterThan(0);
    const event = audit[0].event;
    const filtered = (await em.call<{ event: string }[]>("GET", `/__admin/audit?event=${event}`)).body.data!;
    expect(filtered.every((a) => a.event === event)).toBe(true);
    expect(filtered.length).toBe(em.ctx.state.audit.filter((a) => a.event === event).length);
  });

  it("POST /__admin/clock moves the emulator clock forward; bad bodies are refused", async () => {
    const em = await testEmulator();
    const before = em.ctx.now();
    const r = await em.call<{ offsetMs: number; nowMs: number }>("POST", "/__admin/clock", {
      body: { advanceMs: 3_600_000 },
    });
    expect(r.status).toBe(200);
    expect(em.ctx.clockOffsetMs).toBe(3_600_000);
    expect(r.body.data!.offsetMs).toBe(3_600_000);
    expect(em.ctx.now() - before).toBeGreaterThanOrEqual(3_600_000);
    expect((await em.call<{ offsetMs: number }>("GET", "/__admin/clock")).body.data!.offsetMs).toBe(3_600_000);
    for (const body of [{ advanceMs: -1 }, { advanceMs: 1.5 }, { advanceMs: 1, extra: true }, {}, "60000"]) {
      const bad = await em.call("POST", "/__admin/clock", { body });
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.error).toBe("INVALID_REQUEST");
    }
    expect(em.ctx.clockOffsetMs).toBe(3_600_000);
  });

  it("POST /__admin/clock lets jobs and keys age", async () => {
    const em = await testEmulator({ jobDurationMs: 3_600_000 });
    const created = await em.call<{ jobId: string }>("POST", "/resource/networks", {
      body: { name: "slow", datacenterId: em.bootstrap.fixtures.datacenters[0].id, networkType: "standard" },
    });
    const jobId = created.body.data!.jobId;
    expect(em.ctx.state.jobs[jobId].status).toBe("pending");
    await em.call("POST", "/__admin/clock", { body: { advanceMs: 3_600_000 } });
    expect(em.ctx.state.jobs[jobId].status).toBe("completed");
    await em.call("POST", "/__admin/clock", { body: { advanceMs: 366 * 24 * 3_600_000 } });
    const expired = await em.call("GET", "/auth/check");
    expect(expired.status).toBe(401);
    expect(expired.body.error).toBe("API_KEY_EXPIRED");
  });

  it("PUT /__admin/gpu-availability sets a series/data center/count combination", async () => {
    const em = await testEmulator();
    const nyc = em.bootstrap.fixtures.datacenters.find((d) => d.name === "nyc-1")!.id;
    const find = () =>
      em.ctx.state.catalog.gpuAvailability.find((a) => a.seriesId === 1 && a.datacenterId === nyc && a.gpuCount === 8);
    expect(find()?.available).toBe(false);
    const body = { seriesId: 1, datacenterId: nyc, gpuCount: 8, available: true };
    const r = await em.call("PUT", "/__admin/gpu-availability", { body });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual(body);
    expect(find()?.available).toBe(true);
    const inventory = await em.call<
      {
        seriesId: number;
        availability: { datacenterId: string; gpuCounts: Record<string, { available: boolean }> }[];
      }[]
    >("GET", `/resource/gpu/inventory?datacenterId=${nyc}`);
    const a100 = inventory.body.data!.find((e) => e.seriesId === 1)!;
    expect(a100.availability.find((a) => a.datacenterId === nyc)!.gpuCounts["8"].available).toBe(true);

    expect((await em.call("PUT", "/__admin/gpu-availability", { body: { ...body, seriesId: 99 } })).status).toBe(404);
    for (const bad of [
      { ...body, gpuCount: 3 },
      { ...body, datacenterId: "nyc" },
      { ...body, colour: 1 },
    ]) {
      expect((await em.call("PUT", "/__admin/gpu-availability", { body: bad })).status).toBe(400);
    }
  });
});
