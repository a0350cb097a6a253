import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { hashSecret, SESSION_COOKIE, TWO_FACTOR_COOKIE } from "../../emulator/http";
import { TRUSTED_DEVICE_COOKIE } from "../../emulator/routes/auth";
import { hashPassword, newTotpSecret, totpFor } from "../../emulator/secrets";
import type { RoleName } from "../../provider/api";
import { type Reply, type TestEmulator, testEmulator } from "../helpers/emulator";

let emu: TestEmulator;
beforeAll(async () => {
  emu = await testEmulator();
});

/** Every secret the tests handle, so the audit test can check none of them reached the log. */
const secretsSeen = new Set<string>();

interface TestUser {
  id: string;
  email: string;
  password: string;
  totpSecret: string | null;
}

let userCount = 0;
/** A fresh user of the main entity, so tests that change passwords or 2FA do not disturb each other. */
function makeUser(opts: { roles?: RoleName[]; totp?: boolean; password?: string | null } = {}): TestUser {
  const id = randomUUID();
  const email = `user${++userCount}@acme.example`;
  const password = opts.password === undefined ? `Strong-Pass${userCount}!word` : opts.password;
  const totpSecret = opts.totp === false ? null : newTotpSecret();
  const now = emu.ctx.now();
  emu.ctx.state.users[id] = {
    id,
    entityId: emu.bootstrap.entityId,
    email,
    firstName: "Test",
    lastName: `User${userCount}`,
    passwordHash: password === null ? null : hashPassword(password),
    roles: opts.roles ?? ["tenant-user"],
    inviteStatus: password === null ? "pending" : "activated",
    invitedAt: null,
    totpSecret,
    twoFactorSetupAt: totpSecret ? now : null,
    backupCodeHashes: [],
    platformAdmin: false,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  if (password) secretsSeen.add(password);
  return { id, email, password: password ?? "", totpSecret };
}

interface ParsedCookie {
  value: string;
  attributes: string[];
}

function cookiesOf(res: Reply): Record<string, ParsedCookie> {
  const header = res.headers["set-cookie"];
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [header];
  const out: Record<string, ParsedCookie> = {};
  for (const line of lines) {
    const [pair, ...attributes] = line.split(";").map((s) => s.trim());
    const eq = pair.indexOf("=");
    out[pair.slice(0, eq)] = { value: decodeURIComponent(pair.slice(eq + 1)), attributes };
  }
  return out;
}

function attribute(cookie: ParsedCookie, name: string): string | undefined {
  const found = cookie.attributes.find((a) => a.toLowerCase().startsWith(name.toLowerCase()));
  return found === undefined ? undefined : (found.split("=")[1] ?? "");
}

const code = (secret: string, at = emu.ctx.now()) => totpFor(secret).generate({ timestamp: at });

async function startSignIn(user: Pick<TestUser, "email" | "password">, extra: Record<string, unknown> = {}) {
  const res = await emu.call("POST", "/auth/sign-in/email", {
    as: null,
    body: { email: user.email, password: user.password, ...extra },
  });
  const twoFactorCookie = cookiesOf(res)[TWO_FACTOR_COOKIE]?.value;
  if (twoFactorCookie) secretsSeen.add(twoFactorCookie);
  return { res, twoFactorCookie, cookie: `${TWO_FACTOR_COOKIE}=${twoFactorCookie}` };
}

async function verify(kind: "verify-totp" | "verify-otp" | "verify-backup-code", cookie: string, body: object) {
  const res = await emu.call<{ user: { id: string; email: string; name: string }; token: string }>(
    "POST",
    `/auth/two-factor/${kind}`,
    { as: null, body, headers: { cookie } },
  );
  if (res.status === 200) secretsSeen.add(res.body.data!.token);
  return res;
}

/** The whole sign-in flow with TOTP; returns the bearer token and the session cookie. */
async function signIn(user: TestUser, extra: Record<string, unknown> = {}) {
  const started = await startSignIn(user, extra);
  expect(started.res.status).toBe(400);
  const res = await verify("verify-totp", started.cookie, { code: code(user.totpSecret!) });
  expect(res.status).toBe(200);
  const sessionCookie = cookiesOf(res)[SESSION_COOKIE];
  return { token: res.body.data!.token, cookie: `${SESSION_COOKIE}=${sessionCookie.value}`, res, sessionCookie };
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

function seedUser(who: "admin" | "member" | "outsider"): TestUser {
  const u = emu.bootstrap.users[who];
  secretsSeen.add(u.password);
  return { id: u.id, email: u.email, password: u.password, totpSecret: u.totpSecret };
}

describe("sign-in", () => {
  it("refuses wrong credentials, unknown, deleted and invited users with 401 INVALID_CREDENTIALS", async () => {
    const admin = seedUser("admin");
    const deleted = makeUser();
    emu.ctx.state.users[deleted.id].deletedAt = emu.ctx.now();
    const invited = makeUser({ password: null });
    const attempts = [
      { email: admin.email, password: "Wrong-Passw0rd!2024" },
      { email: "nobody@acme.example", password: admin.password },
      { email: deleted.email, password: deleted.password },
      { email: invited.email, password: "Anything-Passw0rd!1" },
    ];
    for (const body of attempts) {
      const res = await emu.call("POST", "/auth/sign-in/email", { as: null, body });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ success: false, error: "INVALID_CREDENTIALS" });
      expect(res.headers["set-cookie"]).toBeUndefined();
    }
    const failed = emu.ctx.state.audit.filter((a) => a.event === "sign-in.failed");
    expect(failed.map((a) => a.email)).toEqual(expect.arrayContaining(attempts.map((a) => a.email)));
    expect(failed.every((a) => !a.success)).toBe(true);
  });

  it("answers valid credentials with 400 TWO_FACTOR_REQUIRED and a short-lived HttpOnly 2FA cookie", async () => {
    const admin = seedUser("admin");
    const { res, twoFactorCookie } = await startSignIn({ email: admin.email.toUpperCase(), password: admin.password });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      success: false,
      error: "TWO_FACTOR_REQUIRED",
      data: { userId: admin.id, totpConfigured: true, email: admin.email },
    });
    const cookie = cookiesOf(res)[TWO_FACTOR_COOKIE];
    expect(cookie.attributes).toContain("HttpOnly");
    expect(attribute(cookie, "SameSite")).toBe("Lax");
    expect(attribute(cookie, "Path")).toBe("/");
    expect(attribute(cookie, "Max-Age")).toBe("300");
    const pending = emu.ctx.state.pendingTwoFactor[hashSecret(twoFactorCookie!)];
    expect(pending).toMatchObject({ userId: admin.id, failedAttempts: 0, otp: null });
    expect(JSON.stringify(emu.ctx.state.pendingTwoFactor)).not.toContain(twoFactorCookie);
  });

  it("completes with verify-totp: session stored by hash, session cookie set, 2FA cookie cleared", async () => {
    const admin = seedUser("admin");
    const started = await startSignIn(admin);
    const res = await verify("verify-totp", started.cookie, { code: code(admin.totpSecret!) });
    expect(res.status).toBe(200);
    const { user, token } = res.body.data!;
    expect(user).toEqual({ id: admin.id, email: admin.email, name: "Ada Seed" });
    const session = emu.ctx.state.sessions[hashSecret(token)];
    expect(session).toMatchObject({ userId: admin.id, rememberMe: false });
    expect(JSON.stringify(emu.ctx.state.sessions)).not.toContain(token);
    expect(emu.ctx.state.pendingTwoFactor[hashSecret(started.twoFactorCookie!)]).toBeUndefined();

    const cookies = cookiesOf(res);
    expect(cookies[SESSION_COOKIE].value).toBe(token);
    expect(cookies[SESSION_COOKIE].attributes).toContain("HttpOnly");
    expect(attribute(cookies[SESSION_COOKIE], "SameSite")).toBe("Lax");
    expect(attribute(cookies[SESSION_COOKIE], "Path")).toBe("/");
    expect(cookies[TWO_FACTOR_COOKIE].value).toBe("");
    expect(attribute(cookies[TWO_FACTOR_COOKIE], "Max-Age")).toBe("0");

    const viaBearer = await emu.call("GET", "/auth/check", { as: null, headers: bearer(token) });
    expect(viaBearer.status).toBe(200);
    expect(viaBearer.body.data).toMatchObject({ user: { id: admin.id }, activeEntity: { id: emu.bootstrap.entityId } });
    const viaCookie = await emu.call("GET", "/auth/check", {
      as: null,
      headers: { cookie: `${SESSION_COOKIE}=${token}` },
    });
    expect(viaCookie.status).toBe(200);

    // The pending sign-in is used up: the same 2FA cookie cannot complete a second sign-in.
    const again = await verify("verify-totp", started.cookie, { code: code(admin.totpSecret!) });
    expect(again.status).toBe(401);
    expect(again.body.error).toBe("NOT_AUTHENTICATED");
  });

  it("refuses 2FA steps without a pending sign-in with 401 NOT_AUTHENTICATED", async () => {
    const attempts: Record<string, string>[] = [{}, { cookie: `${TWO_FACTOR_COOKIE}=made-up` }];
    for (const headers of attempts) {
      const res = await emu.call("POST", "/auth/two-factor/verify-totp", {
        as: null,
        body: { code: "123456" },
        headers,
      });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("NOT_AUTHENTICATED");
      const sent = await emu.call("POST", "/auth/two-factor/send-otp", { as: null, headers });
      expect(sent.status).toBe(401);
    }
    expect(emu.ctx.state.outbox.filter((m) => m.kind === "two-factor-otp")).toHaveLength(0);
  });

  it("rejects a TOTP code from a clock skewed by more than 30 seconds, then accepts a fresh one", async () => {
    const user = makeUser();
    const started = await startSignIn(user);
    const stale = code(user.totpSecret!);
    emu.advance(2 * 60_000);
    const res = await verify("verify-totp", started.cookie, { code: stale });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("INVALID_OTP");
    expect(emu.ctx.state.pendingTwoFactor[hashSecret(started.twoFactorCookie!)].failedAttempts).toBe(1);
    const fresh = await verify("verify-totp", started.cookie, { code: code(user.totpSecret!) });
    expect(fresh.status).toBe(200);
  });

  it("discards the pending sign-in with 429 RATE_LIMIT_EXCEEDED on the fifth wrong code", async () => {
    const user = makeUser();
    const started = await startSignIn(user);
    const right = code(user.totpSecret!);
    const wrong = right === "000000" ? "111111" : "000000";
    for (let i = 1; i <= 4; i++) {
      const res = await verify("verify-totp", started.cookie, { code: wrong });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("INVALID_OTP");
    }
    const fifth = await verify("verify-totp", started.cookie, { code: wrong });
    expect(fifth.status).toBe(429);
    expect(fifth.body).toMatchObject({ error: "RATE_LIMIT_EXCEEDED", data: { retryAfter: expect.any(Number) } });
    expect(Number.isInteger((fifth.body.data as unknown as { retryAfter: number }).retryAfter)).toBe(true);
    expect(fifth.headers["retry-after"]).toBeDefined();
    expect(emu.ctx.state.pendingTwoFactor[hashSecret(started.twoFactorCookie!)]).toBeUndefined();
    const late = await verify("verify-totp", started.cookie, { code: right });
    expect(late.status).toBe(401);
    expect(late.body.error).toBe("NOT_AUTHENTICATED");
    expect(Object.values(emu.ctx.state.sessions).some((s) => s.userId === user.id)).toBe(false);
    expect(emu.ctx.state.audit.filter((a) => a.event === "two-factor.failed" && a.userId === user.id)).toHaveLength(5);
  });

  it("falls back to an emailed code when TOTP is not configured", async () => {
    const user = makeUser({ totp: false });
    const started = await startSignIn(user);
    expect(started.res.body.data).toMatchObject({ totpConfigured: false });
    const early = await verify("verify-otp", started.cookie, { code: "123456" });
    expect(early.body.error).toBe("INVALID_OTP");
    const totpTry = await verify("verify-totp", started.cookie, { code: "123456" });
    expect(totpTry.body.error).toBe("INVALID_OTP");

    const sent = await emu.call("POST", "/auth/two-factor/send-otp", { as: null, headers: { cookie: started.cookie } });
    expect(sent.status).toBe(200);
    const mail = emu.ctx.state.outbox.filter((m) => m.to === user.email && m.kind === "two-factor-otp");
    expect(mail).toHaveLength(1);
    const otp = mail[0].secret;
    secretsSeen.add(otp);
    expect(otp).toMatch(/^\d{6}$/);
    const pending = emu.ctx.state.pendingTwoFactor[hashSecret(started.twoFactorCookie!)];
    expect(pending.otp?.code).not.toBe(otp);
    expect(pending.otp!.expiresAt - emu.ctx.now()).toBeGreaterThan(9 * 60_000);

    const wrong = await verify("verify-otp", started.cookie, { code: otp === "000000" ? "111111" : "000000" });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error).toBe("INVALID_OTP");
    // Sending a code extends the pending sign-in beyond its 5 minutes, up to the code's 10.
    emu.advance(6 * 60_000);
    const ok = await verify("verify-otp", started.cookie, { code: otp });
    expect(ok.status).toBe(200);
    expect(emu.ctx.state.sessions[hashSecret(ok.body.data!.token)].userId).toBe(user.id);
  });

  it("ends the emailed code and its pending sign-in after 10 minutes", async () => {
    const user = makeUser({ totp: false });
    const started = await startSignIn(user);
    await emu.call("POST", "/auth/two-factor/send-otp", { as: null, headers: { cookie: started.cookie } });
    const otp = emu.ctx.state.outbox.filter((m) => m.to === user.email).at(-1)!.secret;
    secretsSeen.add(otp);
    emu.advance(11 * 60_000);
    const res = await verify("verify-otp", started.cookie, { code: otp });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("NOT_AUTHENTICATED");
  });

  it("accepts each backup code once; new codes invalidate the old ones", async () => {
    const user = makeUser();
    const { token } = await signIn(user);
    const wrongPassword = await emu.call("POST", "/auth/two-factor/generate-backup-codes", {
      as: null,
      headers: bearer(token),
      body: { password: "Not-the-Passw0rd!" },
    });
    expect(wrongPassword.status).toBe(400);
    expect(wrongPassword.body.error).toBe("INVALID_REQUEST");
    expect(emu.ctx.state.users[user.id].backupCodeHashes).toHaveLength(0);

    const generated = await emu.call<{ backupCodes: string[] }>("POST", "/auth/two-factor/generate-backup-codes", {
      as: null,
      headers: bearer(token),
      body: { password: user.password },
    });
    expect(generated.status).toBe(200);
    const codes = generated.body.data!.backupCodes;
    codes.forEach((c) => secretsSeen.add(c));
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const stored = emu.ctx.state.users[user.id].backupCodeHashes;
    expect(stored).toEqual(codes.map(hashSecret));

    const first = await startSignIn(user);
    expect((await verify("verify-backup-code", first.cookie, { code: codes[0] })).status).toBe(200);
    expect(emu.ctx.state.users[user.id].backupCodeHashes).toHaveLength(9);
    const second = await startSignIn(user);
    const reused = await verify("verify-backup-code", second.cookie, { code: codes[0] });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("INVALID_OTP");

    const renewed = await emu.call<{ backupCodes: string[] }>("POST", "/auth/two-factor/generate-backup-codes", {
      as: null,
      headers: bearer(token),
      body: { password: user.password },
    });
    renewed.body.data!.backupCodes.forEach((c) => secretsSeen.add(c));
    const old = await verify("verify-backup-code", second.cookie, { code: codes[1] });
    expect(old.body.error).toBe("INVALID_OTP");
    const fresh = await verify("verify-backup-code", second.cookie, { code: renewed.body.data!.backupCodes[0] });
    expect(fresh.status).toBe(200);
  });

  it("lets a trusted device skip 2FA for the same user until the password changes", async () => {
    const user = makeUser();
    const started = await startSignIn(user);
    const res = await verify("verify-totp", started.cookie, { code: code(user.totpSecret!), trustDevice: true });
    const trusted = cookiesOf(res)[TRUSTED_DEVICE_COOKIE];
    expect(trusted.attributes).toContain("HttpOnly");
    expect(attribute(trusted, "Max-Age")).toBe(String(30 * 24 * 3600));
    const trustCookie = `${TRUSTED_DEVICE_COOKIE}=${trusted.value}`;

    const skip = await emu.call<{ token: string }>("POST", "/auth/sign-in/email", {
      as: null,
      body: { email: user.email, password: user.password },
      headers: { cookie: trustCookie },
    });
    expect(skip.status).toBe(200);
    expect(emu.ctx.state.sessions[hashSecret(skip.body.data!.token)].userId).toBe(user.id);
    secretsSeen.add(skip.body.data!.token);

    const other = seedUser("member");
    const otherUser = await emu.call("POST", "/auth/sign-in/email", {
      as: null,
      body: { email: other.email, password: other.password },
      headers: { cookie: trustCookie },
    });
    expect(otherUser.body.error).toBe("TWO_FACTOR_REQUIRED");

    const newPassword = "Changed-Passw0rd!x";
    secretsSeen.add(newPassword);
    const changed = await emu.call("PUT", `/users/${user.id}/password`, {
      as: null,
      headers: bearer(skip.body.data!.token),
      body: { oldPassword: user.password, password: newPassword },
    });
    expect(changed.status).toBe(200);
    const afterChange = await emu.call("POST", "/auth/sign-in/email", {
      as: null,
      body: { email: user.email, password: newPassword },
      headers: { cookie: trustCookie },
    });
    expect(afterChange.body.error).toBe("TWO_FACTOR_REQUIRED");
  });
});

describe("sessions", () => {
  it("refreshes the session cookie on each cookie request, not on bearer requests", async () => {
    const { token, cookie } = await signIn(makeUser());
    emu.advance(20 * 60_000);
    const before = emu.ctx.now();
    const res = await emu.call("GET", "/auth/check", { as: null, headers: { cookie } });
    expect(res.status).toBe(200);
    const refreshed = cookiesOf(res)[SESSION_COOKIE];
    expect(refreshed.value).toBe(token);
    expect(refreshed.attributes).toContain("HttpOnly");
    expect(attribute(refreshed, "SameSite")).toBe("Lax");
    expect(attribute(refreshed, "Max-Age")).toBe(String(30 * 60));
    expect(emu.ctx.state.sessions[hashSecret(token)].lastSeenAt).toBeGreaterThanOrEqual(before);
    // Activity keeps the session alive past the idle timeout counted from sign-in.
    emu.advance(20 * 60_000);
    const later = await emu.call("GET", "/auth/check", { as: null, headers: bearer(token) });
    expect(later.status).toBe(200);
    expect(cookiesOf(later)[SESSION_COOKIE]).toBeUndefined();
  });

  it("expires an idle session with 401 SESSION_EXPIRED and clears its cookie", async () => {
    const { token, cookie } = await signIn(makeUser());
    emu.advance(31 * 60_000);
    const res = await emu.call("GET", "/auth/check", { as: null, headers: { cookie } });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("SESSION_EXPIRED");
    expect(attribute(cookiesOf(res)[SESSION_COOKIE], "Max-Age")).toBe("0");
    expect(emu.ctx.state.sessions[hashSecret(token)]).toBeUndefined();
  });

  it("keeps a rememberMe session for 30 days of idleness", async () => {
    const { token, sessionCookie } = await signIn(makeUser(), { rememberMe: true });
    expect(attribute(sessionCookie, "Max-Age")).toBe(String(30 * 24 * 3600));
    emu.advance(2 * 3600_000);
    const res = await emu.call("GET", "/auth/check", { as: null, headers: bearer(token) });
    expect(res.status).toBe(200);
  });

  it("signs out: the session is invalidated and the cookie cleared", async () => {
    const user = makeUser();
    const { token, cookie } = await signIn(user);
    const res = await emu.call("POST", "/auth/sign-out", { as: null, headers: { cookie } });
    expect(res.status).toBe(200);
    const cleared = cookiesOf(res)[SESSION_COOKIE];
    expect(cleared.value).toBe("");
    expect(attribute(cleared, "Max-Age")).toBe("0");
    expect(emu.ctx.state.sessions[hashSecret(token)]).toBeUndefined();
    const after = await emu.call("GET", "/auth/check", { as: null, headers: bearer(token) });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe("SESSION_EXPIRED");
    expect(emu.ctx.state.audit.some((a) => a.event === "sign-out" && a.userId === user.id)).toBe(true);
  });

  it("refuses session-only routes to API keys (403) and to anonymous callers (401)", async () => {
    const withKey = await emu.call("POST", "/auth/sign-out", { as: "admin" });
    expect(withKey.status).toBe(403);
    expect(withKey.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    const anonymous = await emu.call("GET", "/auth/two-factor/status", { as: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe("NOT_AUTHENTICATED");
    const malformed = await emu.call("GET", "/auth/check", { as: null, headers: { authorization: "Basic abc" } });
    expect(malformed.status).toBe(401);
    expect(malformed.body.error).toBe("NOT_AUTHENTICATED");
  });
});

describe("two-factor settings", () => {
  it("reports, re-enables and disables TOTP; 2FA stays mandatory through email codes", async () => {
    const user = makeUser();
    const { token } = await signIn(user);
    const auth = { as: null, headers: bearer(token) } as const;
    const status = await emu.call("GET", "/auth/two-factor/status", auth);
    expect(status.body.data).toMatchObject({ twoFactorEnabled: true, totpConfigured: true, method: "totp" });

    const refused = await emu.call("POST", "/auth/two-factor/enable", {
      ...auth,
      body: { password: "Wrong-Passw0rd!!" },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe("INVALID_REQUEST");
    expect(emu.ctx.state.users[user.id].totpSecret).toBe(user.totpSecret);

    const enabled = await emu.call<{ secret: string; uri: string; qrCode: string; backupCodes: string[] }>(
      "POST",
      "/auth/two-factor/enable",
      { ...auth, body: { password: user.password } },
    );
    expect(enabled.status).toBe(200);
    const { secret, uri, qrCode, backupCodes } = enabled.body.data!;
    secretsSeen.add(secret);
    backupCodes.forEach((c) => secretsSeen.add(c));
    expect(secret).not.toBe(user.totpSecret);
    expect(uri).toMatch(/^otpauth:\/\/totp\//);
    expect(uri).toContain(`secret=${secret}`);
    expect(qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(backupCodes).toHaveLength(10);
    expect(emu.ctx.state.users[user.id].totpSecret).toBe(secret);

    const oldSecretSignIn = await startSignIn(user);
    expect((await verify("verify-totp", oldSecretSignIn.cookie, { code: code(user.totpSecret!) })).status).toBe(400);
    expect((await verify("verify-totp", oldSecretSignIn.cookie, { code: code(secret) })).status).toBe(200);

    const disabled = await emu.call("POST", "/auth/two-factor/disable", { ...auth, body: { password: user.password } });
    expect(disabled.status).toBe(200);
    expect(disabled.body.data).toEqual({
      twoFactorEnabled: true,
      totpConfigured: false,
      method: "email",
      setupAt: null,
    });
    expect(emu.ctx.state.users[user.id].totpSecret).toBeNull();
    const afterDisable = await startSignIn(user);
    expect(afterDisable.res.body).toMatchObject({ error: "TWO_FACTOR_REQUIRED", data: { totpConfigured: false } });
    const events = emu.ctx.state.audit.filter((a) => a.userId === user.id).map((a) => a.event);
    expect(events).toEqual(
      expect.arrayContaining(["two-factor.enable-failed", "two-factor.enabled", "two-factor.disabled"]),
    );
  });
});

describe("passwords", () => {
  it("changes the own password, keeping the calling session and ending the others", async () => {
    const user = makeUser();
    const a = await signIn(user);
    const b = await signIn(user);
    const newPassword = "Brand-New-Passw0rd!";
    secretsSeen.add(newPassword);
    const res = await emu.call("PUT", `/users/${user.id}/password`, {
      as: null,
      headers: bearer(a.token),
      body: { currentPassword: user.password, newPassword },
    });
    expect(res.status).toBe(200);
    expect((await emu.call("GET", "/auth/check", { as: null, headers: bearer(a.token) })).status).toBe(200);
    const other = await emu.call("GET", "/auth/check", { as: null, headers: bearer(b.token) });
    expect(other.status).toBe(401);
    expect(other.body.error).toBe("SESSION_EXPIRED");
    const oldPassword = await startSignIn(user);
    expect(oldPassword.res.body.error).toBe("INVALID_CREDENTIALS");
    const withNew = await startSignIn({ email: user.email, password: newPassword });
    expect(withNew.res.body.error).toBe("TWO_FACTOR_REQUIRED");
  });

  it("refuses a wrong current password (401), a weak new one (400), another user (403) and API keys (403)", async () => {
    const user = makeUser();
    const { token } = await signIn(user);
    const auth = { as: null, headers: bearer(token) } as const;
    const hashBefore = emu.ctx.state.users[user.id].passwordHash;

    const wrong = await emu.call("PUT", `/users/${user.id}/password`, {
      ...auth,
      body: { oldPassword: "Not-The-Passw0rd!", password: "Valid-New-Passw0rd!" },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("INVALID_CREDENTIALS");

    for (const weak of ["short1!A", "alllowercase-passw0rd!", "No-Digits-Password!", "NoSpecial1234567"]) {
      const res = await emu.call("PUT", `/users/${user.id}/password`, {
        ...auth,
        body: { oldPassword: user.password, password: weak },
      });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe("INVALID_REQUEST");
    }
    const mixed = await emu.call("PUT", `/users/${user.id}/password`, {
      ...auth,
      body: { oldPassword: user.password, newPassword: "Valid-New-Passw0rd!" },
    });
    expect(mixed.status).toBe(400);

    const admin = seedUser("admin");
    const someoneElse = await emu.call("PUT", `/users/${admin.id}/password`, {
      ...auth,
      body: { oldPassword: user.password, password: "Valid-New-Passw0rd!" },
    });
    expect(someoneElse.status).toBe(403);
    expect(someoneElse.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    const viaKey = await emu.call("PUT", `/users/${admin.id}/password`, {
      as: "admin",
      body: { oldPassword: admin.password, password: "Valid-New-Passw0rd!" },
    });
    expect(viaKey.status).toBe(403);
    expect(emu.ctx.state.users[user.id].passwordHash).toBe(hashBefore);
    expect((await startSignIn(admin)).res.body.error).toBe("TWO_FACTOR_REQUIRED");
  });

  it("answers forgot-password identically for known and unknown addresses; mails only known ones", async () => {
    const user = makeUser();
    const outboxBefore = emu.ctx.state.outbox.length;
    const replies = [];
    for (const path of ["/auth/forget-password", "/users/forgot-password"]) {
      for (const email of [user.email, "ghost@acme.example"]) {
        const res = await emu.call("POST", path, { as: null, body: { email } });
        replies.push({ status: res.status, body: res.body });
      }
    }
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(new Set(replies.map((r) => JSON.stringify(r.body))).size).toBe(1);
    const mails = emu.ctx.state.outbox.slice(outboxBefore);
    expect(mails).toHaveLength(2);
    expect(mails.every((m) => m.to === user.email && m.kind === "password-reset")).toBe(true);
    mails.forEach((m) => secretsSeen.add(m.secret));
    expect(Object.keys(emu.ctx.state.resetTokens)).toEqual(
      expect.arrayContaining(mails.map((m) => hashSecret(m.secret))),
    );
  });

  it("resets a password with a single-use token and ends every session", async () => {
    const user = makeUser();
    const { token } = await signIn(user);
    await emu.call("POST", "/auth/forget-password", { as: null, body: { email: user.email } });
    const resetToken = emu.ctx.state.outbox
      .filter((m) => m.to === user.email && m.kind === "password-reset")
      .at(-1)!.secret;
    secretsSeen.add(resetToken);

    const weak = await emu.call("POST", "/auth/reset-password", {
      as: null,
      body: { token: resetToken, password: "weak" },
    });
    expect(weak.status).toBe(400);
    expect(weak.body.error).toBe("INVALID_REQUEST");

    const newPassword = "Reset-Passw0rd!2025";
    secretsSeen.add(newPassword);
    const ok = await emu.call("POST", "/auth/reset-password", {
      as: null,
      body: { token: resetToken, password: newPassword },
    });
    expect(ok.status).toBe(200);
    const session = await emu.call("GET", "/auth/check", { as: null, headers: bearer(token) });
    expect(session.body.error).toBe("SESSION_EXPIRED");
    expect((await startSignIn({ email: user.email, password: newPassword })).res.body.error).toBe(
      "TWO_FACTOR_REQUIRED",
    );

    const reused = await emu.call("POST", "/auth/reset-password", {
      as: null,
      body: { token: resetToken, password: "Another-Passw0rd!1" },
    });
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe("INVALID_REQUEST");
    const unknown = await emu.call("POST", "/auth/reset-password", {
      as: null,
      body: { token: "not-a-token", password: "Another-Passw0rd!1" },
    });
    expect(unknown.status).toBe(400);
  });

  it("accepts an invitation: the invite token sets the first password and activates the user", async () => {
    const email = `invitee-${randomUUID().slice(0, 8)}@acme.example`;
    const invited = await emu.call<{ id: string }>("POST", "/users", { body: { email } });
    expect(invited.status).toBe(201);
    expect((await startSignIn({ email, password: "Whatever-Passw0rd!" })).res.body.error).toBe("INVALID_CREDENTIALS");
    const inviteToken = emu.ctx.state.outbox.filter((m) => m.to === email && m.kind === "invite").at(-1)!.secret;
    secretsSeen.add(inviteToken);
    const password = "Invited-Passw0rd!2025";
    secretsSeen.add(password);
    const accepted = await emu.call("POST", "/auth/reset-password", {
      as: null,
      body: { token: inviteToken, password },
    });
    expect(accepted.status).toBe(200);
    expect(emu.ctx.state.users[invited.body.data!.id].inviteStatus).toBe("activated");
    const challenge = (await startSignIn({ email, password })).res.body;
    expect(challenge.error).toBe("TWO_FACTOR_REQUIRED");
    expect((challenge.data as { totpConfigured: boolean }).totpConfigured).toBe(false);
  });

  it("refuses a reset token older than one hour", async () => {
    const user = makeUser();
    await emu.call("POST", "/users/forgot-password", { as: null, body: { email: user.email } });
    const resetToken = emu.ctx.state.outbox.filter((m) => m.to === user.email).at(-1)!.secret;
    secretsSeen.add(resetToken);
    emu.advance(61 * 60_000);
    const res = await emu.call("POST", "/auth/reset-password", {
      as: null,
      body: { token: resetToken, password: "Late-Reset-Passw0rd!" },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("INVALID_REQUEST");
    expect((await startSignIn(user)).res.body.error).toBe("TWO_FACTOR_REQUIRED");
  });
});

describe("audit", () => {
  it("records every kind of authentication event and no secret", () => {
    const events = new Set(emu.ctx.state.audit.map((a) => a.event));
    for (const event of [
      "sign-in.failed",
      "sign-in.two-factor-required",
      "sign-in.succeeded",
      "two-factor.verified",
      "two-factor.failed",
      "two-factor.otp-sent",
      "two-factor.enabled",
      "two-factor.disabled",
      "two-factor.backup-codes-generated",
      "sign-out",
      "password.changed",
      "password.change-failed",
      "password.reset-requested",
      "password.reset-completed",
      "password.reset-failed",
    ]) {
      expect(events, event).toContain(event);
    }
    for (const entry of emu.ctx.state.audit) {
      expect(entry.ip).toBeTruthy();
      expect(entry.at).toBeGreaterThan(0);
    }
    const log = JSON.stringify(emu.ctx.state.audit);
    expect(secretsSeen.size).toBeGreaterThan(20);
    for (const secret of secretsSeen) expect(log).not.toContain(secret);
  });
});
