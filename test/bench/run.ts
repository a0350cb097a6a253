/**
 * Benchmarks that print figures (`npm run bench`): job waiting under load, pacing under the rate limit, and the
 * emulator's throughput and memory. Figures, not assertions: machines here are shared and noisy.
 *
 * Options (environment): BENCH_JOBS (default 500), BENCH_GETS (300), BENCH_LIMIT (100), BENCH_WINDOW_MS (10000),
 * BENCH_THROUGHPUT (3000).
 */
import { startEmulator } from "../../emulator/server";
import { CloudClient } from "../../provider/client";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

interface LogEntry {
  route: string | null;
  status: number;
}

async function requestLog(baseUrl: string): Promise<LogEntry[]> {
  const response = await fetch(`${baseUrl.replace(/\/v1$/, "")}/__admin/requests`);
  return ((await response.json()) as { data: LogEntry[] }).data;
}

function row(label: string, value: string | number): void {
  console.log(`  ${label.padEnd(44)} ${value}`);
}

async function jobWaiting(): Promise<void> {
  const jobs = env("BENCH_JOBS", 500);
  const emulator = await startEmulator({ port: 0, rateLimit: 0, jobDurationMs: 3000 });
  const client = new CloudClient({
    baseUrl: emulator.baseUrl,
    auth: { apiKey: emulator.bootstrap.users.admin.apiKey },
    jobs: { pollIntervalMs: 200, maxPollIntervalMs: 1000 },
  });
  try {
    const datacenterId = emulator.bootstrap.fixtures.datacenters[0].id;
    const created = await Promise.all(
      Array.from({ length: jobs }, (_, i) =>
        client.createVolume({
          body: { name: `bench-${i}`, datacenterId, volumeTypeId: 1, volumeSizeId: 101, sizeGb: 10 },
        }),
      ),
    );
    const started = performance.now();
    await client.jobs.waitAll(created.map((c) => c.jobId));
    const elapsed = performance.now() - started;
    const polls = (await requestLog(emulator.baseUrl)).filter((e) => e.route === "queryJobs").length;
    console.log(`\nJob waiting: ${jobs} jobs awaited at once (each takes ≈ 0.3 s in the emulator)`);
    row("wall time to all completed", `${(elapsed / 1000).toFixed(2)} s`);
    row("ticks", client.jobs.stats.ticks);
    row("POST /resource/jobs requests (request log)", polls);
    row("max requests in one tick (bound ⌈n/50⌉)", `${client.jobs.stats.maxRequestsPerTick} (${Math.ceil(jobs / 50)})`);
    row("requests per job", (polls / jobs).toFixed(3));
  } finally {
    await client.close();
    await emulator.close();
  }
}

async function pacing(): Promise<void> {
  const gets = env("BENCH_GETS", 300);
  const limit = env("BENCH_LIMIT", 100);
  const windowMs = env("BENCH_WINDOW_MS", 10_000);
  const emulator = await startEmulator({ port: 0, rateLimit: limit, rateLimitWindowMs: windowMs, jobDurationMs: 100 });
  const client = new CloudClient({
    baseUrl: emulator.baseUrl,
    auth: { apiKey: emulator.bootstrap.users.admin.apiKey },
  });
  try {
    const started = performance.now();
    const results = await Promise.allSettled(Array.from({ length: gets }, () => client.listNetworks({})));
    const elapsed = performance.now() - started;
    const log = await requestLog(emulator.baseUrl);
    const minimum = (Math.ceil(gets / limit) - 1) * windowMs;
    console.log(`\nPacing: ${gets} concurrent GETs under ${limit} requests per ${windowMs / 1000} s`);
    row(
      "succeeded / failed at the caller",
      `${results.filter((r) => r.status === "fulfilled").length} / ${results.filter((r) => r.status === "rejected").length}`,
    );
    row("429 answers seen by the emulator", log.filter((e) => e.status === 429).length);
    row("requests sent", log.length);
    row("wall time", `${(elapsed / 1000).toFixed(2)} s`);
    row("lower bound (full windows to wait)", `${(minimum / 1000).toFixed(2)} s`);
  } finally {
    await client.close();
    await emulator.close();
  }
}

async function throughput(): Promise<void> {
  const count = env("BENCH_THROUGHPUT", 3000);
  const emulator = await startEmulator({ port: 0, rateLimit: 0, jobDurationMs: 100 });
  const client = new CloudClient({
    baseUrl: emulator.baseUrl,
    auth: { apiKey: emulator.bootstrap.users.admin.apiKey },
  });
  try {
    const datacenterId = emulator.bootstrap.fixtures.datacenters[0].id;
    for (let i = 0; i < 50; i++) {
      await client.createNetwork({ body: { name: `net-${i}`, datacenterId, networkType: "standard" } });
    }
    const before = process.memoryUsage().rss;
    const started = performance.now();
    const concurrency = 32;
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < count) await client.listNetworks({ query: { limit: 20 } });
      }),
    );
    const elapsed = performance.now() - started;
    console.log(
      `\nThroughput: ${count} GET /resource/networks (20 of 50 per page), ${concurrency} in flight, client and emulator in one process`,
    );
    row("requests per second", Math.round((count / elapsed) * 1000));
    row("mean latency", `${((elapsed / count) * concurrency).toFixed(2)} ms`);
    row(
      "RSS before → after",
      `${Math.round(before / 2 ** 20)} → ${Math.round(process.memoryUsage().rss / 2 ** 20)} MiB`,
    );
  } finally {
    await client.close();
    await emulator.close();
  }
}

async function main(): Promise<void> {
  console.log(`cloudinfra benchmarks — node ${process.version}`);
  await jobWaiting();
  await pacing();
  await throughput();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
