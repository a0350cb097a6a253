/**
 * Benchmarks that print figures (`npm run bench`): the provider's requests against the minimum for up, refresh and
 * destroy of N resources under the API's rate limit; five stacks in five processes sharing one API key; job waiting
 * under load, pacing under the rate limit, the emulator's throughput and memory, and the plugin's cold start. Figures,
 * not assertions: machines here are shared and noisy; request counts are exact.
 *
 * The first section (cli, test/bench/cli.ts) runs the real Pulumi CLI; the harness sections follow.
 *
 * Options (environment): BENCH_N (default 200), BENCH_STACKS (5), BENCH_STACK_SIZE (40), BENCH_JOBS (500),
 * BENCH_GETS (300), BENCH_LIMIT (100), BENCH_WINDOW_MS (10000), BENCH_THROUGHPUT (3000), BENCH_COLD_STARTS (5),
 * BENCH_ONLY (a section: provider, stacks, jobs, pacing, throughput, plugin), BENCH_TIMELINE (also print every
 * request: time, route, status).
 *
 * `npm run bench -- --fleet` runs the fleet bench instead (test/bench/fleet.ts): a team's runners on one user's rate
 * pool, state in PostgreSQL.
 */
import { fork } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startEmulator, type RunningEmulator } from "../../emulator/server";
import { CloudClient } from "../../provider/client";
import { Network, Volume } from "../../sdk";
import { destroy, preview, refresh, up, type RunOptions } from "../../tools/harness";
import { coldStart, type ColdStart } from "../plugin/launcher";
import { cliBench } from "./cli";
import { fleetBench } from "./fleet";

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

interface LogEntry {
  route: string | null;
  status: number;
  at: number;
}

async function requestLog(baseUrl: string, since = 0): Promise<LogEntry[]> {
  const response = await fetch(`${baseUrl.replace(/\/v1$/, "")}/__admin/requests?since=${since}`);
  return ((await response.json()) as { data: LogEntry[] }).data;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The harness options of a stack on this emulator, with the admin's API key. */
function stackOptions(baseUrl: string, apiKey: string, stateFile: string): RunOptions {
  return {
    stateFile,
    config: {
      "cloudinfra:baseUrl": baseUrl,
      "cloudinfra:apiKey": { secret: apiKey },
      "cloudinfra:pollIntervalMs": "1000",
    },
  };
}

/** A program of `networks` networks and `volumes` volumes (the mix of a real stack: more networks than volumes). */
function mixedProgram(prefix: string, networks: number, volumes: number, datacenterIds: string[]) {
  return () => {
    const ids: Record<string, unknown> = {};
    for (let i = 0; i < networks; i++) {
      const datacenterId = datacenterIds[i % datacenterIds.length];
      ids[`n${i}`] = new Network(`n${i}`, { name: `${prefix}-net-${i}`, datacenterId, networkType: "standard" }).id;
    }
    for (let i = 0; i < volumes; i++) {
      const datacenterId = datacenterIds[i % datacenterIds.length];
      ids[`v${i}`] = new Volume(`v${i}`, { name: `${prefix}-vol-${i}`, datacenterId, volumeTypeId: 1, sizeGb: 10 }).id;
    }
    return ids;
  };
}

/** Lower bound of the wall time of `requests` under `limit` per fixed window: the full windows to wait. */
const rateFloorMs = (requests: number, limit: number, windowMs: number) =>
  Math.max(0, Math.ceil(requests / limit) - 1) * windowMs;

const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "-");

interface Phase {
  name: string;
  sent: number;
  minimum: number;
  tooMany: number;
  wallMs: number;
  floorMs: number;
  perResource: number;
}

/**
 * up, refresh and destroy of N resources (60 % networks, 40 % volumes) through the real dynamic-provider host, under
 * the API's limit (BENCH_LIMIT requests per BENCH_WINDOW_MS), counting every request the emulator received. Each
 * phase starts in a fresh rate-limit window. Minimum requests: up = N creates + N read-backs + ⌈N/50⌉ job polls (the
 * issue's yardstick; the read-backs are batched through the list endpoint now, so up can go below it); destroy = N
 * deletes + ⌈volumes/50⌉ polls (network deletes have no job); refresh = N reads one by one (goal: ≤ 0.1 per
 * resource). Wall time runs from the phase's first request (before it, the harness starts a host process and runs
 * the program) to its end; its floor is the full windows to wait for the requests actually sent, plus one job's
 * duration where there are jobs (the last one must finish).
 */
async function providerRequests(): Promise<void> {
  const n = env("BENCH_N", 200);
  const limit = env("BENCH_LIMIT", 100);
  const windowMs = env("BENCH_WINDOW_MS", 10_000);
  const networks = Math.round(n * 0.6);
  const volumes = n - networks;
  const jobMs = 1000;
  const emulator = await startEmulator({
    port: 0,
    rateLimit: limit,
    rateLimitWindowMs: windowMs,
    strictLimits: false,
    jobDurationMs: jobMs,
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-bench-"));
  const options = stackOptions(emulator.baseUrl, emulator.bootstrap.users.admin.apiKey, path.join(dir, "stack.json"));
  const datacenterIds = emulator.bootstrap.fixtures.datacenters.slice(0, 2).map((d) => d.id);
  const program = mixedProgram("bench", networks, volumes, datacenterIds);
  const phases: Phase[] = [];
  const measure = async (name: string, minimum: number, withJobs: boolean, run: () => Promise<unknown>) => {
    await sleep(windowMs + 500); // a fresh window, so the floor below holds
    const since = emulator.ctx.now();
    const started = performance.now();
    await run();
    const wallMs = performance.now() - started;
    const log = await requestLog(emulator.baseUrl, since);
    // The API part: from the first request (the harness starts a host process and runs the program before it).
    const first = log.length > 0 ? log[0].at - since : 0;
    if (process.env.BENCH_TIMELINE) {
      const byRoute: Record<string, number> = {};
      for (const e of log) byRoute[`${e.route} ${e.status}`] = (byRoute[`${e.route} ${e.status}`] ?? 0) + 1;
      console.log(name, JSON.stringify(byRoute));
      console.log(name, log.map((e) => `${((e.at - since) / 1000).toFixed(1)}:${e.route?.slice(0, 6)}`).join(" "));
    }
    phases.push({
      name,
      sent: log.length,
      minimum,
      tooMany: log.filter((e) => e.status === 429).length,
      wallMs: wallMs - first,
      floorMs: rateFloorMs(log.length, limit, windowMs) + (withJobs ? jobMs : 0),
      perResource: log.length / n,
    });
  };
  // The preview before the up, with its checks against the API (cloudinfra:preflight, preflight.ts) and without
  // them (as before they existed): the difference is what they cost (issue 26: at most 0.2 requests per resource).
  const unchecked = { ...options, config: { ...options.config, "cloudinfra:preflight": "off" } };
  try {
    await measure("preview", 0, false, () => preview(program, options));
    await measure("prev. off", 0, false, () => preview(program, unchecked));
    await measure("up", 2 * n + Math.ceil(n / 50), true, () => up(program, options));
    await measure("refresh", n, false, () => refresh(options));
    await measure("destroy", n + Math.ceil(volumes / 50), true, () => destroy(options));
    console.log(
      `\nProvider requests: N = ${n} (${networks} networks, ${volumes} volumes), limit ${limit} requests per ` +
        `${windowMs / 1000} s, jobs ≈ 1 s, poll interval 1 s`,
    );
    console.log(
      `  ${"phase".padEnd(9)}${"sent".padStart(6)}${"minimum".padStart(9)}${"ratio".padStart(7)}` +
        `${"per res.".padStart(10)}${"429s".padStart(6)}${"wall s".padStart(9)}${"floor s".padStart(9)}${"wall/floor".padStart(12)}`,
    );
    for (const p of phases) {
      console.log(
        `  ${p.name.padEnd(9)}${String(p.sent).padStart(6)}${String(p.minimum).padStart(9)}` +
          `${ratio(p.sent, p.minimum).padStart(7)}${p.perResource.toFixed(3).padStart(10)}${String(p.tooMany).padStart(6)}` +
          `${(p.wallMs / 1000).toFixed(1).padStart(9)}${(p.floorMs / 1000).toFixed(1).padStart(9)}` +
          `${(p.floorMs > 0 ? ratio(p.wallMs, p.floorMs) : "-").padStart(12)}`,
      );
    }
    console.log(
      "  goals: up ≤ 1.15 ×, destroy ≤ 1.15 ×, refresh ≤ 0.1 per resource, 0 × 429, wall ≤ 1.1 × floor; preview's " +
        "checks (preview − prev. off) ≤ 0.2 per resource",
    );
  } finally {
    await emulator.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One stack of the many-stacks bench, in its own process: up then destroy; prints one JSON line. */
async function stackChild(baseUrl: string, apiKey: string, index: number, size: number, dcs: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `cloudinfra-bench-stack-${index}-`));
  const options = { ...stackOptions(baseUrl, apiKey, path.join(dir, "stack.json")), throwOnError: false };
  const networks = Math.round(size * 0.6);
  const program = mixedProgram(`s${index}`, networks, size - networks, dcs.split(","));
  const errors: string[] = [];
  const created = await up(program, options);
  errors.push(...created.errors.map((e) => `up: ${e.message}`));
  const destroyed = await destroy(options);
  errors.push(...destroyed.errors.map((e) => `destroy: ${e.message}`));
  const operations = created.steps.filter((s) => s.custom && s.op === "create").length + size;
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ index, operations, errors })}\n`);
}

/**
 * Teams run many stacks at once in CI with one API key, whose budget is shared. BENCH_STACKS processes, each taking
 * a stack of BENCH_STACK_SIZE resources up and down at the same time, one key, the API's limit on. Failed operations
 * are the errors the stacks report; the floor is the full windows to wait for every request they sent together.
 */
async function manyStacks(): Promise<void> {
  const stacks = env("BENCH_STACKS", 5);
  const size = env("BENCH_STACK_SIZE", 40);
  const limit = env("BENCH_LIMIT", 100);
  const windowMs = env("BENCH_WINDOW_MS", 10_000);
  const emulator: RunningEmulator = await startEmulator({
    port: 0,
    rateLimit: limit,
    rateLimitWindowMs: windowMs,
    strictLimits: false,
    jobDurationMs: 1000,
  });
  try {
    const dcs = emulator.bootstrap.fixtures.datacenters
      .slice(0, 2)
      .map((d) => d.id)
      .join(",");
    const since = emulator.ctx.now();
    const started = performance.now();
    const results = await Promise.all(
      Array.from(
        { length: stacks },
        (_, i) =>
          new Promise<{ index: number; operations: number; errors: string[] }>((resolve, reject) => {
            const args = ["--stack", emulator.baseUrl, String(i), String(size), dcs];
            // The key goes by environment, not on a command line other users of the machine can read.
            const env = { ...process.env, BENCH_API_KEY: emulator.bootstrap.users.admin.apiKey };
            const child = fork(__filename, args, { stdio: ["ignore", "pipe", "inherit", "ipc"], env });
            let out = "";
            child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
            child.on("error", reject);
            child.on("exit", (code) => {
              const line = out.trim().split("\n").pop() ?? "";
              try {
                resolve(JSON.parse(line) as { index: number; operations: number; errors: string[] });
              } catch {
                resolve({ index: i, operations: 0, errors: [`stack process exited with ${code}: ${out.slice(-500)}`] });
              }
            });
          }),
      ),
    );
    const log = await requestLog(emulator.baseUrl, since);
    // From the first request: before it, five processes start a host each and run their program.
    const wallMs = performance.now() - started - (log.length > 0 ? log[0].at - since : 0);
    const floorMs = rateFloorMs(log.length, limit, windowMs) + 1000;
    if (process.env.BENCH_TIMELINE) {
      console.log(
        log.map((e) => `${((e.at - since) / 1000).toFixed(1)}:${e.route?.slice(0, 6)}:${e.status}`).join(" "),
      );
    }
    const failed = results.reduce((sum, r) => sum + r.errors.length, 0);
    console.log(
      `\nMany stacks, one key: ${stacks} processes × ${size} resources (up, then destroy), one API key, limit ` +
        `${limit} per ${windowMs / 1000} s`,
    );
    row(
      "operations (creates + deletes)",
      results.reduce((sum, r) => sum + r.operations, 0),
    );
    row("failed operations (goal 0)", failed);
    row("429 answers (goal 0)", log.filter((e) => e.status === 429).length);
    row("requests sent, all stacks", log.length);
    row("wall time (first request → all done)", `${(wallMs / 1000).toFixed(1)} s`);
    row("shared floor (full windows to wait + a job)", `${(floorMs / 1000).toFixed(1)} s`);
    row("wall / floor", ratio(wallMs, floorMs));
    for (const r of results) for (const error of r.errors.slice(0, 3)) console.log(`    stack ${r.index}: ${error}`);
  } finally {
    await emulator.close();
  }
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

/**
 * The plugin's cold start as the engine sees it, BENCH_COLD_STARTS times one after the other (the same measurement
 * as test/plugin/main.test.ts): spawn of the built `pulumi-resource-cloudinfra` → port printed → first Check answered.
 */
async function pluginColdStart(): Promise<void> {
  const runs = env("BENCH_COLD_STARTS", 5);
  const emulator = await startEmulator({ port: 0, rateLimit: 0 });
  const api = {
    baseUrl: emulator.baseUrl,
    apiKey: emulator.bootstrap.users.admin.apiKey,
    datacenterId: emulator.bootstrap.fixtures.datacenters[0].id,
  };
  try {
    console.log(`\nPlugin cold start: ${runs} starts of pulumi-resource-cloudinfra, one after the other`);
    const starts: ColdStart[] = [];
    for (let i = 1; i <= runs; i++) {
      const start = await coldStart(api);
      if (start.failures.length > 0)
        throw new Error(`cold start ${i}: Check failed: ${JSON.stringify(start.failures)}`);
      starts.push(start);
      row(
        `start ${i}: port printed / first Check answered / CPU`,
        `${ms(start.listeningMs)} / ${ms(start.answeredMs)} / ${start.cpuMs === undefined ? "-" : ms(start.cpuMs)}`,
      );
    }
    const summary = (pick: (s: ColdStart) => number) => {
      const sorted = starts.map(pick).sort((a, b) => a - b);
      const mid = sorted.length >> 1;
      const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
      return `${ms(median)} / ${ms(sorted[0])}`;
    };
    row(
      "median / min: port printed",
      summary((s) => s.listeningMs),
    );
    row(
      "median / min: first Check answered",
      summary((s) => s.answeredMs),
    );
    if (starts.every((s) => s.cpuMs !== undefined)) {
      row(
        "median / min: plugin CPU by the first Check",
        summary((s) => s.cpuMs!),
      );
    }
  } finally {
    await emulator.close();
  }
}

const ms = (value: number) => `${Math.round(value)} ms`;

async function main(): Promise<void> {
  console.log(`cloudinfra benchmarks — node ${process.version}`);
  const only = process.env.BENCH_ONLY;
  const sections: [string, () => Promise<void>][] = [
    [
      "cli",
      async () => {
        if (!(await cliBench())) {
          console.log(
            "\nNo Pulumi CLI (npm run cli builds it): up, refresh and destroy measured through the test harness",
          );
          await providerRequests();
        }
      },
    ],
    ["provider", providerRequests],
    ["stacks", manyStacks],
    ["jobs", jobWaiting],
    ["pacing", pacing],
    ["throughput", throughput],
    ["plugin", pluginColdStart],
  ];
  for (const [name, run] of sections) if (!only || only === name) await run();
}

const [mode, ...args] = process.argv.slice(2);
(mode === "--stack"
  ? stackChild(args[0], process.env.BENCH_API_KEY ?? "", Number(args[1]), Number(args[2]), args[3])
  : mode === "--fleet"
    ? fleetBench()
    : main()
).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
