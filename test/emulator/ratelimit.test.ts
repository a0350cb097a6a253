import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashSecret } from "../../emulator/http";
import { strictRouteLimits } from "../../emulator/ratelimit";
import { keyStart, newApiKeySecret } from "../../emulator/secrets";
import { type TestEmulator, testEmulator } from "../helpers/emulator";

const limited = (limit: number, extra: Parameters<typeof testEmulator>[0] = {}) =>
  testEmulator({ rateLimit: limit, rateLimitWindowMs: 60_000, strictLimits: true, ...extra });

function seededKeyOf(em: TestEmulator, who: "admin" | "member" | "outsider") {
  const hash = hashSecret(em.bootstrap.users[who].apiKey);
  return Object.values(em.ctx.state.apiKeys).find((k) => k.secretHash === hash)!;
}

/** A second API key of the same user, inserted straight into the state. */
function addKey(em: TestEmulator, who: "admin" | "member"): string {
  const seed = seededKeyOf(em, who);
  const secret = newApiKeySecret();
  const id = randomUUID();
  em.ctx.state.apiKeys[id] = {
    ...seed,
    id,
    name: "second",
    secretHash: hashSecret(secret),
    start: keyStart(secret),
    rateLimit: null,
  };
  return secret;
}

function inject(
  em: TestEmulator,
  url: string,
  opts: { ip?: string; apiKey?: string; method?: "GET" | "POST"; body?: unknown } = {},
) {
  return em.app.inject({
    method: opts.method ?? "GET",
    url,
    remoteAddress: opts.ip ?? "127.0.0.1",
    headers: {
      ...(opts.apiKey ? { "x-api-key": opts.apiKey } : {}),
      ...(opts.body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(opts.body !== undefined ? { payload: JSON.stringify(opts.body) } : {}),
  });
}

describe("rate-limit headers", () => {
  it("are on every /v1 response: success, 401, 400 and unknown paths, counting down", async () => {
    const em = await limited(10);
    const before = Math.ceil((em.ctx.now() + 60_000) / 1000);
    const answers = [
      await em.call("GET", "/auth/check"),
      await em.call("GET", "/auth/check", { as: null }),
      await em.call("GET", "/auth/check?bogus=1"),
      await em.call("GET", "/no/such/route"),
    ];
    const after = Math.ceil((em.ctx.now() + 60_000) / 1000);
    expect(answers.map((a) => a.status)).toEqual([200, 401, 400, 404]);
    for (const a of answers) {
      expect(a.headers["x-ratelimit-limit"]).toBe("10");
      const reset = Number(a.headers["x-ratelimit-reset"]);
      expect(reset).toBeGreaterThanOrEqual(before);
      expect(reset).toBeLessThanOrEqual(after);
    }
    // The admin caller's pool counts 9, 8, 7; the unauthenticated call draws from the IP's own pool.
    expect(answers.map((a) => a.headers["x-ratelimit-remaining"])).toEqual(["9", "9", "8", "7"]);
  });

  it("are absent outside /v1 and when the general limit is off (--rate-limit 0)", async () => {
    const on = await limited(10);
    expect((await on.call("GET", "/__health")).headers["x-ratelimit-limit"]).toBeUndefined();
    const off = await testEmulator({ rateLimit: 0, strictLimits: false });
    for (let i = 0; i < 150; i++) {
      const r = await off.call("GET", "/auth/check");
      expect(r.status).toBe(200);
      expect(r.headers["x-ratelimit-limit"]).toBeUndefined();
    }
  });
});

describe("general limit", () => {
  it("answers 429 RATE_LIMIT_EXCEEDED with data.retryAfter and Retry-After once the pool is spent", async () => {
    const em = await limited(5);
    for (let i = 0; i < 5; i++) expect((await em.call("GET", "/auth/check")).status).toBe(200);
    em.advance(20_000);
    const refused = await em.call("GET", "/auth/check");
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ success: false, error: "RATE_LIMIT_EXCEEDED" });
    expect(typeof refused.body.message).toBe("string");
    const retryAfter = (refused.body.data as { retryAfter: number }).retryAfter;
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(40);
    expect(refused.headers["retry-after"]).toBe(String(retryAfter));
    expect(refused.headers["x-ratelimit-remaining"]).toBe("0");
    expect(refused.headers["x-ratelimit-limit"]).toBe("5");
  });

  it("refuses before the handler runs, and refused requests do not count: the pool refills with the window", async () => {
    const em = await limited(3);
    for (let i = 0; i < 3; i++) await em.call("GET", "/auth/check");
    for (let i = 0; i < 5; i++) expect((await em.call("GET", "/auth/check")).status).toBe(429);
    // A refused request with an invalid query is refused for the limit, not validated (no handler ran).
    expect((await em.call("GET", "/auth/check?bogus=1")).status).toBe(429);
    em.advance(60_000);
    const again = await em.call("GET", "/auth/check");
    expect(again.status).toBe(200);
    expect(again.headers["x-ratelimit-remaining"]).toBe("2");
    expect(Number(again.headers["x-ratelimit-reset"])).toBe(Math.ceil((em.ctx.now() + 60_000) / 1000));
  });

  it("pools every API key of one user, and keeps other users apart", async () => {
    const em = await limited(4);
    const second = addKey(em, "admin");
    const first = em.bootstrap.users.admin.apiKey;
    const statuses: number[] = [];
    for (const key of [first, second, first, second, second]) {
      statuses.push((await inject(em, "/v1/auth/check", { apiKey: key })).statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
    expect((await inject(em, "/v1/auth/check", { apiKey: first })).statusCode).toBe(429);
    const member = await em.call("GET", "/auth/check", { as: "member" });
    expect(member.status).toBe(200);
    expect(member.headers["x-ratelimit-remaining"]).toBe("3");
  });

  it("limits unauthenticated callers per IP, apart from any user's pool", async () => {
    const em = await limited(3);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await inject(em, "/v1/auth/check", { ip: "10.0.0.1" })).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await inject(em, "/v1/auth/check", { ip: "10.0.0.2" })).statusCode).toBe(401);
    const authed = await inject(em, "/v1/auth/check", { ip: "10.0.0.1", apiKey: em.bootstrap.users.admin.apiKey });
    expect(authed.statusCode).toBe(200);
  });

  it("gives a key with a rate-limit override its own pool and figures", async () => {
    const em = await limited(100);
    const key = seededKeyOf(em, "admin");
    key.rateLimit = { requestsPerWindow: 2, windowSeconds: 10 };
    const first = await em.call("GET", "/auth/check");
    expect(first.headers["x-ratelimit-limit"]).toBe("2");
    expect(first.headers["x-ratelimit-remaining"]).toBe("1");
    expect((await em.call("GET", "/auth/check")).status).toBe(200);
    const refused = await em.call("GET", "/auth/check");
    expect(refused.status).toBe(429);
    expect((refused.body.data as { retryAfter: number }).retryAfter).toBeLessThanOrEqual(10);
    // The user's other keys keep drawing from the general per-user pool.
    const other = await inject(em, "/v1/auth/check", { apiKey: addKey(em, "admin") });
    expect(other.statusCode).toBe(200);
    expect(other.headers["x-ratelimit-limit"]).toBe("100");
    em.advance(10_000);
    expect((await em.call("GET", "/auth/check")).status).toBe(200);
  });
});

describe("stricter per-IP limits", () => {
  const signIn = (em: TestEmulator, ip: string) =>
    inject(em, "/v1/auth/sign-in/email", {
      ip,
      method: "POST",
      body: { email: "nobody@nowhere.example", password: "wrong-password" },
    });

  it("limit sign-in to 15 per 15 minutes per IP, independently of the general limit", async () => {
    const em = await limited(3);
    const answers = [];
    for (let i = 0; i < 16; i++) answers.push(await signIn(em, "10.1.1.1"));
    expect(answers.slice(0, 15).map((a) => a.statusCode)).toEqual(Array(15).fill(401));
    expect(answers[0].headers["x-ratelimit-limit"]).toBe("15");
    expect(answers[14].headers["x-ratelimit-remaining"]).toBe("0");
    const refused = answers[15];
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ success: false, error: "RATE_LIMIT_EXCEEDED" });
    const retryAfter = (refused.json() as { data: { retryAfter: number } }).data.retryAfter;
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(refused.headers["retry-after"]).toBe(String(retryAfter));

    // The general per-IP pool (3) was not touched by the sign-ins, and another IP may still sign in.
    const general = await inject(em, "/v1/auth/check", { ip: "10.1.1.1" });
    expect(general.statusCode).toBe(401);
    expect(general.headers["x-ratelimit-limit"]).toBe("3");
    expect(general.headers["x-ratelimit-remaining"]).toBe("2");
    expect((await signIn(em, "10.1.1.2")).statusCode).toBe(401);

    em.advance(15 * 60_000);
    expect((await signIn(em, "10.1.1.1")).statusCode).toBe(401);
  });

  it("cover the seven routes the spec lists, and fall back to the general pool with strictLimits off", async () => {
    expect(strictRouteLimits).toEqual({
      signIn: { limit: 15, windowMs: 15 * 60_000 },
      forgetPassword: { limit: 9, windowMs: 60 * 60_000 },
      resetPassword: { limit: 15, windowMs: 15 * 60_000 },
      verifyTotp: { limit: 15, windowMs: 15 * 60_000 },
      verifyOtp: { limit: 15, windowMs: 15 * 60_000 },
      sendOtp: { limit: 9, windowMs: 60 * 60_000 },
      usersForgotPassword: { limit: 5, windowMs: 15 * 60_000 },
    });
    const em = await limited(3, { strictLimits: false });
    const first = await signIn(em, "10.2.2.2");
    expect(first.headers["x-ratelimit-limit"]).toBe("3");
  });

  it("limit /users/forgot-password to 5 per IP", async () => {
    const em = await limited(100);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await inject(em, "/v1/users/forgot-password", {
        ip: "10.3.3.3",
        method: "POST",
        body: { email: "someone@acme.example" },
      });
      statuses.push(r.statusCode);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});
