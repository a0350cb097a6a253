import { Secret, TOTP } from "otpauth";
import type { RunningEmulator } from "../../emulator/server";

type User = RunningEmulator["bootstrap"]["users"]["admin"];

/**
 * A session token of `user` signed in with "remember me" (idle timeout 30 days, not 30 minutes): the tests' one way to
 * a session token (the stacks and contexts under test are then given it, and never sign in themselves). Its TOTP code
 * follows the emulator's clock, so it works after the tests that move that clock by days, where the provider cannot
 * sign in (its codes come from this machine's clock) and a configured session token creates the keys instead.
 */
export async function rememberedSessionToken(emulator: RunningEmulator, user: User): Promise<string> {
  const json = { "content-type": "application/json" };
  const first = await fetch(`${emulator.baseUrl}/auth/sign-in/email`, {
    method: "POST",
    headers: json,
    body: JSON.stringify({ email: user.email, password: user.password, rememberMe: true }),
  });
  const cookie = first.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const totp = new TOTP({ secret: Secret.fromBase32(user.totpSecret), algorithm: "SHA1", digits: 6, period: 30 });
  const second = await fetch(`${emulator.baseUrl}/auth/two-factor/verify-totp`, {
    method: "POST",
    headers: { ...json, cookie },
    body: JSON.stringify({ code: totp.generate({ timestamp: emulator.ctx.now() }) }),
  });
  const body = (await second.json()) as { data?: { token?: string } };
  if (!second.ok || typeof body.data?.token !== "string") {
    throw new Error(`signing ${user.email} in failed: HTTP ${second.status} ${JSON.stringify(body)}`);
  }
  return body.data.token;
}

/** Moves the emulator's clock `days` forward through its admin route (`POST /__admin/clock`). */
export async function advanceClock(emulator: RunningEmulator, days: number): Promise<void> {
  const response = await fetch(`${emulator.baseUrl.replace(/\/v1$/, "")}/__admin/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advanceMs: days * 24 * 3600_000 }),
  });
  if (!response.ok) throw new Error(`moving the clock failed: HTTP ${response.status} ${await response.text()}`);
}
