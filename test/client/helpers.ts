import { Agent, type Dispatcher } from "undici";
import { afterAll } from "vitest";
import type { EmulatorOptions } from "../../emulator/context";
import { startEmulator, type RunningEmulator } from "../../emulator/server";
import { CloudClient, type CloudClientOptions, type ExchangeInfo } from "../../provider/client";

export type SeedRole = "admin" | "member" | "outsider";

export interface ClientHarness {
  emulator: RunningEmulator;
  /** A client on the emulator's real socket; API key of the seeded user by default. Closed after the file. */
  client(options?: Partial<CloudClientOptions> & { as?: SeedRole }): CloudClient;
  /** Every HTTP exchange any client of this harness made. */
  exchanges: ExchangeInfo[];
  /** The emulator's request log (`GET /__admin/requests`), optionally filtered. */
  requestLog(query?: Record<string, string>): Promise<{ route: string | null; status: number; at: number }[]>;
}

/** Starts an emulator listening on a free port for one test file (jobs fast, limits off unless overridden). */
export async function clientHarness(options: EmulatorOptions = {}): Promise<ClientHarness> {
  const emulator = await startEmulator({
    port: 0,
    jobDurationMs: 40,
    rateLimit: 0,
    strictLimits: false,
    ...options,
  });
  const clients: CloudClient[] = [];
  const exchanges: ExchangeInfo[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await emulator.close();
  });
  return {
    emulator,
    exchanges,
    client({ as = "admin", ...options } = {}) {
      const client = new CloudClient({
        baseUrl: emulator.baseUrl,
        auth: { apiKey: emulator.bootstrap.users[as].apiKey },
        retry: { minDelayMs: 5, maxDelayMs: 50 },
        jobs: { pollIntervalMs: 20, maxPollIntervalMs: 100 },
        onExchange: (info) => exchanges.push(info),
        ...options,
      });
      clients.push(client);
      return client;
    },
    async requestLog(query = {}) {
      const url = new URL(`${emulator.baseUrl.replace(/\/v1$/, "")}/__admin/requests`);
      for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
      const response = await fetch(url);
      if (!response.ok) throw new Error(`admin request log: HTTP ${response.status}`);
      const body = (await response.json()) as { data: { route: string | null; status: number; at: number }[] };
      return body.data;
    },
  };
}

/** A TOTP-free pause. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  at: number;
}

/** A real keep-alive Agent that records every request it dispatches (method, path, headers). */
export function recordingDispatcher(): { dispatcher: Dispatcher; requests: RecordedRequest[] } {
  const requests: RecordedRequest[] = [];
  const agent = new Agent();
  afterAll(() => agent.close());
  const dispatcher = agent.compose((dispatch) => (opts, handler) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((opts.headers ?? {}) as Record<string, string | string[]>)) {
      headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : String(v);
    }
    requests.push({ method: opts.method, path: opts.path, headers, at: Date.now() });
    return dispatch(opts, handler);
  });
  return { dispatcher, requests };
}
