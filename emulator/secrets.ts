import { createHash, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import { Secret, TOTP } from "otpauth";

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function randomString(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** A full API key secret: `svc_` and 28 more characters, 32 in all. */
export const newApiKeySecret = () => `svc_${randomString(28)}`;
/** The leading characters of a key shown in lists (`start`). */
export const keyStart = (secret: string) => secret.slice(0, 8);
/** Session and 2FA cookie tokens. */
export const newToken = () => randomBytes(32).toString("base64url");

export function hashPassword(password: string): string {
  const salt = randomBytes(16).toString("hex");
  return `${salt}:${createHash("sha256")
    .update(salt + password)
    .digest("hex")}`;
}

export function verifyPassword(password: string, stored: string | null): boolean {
  if (!stored) return false;
  const [salt, hash] = stored.split(":");
  const candidate = createHash("sha256")
    .update(salt + password)
    .digest();
  return timingSafeEqual(candidate, Buffer.from(hash, "hex"));
}

export const newTotpSecret = () => new Secret({ size: 20 }).base32;

export function totpFor(secret: string, label = "cloudinfra"): TOTP {
  return new TOTP({ issuer: "cloudinfra", label, algorithm: "SHA1", digits: 6, period: 30, secret });
}

/** A TOTP code is accepted within one 30-second step of the emulator's clock; more skew is rejected. */
export function verifyTotp(secret: string, code: string, now: number): boolean {
  return totpFor(secret).validate({ token: code, timestamp: now, window: 1 }) !== null;
}

export const newBackupCodes = () =>
  Array.from({ length: 10 }, () => `${randomString(5)}-${randomString(5)}`.toLowerCase());
export const newOtpCode = () => String(randomInt(0, 1_000_000)).padStart(6, "0");
