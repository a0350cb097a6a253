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
