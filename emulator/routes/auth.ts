import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendAsyncHookHandler } from "fastify";
import type { z } from "zod";
import { passwordProblems, type SignInResult } from "../../provider/api";
import type { EmulatorContext } from "../context";
import { ApiProblem, forbidden, invalid } from "../errors";
import { API_PREFIX, hashSecret, iso0, SESSION_COOKIE, TWO_FACTOR_COOKIE } from "../http";
import {
  hashPassword,
  newBackupCodes,
  newOtpCode,
  newToken,
  newTotpSecret,
  totpFor,
  verifyPassword,
  verifyTotp,
} from "../secrets";
import type { PendingTwoFactorRec, UserRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

/** Cookie of a device trusted after a 2FA verification with `trustDevice: true` (name and effect are ours). */
export const TRUSTED_DEVICE_COOKIE = "trusted_device";

const TWO_FACTOR_TTL_MS = 5 * 60_000;
const TRUSTED_DEVICE_TTL_MS = 30 * 24 * 3600_000;
const REMEMBER_ME_MS = 30 * 24 * 3600_000;
const OTP_TTL_MS = 10 * 60_000;
const RESET_TOKEN_TTL_MS = 3600_000;
const MAX_WRONG_CODES = 5;
/** Seconds a client is told to wait after too many wrong codes: one TOTP period, so a fresh code exists. */
const WRONG_CODES_RETRY_AFTER_S = 30;
const RESET_REQUESTED_MESSAGE = "If the address belongs to an account, a password reset link has been sent to it.";

/** Appends an authentication event to the audit log. `detail` must never carry a secret. */
export function recordAudit(
  ctx: EmulatorContext,
  req: FastifyRequest,
  event: string,
  user: Pick<UserRec, "id" | "email"> | null,
  success: boolean,
  detail: string | null = null,
  email: string | null = null,
): void {
  ctx.state.audit.push({
    at: ctx.now(),
    event,
    userId: user?.id ?? null,
    email: user?.email ?? email,
    ip: req.ip,
    success,
    detail,
  });
  ctx.touch();
}

/** The name shown for a user: first and last name, or the email when neither is known. */
export function displayName(user: UserRec): string {
  return [user.firstName, user.lastName].filter(Boolean).join(" ") || user.email;
}

function cookieOptions(req: FastifyRequest) {
  // Secure only over HTTPS: the emulator serves plain HTTP, where a Secure cookie would never come back.
  return { path: "/", httpOnly: true, sameSite: "lax" as const, secure: req.protocol === "https" };
}

function findUserByEmail(ctx: EmulatorContext, email: string): UserRec | undefined {
  const wanted = email.trim().toLowerCase();
  return Object.values(ctx.state.users).find((u) => u.deletedAt === null && u.email.toLowerCase() === wanted);
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Removes sign-ins waiting for 2FA and reset tokens that can no longer be used. */
function sweepExpired(ctx: EmulatorContext): void {
  const now = ctx.now();
  for (const [hash, pending] of Object.entries(ctx.state.pendingTwoFactor)) {
    if (pendingExpiresAt(pending) <= now) delete ctx.state.pendingTwoFactor[hash];
  }
  for (const [hash, token] of Object.entries(ctx.state.resetTokens)) {
    if (token.expiresAt <= now) delete ctx.state.resetTokens[hash];
  }
}

/** A pending sign-in lasts 5 minutes, or until its emailed code expires when one was sent. */
function pendingExpiresAt(pending: PendingTwoFactorRec): number {
  return Math.max(pending.createdAt + TWO_FACTOR_TTL_MS, pending.otp?.expiresAt ?? 0);
}

function dropPendingSignIns(ctx: EmulatorContext, userId: string): void {
  for (const [hash, pending] of Object.entries(ctx.state.pendingTwoFactor)) {
    if (pending.userId === userId) delete ctx.state.pendingTwoFactor[hash];
  }
}

/** Ends every session of the user except `keepTokenHash`. */
function dropSessions(ctx: EmulatorContext, userId: string, keepTokenHash: string | null): void {
  for (const [hash, session] of Object.entries(ctx.state.sessions)) {
    if (session.userId === userId && hash !== keepTokenHash) delete ctx.state.sessions[hash];
  }
}

/** The session cookie of one emulator: set and cleared by the auth handlers, refreshed by a hook. */
export interface SessionCookies {
  /** Sets the session cookie, with the session's lifetime. */
  set(req: FastifyRequest, reply: FastifyReply, token: string, rememberMe: boolean): void;
  /** Clears the session cookie (sign-out). */
  clear(reply: FastifyReply): void;
  /**
   * onSend hook, on the root so that it covers every /v1 reply: a cookie session is refreshed on every request (the
   * cookie is re-sent with a fresh lifetime); a cookie whose session is gone is cleared.
   */
  refresh: onSendAsyncHookHandler;
}

export function sessionCookies(ctx: EmulatorContext): SessionCookies {
  /** Replies whose session cookie a handler already set or cleared, so the refresh hook leaves them alone. */
  const sessionCookieHandled = new WeakSet<FastifyReply>();

  function setSessionCookie(req: FastifyRequest, reply: FastifyReply, token: string, rememberMe: boolean): void {
    const lifetimeMs = rememberMe ? REMEMBER_ME_MS : ctx.options.sessionIdleMs;
    reply.setCookie(SESSION_COOKIE, token, { ...cookieOptions(req), maxAge: Math.ceil(lifetimeMs / 1000) });
    sessionCookieHandled.add(reply);
  }

  return {
    set: setSessionCookie,
    clear(reply) {
      reply.clearCookie(SESSION_COOKIE, { path: "/" });
      sessionCookieHandled.add(reply);
    },
    async refresh(req, reply, payload) {
      const token = req.cookies?.[SESSION_COOKIE];
      const cookieWasUsed = token && req.headers["x-api-key"] === undefined && req.headers.authorization === undefined;
      if (!cookieWasUsed || sessionCookieHandled.has(reply) || !req.url.startsWith(API_PREFIX + "/")) return payload;
      const session = ctx.state.sessions[hashSecret(token)];
      if (session && req.caller?.sessionTokenHash === session.tokenHash) {
        setSessionCookie(req, reply, token, session.rememberMe);
      } else if (!session) {
        reply.clearCookie(SESSION_COOKIE, { path: "/" });
      }
      return payload;
    },
  };
}

function authHandlers(ctx: EmulatorContext, cookies: SessionCookies): RouteHandlers {
  // Trusted-device cookies are signed rather than stored; the key lives as long as the process.
  const trustKey = randomBytes(32);

  const trustMac = (user: UserRec, expiresAt: number) =>
    // The password hash is part of the signed text: a password change or reset revokes every trusted device.
    createHmac("sha256", trustKey)
      .update(`${user.id}.${expiresAt}.${user.passwordHash ?? ""}`)
      .digest("base64url");

  function isTrustedDevice(req: FastifyRequest, user: UserRec): boolean {
    const value = req.cookies[TRUSTED_DEVICE_COOKIE];
    if (!value) return false;
    const [userId, expiresAtText, mac] = value.split(".");
    const expiresAt = Number(expiresAtText);
    if (userId !== user.id || !Number.isFinite(expiresAt) || expiresAt <= ctx.now() || !mac) return false;
    return sameSecret(mac, trustMac(user, expiresAt));
  }

  function openSession(
    req: FastifyRequest,
    reply: FastifyReply,
    user: UserRec,
    rememberMe: boolean,
  ): z.input<typeof SignInResult> {
    const token = newToken();
    const tokenHash = hashSecret(token);
    const now = ctx.now();
    ctx.state.sessions[tokenHash] = { tokenHash, userId: user.id, createdAt: now, lastSeenAt: now, rememberMe };
    cookies.set(req, reply, token, rememberMe);
    return { user: { id: user.id, email: user.email, name: displayName(user) }, token };
  }

  /** The pending sign-in named by the 2FA cookie, or 401 NOT_AUTHENTICATED. */
  function pendingSignIn(req: FastifyRequest, reply: FastifyReply): { pending: PendingTwoFactorRec; user: UserRec } {
    const token = req.cookies[TWO_FACTOR_COOKIE];
    if (!token) {
      throw new ApiProblem("NOT_AUTHENTICATED", "No sign-in is waiting for a second factor: sign in first");
    }
    const tokenHash = hashSecret(token);
    const pending = ctx.state.pendingTwoFactor[tokenHash];
    const user = pending ? ctx.state.users[pending.userId] : undefined;
    if (!pending || !user || user.deletedAt !== null || pendingExpiresAt(pending) <= ctx.now()) {
      delete ctx.state.pendingTwoFactor[tokenHash];
      reply.clearCookie(TWO_FACTOR_COOKIE, { path: "/" });
      ctx.touch();
      throw new ApiProblem("NOT_AUTHENTICATED", "The two-factor step expired or is unknown: sign in again");
    }
    return { pending, user };
  }

  /** Counts a wrong code; the fifth on one pending sign-in discards it with 429. Always throws. */
  function wrongCode(
    req: FastifyRequest,
    reply: FastifyReply,
    pending: PendingTwoFactorRec,
    user: UserRec,
    method: string,
    why: string,
  ): never {
    pending.failedAttempts += 1;
    recordAudit(ctx, req, "two-factor.failed", user, false, `${method}: ${why} (attempt ${pending.failedAttempts})`);
    if (pending.failedAttempts >= MAX_WRONG_CODES) {
      delete ctx.state.pendingTwoFactor[pending.tokenHash];
      reply.clearCookie(TWO_FACTOR_COOKIE, { path: "/" });
      ctx.touch();
      throw new ApiProblem(
        "RATE_LIMIT_EXCEEDED",
        `Too many wrong codes: this sign-in is cancelled; sign in again`,
        { retryAfter: WRONG_CODES_RETRY_AFTER_S },
        429,
        { "retry-after": String(WRONG_CODES_RETRY_AFTER_S) },
      );
    }
    throw new ApiProblem("INVALID_OTP", `The ${method} code is wrong or expired`);
  }

  /** Second factor accepted: the pending sign-in becomes a session. */
  function completeSignIn(
    req: FastifyRequest,
    reply: FastifyReply,
    pending: PendingTwoFactorRec,
    user: UserRec,
    method: string,
    trustDevice: boolean | undefined,
  ): z.input<typeof SignInResult> {
    delete ctx.state.pendingTwoFactor[pending.tokenHash];
    reply.clearCookie(TWO_FACTOR_COOKIE, { path: "/" });
    if (trustDevice) {
      const expiresAt = ctx.now() + TRUSTED_DEVICE_TTL_MS;
      reply.setCookie(TRUSTED_DEVICE_COOKIE, `${user.id}.${expiresAt}.${trustMac(user, expiresAt)}`, {
        ...cookieOptions(req),
        maxAge: TRUSTED_DEVICE_TTL_MS / 1000,
      });
    }
    recordAudit(ctx, req, "two-factor.verified", user, true, method + (trustDevice ? ", device trusted" : ""));
    recordAudit(ctx, req, "sign-in.succeeded", user, true, `second factor: ${method}`);
    return openSession(req, reply, user, pending.rememberMe);
  }

  function requirePassword(req: FastifyRequest, user: UserRec, password: string, event: string): void {
    if (!verifyPassword(password, user.passwordHash)) {
      recordAudit(ctx, req, event, user, false, "wrong password");
      throw invalid("The password is incorrect");
    }
  }

  function setPassword(user: UserRec, password: string): void {
    const problems = passwordProblems(password);
    if (problems.length > 0) {
      throw invalid(`The new password must ${problems.join(", ")}`, {
        issues: problems.map((p) => ({ field: "password", message: `must ${p}` })),
      });
    }
    user.passwordHash = hashPassword(password);
    user.updatedAt = ctx.now();
  }

  const requestReset = ({ body, req }: { body: { email: string }; req: FastifyRequest }) => {
    sweepExpired(ctx);
    const user = findUserByEmail(ctx, body.email);
    if (user && user.inviteStatus === "activated") {
      const token = newToken();
      ctx.state.resetTokens[hashSecret(token)] = { userId: user.id, expiresAt: ctx.now() + RESET_TOKEN_TTL_MS };
      ctx.state.outbox.push({
        at: ctx.now(),
        to: user.email,
        kind: "password-reset",
        subject: "Reset your password",
        secret: token,
      });
      recordAudit(ctx, req, "password.reset-requested", user, true);
    } else {
      recordAudit(ctx, req, "password.reset-requested", null, false, "no such active account", body.email);
    }
    return { message: RESET_REQUESTED_MESSAGE };
  };

  function twoFactorStatus(user: UserRec) {
    const totpConfigured = user.totpSecret !== null;
    // 2FA is mandatory: without TOTP the emailed code is the second factor.
    return {
      twoFactorEnabled: true,
      totpConfigured,
      method: totpConfigured ? "totp" : "email",
      setupAt: iso0(user.twoFactorSetupAt),
    };
  }

  return {
    check({ caller }) {
      const entity = ctx.state.entities[caller.entityId];
      return {
        user: {
          id: caller.user.id,
          email: caller.user.email,
          name: displayName(caller.user),
          roles: caller.roles,
          permissions: [...caller.permissions],
        },
        activeEntity: { id: entity.id, name: entity.name },
      };
    },

    signIn({ body, req, reply }) {
      sweepExpired(ctx);
      const user = findUserByEmail(ctx, body.email);
      if (!user || !verifyPassword(body.password, user.passwordHash)) {
        recordAudit(ctx, req, "sign-in.failed", user ?? null, false, "invalid credentials", body.email);
        throw new ApiProblem("INVALID_CREDENTIALS", "Wrong email or password");
      }
      const rememberMe = body.rememberMe ?? false;
      if (isTrustedDevice(req, user)) {
        recordAudit(ctx, req, "sign-in.succeeded", user, true, "second factor skipped: trusted device");
        return openSession(req, reply, user, rememberMe);
      }
      const token = newToken();
      const tokenHash = hashSecret(token);
      ctx.state.pendingTwoFactor[tokenHash] = {
        tokenHash,
        userId: user.id,
        createdAt: ctx.now(),
        rememberMe,
        otp: null,
        failedAttempts: 0,
      };
      reply.setCookie(TWO_FACTOR_COOKIE, token, { ...cookieOptions(req), maxAge: TWO_FACTOR_TTL_MS / 1000 });
      const totpConfigured = user.totpSecret !== null;
      recordAudit(ctx, req, "sign-in.two-factor-required", user, true, totpConfigured ? "totp" : "email code");
      throw new ApiProblem("TWO_FACTOR_REQUIRED", "Two-factor authentication required", {
        userId: user.id,
        totpConfigured,
        email: user.email,
      });
    },

    signOut({ caller, req, reply }) {
      if (caller.sessionTokenHash) delete ctx.state.sessions[caller.sessionTokenHash];
      cookies.clear(reply);
      recordAudit(ctx, req, "sign-out", caller.user, true);
      return { message: "Signed out" };
    },

    verifyTotp({ body, req, reply }) {
      const { pending, user } = pendingSignIn(req, reply);
      if (user.totpSecret === null) {
        wrongCode(req, reply, pending, user, "totp", "TOTP is not configured; use send-otp");
      }
      if (!verifyTotp(user.totpSecret, body.code.replace(/\s/g, ""), ctx.now())) {
        wrongCode(req, reply, pending, user, "totp", "wrong code");
      }
      return completeSignIn(req, reply, pending, user, "totp", body.trustDevice);
    },

    sendOtp({ req, reply }) {
      const { pending, user } = pendingSignIn(req, reply);
      const code = newOtpCode();
      // Only the hash is kept; the mail (outbox) carries the code itself. A new code replaces the previous one.
      pending.otp = { code: hashSecret(code), expiresAt: ctx.now() + OTP_TTL_MS };
      // The pending sign-in (and its cookie) now lives as long as the code, so mail delays do not cut it short.
      reply.setCookie(TWO_FACTOR_COOKIE, req.cookies[TWO_FACTOR_COOKIE] ?? "", {
        ...cookieOptions(req),
        maxAge: OTP_TTL_MS / 1000,
      });
      ctx.state.outbox.push({
        at: ctx.now(),
        to: user.email,
        kind: "two-factor-otp",
        subject: "Your sign-in code",
        secret: code,
      });
      recordAudit(ctx, req, "two-factor.otp-sent", user, true);
      return { message: "A one-time code has been sent to your email address" };
    },

    verifyOtp({ body, req, reply }) {
      const { pending, user } = pendingSignIn(req, reply);
      const otp = pending.otp;
      if (!otp || otp.expiresAt <= ctx.now()) {
        wrongCode(req, reply, pending, user, "email", otp ? "code expired" : "no code was sent");
      }
      if (!sameSecret(hashSecret(body.code.replace(/\s/g, "")), otp.code)) {
        wrongCode(req, reply, pending, user, "email", "wrong code");
      }
      return completeSignIn(req, reply, pending, user, "email", body.trustDevice);
    },

    verifyBackupCode({ body, req, reply }) {
      const { pending, user } = pendingSignIn(req, reply);
      const codeHash = hashSecret(body.code.trim().toLowerCase());
      const index = user.backupCodeHashes.findIndex((h) => sameSecret(h, codeHash));
      if (index < 0) wrongCode(req, reply, pending, user, "backup", "unknown or used code");
      user.backupCodeHashes.splice(index, 1);
      user.updatedAt = ctx.now();
      return completeSignIn(req, reply, pending, user, "backup", body.trustDevice);
    },

    enableTwoFactor({ body, caller, req }) {
      const user = caller.user;
      requirePassword(req, user, body.password, "two-factor.enable-failed");
      const secret = newTotpSecret();
      const backupCodes = newBackupCodes();
      const uri = totpFor(secret, user.email).toString();
      user.totpSecret = secret;
      user.twoFactorSetupAt = ctx.now();
      user.backupCodeHashes = backupCodes.map(hashSecret);
      user.updatedAt = ctx.now();
      recordAudit(ctx, req, "two-factor.enabled", user, true);
      return { secret, uri, qrCode: qrPlaceholder(uri), backupCodes };
    },

    disableTwoFactor({ body, caller, req }) {
      const user = caller.user;
      requirePassword(req, user, body.password, "two-factor.disable-failed");
      user.totpSecret = null;
      user.twoFactorSetupAt = null;
      user.backupCodeHashes = [];
      user.updatedAt = ctx.now();
      recordAudit(ctx, req, "two-factor.disabled", user, true, "falls back to email codes");
      return twoFactorStatus(user);
    },

    generateBackupCodes({ body, caller, req }) {
      const user = caller.user;
      requirePassword(req, user, body.password, "two-factor.backup-codes-failed");
      const backupCodes = newBackupCodes();
      user.backupCodeHashes = backupCodes.map(hashSecret);
      user.updatedAt = ctx.now();
      recordAudit(ctx, req, "two-factor.backup-codes-generated", user, true);
      return { backupCodes };
    },

    twoFactorStatus({ caller }) {
      return twoFactorStatus(caller.user);
    },

    changePassword({ params, body, caller, req }) {
      const user = caller.user;
      if (params.id !== user.id) throw forbidden("A password can be changed only by its own user");
      const [current, next] =
        "oldPassword" in body ? [body.oldPassword, body.password] : [body.currentPassword, body.newPassword];
      if (!verifyPassword(current, user.passwordHash)) {
        recordAudit(ctx, req, "password.change-failed", user, false, "wrong current password");
        throw new ApiProblem("INVALID_CREDENTIALS", "The current password is wrong");
      }
      try {
        setPassword(user, next);
      } catch (e) {
        recordAudit(ctx, req, "password.change-failed", user, false, "new password breaks the rules");
        throw e;
      }
      dropSessions(ctx, user.id, caller.sessionTokenHash);
      dropPendingSignIns(ctx, user.id);
      recordAudit(ctx, req, "password.changed", user, true, "other sessions ended");
      return { message: "Password changed; your other sessions have been signed out" };
    },

    forgetPassword: requestReset,
    usersForgotPassword: requestReset,

    resetPassword({ body, req }) {
      const tokenHash = hashSecret(body.token);
      const entry = ctx.state.resetTokens[tokenHash];
      const user = entry ? ctx.state.users[entry.userId] : undefined;
      if (!entry || !user || user.deletedAt !== null || entry.expiresAt <= ctx.now()) {
        delete ctx.state.resetTokens[tokenHash];
        recordAudit(ctx, req, "password.reset-failed", user ?? null, false, "unknown or expired token");
        throw invalid("The reset token is invalid or has expired; request a new one");
      }
      try {
        setPassword(user, body.password);
      } catch (e) {
        recordAudit(ctx, req, "password.reset-failed", user, false, "new password breaks the rules");
        throw e;
      }
      for (const [hash, other] of Object.entries(ctx.state.resetTokens)) {
        if (other.userId === user.id) delete ctx.state.resetTokens[hash];
      }
      // The invite mail carries a token of the same kind: setting the first password accepts the invitation.
      user.inviteStatus = "activated";
      dropSessions(ctx, user.id, null);
      dropPendingSignIns(ctx, user.id);
      recordAudit(ctx, req, "password.reset-completed", user, true, "all sessions ended");
      return { message: "Password reset; sign in with the new password" };
    },
  };
}

/** What the auth route group is registered with: the session cookie it sets is refreshed by a root hook. */
export interface AuthRouteOptions extends RouteGroupOptions {
  sessionCookies: SessionCookies;
}

/** Authentication: sign-in with mandatory 2FA, sign-out, 2FA set-up, passwords. */
export async function authRoutes(app: FastifyInstance, { ctx, sessionCookies }: AuthRouteOptions): Promise<void> {
  defineRoutes(app, ctx, authHandlers(ctx, sessionCookies));
}

/**
 * The `qrCode` of the enable result: an SVG image data URL that shows the otpauth URI as text. It is not a scannable
 * QR code; set up an authenticator from `secret` or `uri`.
 */
function qrPlaceholder(uri: string): string {
  const escaped = uri.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const svg =
    `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="80" viewBox="0 0 480 80">` +
    `<rect width="480" height="80" fill="#fff"/>` +
    `<text x="8" y="30" font-family="monospace" font-size="12">Add this key to your authenticator app:</text>` +
    `<text x="8" y="56" font-family="monospace" font-size="8">${escaped}</text></svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString("base64")}`;
}
