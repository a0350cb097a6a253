/**
 * Issue 8, item 4: against an endpoint that accepts connections and never answers, a Network `up` took 368 s and
 * then failed with UND_ERR_HEADERS_TIMEOUT, printing nothing meanwhile. Now `cloudinfra:requestTimeoutMs` and
 * `cloudinfra:maxRetries` bound it, the error states the bound, and the host's stderr says what it waited for; job
 * progress and rate-limit pauses are printed too.
 */
import * as net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { settingSources } from "../../provider/resources";
import { Network } from "../../sdk";
import { destroy, up, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";

const noEnv: Record<string, string | undefined> = Object.fromEntries(
  Object.values(settingSources).map((name) => [name, undefined]),
);

/** A server that accepts every connection and never answers. */
const sockets = new Set<net.Socket>();
const silent = net.createServer((socket) => {
  sockets.add(socket);
  socket.on("close", () => sockets.delete(socket));
  socket.on("error", () => undefined);
});
await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
const silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/v1`;
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => silent.close(() => resolve()));
});

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;
const apiKey = stack.emulator.bootstrap.users.admin.apiKey;

const network = (name: string) => () => {
  const created = new Network("net", { name, datacenterId: fra.id, networkType: "standard" });
  return { id: created.id };
};
const errorText = (result: RunResult) => result.errors.map((e) => e.message).join("\n");

describe("a hung API", () => {
  it("up against a server that never answers took 368 s, silently: it fails within requestTimeoutMs × attempts, saying what it waited for", async () => {
    const started = Date.now();
    const result = await up(network("hung"), {
      ...stack.options(),
      config: {
        "cloudinfra:baseUrl": silentUrl,
        "cloudinfra:apiKey": { secret: apiKey },
        "cloudinfra:requestTimeoutMs": "300",
        "cloudinfra:maxRetries": "1",
      },
      env: noEnv,
      throwOnError: false,
    });
    const elapsed = Date.now() - started;
    // 2 attempts of 300 ms and one backoff under a second, plus the host's start: far below this generous margin.
    expect(elapsed).toBeLessThan(20_000);
    const text = errorText(result);
    expect(text).toContain(`GET ${silentUrl}/auth/check`);
    expect(text).toContain("no answer within 300 ms");
    expect(text).toContain("Gave up after 2 attempts");
    expect(text).toContain("cloudinfra:requestTimeoutMs");
    expect(text).toContain("cloudinfra:maxRetries");
    expect(text).toContain("cloudinfra:baseUrl (stack config)");
    expect(text).not.toContain(apiKey);
    // What it waited for was printed while it waited: the retry and its reason.
    expect(result.hostLog).toMatch(
      new RegExp(
        `cloudinfra warning: GET ${silentUrl.replace(/[.]/g, "\\.")}/auth/check: Network failure .*no answer within 300 ms.*retrying \\(attempt 2 of at most 2\\)`,
      ),
    );
    expect(result.hostLog).not.toContain(apiKey);
    expect(result.state.resources.filter((r) => r.name === "net")).toEqual([]);
  });

  it("with the credential check skipped, the create path is bounded the same way and names what may have happened", async () => {
    const started = Date.now();
    const result = await up(network("hung-create"), {
      ...stack.options(),
      config: {
        "cloudinfra:baseUrl": silentUrl,
        "cloudinfra:apiKey": { secret: apiKey },
        "cloudinfra:requestTimeoutMs": "300",
        "cloudinfra:maxRetries": "1",
        "cloudinfra:skipCredentialsValidation": "true",
      },
      env: noEnv,
      throwOnError: false,
    });
    expect(Date.now() - started).toBeLessThan(20_000);
    const text = errorText(result);
    expect(text).toContain("no answer within 300 ms");
    expect(text).toContain("cloudinfra:requestTimeoutMs");
    expect(result.hostLog).toContain("retrying");
  });

  it("job waits were silent: the job's start, its progress every progressIntervalMs and its end are printed", async () => {
    // A network's create job takes about 9% of jobDurationMs: about 2.7 s here.
    const slow = await stackOnEmulator({ jobDurationMs: 30_000 });
    const options = { ...slow.options(), env: noEnv };
    options.config = { ...options.config, "cloudinfra:progressIntervalMs": "200" };
    const result = await up(network("progress"), options);
    const id = result.outputs.id as string;
    const lines = result.hostLog.split("\n").filter((l) => l.startsWith("cloudinfra: "));
    expect(lines.some((l) => /Creating network .*progress.*: job [0-9a-f-]{36} started; waiting/.test(l))).toBe(true);
    expect(lines.filter((l) => /job [0-9a-f-]{36} (pending|in progress), \d+% after/.test(l)).length).toBeGreaterThan(
      1,
    );
    expect(lines.some((l) => /job [0-9a-f-]{36} completed in/.test(l))).toBe(true);
    expect((await slow.api.getNetwork({ params: { id } })).status).toBe("Active");
    await destroy(options);
  });

  it("rate-limit pauses were silent: a 429's pause is printed with its length, a wait for budget is announced", async () => {
    const limited = await stackOnEmulator({ rateLimit: 3, rateLimitWindowMs: 3000 });
    const options = { ...limited.options(), env: noEnv };
    await limited.faults("createNetwork,status=429,count=1");
    const result = await up(() => {
      const ids = [1, 2, 3].map(
        (i) => new Network(`net${i}`, { name: `rl-${i}`, datacenterId: fra.id, networkType: "standard" }).id,
      );
      return { ids };
    }, options);
    await limited.faults("");
    expect(result.errors).toEqual([]);
    expect((await limited.requests()).filter((r) => r.status === 429).length).toBeGreaterThan(0);
    expect(result.hostLog).toMatch(
      /cloudinfra: rate limited by the API on POST \/resource\/networks: pausing [\d.]+ (ms|s) before trying again/,
    );
    expect(result.hostLog).toMatch(/cloudinfra: waiting for the API's rate-limit budget before [A-Z]+ \/\S+/);
    await destroy(options);
  });
});
