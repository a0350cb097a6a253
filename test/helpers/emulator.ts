import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { afterAll } from "vitest";
import { buildEmulator, type BuiltEmulator } from "../../emulator/server";
import type { EmulatorOptions } from "../../emulator/context";

export interface Reply<T = unknown> {
  status: number;
  body: { success: boolean; data?: T; meta?: Record<string, unknown>; error?: string; message?: string } & Record<
    string,
    unknown
  >;
  headers: LightMyRequestResponse["headers"];
  raw: LightMyRequestResponse;
}

export interface TestEmulator extends BuiltEmulator {
  /** Sends a request through `inject` (no sockets). `as` picks the seeded user whose API key authenticates it. */
  call<T = unknown>(
    method: InjectOptions["method"],
    url: string,
    opts?: { as?: "admin" | "member" | "outsider" | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply<T>>;
  /** Moves the emulator's clock forward and lets jobs advance. */
  advance(ms: number): void;
  /** Waits (real time) until every job has ended. */
  settle(): Promise<void>;
}

/** A fresh emulator for one test file; closed after the file's tests. Jobs take 20 ms and limits are off by default. */
export async function testEmulator(options: EmulatorOptions = {}): Promise<TestEmulator> {
  // Registered before the first await, so it also works when called at the top level of a test file.
  const closer: { close?: () => Promise<void> } = {};
  afterAll(() => closer.close?.());
  const built = await buildEmulator({ jobDurationMs: 20, rateLimit: 0, strictLimits: false, ...options });
  closer.close = () => built.app.close();
  const call: TestEmulator["call"] = async (method, url, opts = {}) => {
    const who = opts.as === undefined ? "admin" : opts.as;
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    if (who) headers["x-api-key"] = built.bootstrap.users[who].apiKey;
    if (opts.body !== undefined && headers["content-type"] === undefined) headers["content-type"] = "application/json";
    const raw = await built.app.inject({
      method,
      url: url.startsWith("/v1") || url.startsWith("/__") ? url : `/v1${url}`,
      headers,
      ...(opts.body !== undefined
        ? { payload: typeof opts.body === "string" ? opts.body : JSON.stringify(opts.body) }
        : {}),
    });
    const body =
      raw.body.length > 0
        ? (JSON.parse(raw.body) as Reply["body"])
        : ({ success: raw.statusCode < 400 } as Reply["body"]);
    return { status: raw.statusCode, body, headers: raw.headers, raw } as Reply<never>;
  };
  return {
    ...built,
    call,
    advance(ms) {
      built.ctx.clockOffsetMs += ms;
    },
    async settle() {
      for (let i = 0; i < 500; i++) {
        const busy = Object.values(built.ctx.state.jobs).some(
          (j) => j.status === "pending" || j.status === "in_progress",
        );
        if (!busy) return;
        await new Promise((r) => setTimeout(r, 10));
        await built.app.inject({ method: "GET", url: "/__health" });
      }
      throw new Error("jobs did not settle");
    },
  };
}
