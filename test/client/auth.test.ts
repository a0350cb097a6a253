import { beforeAll, describe, expect, it } from "vitest";
import { hashSecret } from "../../emulator/http";
import { ApiError, type CloudClient } from "../../provider/client";
import { clientHarness, recordingDispatcher, type ClientHarness, type SeedRole } from "./helpers";

let h: ClientHarness;
const state = () => h.emulator.ctx.state;

beforeAll(async () => {
  h = await clientHarness();
});

function passwordClient(role: SeedRole = "member"): CloudClient {
  const user = h.emulator.bootstrap.users[role];
  return h.client({ auth: { email: user.email, password: user.password, totpSecret: user.totpSecret } });
}

const sessionsOf = (userId: string) => Object.values(state().sessions).filter((s) => s.userId === userId);
const exchangesOf = (route: string) => h.exchanges.filter((e) => e.route === route);

describe("email + password + TOTP", () => {
  it("signs in on first use and sends the session token as Bearer", async () => {
    const member = h.emulator.bootstrap.users.member;
    const before = sessionsOf(member.id).length;
    const { dispatcher, requests } = recordingDispatcher();
    const client = h.client({
      auth: { email: member.email, password: member.password, totpSecret: member.totpSecret },
      dispatcher,
    });
    const check = await client.check();
    expect(check.user.id).toBe(member.id);
    expect(client.auth.signIns).toBe(1);
    expect(sessionsOf(member.id)).toHaveLength(before + 1);
    expect(requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "POST /v1/auth/sign-in/email",
      "POST /v1/auth/two-factor/verify-totp",
      "GET /v1/auth/check",
    ]);
    expect(requests[1].headers.cookie).toMatch(/^two_factor_token=/);
    expect(requests[0].headers.authorization).toBeUndefined();
    const bearer = /^Bearer (\S+)$/.exec(requests[2].headers.authorization)?.[1];
    expect(state().sessions[hashSecret(bearer!)]?.userId).toBe(member.id);
    expect(requests[2].headers.cookie).toBeUndefined();
  });

  it("shares one sign-in between concurrent calls", async () => {
    const admin = h.emulator.bootstrap.users.admin;
    const signInsBefore = exchangesOf("signIn").length;
    const client = passwordClient("admin");
    const results = await Promise.all(Array.from({ length: 20 }, () => client.me()));
    expect(results.every((u) => u.id === admin.id)).toBe(true);
    expect(client.auth.signIns).toBe(1);
    expect(exchangesOf("signIn").length - signInsBefore).toBe(1);
  });

  it("signs in again, once, when the session was removed", async () => {
    const member = h.emulator.bootstrap.users.member;
    const client = passwordClient();
    await client.check();
    expect(client.auth.signIns).toBe(1);
    for (const s of sessionsOf(member.id)) delete state().sessions[s.tokenHash];

    const start = h.exchanges.length;
    const results = await Promise.all(Array.from({ length: 5 }, () => client.check()));
    expect(results.every((r) => r.user.id === member.id)).toBe(true);
    expect(client.auth.signIns).toBe(2);
    const after = h.exchanges.slice(start);
    expect(after.filter((e) => e.route === "check" && e.code === "SESSION_EXPIRED").length).toBeGreaterThan(0);
    expect(after.filter((e) => e.route === "signIn")).toHaveLength(1);
    expect(after.filter((e) => e.route === "verifyTotp" && e.status === 200)).toHaveLength(1);
    expect(sessionsOf(member.id)).toHaveLength(1);
  });

  it("renews the session before a create and creates exactly once", async () => {
    const admin = h.emulator.bootstrap.users.admin;
    const client = passwordClient("admin");
    await client.check();
    for (const s of sessionsOf(admin.id)) delete state().sessions[s.tokenHash];
    const dc = h.emulator.bootstrap.fixtures.datacenters[0].id;
    const created = await client.createNetwork({
      body: { name: "after-renewal", datacenterId: dc, networkType: "custom" },
    });
    expect(
      Object.values(state().networks)
        .filter((n) => n.name === "after-renewal")
        .map((n) => n.id),
    ).toEqual([created.id]);
    expect(client.auth.signIns).toBe(2);
  });

  it("reports wrong credentials as INVALID_CREDENTIALS without the password", async () => {
    const member = h.emulator.bootstrap.users.member;
    const client = h.client({
      auth: { email: member.email, password: "Wrong-Passw0rd!", totpSecret: member.totpSecret },
    });
    const error = await client.check().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: "INVALID_CREDENTIALS", route: "signIn" });
    expect(JSON.stringify(error)).not.toContain("Wrong-Passw0rd!");
    expect(exchangesOf("check").filter((e) => e.status === 0)).toHaveLength(0);
  });

  it("a wrong TOTP secret took 57-118 s to fail without naming it: fails at the first refused code, naming cloudinfra:totpSecret and the clock", async () => {
    const member = h.emulator.bootstrap.users.member;
    const wrongSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
    const client = h.client({ auth: { email: member.email, password: member.password, totpSecret: wrongSecret } });
    const since = h.emulator.ctx.requestMark();
    const error = (await client.check().catch((e: unknown) => e)) as ApiError;
    expect(error).toMatchObject({ status: 400, code: "INVALID_OTP" });
    expect(error.message).toContain("cloudinfra:totpSecret");
    expect(error.message).toContain("clock");
    expect(error.message).not.toContain(wrongSecret);
    // Later calls (every resource of a deployment) fail the same way at once: no second code is spent, no sign-in.
    const again = (await client.listNetworks({}).catch((e: unknown) => e)) as ApiError;
    expect(again.message).toBe(error.message);
    const log = await h.requestLog({ after: String(since) });
    expect(log.filter((e) => e.route === "verifyTotp").map((e) => e.status)).toEqual([400]);
    expect(log.filter((e) => e.route === "signIn")).toHaveLength(1);
  });

  it("a clock off by more than 30 s took minutes to fail: the error says how far this clock is from the server's", async () => {
    const member = h.emulator.bootstrap.users.member;
    const client = passwordClient();
    const since = h.emulator.ctx.requestMark();
    h.emulator.ctx.clockOffsetMs += 120_000; // the server's clock is two minutes ahead of ours
    try {
      const error = (await client.check().catch((e: unknown) => e)) as ApiError;
      expect(error).toMatchObject({ status: 400, code: "INVALID_OTP" });
      expect(error.message).toMatch(/clock, which is 1(19|20|21) s behind the server's/);
      expect(error.message).not.toContain(member.totpSecret);
    } finally {
      h.emulator.ctx.clockOffsetMs -= 120_000;
    }
    const log = await h.requestLog({ after: String(since) });
    expect(log.filter((e) => e.route === "verifyTotp")).toHaveLength(1);
  });
});

describe("API key and bearer session token", () => {
  it("sends X-API-Key and cannot use session-only routes", async () => {
    const client = h.client({ as: "member" });
    expect((await client.check()).user.id).toBe(h.emulator.bootstrap.users.member.id);
    await expect(client.twoFactorStatus()).rejects.toMatchObject({ status: 403, code: "INSUFFICIENT_PERMISSIONS" });
  });

  it("uses a bearer session token and surfaces its expiry (it cannot sign in again)", async () => {
    const member = h.emulator.bootstrap.users.member;
    const browser = h.client();
    await browser.signIn({ body: { email: member.email, password: member.password } }).catch(() => undefined);
    const { TOTP, Secret } = await import("otpauth");
    // The previous tests used this step's code and the next one: take the one after (the server accepts ±1 step).
    const code = new TOTP({ secret: Secret.fromBase32(member.totpSecret) }).generate({
      timestamp: Date.now() - 30_000,
    });
    const signedIn = await browser.verifyTotp({ body: { code } });
    const client = h.client({ auth: { sessionToken: signedIn.token } });
    expect((await client.twoFactorStatus()).totpConfigured).toBe(true);
    delete state().sessions[hashSecret(signedIn.token)];
    const error = await client.twoFactorStatus().catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: "SESSION_EXPIRED" });
    expect(String(error.message)).not.toContain(signedIn.token);
  });
});

describe("sessions are closed, and the sign-in limit is named", () => {
  const adminUrl = () => h.emulator.baseUrl.replace(/\/v1$/, "/__admin");
  const openSessions = async (userId: string) => {
    const response = await fetch(`${adminUrl()}/sessions?userId=${userId}`);
    return ((await response.json()) as { data: { userId: string }[] }).data;
  };

  it("endSession signs the session out (POST /auth/sign-out): the emulator lists it no more; a later call signs in again", async () => {
    const member = h.emulator.bootstrap.users.member;
    const before = (await openSessions(member.id)).length;
    const client = passwordClient();
    await client.check();
    expect(client.auth.hasSession).toBe(true);
    expect(await openSessions(member.id)).toHaveLength(before + 1);
    const since = h.emulator.ctx.requestMark();
    expect(await client.endSession()).toBe(true);
    expect(client.auth.signOuts).toBe(1);
    expect(await openSessions(member.id)).toHaveLength(before);
    const log = await h.requestLog({ after: String(since) });
    expect(log.map((e) => `${e.route} ${e.status}`)).toEqual(["signOut 200"]);
    // Nothing left to end: no request.
    expect(await client.endSession()).toBe(false);
    await client.check();
    expect(client.auth.signIns).toBe(2);
    expect(await client.endSession()).toBe(true);
    expect(await openSessions(member.id)).toHaveLength(before);
  });

  it("an API key has no session to end: nothing is sent", async () => {
    const client = h.client({ as: "member" });
    await client.check();
    const since = h.emulator.ctx.requestMark();
    expect(await client.endSession()).toBe(false);
    expect(await h.requestLog({ after: String(since) })).toEqual([]);
  });

  it("a sign-out the API does not answer gives up at its timeout, with one attempt", async () => {
    const client = passwordClient("admin");
    await client.check();
    const since = h.emulator.ctx.requestMark();
    const start = h.exchanges.length;
    const faults = await fetch(`${adminUrl()}/faults`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ spec: "signOut,latency=20s" }),
    });
    expect(faults.ok).toBe(true);
    try {
      const started = Date.now();
      expect(await client.endSession(300)).toBe(false);
      // Bounded by the timeout, far below the 20 s the API would take (the machine is busy: a wide margin).
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await fetch(`${adminUrl()}/faults`, { method: "DELETE" });
    }
    const mark = await fetch(`${adminUrl()}/requests?after=${since}&route=signOut`);
    expect(((await mark.json()) as { data: unknown[] }).data.length).toBeLessThanOrEqual(1);
    const attempts = h.exchanges.slice(start).filter((e) => e.route === "signOut");
    expect(attempts.every((e) => e.attempt === 1) && attempts.length <= 1, JSON.stringify(attempts)).toBe(true);
  });
});

describe("the sign-in rate limit (15 per 15 minutes per IP, the spec's)", () => {
  let strict: ClientHarness;
  beforeAll(async () => {
    strict = await clientHarness({ strictLimits: true });
  });

  it("a sign-in refused by its limit fails at once, naming the limit and recommending an API key for CI", async () => {
    const member = strict.emulator.bootstrap.users.member;
    // Other runners behind the same address spent the window: 15 sign-ins (wrong passwords count too).
    for (let i = 0; i < 15; i++) {
      const r = await fetch(`${strict.emulator.baseUrl}/auth/sign-in/email`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email: member.email, password: "Not-the-passw0rd!" }),
      });
      expect(r.status).toBe(401);
    }
    const client = strict.client({
      auth: { email: member.email, password: member.password, totpSecret: member.totpSecret },
    });
    const since = strict.emulator.ctx.requestMark();
    const error = (await client.check().catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 429, code: "RATE_LIMIT_EXCEEDED", route: "signIn" });
    expect(error.message).toContain("rate limit of 15 sign-ins per 15 minutes per IP address");
    expect(error.message).toContain("Use an API key in CI");
    expect(error.message).toContain("cloudinfra:apiKey");
    expect(error.message).not.toContain(member.password);
    // One request: no retry, no wait for the window.
    const log = await strict.requestLog({ after: String(since) });
    expect(log.map((e) => `${e.route} ${e.status}`)).toEqual(["signIn 429"]);
    expect(strict.exchanges.filter((e) => e.route === "signIn")).toHaveLength(1);
  });
});
