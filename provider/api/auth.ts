import { z } from "zod";
import { NonEmpty, Timestamp, undocumented, Uuid } from "./common";

export const RoleName = z.enum(["tenant-admin", "tenant-user", "vm-operator"]);
export type RoleName = z.infer<typeof RoleName>;

/** Permissions granted by roles. The spec names the first three; the rest are ours (emulator/README.md). */
export const Permission = z.enum([
  "api-keys:self",
  "api-keys:manage",
  "vm:operate",
  "vm:read",
  "vm:write",
  "gpu:read",
  "gpu:write",
  "volume:read",
  "volume:write",
  "network:read",
  "network:write",
  "user:read",
  "user:write",
  "team:read",
  "team:write",
  "metrics:read",
]);
export type Permission = z.infer<typeof Permission>;

// ---- sign-in and sessions ----
export const SignInBody = z.strictObject({
  email: NonEmpty,
  password: z.string().min(1),
  rememberMe: z.boolean().optional(),
});
export const SessionUser = z.object({ id: Uuid, email: z.string(), name: z.string() });
/** Sign-in and 2FA verification both end with the user and a bearer session token (the cookie carries the same). */
export const SignInResult = z.object({ user: SessionUser, token: z.string() });
export const TwoFactorChallenge = z.object({ userId: Uuid, totpConfigured: z.boolean(), email: z.string() });

export const CheckResult = z.object({
  user: SessionUser.extend({ roles: z.array(z.string()), permissions: z.array(z.string()) }),
  activeEntity: z.object({ id: Uuid, name: z.string() }),
});

export const VerifyCodeBody = z.strictObject({ code: NonEmpty, trustDevice: z.boolean().optional() });
export const PasswordBody = z.strictObject({ password: z.string().min(1) });
export const TwoFactorEnableResult = z.object({
  secret: z.string(),
  qrCode: z.string(),
  uri: z.string(),
  backupCodes: z.array(z.string()),
});
export const TwoFactorStatus = z.object({
  twoFactorEnabled: z.boolean(),
  totpConfigured: z.boolean(),
  method: z.string(),
  setupAt: Timestamp.nullable(),
});
export const BackupCodesResult = z.object({ backupCodes: z.array(z.string()) });
export const MessageResult = z.object({ message: z.string() });

/** The spec names the fields twice (`oldPassword`/`password` and `currentPassword`/`newPassword`); both are accepted. */
export const ChangePasswordBody = z.union([
  z.strictObject({ oldPassword: z.string().min(1), password: z.string().min(1) }),
  z.strictObject({ currentPassword: z.string().min(1), newPassword: z.string().min(1) }),
]);
export const EmailBody = z.strictObject({ email: NonEmpty });
export const ResetPasswordBody = z.strictObject({ token: NonEmpty, password: z.string().min(1) });

/** The password rules of the spec: 12-50 characters, mixed case, a number and a special character. */
export function passwordProblems(password: string): string[] {
  const problems: string[] = [];
  if (password.length < 12 || password.length > 50) problems.push("be 12-50 characters long");
  if (!/[a-z]/.test(password) || !/[A-Z]/.test(password)) problems.push("mix upper- and lower-case letters");
  if (!/[0-9]/.test(password)) problems.push("contain a number");
  if (!/[^A-Za-z0-9]/.test(password)) problems.push("contain a special character");
  return problems;
}

// ---- API keys ----
export const ApiKeyStatus = z.enum(["Active", "Expiring", "Suspended", "Expired"]);
export type ApiKeyStatus = z.infer<typeof ApiKeyStatus>;

export const CreateApiKeyBody = z.strictObject({
  name: z.string().trim().min(1).max(100),
  roleId: RoleName.optional(),
  expiresInDays: z.number().int().min(1).max(3650).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export const ApiKey = z.object({
  id: z.string(),
  name: z.string(),
  key: z.string().optional(),
  start: z.string(),
  status: ApiKeyStatus,
  enabled: undocumented(z.boolean()),
  roleId: undocumented(z.string().nullable()),
  userId: undocumented(Uuid),
  metadata: undocumented(z.record(z.string(), z.unknown()).nullable()),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  lastUsedAt: undocumented(Timestamp.nullable()),
});
export type ApiKey = z.infer<typeof ApiKey>;
export const ApiKeyWithSecret = ApiKey.extend({ key: z.string() });
export const ApiKeyIdParams = z.strictObject({ keyId: NonEmpty });
export const ApiKeyStatusBody = z.strictObject({ enabled: z.boolean() });
/** Body of the rate-limit override (not shown by the spec; ours). */
export const ApiKeyRateLimitBody = z.strictObject({
  requestsPerWindow: z.number().int().min(1).max(100_000),
  windowSeconds: z.number().int().min(1).max(86_400),
});
export const RoleOption = z.object({ id: z.string(), name: z.string(), description: z.string() });
export const ExpirationOption = z.object({ days: z.number().int(), label: z.string() });
