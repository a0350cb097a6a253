import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll } from "vitest";
import type { EmulatorOptions } from "../../emulator/context";
import { startEmulator, type RunningEmulator } from "../../emulator/server";
import { ApiError, CloudClient } from "../../provider/client";
import type { RunOptions } from "../../tools/harness";

export interface LogEntry {
  /** The arrival number (what {@link Stack.mark} returns the latest of). */
  seq: number;
  method: string;
  path: string;
  /** The raw query string (without `?`), empty when none. */
  query: string;
  route: string | null;
  status: number;
  at: number;
}

export interface Stack {
  emulator: RunningEmulator;
  /** Harness options of a fresh stack on this emulator (own state file), with the admin's API key. */
  options(extra?: Partial<RunOptions>): RunOptions;
  /** A client for checking what the API holds, and for making changes behind the stack's back. */
  api: CloudClient;
  /** The emulator's request log: the requests that arrived after `mark` (from {@link mark}), or all. */
  requests(mark?: number): Promise<LogEntry[]>;
  /** Replaces the emulator's fault rules (`--faults` syntax); empty clears them. */
  faults(spec: string): Promise<void>;
  /** The number of the latest request to arrive: `requests(mark)` then holds exactly the requests after this point. */
  mark(): number;
  datacenters: RunningEmulator["bootstrap"]["fixtures"]["datacenters"];
}

/** An emulator on a free port for one test file, fast jobs, and fresh stacks on it. */
export async function stackOnEmulator(options: EmulatorOptions = {}): Promise<Stack> {
  const emulator = await startEmulator({ port: 0, jobDurationMs: 300, rateLimit: 0, strictLimits: false, ...options });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-stack-"));
  const api = new CloudClient({
    baseUrl: emulator.baseUrl,
    auth: { apiKey: emulator.bootstrap.users.admin.apiKey },
    jobs: { pollIntervalMs: 20, maxPollIntervalMs: 100 },
  });
  afterAll(async () => {
    await api.close();
    await emulator.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const admin = `${emulator.baseUrl.replace(/\/v1$/, "")}/__admin`;
  let stacks = 0;
  return {
    emulator,
    api,
    datacenters: emulator.bootstrap.fixtures.datacenters,
    mark: () => emulator.ctx.requestMark(),
    options(extra = {}) {
      return {
        stateFile: path.join(dir, `stack-${++stacks}.json`),
        config: {
          "cloudinfra:baseUrl": emulator.baseUrl,
          "cloudinfra:apiKey": { secret: emulator.bootstrap.users.admin.apiKey },
          "cloudinfra:pollIntervalMs": "20",
        },
        ...extra,
      };
    },
    async requests(mark = 0) {
      const response = await fetch(`${admin}/requests?after=${mark}`);
      return ((await response.json()) as { data: LogEntry[] }).data;
    },
    async faults(spec) {
      const response = await fetch(`${admin}/faults`, {
        method: spec === "" ? "DELETE" : "PUT",
        headers: spec === "" ? {} : { "content-type": "application/json" },
        body: spec === "" ? undefined : JSON.stringify({ spec }),
      });
      if (!response.ok) throw new Error(`faults: HTTP ${response.status} ${await response.text()}`);
    },
  };
}

/** Calls the API with `secret` as the API key: resolves to the HTTP status (200 when the key works). */
export async function statusWith(target: Stack, secret: string): Promise<number> {
  const probe = new CloudClient({ baseUrl: target.emulator.baseUrl, auth: { apiKey: secret }, retry: { retries: 0 } });
  try {
    await probe.check();
    return 200;
  } catch (error) {
    if (error instanceof ApiError) return error.status;
    throw error;
  } finally {
    await probe.close();
  }
}
