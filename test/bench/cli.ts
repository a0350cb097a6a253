/**
 * The bench through the real Pulumi CLI (what users run: its default parallelism, previews, checkpoints): for each N
 * and each SDK (the dynamic resources, the provider plugin), `up`, `refresh` and `destroy` of a stack of N resources
 * (20 % networks, 40 % volumes, 40 % VMs on those networks) against the emulator under the API's rate limit, with time
 * scaled down (jobs, the rate-limit window and the poll interval divided by BENCH_TIME_SCALE). Per operation: wall
 * time, requests per resource by route group, 429 answers, wall against its bound and against 1.2 × bound plus the
 * operation's preview (timed just before it), where the wall goes (from the emulator's job records), state bytes per
 * resource, the CLI's CPU and checkpoint time, and the peak RSS of each process the CLI ran. Figures, not assertions
 * (shared, noisy machine); request counts are exact.
 * The program runs as a user's project on disk, with the package laid out as a registry install (see programSource).
 *
 * Options (environment): BENCH_CLI_N (e.g. "200" or "200,500,1000"), BENCH_PARALLEL (the CLI's --parallel; default:
 * the CLI's own), BENCH_TIME_SCALE (10), BENCH_LIMIT (100 requests per window; 0: off), BENCH_SDKS ("dynamic,plugin,docs": docs is the
 * docs-style baseline of test/bench/docs-style.ts), BENCH_ROUTES (also print each operation's requests by route),
 * BENCH_SPEC_ONLY=1 (an API that sends only the fields the spec documents: the emulator's `specFieldsOnly`).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { realisticDurationMs } from "../../emulator/jobs";
import { startEmulator, type RunningEmulator } from "../../emulator/server";
import { cliStack, prepareProject, repositoryRoot, usePulumiCli } from "../../tools/pulumi-cli";
import { useLauncher } from "../plugin/launcher";

export type Family = "dynamic" | "plugin" | "docs";

interface LogEntry {
  route: string | null;
  status: number;
  /** Emulator clock (epoch ms) when the request arrived. */
  at: number;
}

/** The route groups requests are counted by. */
export function groupOf(route: string | null): string {
  if (route === null) return "other";
  if (route === "queryJobs") return "polls";
  if (/^bulkDelete|^delete/.test(route)) return "deletes";
  // Memberships and role grants, gathered into the bulk routes or sent one by one; detaches likewise.
  if (/^(bulkAddTeamMembers|bulkAssignTeams|bulkAssignRoles|addTeamMember|addUserRole)$/.test(route)) return "grants";
  if (/^bulkDetach|^detach/.test(route)) return "detaches";
  if (/^create/.test(route)) return "creates";
  if (/^list/.test(route)) return "lists";
  if (/SshKey$/.test(route)) return "ssh keys";
  if (/^get/.test(route)) return "reads";
  return route;
}

/**
 * Peak resident memory (VmHWM) of every process below this one, sampled, by role: the CLI, the plugin, the
 * dynamic-provider host, the language host, the program (Node.js running Pulumi's cmd/run).
 */
function rssSampler(): { stop(): Record<string, number> } {
  const peaks: Record<string, number> = {};
  const roleOf = (cmdline: string): string =>
    cmdline.includes("plugin/main.js") || cmdline.includes("pulumi-resource-cloudinfra")
      ? "plugin"
      : cmdline.includes("dynamic-provider")
        ? "dynamic host"
        : /(^|\/)pulumi\0/.test(cmdline)
          ? "cli"
          : cmdline.includes("language-host") || cmdline.includes("pulumi-language")
            ? "language host"
            : cmdline.includes("cmd/run")
              ? "program"
              : "other";
  const sample = () => {
    const parents = new Map<number, number>();
    for (const entry of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
        parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
      } catch {
        // exited meanwhile
      }
    }
    const below = (pid: number) => {
      for (let p = parents.get(pid); p !== undefined && p > 1; p = parents.get(p)) if (p === process.pid) return true;
      return false;
    };
    for (const pid of parents.keys()) {
      if (!below(pid)) continue;
      try {
        const status = fs.readFileSync(`/proc/${pid}/status`, "utf8");
        const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
        const role = roleOf(fs.readFileSync(`/proc/${pid}/cmdline`, "utf8"));
        peaks[role] = Math.max(peaks[role] ?? 0, hwm);
      } catch {
        // exited meanwhile
      }
    }
  };
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

interface Row {
  family: Family;
  n: number;
  op: string;
  /** The CLI's own run (`pulumi up`, `refresh`, `destroy`), as a user runs it. */
  wallMs: number;
  /** The same through the Automation API: with its `pulumi stack history` after the run. */
  automationMs: number;
  boundMs: number;
  /** The same operation previewed just before (`pulumi preview`, `refresh --preview-only`, `destroy --preview-only`). */
  previewMs: number;
  requests: number;
  tooMany: number;
  groups: Record<string, number>;
  stateBytes?: number;
  rss: Record<string, number>;
  cpu?: CliCpu;
  jobs?: JobTimeline;
}

/**
 * Where the wall goes, from the emulator's job records: the lead (operation start to the first job), the span from
 * the first job to the last job's end with the mean number of jobs running in it (the engine runs at most
 * `--parallel` operations at once), and the tail (the last job's end to the operation's end).
 */
interface JobTimeline {
  count: number;
  /** The operation's start to the provider's first request (the CLI, the program and the provider starting). */
  firstRequestMs: number;
  leadMs: number;
  spanMs: number;
  meanInFlight: number;
  /** Mean time from a job's end to the first job poll after it (what the provider adds to each job, at least). */
  pollDelayMs: number;
  /**
   * Mean time from a poll that saw jobs done to the next request starting a job (the provider answering the engine,
   * the engine's checkpoint and its next step, the provider's request): the turn between two jobs of one slot.
   */
  turnMs: number;
  tailMs: number;
  /** The provider's last request to the operation's end (the engine finishing, the CLI closing the plugins). */
  closeMs: number;
}

function jobTimeline(
  jobs: Iterable<{ createdAt: number; endsAt: number }>,
  log: LogEntry[],
  started: number,
  ended: number,
): JobTimeline | undefined {
  const within = [...jobs].filter((j) => j.createdAt >= started && j.createdAt <= ended);
  if (within.length === 0) return undefined;
  const first = Math.min(...within.map((j) => j.createdAt));
  const last = Math.max(...within.map((j) => j.endsAt));
  const busy = within.reduce((sum, j) => sum + (j.endsAt - j.createdAt), 0);
  const polls = log.filter((e) => e.route === "queryJobs").map((e) => e.at);
  const seenAt = within.flatMap((j) => {
    const seen = polls.find((at) => at >= j.endsAt);
    return seen === undefined ? [] : [{ end: j.endsAt, seen }];
  });
  const delays = seenAt.map((j) => j.seen - j.end);
  const starts = log.filter((e) => /^(create|delete|bulkDelete)/.test(e.route ?? "")).map((e) => e.at);
  const turns = [...new Set(seenAt.map((j) => j.seen))].flatMap((poll) => {
    const next = starts.find((at) => at >= poll);
    return next === undefined ? [] : [next - poll];
  });
  return {
    count: within.length,
    firstRequestMs: Math.min(...log.map((e) => e.at)) - started,
    leadMs: first - started,
    spanMs: last - first,
    meanInFlight: busy / Math.max(1, last - first),
    pollDelayMs: delays.reduce((sum, d) => sum + d, 0) / Math.max(1, delays.length),
    turnMs: turns.reduce((sum, d) => sum + d, 0) / Math.max(1, turns.length),
    tailMs: ended - last,
    closeMs: ended - Math.max(...log.map((e) => e.at)),
  };
}

/** From the CLI's own CPU profile: its CPU time, and the part spent writing checkpoints. */
interface CliCpu {
  totalMs: number;
  checkpointMs: number;
}

/**
 * The CLI run through a wrapper that adds `--profiling <BENCH_CLI_PROFILE>` to `up`, `refresh` and `destroy` (the CLI
 * then writes a Go CPU profile, `<prefix>.<pid>.cpu`), and appends to the file BENCH_CLI_TIMES, for each run of the
 * CLI, when it started and ended (epoch nanoseconds) and its arguments: the wall a user sees is the CLI's own run,
 * while the Automation API runs `pulumi stack history` after each `up`, `refresh` and `destroy` (not after a preview).
 * Returns the wrapper's directory, to put first on PATH.
 */
function cliWrapper(dir: string): string {
  const real = execFileSync("sh", ["-c", "command -v pulumi"], { encoding: "utf8" }).trim();
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, "pulumi"),
    [
      "#!/bin/sh",
      "start=$(date +%s%N)",
      'case "$1" in up|refresh|destroy) if [ -n "$BENCH_CLI_PROFILE" ]; then set -- "$@" --profiling "$BENCH_CLI_PROFILE"; fi;; esac',
      `"${real}" "$@"`,
      "status=$?",
      'if [ -n "$BENCH_CLI_TIMES" ]; then echo "$start $(date +%s%N) $*" >> "$BENCH_CLI_TIMES"; fi',
      "exit $status",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  return dir;
}

/** A run of the CLI as the wrapper recorded it (epoch milliseconds). */
interface CliRun {
  startedAt: number;
  endedAt: number;
}

/**
 * Runs `operation` (an Automation API call) and returns the CLI run among those it made whose arguments start with
 * `command` (e.g. `destroy --yes`), as the wrapper recorded it; undefined where `date` has no nanoseconds.
 */
async function timedCliRun(
  file: string,
  command: string,
  operation: () => Promise<unknown>,
): Promise<CliRun | undefined> {
  fs.rmSync(file, { force: true });
  process.env.BENCH_CLI_TIMES = file;
  try {
    await operation();
  } finally {
    delete process.env.BENCH_CLI_TIMES;
  }
  const runs = fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n") : [];
  for (const line of runs) {
    const [start, end, ...args] = line.split(" ");
    if (!/^\d+$/.test(start!) || !/^\d+$/.test(end!) || !args.join(" ").startsWith(command)) continue;
    return { startedAt: Number(BigInt(start!) / 1_000_000n), endedAt: Number(BigInt(end!) / 1_000_000n) };
  }
  return undefined;
}

/**
 * Reads the CPU profile the CLI wrote (`go tool pprof`): the CLI's CPU time, and the part under the snapshot
 * manager's `saveSnapshot` (serializing the whole state and writing the checkpoint file, once per step). The snapshot
 * manager writes one checkpoint at a time and every step waits for its own, so this is also time the deployment
 * spends on checkpoints. Undefined when there is no profile or no Go toolchain.
 */
function cliCpu(prefix: string): CliCpu | undefined {
  const dir = path.dirname(prefix);
  const files = fs.readdirSync(dir).filter((f) => f.startsWith(path.basename(prefix) + "."));
  const profile = files.find((f) => f.endsWith(".cpu"));
  try {
    if (profile === undefined) return undefined;
    const top = execFileSync("go", ["tool", "pprof", "-top", "-cum", "-nodecount=400", path.join(dir, profile)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    const duration = (text: string) => {
      const [, value, unit] = /^([\d.]+)(ns|us|µs|ms|s|min|h)$/.exec(text) ?? [];
      const factor: Record<string, number> = {
        ns: 1e-6,
        us: 1e-3,
        µs: 1e-3,
        ms: 1,
        s: 1000,
        min: 60_000,
        h: 3_600_000,
      };
      return value === undefined ? 0 : Number(value) * factor[unit];
    };
    const total = /Total samples = (\S+)/.exec(top)?.[1] ?? "0s";
    const line = top.split("\n").find((l) => /SnapshotManager\)\.saveSnapshot$/.test(l.trim()));
    return { totalMs: duration(total), checkpointMs: line ? duration(line.trim().split(/\s+/)[3]) : 0 };
  } catch {
    return undefined;
  } finally {
    for (const f of files) fs.rmSync(path.join(dir, f), { force: true });
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * The program, as a user's project on disk runs it (index.js): N resources, networks first, volumes, VMs each on a
 * network. The dynamic and plugin SDKs are required by package name from the project's node_modules, laid out as a
 * registry install (the dynamic state then records its provider as a `require` of the package's module); the
 * docs-style baseline is the module of test/bench/docs-style.ts, as a user's own provider would be.
 */
export function programSource(
  family: Family,
  prefix: string,
  n: number,
  datacenterId: string,
  docsPollMs: number,
): string {
  const networks = Math.max(1, Math.round(n * 0.2));
  const volumes = Math.round(n * 0.4);
  const settings = { prefix, datacenterId, networks, volumes, vms: n - networks - volumes, docs: family === "docs" };
  const make =
    family === "docs"
      ? `require(${JSON.stringify(path.join(__dirname, "docs-style.js"))}).docsStyleResources(${docsPollMs})`
      : `(sdk => (kind, name, props) => new sdk[kind](name, props))(require(${JSON.stringify(family === "dynamic" ? "@cloudinfra/pulumi" : "@cloudinfra/pulumi/plugin")}))`;
  return `const make = ${make};
const { prefix, datacenterId, networks, volumes, vms, docs } = ${JSON.stringify(settings)};
const nets = [];
for (let i = 0; i < networks; i++) {
  nets.push(make("Network", \`n\${i}\`, { name: \`\${prefix}-net-\${i}\`, datacenterId, networkType: "standard" }));
}
for (let i = 0; i < volumes; i++) {
  make("Volume", \`v\${i}\`, { name: \`\${prefix}-vol-\${i}\`, datacenterId, volumeTypeId: 1, sizeGb: 10 });
}
for (let i = 0; i < vms; i++) {
  make("VirtualMachine", \`m\${i}\`, {
    name: \`\${prefix}-vm-\${i}\`,
    datacenterId,
    imageId: 1,
    configurationId: 1,
    // The API's body as written by hand (the docs-style provider sends its inputs): one interface, the primary.
    networkInterfaces: [{ networkId: nets[i % networks].id, ...(docs ? { primary: true } : {}) }],
  });
}
module.exports = { count: ${n} };
`;
}

async function requestsAfter(emulator: RunningEmulator, mark: number): Promise<LogEntry[]> {
  const url = `${emulator.baseUrl.replace(/\/v1$/, "")}/__admin/requests?after=${mark}`;
  return ((await (await fetch(url)).json()) as { data: LogEntry[] }).data;
}

/** Runs the CLI bench; false when there is no CLI (the caller then runs the harness bench and says so). */
export async function cliBench(): Promise<boolean> {
  const version = usePulumiCli();
  if (version === undefined) return false;
  useLauncher();
  const sizes = (process.env.BENCH_CLI_N ?? "200").split(",").map(Number);
  const scale = Number(process.env.BENCH_TIME_SCALE ?? 10);
  const limit = Number(process.env.BENCH_LIMIT ?? 100);
  const parallel = process.env.BENCH_PARALLEL ? Number(process.env.BENCH_PARALLEL) : undefined;
  const families = (process.env.BENCH_SDKS ?? "dynamic,plugin,docs").split(",") as Family[];
  const specOnly = process.env.BENCH_SPEC_ONLY === "1";
  // The engine's default: 4 per CPU (what --parallel defaults to).
  const engineParallel = parallel ?? 4 * os.cpus().length;
  const windowMs = 60_000 / scale;
  const job = (op: string) => realisticDurationMs[op]! / scale;
  const root = repositoryRoot();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-bench-cli-"));
  process.env.PATH = `${cliWrapper(path.join(work, "bin"))}${path.delimiter}${process.env.PATH}`;
  const projectSource = path.join(work, "source");
  fs.mkdirSync(projectSource);
  fs.writeFileSync(path.join(projectSource, "Pulumi.yaml"), "name: bench\nruntime: nodejs\n");
  const rows: Row[] = [];
  console.log(
    `\nThrough the real CLI (${version}): jobs and the rate-limit window ÷ ${scale}, limit ${limit} per ` +
      `${windowMs / 1000} s, poll interval ${2000 / scale} ms, --parallel ${parallel ?? `default (${engineParallel})`}; ` +
      "walls are the CLI's own runs (the Automation API's call, in brackets, adds `pulumi stack history`)" +
      (specOnly ? "; the API sends only the fields the spec documents" : ""),
  );
  try {
    for (const n of sizes) {
      for (const family of families) {
        const emulator = await startEmulator({
          port: 0,
          rateLimit: limit,
          rateLimitWindowMs: windowMs,
          strictLimits: false,
          jobDurationMs: realisticDurationMs["gpu.create"]! / scale,
          specFieldsOnly: specOnly,
        });
        try {
          const dc = emulator.bootstrap.fixtures.datacenters[0].id;
          // The docs-style module resolves @pulumi/pulumi from the repository: linked, it is the program's own.
          const projectDir = prepareProject(projectSource, fs.mkdtempSync(path.join(work, `${family}-${n}-`)), root, {
            install: family === "docs" ? "link" : "copy",
          });
          // The docs-style provider polls "every second": 1 s of the API's time, ÷ the time scale.
          fs.writeFileSync(path.join(projectDir, "index.js"), programSource(family, `b${n}`, n, dc, 1000 / scale));
          const stack: Stack = await cliStack({
            projectDir,
            backendDir: path.join(work, "backend"),
            stackName: `${family}-${n}`,
            config: {
              "cloudinfra:baseUrl": emulator.baseUrl,
              "cloudinfra:apiKey": { secret: emulator.bootstrap.users.admin.apiKey },
              "cloudinfra:pollIntervalMs": String(2000 / scale),
            },
          });
          const networks = Math.max(1, Math.round(n * 0.2));
          const volumes = Math.round(n * 0.4);
          const vms = n - networks - volumes;
          const jobTime: Record<string, number> = {
            up: networks * job("network.create") + volumes * job("volume.create") + vms * job("vm.create"),
            refresh: 0,
            destroy: volumes * job("volume.delete") + vms * job("vm.delete"),
          };
          const opts = { parallel, onOutput: () => undefined };
          // Each operation with its preview, which a user's `pulumi up` (or refresh, destroy) runs first and the
          // Automation API's skips: timed on its own, as the CLI's share of the wall a user sees.
          // The CLI's runs are told apart by their arguments (the Automation API's, up to the first option it adds).
          const ops: [string, string, () => Promise<unknown>, string, () => Promise<unknown>][] = [
            ["up", "preview", () => stack.preview(opts), "up --yes", () => stack.up(opts)],
            [
              "refresh",
              "refresh --preview-only",
              () => stack.previewRefresh(opts),
              "refresh --skip-preview",
              () => stack.refresh(opts),
            ],
            [
              "destroy",
              "destroy --preview-only",
              () => stack.previewDestroy(opts),
              "destroy --yes",
              () => stack.destroy(opts),
            ],
          ];
          const times = path.join(work, "cli-times");
          for (const [op, previewCommand, preview, command, run] of ops) {
            await sleep(windowMs + 200); // a fresh rate-limit window
            const previewStarted = performance.now();
            const previewRun = await timedCliRun(times, previewCommand, preview);
            const previewMs = previewRun
              ? previewRun.endedAt - previewRun.startedAt
              : performance.now() - previewStarted;
            await sleep(windowMs + 200);
            const mark = emulator.ctx.requestMark();
            const rss = rssSampler();
            const profile = path.join(work, `profile-${family}-${n}-${op}`);
            process.env.BENCH_CLI_PROFILE = profile;
            const started = performance.now();
            const automationStartedAt = emulator.ctx.now();
            let failure: string | undefined;
            const cliRun = await timedCliRun(times, command, run).catch((error: unknown) => {
              failure = String(error).slice(0, 2000);
              return undefined;
            });
            const automationMs = performance.now() - started;
            const startedAt = cliRun?.startedAt ?? automationStartedAt;
            const endedAt = cliRun?.endedAt ?? emulator.ctx.now();
            const wallMs = endedAt - startedAt;
            delete process.env.BENCH_CLI_PROFILE;
            const peaks = rss.stop();
            const log = await requestsAfter(emulator, mark);
            const jobs = jobTimeline(Object.values(emulator.ctx.state.jobs), log, startedAt, endedAt);
            const groups: Record<string, number> = {};
            for (const e of log) groups[groupOf(e.route)] = (groups[groupOf(e.route)] ?? 0) + 1;
            if (process.env.BENCH_ROUTES) {
              const routes: Record<string, number> = {};
              for (const e of log) routes[`${e.route} ${e.status}`] = (routes[`${e.route} ${e.status}`] ?? 0) + 1;
              console.log(`    ${family} N=${n} ${op} by route: ${JSON.stringify(routes)}`);
            }
            const floorMs = limit > 0 ? Math.max(0, Math.ceil(log.length / limit) - 1) * windowMs : 0;
            const row: Row = {
              family,
              n,
              op,
              wallMs,
              automationMs,
              previewMs,
              boundMs: Math.max(floorMs, jobTime[op]! / engineParallel),
              requests: log.length,
              tooMany: log.filter((e) => e.status === 429).length,
              groups,
              rss: peaks,
              cpu: cliCpu(profile),
              jobs,
            };
            if (op === "up") row.stateBytes = JSON.stringify((await stack.exportStack()).deployment).length / n;
            rows.push(row);
            print(row);
            if (failure) console.log(`    ${op} failed: ${failure}`);
          }
          await stack.workspace.removeStack(stack.name, { force: true }).catch(() => undefined);
        } finally {
          await emulator.close();
        }
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  return true;
}

const mib = (bytes: number) => `${Math.round(bytes / 2 ** 20)}`;

function print(row: Row): void {
  const per = (count: number) => (count / row.n).toFixed(2);
  const groups = Object.entries(row.groups)
    .sort((a, b) => b[1] - a[1])
    .map(([g, c]) => `${g} ${per(c)}`)
    .join(", ");
  const rss = Object.entries(row.rss)
    .map(([role, bytes]) => `${role} ${mib(bytes)}`)
    .join(", ");
  console.log(
    `  ${row.family.padEnd(8)} N=${String(row.n).padEnd(5)} ${row.op.padEnd(8)} wall ${(row.wallMs / 1000).toFixed(1)} s ` +
      `[${(row.automationMs / 1000).toFixed(1)} s]` +
      (row.boundMs >= 1000
        ? ` (bound ${(row.boundMs / 1000).toFixed(1)} s, ×${(row.wallMs / row.boundMs).toFixed(2)}; ` +
          `its preview ${(row.previewMs / 1000).toFixed(1)} s: 1.2 × bound + preview = ` +
          `${((1.2 * row.boundMs + row.previewMs) / 1000).toFixed(1)} s),`
        : ` (no bound: no jobs, under one window; its preview ${(row.previewMs / 1000).toFixed(1)} s),`) +
      ` ${per(row.requests)} req/res, 429s ${row.tooMany}` +
      (row.stateBytes !== undefined ? `, state ${(row.stateBytes / 1024).toFixed(1)} KB/res` : "") +
      `\n      requests per resource: ${groups}\n      peak RSS MiB: ${rss}` +
      (row.jobs
        ? `\n      first request after ${(row.jobs.firstRequestMs / 1000).toFixed(1)} s; ` +
          `${row.jobs.count} jobs: first after ${(row.jobs.leadMs / 1000).toFixed(1)} s, then ` +
          `${(row.jobs.spanMs / 1000).toFixed(1)} s with ${row.jobs.meanInFlight.toFixed(1)} running on average ` +
          `(each seen done by a poll ${Math.round(row.jobs.pollDelayMs)} ms after its end, the next create or delete sent ` +
          `${Math.round(row.jobs.turnMs)} ms after that poll), ` +
          `the last done ${(row.jobs.tailMs / 1000).toFixed(1)} s before the end, the last request ` +
          `${(row.jobs.closeMs / 1000).toFixed(1)} s before it`
        : "") +
      (row.cpu
        ? `\n      CLI CPU ${(row.cpu.totalMs / 1000).toFixed(1)} s, of which checkpoints ` +
          `${(row.cpu.checkpointMs / 1000).toFixed(1)} s (CLI's CPU profile, SnapshotManager.saveSnapshot)`
        : ""),
  );
}
