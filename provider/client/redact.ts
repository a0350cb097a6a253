const REDACTED = "[REDACTED]";

/** Object keys whose values are always secret, whatever they hold. */
const sensitiveKeys = new Set(
  [
    "password",
    "oldPassword",
    "newPassword",
    "currentPassword",
    "secret",
    "totpSecret",
    "token",
    "sessionToken",
    "key",
    "apiKey",
    "x-api-key",
    "privateKey",
    "backupCodes",
    "authorization",
    "cookie",
    "set-cookie",
    "otp",
  ].map((k) => k.toLowerCase()),
);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Patterns that look like credentials wherever they appear, known to this client or not. */
const patterns: [RegExp, string][] = [
  [/svc_[A-Za-z0-9_-]+/g, `svc_${REDACTED}`],
  [/\b(Bearer)\s+[^\s"',;]+/gi, `$1 ${REDACTED}`],
  [/([?&;]\s*(?:password|secret|token|code|key|apiKey|api_key)=)[^&\s#"']*/gi, `$1${REDACTED}`],
  [
    /("(?:password|oldPassword|newPassword|currentPassword|secret|totpSecret|token|key|apiKey|privateKey|code)"\s*:\s*)"(?:[^"\\]|\\.)*"/gi,
    `$1"${REDACTED}"`,
  ],
];

/**
 * Removes credentials from text, values and errors: the secrets this client knows (API key, session token,
 * password, TOTP secret, recent TOTP codes, 2FA cookies) plus anything shaped like a credential.
 */
export class Redactor {
  private readonly secrets = new Set<string>();
  private readonly numericSecrets = new Set<string>();

  /** Registers secrets to scrub; empty and very short values are ignored (they would mangle ordinary text). */
  add(...values: (string | null | undefined)[]): void {
    for (const value of values) {
      if (!value) continue;
      if (/^\d+$/.test(value)) {
        if (value.length >= 6) this.numericSecrets.add(value);
      } else if (value.length >= 6) {
        this.secrets.add(value);
      }
    }
  }

  /** Forgets a secret that is no longer valid (kept small: TOTP codes come and go). */
  forget(value: string): void {
    this.secrets.delete(value);
    this.numericSecrets.delete(value);
  }

  text(input: string): string {
    let out = input;
    for (const secret of [...this.secrets].sort((a, b) => b.length - a.length)) {
      if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    }
    for (const digits of this.numericSecrets) {
      out = out.replace(new RegExp(`(?<!\\d)${escapeRegExp(digits)}(?!\\d)`, "g"), REDACTED);
    }
    for (const [pattern, replacement] of patterns) out = out.replace(pattern, replacement);
    return out;
  }

  /** A deep copy of a JSON-like value with secret keys masked and every string scrubbed. */
  value(input: unknown, depth = 0): unknown {
    if (typeof input === "string") return this.text(input);
    if (input === null || typeof input !== "object" || depth > 8) return input;
    if (input instanceof Error) return this.errorSummary(input, depth);
    if (Array.isArray(input)) return input.map((v) => this.value(v, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(input)) {
      out[k] =
        sensitiveKeys.has(k.toLowerCase()) && v !== null && v !== undefined ? REDACTED : this.value(v, depth + 1);
    }
    return out;
  }

  /**
   * Scrubs an error in place (message, stack, string properties, its cause chain and aggregated errors) and returns
   * it, so its class and identity are kept for `instanceof` checks.
   */
  error<T>(input: T, depth = 0): T {
    if (!(input instanceof Error) || depth > 5) return (typeof input === "string" ? this.text(input) : input) as T;
    const target = input as Error & Record<string, unknown>;
    for (const prop of ["message", "stack"] as const) {
      const value = target[prop];
      if (typeof value === "string") {
        const clean = this.text(value);
        if (clean !== value) {
          try {
            Object.defineProperty(target, prop, { value: clean, writable: true, configurable: true });
          } catch {
            // A frozen foreign error: leave it; summaries (toJSON, inspect) are scrubbed separately.
          }
        }
      }
    }
    for (const [k, v] of Object.entries(target)) {
      if (typeof v === "string" && (sensitiveKeys.has(k.toLowerCase()) || this.text(v) !== v)) {
        try {
          target[k] = sensitiveKeys.has(k.toLowerCase()) ? REDACTED : this.text(v);
        } catch {
          // read-only property: see above
        }
      }
    }
    if (target.cause !== undefined) this.error(target.cause, depth + 1);
    if (input instanceof AggregateError) for (const e of input.errors) this.error(e, depth + 1);
    return input;
  }

  /** A plain, scrubbed description of an error (for toJSON and logs). */
  errorSummary(input: unknown, depth = 0): unknown {
    if (!(input instanceof Error)) return this.value(input, depth + 1);
    const e = input as Error & { code?: unknown };
    return {
      name: e.name,
      message: this.text(e.message),
      ...(typeof e.code === "string" ? { code: e.code } : {}),
      ...(e.cause !== undefined && depth < 5 ? { cause: this.errorSummary(e.cause, depth + 1) } : {}),
    };
  }
}

/** A redactor that knows no particular secret, only the credential-shaped patterns. */
export const patternRedactor = new Redactor();
