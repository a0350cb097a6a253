/**
 * The fleet bench (`npm run bench -- --fleet`): a team's CI runners on one user's rate pool, state in PostgreSQL.
 * R runner processes (test/bench/fleet-runner.ts), each as a separate machine (its own HOME, PULUMI_HOME and
 * checkout; nothing shared but the API and the database), each with its own API key of the same user, each deploying
 * S stacks of N resources one after the other with the real CLI (`pulumi up`, its preview included, then `pulumi destroy`), runners alternating the SDKs
 * (dynamic, plugin). The stacks' state is in Pulumi's PostgreSQL backend on a throwaway cluster
 * (test/helpers/postgres.ts). The emulator's rate limit is on and, like the CLI bench's (test/bench/cli.ts), time is
 * scaled: jobs, the rate-limit window and the poll interval divided by BENCH_TIME_SCALE.
 *
 * Printed per runner and phase: wall, requests (the request log, by the runner's key), 429 answers; for the fleet:
 * requests per resource, the 429 share, fairness (the slowest runner's wall over the fastest's), and the up phase's
 * wall against max(rate floor, job bound) (targets: 429s ≤ 1 %, fairness ≤ 1.5, up ≤ 1.3 × bound + 8 s per stack for
 * the CLI's start and preview). Every up and destroy must succeed and the API hold exactly each stack's resources
 * after up, none after destroy: checked from the emulator's records (no request), and printed.
 *
 * Options (environment): BENCH_FLEET_RUNNERS (4), BENCH_FLEET_STACKS (2 per runner), BENCH_FLEET_N (40 per stack),
 * BENCH_FLEET_SDKS ("dynamic,plugin": runner i uses the i-th, cyclically), BENCH_TIME_SCALE (10), BENCH_LIMIT (100
 * requests per window), BENCH_PARALLEL (the CLI's --parallel; default: the CLI's own), BENCH_FLEET_TRACE=1 (each
 * stack's requests up to its first create or delete, with their times: where its lead went).
 */
import { fork } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { realisticDurationMs } from "../../emulator/jobs";
import { startEmulator, type RunningEmulator } from "../../emulator/server";
import { CloudClient } from "../../provider/client";
import { cliEnvironment, prepareProject, repositoryRoot, usePulumiCli } from "../../tools/pulumi-cli";
import { postgresMissing, startPostgres, type Postgres } from "../helpers/postgres";
import { useLauncher } from "../plugin/launcher";
import { groupOf, programSource, type Family } from "./cli";
import type { Phase, RunnerReport } from "./fleet-runner";

interface Runner {
  index: number;
  family: Family;
  keyId: string;
  /** The runner's checkout of the project, where its CLI runs. */
  project: string;
  env: Record<string, string>;
  stacks: string[];
}

interface LogEntry {
  route: string | null;
  /** Emulator clock (epoch ms) when the request arrived. */
  at: number;
  status: number;
  caller: { apiKeyId: string | null } | null;
}

/** A stack's composition: the CLI bench's mix (20 % networks, 40 % volumes, 40 % VMs on those networks). */
function composition(n: number) {
  const networks = Math.max(1, Math.round(n * 0.2));
  const volumes = Math.round(n * 0.4);
  return { networks, volumes, vms: n - networks - volumes };
}

/** Runs a phase in every runner's process at once; their reports, in runner order. */
function runPhase(runners: Runner[], phase: Phase, parallel: string): Promise<RunnerReport[]> {
  return Promise.all(
    runners.map(
      (runner) =>
        new Promise<RunnerReport>((resolve, reject) => {
          const args = [phase, runner.stacks.join(","), parallel];
          const child = fork(path.join(__dirname, "fleet-runner.js"), args, {
            cwd: runner.project,
            env: runner.env,
            stdio: ["ignore", "pipe", "inherit", "ipc"],
          });
          let out = "";
          child.stdout!.on("data", (chunk: Buffer) => (out += chunk.toString()));
          child.on("error", reject);
          child.on("exit", (code) => {
            try {
              resolve(JSON.parse(out.trim().split("\n").pop() ?? "") as RunnerReport);
            } catch {
              const now = Date.now();
              resolve({
                startedAt: now,
                endedAt: now,
                stacks: [],
                failures: [`runner exited ${code}: ${out.slice(-500)}`],
              });
            }
          });
        }),
    ),
  );
}

/**
 * What the API holds of each stack, from the emulator's records (no request): per stack, the resources whose names
 * carry its prefix, against what its program declares; the mismatches, as lines to print.
 */
function holdings(emulator: RunningEmulator, runners: Runner[], n: number, expectEmpty: boolean): string[] {
  const { state } = emulator.ctx;
  const names = [state.networks, state.volumes, state.vms].flatMap((records) =>
    Object.values(records).map((r) => r.name),
  );
  const wanted = composition(n);
  const problems: string[] = [];
  for (const stack of runners.flatMap((r) => r.stacks)) {
    const count = (kind: string) => names.filter((name) => name.startsWith(`${stack}-${kind}-`)).length;
    const held = { networks: count("net"), volumes: count("vol"), vms: count("vm") };
    const expected = expectEmpty ? { networks: 0, volumes: 0, vms: 0 } : wanted;
    if (JSON.stringify(held) !== JSON.stringify(expected)) {
      problems.push(`${stack}: the API holds ${JSON.stringify(held)}, expected ${JSON.stringify(expected)}`);
    }
  }
  const fleetNames = names.filter((name) => /^f\d+s\d+-/.test(name)).length;
  const total = expectEmpty ? 0 : runners.length * runners[0]!.stacks.length * n;
  if (fleetNames !== total) problems.push(`the API holds ${fleetNames} fleet resources, expected ${total}`);
  return problems;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function fleetBench(): Promise<void> {
  const version = usePulumiCli();
  if (version === undefined) throw new Error("the fleet bench runs the real CLI: none on PATH (npm run cli builds it)");
  const missing = postgresMissing();
  if (missing !== undefined) throw new Error(`the fleet bench keeps its state in PostgreSQL: ${missing}`);
  useLauncher();
  const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
  const runnerCount = env("BENCH_FLEET_RUNNERS", 4);
  const stackCount = env("BENCH_FLEET_STACKS", 2);
  const n = env("BENCH_FLEET_N", 40);
  const families = (process.env.BENCH_FLEET_SDKS ?? "dynamic,plugin").split(",") as Family[];
  const scale = env("BENCH_TIME_SCALE", 10);
  const limit = env("BENCH_LIMIT", 100);
  const parallel = process.env.BENCH_PARALLEL ?? "";
  const engineParallel = parallel === "" ? 4 * os.cpus().length : Number(parallel);
  const windowMs = 60_000 / scale;
  const job = (op: string) => realisticDurationMs[op]! / scale;
  const root = repositoryRoot();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-bench-fleet-"));
  let pg: Postgres | undefined;
  let emulator: RunningEmulator | undefined;
  try {
    pg = await startPostgres({ database: "fleet", user: "fleet" });
    emulator = await startEmulator({
      port: 0,
      rateLimit: limit,
      rateLimitWindowMs: windowMs,
      strictLimits: false,
      jobDurationMs: realisticDurationMs["gpu.create"]! / scale,
    });
    const dc = emulator.bootstrap.fixtures.datacenters[0]!.id;
    // A key per runner, of the admin user (a signed-in session makes them: an API key cannot make keys).
    const admin = emulator.bootstrap.users.admin;
    const session = new CloudClient({
      baseUrl: emulator.baseUrl,
      auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
    });
    const keys = [];
    for (let r = 0; r < runnerCount; r++)
      keys.push(await session.createApiKey({ body: { name: `fleet-runner-${r}` } }));
    await session.close();
    const source = path.join(work, "source");
    fs.mkdirSync(source);
    fs.writeFileSync(path.join(source, "Pulumi.yaml"), "name: fleet\nruntime: nodejs\n");
    const runners: Runner[] = keys.map((key, r) => {
      const family = families[r % families.length]!;
      const home = path.join(work, `runner-${r}`);
      fs.mkdirSync(home);
      // The runner's checkout: the project with its node_modules as a registry install lays them out, a program per
      // stack (index.js picks the stack's).
      const project = prepareProject(source, home, root, { install: "copy" });
      const stacks = Array.from({ length: stackCount }, (_, s) => `f${r}s${s}`);
      fs.mkdirSync(path.join(project, "stacks"));
      for (const stack of stacks) {
        const program = programSource(family, stack, n, dc, 1000 / scale);
        fs.writeFileSync(path.join(project, "stacks", `${stack}.js`), program);
      }
      fs.writeFileSync(
        path.join(project, "index.js"),
        'module.exports = require(`./stacks/${require("@pulumi/pulumi").getStack()}.js`);\n',
      );
      const offline = cliEnvironment(path.join(home, "unused-backend"), project);
      return {
        index: r,
        family,
        keyId: key.id,
        project,
        stacks,
        env: {
          PATH: process.env.PATH ?? "",
          HOME: home,
          PULUMI_HOME: path.join(home, ".pulumi"),
          NODE_PATH: offline.NODE_PATH!,
          PULUMI_SKIP_UPDATE_CHECK: "true",
          PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
          PULUMI_NODEJS_TRANSPILE_ONLY: "true",
          PULUMI_BACKEND_URL: pg!.url,
          PULUMI_CONFIG_PASSPHRASE: "fleet-bench",
          CLOUDINFRA_BASE_URL: emulator!.baseUrl,
          CLOUDINFRA_API_KEY: key.key,
          CLOUDINFRA_POLL_INTERVAL_MS: String(2000 / scale),
        },
      };
    });
    // The first login creates the backend's table: two at once on a fresh database can both try, and one fails
    // (`type "pulumi_state" already exists`). As in a team's set-up, one login first, then every runner's.
    const setup = [
      ...(await runPhase(runners.slice(0, 1), "setup", parallel)),
      ...(await runPhase(runners.slice(1), "setup", parallel)),
    ];
    const setupFailures = setup.flatMap((r) => r.failures);
    if (setupFailures.length > 0) throw new Error(`runner setup failed:\n${setupFailures.join("\n")}`);

    // A stack's job bound: its jobs' total time over the engine's parallelism, and at least its longest chain (a
    // network, then a VM on it); a runner's is the sum over its stacks (one after the other); the fleet's, the largest.
    const { networks, volumes, vms } = composition(n);
    const stackJobs = {
      up: Math.max(
        (networks * job("network.create") + volumes * job("volume.create") + vms * job("vm.create")) / engineParallel,
        job("network.create") + job("vm.create"),
      ),
      destroy: Math.max((volumes * job("volume.delete") + vms * job("vm.delete")) / engineParallel, job("vm.delete")),
    };
    console.log(
      `\nFleet (${version}): ${runnerCount} runners × ${stackCount} stacks × ${n} resources (${networks} networks, ` +
        `${volumes} volumes, ${vms} VMs), runners' SDKs ${runners.map((r) => r.family).join(", ")}, state in ` +
        `PostgreSQL, one user, a key per runner; jobs and the window ÷ ${scale}, limit ${limit} per ` +
        `${windowMs / 1000} s, --parallel ${parallel || `default (${engineParallel})`}`,
    );
    const failures: string[] = [];
    for (const phase of ["up", "destroy"] as const) {
      await new Promise((resolve) => setTimeout(resolve, windowMs + 200)); // a fresh rate-limit window
      const mark = emulator.ctx.requestMark();
      const load = os.loadavg()[0]!;
      const reports = await runPhase(runners, phase, parallel);
      // From the first runner's first CLI run to the last one's end (not the bench's own process starts).
      const started = Math.min(...reports.map((r) => r.startedAt));
      const ended = Math.max(...reports.map((r) => r.endedAt));
      const url = `${emulator.baseUrl.replace(/\/v1$/, "")}/__admin/requests?after=${mark}`;
      const log = ((await (await fetch(url)).json()) as { data: LogEntry[] }).data;
      const problems = holdings(emulator, runners, n, phase === "destroy");
      failures.push(...reports.flatMap((r) => r.failures), ...problems.map((p) => `after ${phase}: ${p}`));
      const walls = reports.map((r) => r.endedAt - r.startedAt);
      console.log(
        `\n  ${phase} (load average ${load.toFixed(1)} → ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs)`,
      );
      console.log(
        `    ${"runner".padEnd(8)}${"sdk".padEnd(9)}${"wall s".padStart(8)}${"requests".padStart(10)}` +
          `${"429s".padStart(6)}   per stack: CLI wall (first create or delete after, CPU of the CLI and its processes)`,
      );
      const traces: string[] = [];
      for (const runner of runners) {
        const mine = log.filter((e) => e.caller?.apiKeyId === runner.keyId);
        const report = reports[runner.index]!;
        console.log(
          `    ${String(runner.index).padEnd(8)}${runner.family.padEnd(9)}` +
            `${(walls[runner.index]! / 1000).toFixed(1).padStart(8)}${String(mine.length).padStart(10)}` +
            `${String(mine.filter((e) => e.status === 429).length).padStart(6)}   ` +
            report.stacks
              .map((s) => {
                // The stack's CLI start, preview and program run: up to the first request that starts a job.
                const first = mine.find(
                  (e) => e.at >= s.startedAt && /^(create|delete|bulkDelete|attach)/.test(e.route ?? ""),
                );
                const cpu = s.cpuMs === undefined ? "" : `, CPU ${seconds(s.cpuMs)}`;
                if (process.env.BENCH_FLEET_TRACE) {
                  // Where the lead went: each request of the stack's run up to its first create or delete, and when.
                  const lead = mine.filter((e) => e.at >= s.startedAt && (!first || e.at <= first.at));
                  traces.push(
                    `      ${s.stack}: ${lead.map((e) => `${e.route} ${seconds(e.at - s.startedAt)}`).join(", ")}`,
                  );
                }
                return `${s.stack} ${seconds(s.wallMs)} (${first ? seconds(first.at - s.startedAt) : "-"}${cpu})`;
              })
              .join(", "),
        );
      }
      if (traces.length > 0)
        console.log(
          `    requests up to each stack's first create or delete, seconds after its CLI started:\n${traces.join("\n")}`,
        );
      const tooMany = log.filter((e) => e.status === 429).length;
      const other = log.filter((e) => !runners.some((r) => r.keyId === e.caller?.apiKeyId)).length;
      const wallMs = ended - started;
      const floorMs = limit > 0 ? Math.max(0, Math.ceil(log.length / limit) - 1) * windowMs : 0;
      const jobBoundMs = stackCount * stackJobs[phase];
      const boundMs = Math.max(floorMs, jobBoundMs);
      const targetMs = 1.3 * boundMs + 8000 * stackCount;
      console.log(
        `    fleet: ${log.length} requests${other > 0 ? ` (${other} by no runner's key)` : ""}, ` +
          `${(log.length / (runnerCount * stackCount * n)).toFixed(2)} per resource; 429s ${tooMany} ` +
          `(${((100 * tooMany) / Math.max(1, log.length)).toFixed(2)} %, target ≤ 1 %); fairness ` +
          `${(Math.max(...walls) / Math.min(...walls)).toFixed(2)} (slowest / fastest runner, target ≤ 1.5)`,
      );
      const groups: Record<string, number> = {};
      for (const e of log) groups[groupOf(e.route)] = (groups[groupOf(e.route)] ?? 0) + 1;
      const cpuMs = reports.flatMap((r) => r.stacks).reduce((sum, st) => sum + (st.cpuMs ?? 0), 0);
      console.log(
        "    requests per resource: " +
          Object.entries(groups)
            .sort((a, b) => b[1] - a[1])
            .map(([g, c]) => `${g} ${(c / (runnerCount * stackCount * n)).toFixed(2)}`)
            .join(", "),
      );
      console.log(
        `    CPU of the runners' CLIs and their processes: ${seconds(cpuMs)} in a ${seconds(wallMs)} phase ` +
          `(${(cpuMs / wallMs).toFixed(2)} CPUs busy on average, of the machine's ${os.cpus().length})`,
      );
      console.log(
        `    wall ${seconds(wallMs)} against max(rate floor ${seconds(floorMs)}, job bound ${seconds(jobBoundMs)}) = ` +
          `${seconds(boundMs)}: ×${(wallMs / boundMs).toFixed(2)}` +
          (phase === "up"
            ? `; target 1.3 × bound + 8 s × ${stackCount} stacks = ${seconds(targetMs)}: ` +
              (wallMs <= targetMs ? "met" : "missed")
            : ""),
      );
      console.log(
        `    the API holds ${phase === "up" ? "exactly each stack's resources" : "nothing of the fleet"}: ` +
          (problems.length === 0 ? "yes" : `no (${problems.length} mismatches)`),
      );
    }
    console.log(`\n  every up and destroy succeeded: ${failures.length === 0 ? "yes" : "no"}`);
    for (const failure of failures) console.log(`    ${failure.replaceAll("\n", "\n      ")}`);
  } finally {
    await emulator?.close();
    pg?.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
