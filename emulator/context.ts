import type { Permission, RoleName } from "../provider/api";
import type { ApiKeyRec, JobRec, State, UserRec } from "./state";

export interface EmulatorOptions {
  /** Port to listen on; 0 picks a free one. Default 8787. */
  port?: number;
  host?: string;
  /**
   * Scale of job durations: the longest operation (GPU VM create) takes this many milliseconds and the others
   * proportionally less. Default: realistic durations (tens of seconds).
   */
  jobDurationMs?: number;
  /** General limit per user (per IP when unauthenticated) per 60 s; 0 turns it off. Default 100. */
  rateLimit?: number;
  /** Length of the general rate-limit window. Default 60 000 ms (the spec's); tests shorten it. */
  rateLimitWindowMs?: number;
  /** Keep the spec's stricter per-IP limits on sign-in and the other sensitive routes. Default true. */
  strictLimits?: boolean;
  /** Persist the state to this JSON file (atomic writes) and load it at start when it exists. */
  stateFile?: string;
  /** Fault injection rules, see emulator/README.md. */
  faults?: string;
  /** Idle timeout of sessions. Default 30 minutes (30 days with rememberMe). */
  sessionIdleMs?: number;
  /** A job still unfinished this long after it should have ended fails as stalled. Default 10 minutes. */
  stallTimeoutMs?: number;
  /** Seed of the deterministic random source used for ids of fixtures, IPs and fault probabilities. Default 1. */
  seed?: number;
  /** Write a line per request to stderr. Default false. */
  logRequests?: boolean;
  /**
   * Token the admin API (`/__admin/*`: bootstrap with passwords, TOTP secrets and API keys, state, faults) requires
   * as `Authorization: Bearer <token>` or `x-admin-token`. Default: none on a loopback host; a random one otherwise
   * (`adminToken` of the running emulator, printed once by the CLI).
   */
  adminToken?: string | null;
  /** Serve the admin API at all. Default true. */
  adminApi?: boolean;
  /**
   * Answer only what the spec documents: every response field the spec does not list is left out where the spec
   * gives the full field list (VM detail and list items, GPU VM detail, jobs, API keys, the auth check, the GPU
   * inventory), and the answers the spec does not show (the 200 of PUT and PATCH updates) are `{}`. An API built to
   * the spec alone may answer so; a client must work against it. Default false.
   */
  specFieldsOnly?: boolean;
}

/** Who is calling, once authenticated, and in which entity. */
export interface Caller {
  kind: "session" | "apiKey";
  user: UserRec;
  apiKey: ApiKeyRec | null;
  sessionTokenHash: string | null;
  /** The entity requests act on: the user's own, or a child entity named by `entityId`. */
  entityId: string;
  /** Effective roles (an API key with `roleId` is limited to that role). */
  roles: RoleName[];
  permissions: ReadonlySet<Permission>;
}

export interface EmulatorContext {
  state: State;
  options: Required<Omit<EmulatorOptions, "stateFile" | "faults" | "jobDurationMs" | "adminToken">> & {
    adminToken: string | null;
    stateFile: string | null;
    faults: string | null;
    jobDurationMs: number | null;
  };
  /** The emulator's clock (epoch ms). The admin API can move it forward to test expiry and retention. */
  now(): number;
  /** Milliseconds the clock has been moved forward. */
  clockOffsetMs: number;
  /** Deterministic random source in [0, 1). */
  random(): number;
  /** Mark the state changed, so persistence writes it. */
  touch(): void;
  /** The injected outcome for a job of this operation being started now (fault rules), or null. */
  jobFault(operation: string): JobRec["inject"];
  /** The number of the latest /v1 request to arrive (the request log's `after=` mark). */
  requestMark(): number;
}
