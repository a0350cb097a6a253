import type { IncomingHttpHeaders } from "node:http";
import { Secret, TOTP } from "otpauth";
import { getSetCookies, Headers, type Cookie } from "undici";
import { SignInResult } from "../api";
import { CodedError } from "./error-codes";
import { ApiError } from "./errors";
import type { Redactor } from "./redact";

/** How the client authenticates: an API key, a bearer session token, or email + password + TOTP secret. */
export type ClientAuth =
  | { apiKey: string }
  | { sessionToken: string }
  | {
      email: string;
      password: string;
      /** Base32 TOTP secret of the user's authenticator; codes are computed from it. */
      totpSecret: string;
    };

/** What an exchange with a public or 2FA route returned. */
export interface AuthExchangeResult {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * Sends one sign-in step without credentials. Resolves for 2xx and for the statuses `accept` allows; otherwise it
 * rejects with the ApiError of the response.
 */
export type AuthExchange = (
  route: "signIn" | "verifyTotp",
  body: Record<string, unknown>,
  cookie: string | undefined,
  accept: (status: number, code: string | undefined) => boolean,
) => Promise<AuthExchangeResult>;

/**
 * Ends one session: `POST /auth/sign-out` with its token as Bearer, one attempt bounded by `signal` (no retries, no
 * wait for rate-limit budget beyond it). Resolves whatever the API answers; rejects when no answer came.
 */
export type SignOutExchange = (token: string, signal: AbortSignal) => Promise<AuthExchangeResult>;

const TOTP_PERIOD_MS = 30_000;

/** The spec's limit on sign-in (and on the TOTP step), per IP: what a refusal by it says. */
export const SIGN_IN_LIMIT = "15 sign-ins per 15 minutes per IP address";

/** The cookies a response sets (parsed by undici). */
export function setCookies(headers: IncomingHttpHeaders): Cookie[] {
  const raw = headers["set-cookie"];
  if (raw === undefined) return [];
  const h = new Headers();
  for (const line of Array.isArray(raw) ? raw : [raw]) h.append("set-cookie", line);
  return getSetCookies(h);
}

/** Turns the cookies a response sets into a `Cookie` request header (the temporary 2FA cookie, whatever its name). */
export function cookieHeader(headers: IncomingHttpHeaders): string | undefined {
  const pairs = setCookies(headers)
    .filter((c) => c.value !== "" && (c.maxAge === undefined || c.maxAge > 0))
    .map((c) => `${c.name}=${c.value}`);
  return pairs.length > 0 ? pairs.join("; ") : undefined;
}

function errorCode(body: unknown): string | undefined {
  const code = (body as { error?: unknown } | null)?.error;
  return typeof code === "string" ? code : undefined;
}

/**
 * Supplies the credentials of each request. With email + password + TOTP it signs in on first use (POST sign-in,
 * expecting 400 TWO_FACTOR_REQUIRED and the 2FA cookie, then POST verify-totp with a code computed by otpauth), keeps
 * the session token as Bearer, shares one sign-in between concurrent calls, and signs in again when told the
 * session expired.
 */
export class Authenticator {
  private token: string | null = null;
  private signingIn: Promise<string> | null = null;
  private lastTotpCounter = -1;
  private recentCodes: string[] = [];
  /** The refusal of our TOTP code: neither the secret nor the clock changes within a run, so it is final. */
  private refused: ApiError | null = null;
  /** Completed sign-ins (for tests and diagnostics). */
  signIns = 0;
  /** Sessions ended by {@link signOut} (for tests and diagnostics). */
  signOuts = 0;

  constructor(
    private readonly auth: ClientAuth,
    private readonly redactor: Redactor,
    private readonly exchange: AuthExchange,
    private readonly now: () => number = Date.now,
    private readonly signOutExchange?: SignOutExchange,
  ) {
    if ("apiKey" in auth) redactor.add(auth.apiKey);
    else if ("sessionToken" in auth) redactor.add(auth.sessionToken);
    else redactor.add(auth.password, auth.totpSecret);
  }

  /** The kind of credential, for diagnostics (never the credential itself). */
  get kind(): "apiKey" | "sessionToken" | "password" {
    return "apiKey" in this.auth ? "apiKey" : "sessionToken" in this.auth ? "sessionToken" : "password";
  }

  /** Headers that authenticate a request, and the session token they carry (to report it expired later). */
  async headers(signal?: AbortSignal): Promise<{ headers: Record<string, string>; token: string | null }> {
    if ("apiKey" in this.auth) return { headers: { "x-api-key": this.auth.apiKey }, token: null };
    if ("sessionToken" in this.auth) {
      return { headers: { authorization: `Bearer ${this.auth.sessionToken}` }, token: null };
    }
    const token = this.token ?? (await this.signIn(signal));
    return { headers: { authorization: `Bearer ${token}` }, token };
  }

  /**
   * The server answered SESSION_EXPIRED for a request made with `failedToken`. Forgets that session so the next call
   * signs in again. Returns false when this credential cannot sign in again (API key, fixed session token).
   */
  sessionExpired(failedToken: string | null): boolean {
    if (!("password" in this.auth) || failedToken === null) return false;
    if (this.token === failedToken) this.token = null;
    return true;
  }

  /** Whether this client holds a session it signed in for (or is signing in for one now). */
  get hasSession(): boolean {
    return this.token !== null || this.signingIn !== null;
  }

  /**
   * Ends the session this client signed in for, if any (`POST /auth/sign-out`, one attempt within `timeoutMs`), so
   * that it does not stay open until its idle timeout. A sign-in in flight is awaited within the same time. Best
   * effort: resolves to whether the API confirmed the sign-out, never rejects. A later call signs in again.
   */
  async signOut(timeoutMs = 1000): Promise<boolean> {
    if (!("password" in this.auth) || !this.signOutExchange) return false;
    const signal = AbortSignal.timeout(timeoutMs);
    let token = this.token;
    if (token === null && this.signingIn !== null) {
      const aborted = new Promise<null>((resolve) => signal.addEventListener("abort", () => resolve(null)));
      token = await Promise.race([this.signingIn.catch(() => null), aborted]);
    }
    if (token === null || signal.aborted) return false;
    if (this.token === token) this.token = null;
    try {
      const answer = await this.signOutExchange(token, signal);
      // 401: the session had already ended (expired or signed out elsewhere): nothing is left open either way.
      const ended = answer.status < 300 || answer.status === 401;
      if (ended) this.signOuts++;
      return ended;
    } catch {
      return false;
    }
  }

  /** Signs in (once for all concurrent callers) and resolves to the new session token. */
  signIn(signal?: AbortSignal): Promise<string> {
    if (!("password" in this.auth))
      return Promise.reject(new CodedError("SIGN_IN_UNAVAILABLE", "This client does not sign in: it has no password"));
    if (this.refused) return Promise.reject(this.refused);
    this.signingIn ??= this.performSignIn(this.auth, signal).finally(() => {
      this.signingIn = null;
    });
    return this.signingIn;
  }

  private async performSignIn(
    auth: { email: string; password: string; totpSecret: string },
    signal?: AbortSignal,
  ): Promise<string> {
    const first = await this.exchange(
      "signIn",
      { email: auth.email, password: auth.password },
      undefined,
      (status, code) => (status === 400 && code === "TWO_FACTOR_REQUIRED") || status === 429,
    );
    if (first.status === 429) throw this.rateLimited("/auth/sign-in/email", "signIn", first);
    let result = first;
    if (first.status === 400) {
      const challenge = (first.body as { data?: { totpConfigured?: boolean } }).data;
      if (challenge?.totpConfigured === false) {
        throw new ApiError(
          {
            status: 400,
            code: "TWO_FACTOR_REQUIRED",
            message: `${auth.email} has no TOTP configured; the client can only complete sign-in with a TOTP code`,
            method: "POST",
            path: "/auth/sign-in/email",
            route: "signIn",
          },
          this.redactor,
        );
      }
      const cookie = cookieHeader(first.headers);
      this.redactor.add(...(cookie ?? "").split(/;\s*/).map((pair) => pair.slice(pair.indexOf("=") + 1)));
      // One code, never spent twice: a refused code means a wrong secret or a wrong clock, which another code
      // (after waiting for the next time step) cannot fix. Fail now, and fail every later sign-in the same way.
      const code = await this.nextTotpCode(auth.totpSecret, signal);
      result = await this.exchange(
        "verifyTotp",
        { code },
        cookie,
        (status, errCode) => (status === 400 && errCode === "INVALID_OTP") || status === 429,
      );
      if (result.status === 429) throw this.rateLimited("/auth/two-factor/verify-totp", "verifyTotp", result);
      if (result.status === 400 && errorCode(result.body) === "INVALID_OTP") {
        this.refused = this.totpRefused(auth.email, result.headers);
        throw this.refused;
      }
    }
    const parsed = SignInResult.safeParse((result.body as { data?: unknown }).data);
    if (!parsed.success) {
      throw new ApiError(
        {
          status: result.status,
          code: "INVALID_RESPONSE",
          message: `Sign-in response carries no session token: ${parsed.error.message}`,
          method: "POST",
          path: first === result ? "/auth/sign-in/email" : "/auth/two-factor/verify-totp",
        },
        this.redactor,
      );
    }
    this.redactor.add(parsed.data.token);
    this.token = parsed.data.token;
    this.signIns++;
    return parsed.data.token;
  }

  /**
   * The error of a sign-in refused by its rate limit: final at once (waiting out a 15-minute window, or retrying into
   * it, would only hold the run and spend what is left of the budget of every runner behind the same address). It
   * names the limit and what to use instead: an API key, which does not sign in.
   */
  private rateLimited(path: string, route: "signIn" | "verifyTotp", answer: AuthExchangeResult): ApiError {
    const reset = Number(answer.headers["x-ratelimit-reset"]);
    const retryAfter = Number(answer.headers["retry-after"]);
    const when =
      Number.isFinite(retryAfter) && retryAfter > 0
        ? ` (the API says to wait ${Math.ceil(retryAfter)} s)`
        : Number.isFinite(reset) && reset > 0
          ? ` (until ${new Date(reset * 1000).toISOString()})`
          : "";
    return new ApiError(
      {
        status: 429,
        code: "RATE_LIMIT_EXCEEDED",
        message:
          `Signing in failed: the API refused the sign-in by its rate limit of ${SIGN_IN_LIMIT}${when}. Every ` +
          "provider process of every run signs in once with cloudinfra:email/password/totpSecret, so CI runners " +
          "behind one address run out quickly. Use an API key in CI (`pulumi config set --secret cloudinfra:apiKey " +
          "<key>`, or CLOUDINFRA_API_KEY): it never signs in. Not retried: a retry would only spend the budget again",
        method: "POST",
        path,
        route,
      },
      this.redactor,
    );
  }

  /**
   * The error of a refused TOTP code: it names the secret's setting and the clock, and how far this machine's clock
   * is from the server's (its `Date` header) when that can be told. Never the secret or the code.
   */
  private totpRefused(email: string, headers: IncomingHttpHeaders): ApiError {
    const serverDate = typeof headers.date === "string" ? Date.parse(headers.date) : Number.NaN;
    const skewS = Number.isNaN(serverDate) ? undefined : Math.round((this.now() - serverDate) / 1000);
    const clock =
      skewS === undefined
        ? "or this machine's clock is off by more than 30 s"
        : Math.abs(skewS) > 30
          ? `or this machine's clock, which is ${Math.abs(skewS)} s ${skewS > 0 ? "ahead of" : "behind"} the server's ` +
            "(codes are valid for 30 s), is the cause"
          : `since this machine's clock agrees with the server's (within ${Math.max(1, Math.abs(skewS))} s), most ` +
            "likely the secret";
    return new ApiError(
      {
        status: 400,
        code: "INVALID_OTP",
        message:
          `Signing in as ${email} failed: the server refused the TOTP code computed from cloudinfra:totpSecret ` +
          `(CLOUDINFRA_TOTP_SECRET). Either that secret is not the base32 secret of this user's authenticator, ${clock}. ` +
          "Set the right secret (`pulumi config set --secret cloudinfra:totpSecret <base32 secret>`) or correct the " +
          "clock (NTP), then run the command again",
        method: "POST",
        path: "/auth/two-factor/verify-totp",
        route: "verifyTotp",
      },
      this.redactor,
    );
  }

  /** A TOTP code for a time step never used before by this client (waiting for the next step when needed). */
  private async nextTotpCode(secret: string, signal?: AbortSignal): Promise<string> {
    const current = Math.floor(this.now() / TOTP_PERIOD_MS);
    const counter = Math.max(current, this.lastTotpCounter + 1);
    // Servers accept one step of skew; a step further ahead must wait until it is only one step ahead.
    const waitMs = (counter - 1) * TOTP_PERIOD_MS - this.now();
    if (counter > current + 1 && waitMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, waitMs);
        signal?.addEventListener(
          "abort",
          () => {
            clearTimeout(timer);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    }
    this.lastTotpCounter = counter;
    const totp = new TOTP({ secret: Secret.fromBase32(secret), algorithm: "SHA1", digits: 6, period: 30 });
    const code = totp.generate({ timestamp: counter * TOTP_PERIOD_MS });
    this.redactor.add(code);
    this.recentCodes.push(code);
    if (this.recentCodes.length > 4) this.redactor.forget(this.recentCodes.shift()!);
    return code;
  }
}
