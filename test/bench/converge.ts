/**
 * The converge run (`npm run converge`): a stack of 31 resources of every kind, through the real CLI against the
 * emulator, with either SDK, under request faults (500, 503, 429, latency: about 10 % of requests), failed jobs (8 % of
 * every job kind) and lost answers (mutating requests carried out, then answered 503 or left without an answer: 6 %).
 * `up` is run under those faults until one ends without error and a `preview --expect-no-changes` (faults off) passes,
 * at most `--max-ups` times. Each `up` runs the program from a project on disk, as users run it (test/bench/converge-program.ts
 * says why not inline). Then, faults off: leaks (API records the state does not hold), duplicates (two records of
 * one name), lost (state entries whose record is gone), and `destroy` must leave nothing. Figures, not assertions.
 *
 * Options: --seeds 1-8 (or 1,3,5), --sdks dynamic,plugin, --modes continue,default (continue: `up --continue-on-error`),
 * --max-ups 8, --hang-minutes 6 (a CLI command still running after that long is reported as hung, with what the emulator and
 * the CLI's output show, and interrupted), --json FILE (every run's record). A failure is "from a fault" when its message is one the emulator
 * injects (`Injected ...`) or a lost connection, "from a dependency" when a value of a resource that failed in the same
 * `up --continue-on-error` is missing, or names a resource left in status Error (the engine passes a resource recorded
 * as failed on to its dependents); a resource that fails again, after a failure, with neither is "failed twice
 * from a fault that is gone". Seeds draw the fault probabilities, but the CLI's parallelism orders the requests, so a
 * seed does not replay one run exactly.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import { type RunningEmulator, startEmulator } from "../../emulator/server";
import { CloudClient } from "../../provider/client";
import { cliStack, prepareProject, repositoryRoot, usePulumiCli } from "../../tools/pulumi-cli";
import { useLauncher } from "../plugin/launcher";
import {
  everyKindFixtures,
  listedKind,
  mutatingRoutes,
  recordsInApi,
  type Family,
  type Listed,
} from "../e2e/every-kind";

type Mode = "continue" | "default";

/** The faults of every `up`: request faults on every route, failed jobs of every kind, lost answers. */
export const convergeFaults = [
  "/**,status=500,p=0.025",
  "/**,status=503,p=0.025",
  "/**,status=429,p=0.025",
  "/**,latency=300ms,p=0.025",
  "job=*,fail,p=0.08",
  ...mutatingRoutes.flatMap((route) => [`${route},status=503,after,p=0.03`, `${route},drop,after,p=0.03`]),
].join(";");

/** A resource's failure in one `up`. */
interface Failure {
  up: number;
  resource: string;
  message: string;
  /**
   * `fault`: a message the emulator injects, or a lost connection; `dependency`: a value from a resource that failed
   * in the same `up --continue-on-error` (the engine leaves it out of Check); `other`: neither.
   */
  cause: "fault" | "dependency" | "other";
}

/** What one run saw. */
interface RunRecord {
  seed: number;
  family: Family;
  mode: Mode;
  /** Ups until converged; undefined when `--max-ups` did not suffice. */
  ups?: number;
  upsRun: number;
  /** Per up: how many injected request faults (errors, lost answers, latency) and job failures fired. */
  fired: { requests: number; jobs: number }[];
  /** Per up that ended without error: the engine's count of each operation (create, same, update, delete, ...). */
  steps: { up: number; changes: Record<string, number> }[];
  failures: Failure[];
  /** Resources that failed again, with a message no fault gives, after an earlier failure. */
  failedTwiceGone: string[];
  leaks: string[];
  duplicates: string[];
  lost: string[];
  destroyClean: boolean;
  destroyError?: string;
  /** The other errors of the ups (not tied to a resource). */
  otherErrors: string[];
  /** CLI commands that ran longer than `--hang-minutes`, with what was seen then. */
  hangs: Hang[];
  seconds: number;
}

/** A CLI command still running after `--hang-minutes`: the emulator's view and the CLI's last output at that time. */
interface Hang {
  command: string;
  minutes: number;
  /** Requests that arrived and were never answered (nor dropped), oldest first. */
  unanswered: number[];
  /** The latest requests answered. */
  lastRequests: string[];
  /** Jobs not ended: operation, status, target, age. */
  openJobs: string[];
  /** The CLI's last output lines (with the dynamic provider's log lines). */
  output: string[];
}

/** An injected fault's own message, a lost connection, or a resource left in status Error by an injected job failure. */
const INJECTED =
  /Injected|socket|ECONNRESET|other side closed|connection|fetch failed|terminated|UND_ERR|status Error/i;
const DEPENDENCY = /has no value: if the program sets it from another resource's output| is Error, not Active/;

function causeOf(message: string): Failure["cause"] {
  return INJECTED.test(message) ? "fault" : DEPENDENCY.test(message) ? "dependency" : "other";
}

function firstLine(text: string): string {
  const line =
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l.length > 0 && !/^(error:)?\s*$/.test(l) && !/^\d+ errors? occurred:?$/.test(l)) ?? "";
  return line
    .replace(/^error:\s*/, "")
    .replace(/^\*\s*/, "")
    .slice(0, 240);
}

/** The state's cloudinfra resources: kind, name (the URN's last part), id. */
async function stateEntries(stack: Stack): Promise<{ kind: string; name: string; id: string }[]> {
  const deployment = (await stack.exportStack()).deployment as {
    resources?: { urn: string; type: string; id?: string }[];
  };
  return (deployment.resources ?? []).flatMap((r) => {
    const kind = /(?:dynamic\/cloudinfra:|^cloudinfra:index:)(\w+)$/.exec(r.type)?.[1];
    return kind === undefined || !r.id ? [] : [{ kind, name: r.urn.split("::").at(-1)!, id: r.id }];
  });
}

/** The emulator's admin API, as the run uses it. */
function adminApi(emulator: RunningEmulator) {
  const base = `${emulator.baseUrl.replace(/\/v1$/, "")}/__admin`;
  const call = async (method: "GET" | "PUT" | "DELETE", route: string, body?: unknown) => {
    const response = await fetch(`${base}${route}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} /__admin${route}: HTTP ${response.status} ${await response.text()}`);
    return ((await response.json()) as { data: unknown }).data;
  };
  return {
    faults: (spec: string) => (spec === "" ? call("DELETE", "/faults") : call("PUT", "/faults", { spec })),
    /** How many times the current rules fired, request rules and job rules apart. */
    fired: async () => {
      const rules = (await call("GET", "/faults")) as { kind: "request" | "job"; fired: number }[];
      const sum = (kind: string) => rules.filter((r) => r.kind === kind).reduce((n, r) => n + r.fired, 0);
      return { requests: sum("request"), jobs: sum("job") };
    },
    requests: async () => ({
      mark: ((await call("GET", "/requests/mark")) as { seq: number }).seq,
      rows: (await call("GET", "/requests?limit=10000")) as {
        seq: number;
        time: string;
        method: string;
        path: string;
        status: number;
        durationMs: number;
      }[],
    }),
  };
}

/** What a hung command leaves to see: requests never answered, the latest ones, jobs not ended, the CLI's output. */
async function diagnose(emulator: RunningEmulator, command: string, minutes: number, output: string[]): Promise<Hang> {
  const { mark, rows } = await adminApi(emulator).requests();
  const seen = new Set(rows.map((r) => r.seq));
  const oldest = rows[0]?.seq ?? 1;
  const unanswered: number[] = [];
  for (let seq = oldest; seq <= mark; seq++) if (!seen.has(seq)) unanswered.push(seq);
  const now = emulator.ctx.now();
  const openJobs = Object.values(emulator.ctx.state.jobs)
    .filter((j) => j.status === "pending" || j.status === "in_progress")
    .map(
      (j) =>
        `${j.operation} ${j.id} ${j.status} on ${j.targetId}, started ${Math.round((now - j.createdAt) / 1000)}s ago`,
    );
  const lastRequests = rows
    .slice(-15)
    .map((r) => `#${r.seq} ${r.time} ${r.method} ${r.path} ${r.status} ${r.durationMs}ms`);
  return { command, minutes, unanswered, lastRequests, openJobs, output: output.slice(-40) };
}

async function run(
  seed: number,
  family: Family,
  mode: Mode,
  maxUps: number,
  hangMinutes: number,
  work: string,
): Promise<RunRecord> {
  const started = performance.now();
  const emulator = await startEmulator({ port: 0, jobDurationMs: 300, rateLimit: 0, strictLimits: false, seed });
  const api = new CloudClient({
    baseUrl: emulator.baseUrl,
    auth: { apiKey: emulator.bootstrap.users.admin.apiKey },
    jobs: { pollIntervalMs: 20, maxPollIntervalMs: 100 },
  });
  const { faults, fired } = adminApi(emulator);
  const prefix = `cv${seed}${family[0]}${mode[0]}`;
  const record: RunRecord = {
    seed,
    family,
    mode,
    upsRun: 0,
    fired: [],
    failures: [],
    failedTwiceGone: [],
    leaks: [],
    duplicates: [],
    lost: [],
    destroyClean: false,
    otherErrors: [],
    steps: [],
    hangs: [],
    seconds: 0,
  };
  /**
   * Runs one CLI command; one still running after `hangMinutes` is recorded as hung (and printed at once, while it
   * hangs), then interrupted.
   */
  const watched = async <T>(
    command: string,
    op: (signal: AbortSignal, output: (text: string) => void) => Promise<T>,
  ) => {
    const lines: string[] = [];
    const output = (text: string) => {
      // Progress dots and blank lines say nothing about a hang.
      lines.push(...text.split("\n").filter((l) => !/^[\s.]*$/.test(l)));
      if (lines.length > 200) lines.splice(0, lines.length - 200);
    };
    const controller = new AbortController();
    const timer = setTimeout(() => {
      void diagnose(emulator, command, hangMinutes, lines)
        .then((hang) => {
          record.hangs.push(hang);
          console.log(`  HUNG: ${describeHang(hang)}`);
        })
        .catch((error: unknown) => console.log(`  HUNG: ${command} (no diagnosis: ${String(error)})`))
        .finally(() => controller.abort());
    }, hangMinutes * 60_000);
    try {
      return await op(controller.signal, output);
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    const users = emulator.bootstrap.users.admin;
    const source = path.join(work, "source");
    const projectDir = prepareProject(source, fs.mkdtempSync(path.join(work, `${prefix}-`)), repositoryRoot());
    const fixtures = await everyKindFixtures(emulator, api);
    const programModule = path.join(__dirname, "converge-program.js");
    fs.writeFileSync(
      path.join(projectDir, "index.js"),
      `module.exports = require(${JSON.stringify(programModule)}).convergeProgram(${JSON.stringify(family)}, ${JSON.stringify(prefix)}, ${JSON.stringify(fixtures)});\n`,
    );
    const stack = await cliStack({
      projectDir,
      backendDir: path.join(work, "backend"),
      stackName: prefix,
      config: {
        "cloudinfra:baseUrl": emulator.baseUrl,
        "cloudinfra:apiKey": { secret: users.apiKey },
        "cloudinfra:email": users.email,
        "cloudinfra:password": { secret: users.password },
        "cloudinfra:totpSecret": { secret: users.totpSecret },
        "cloudinfra:pollIntervalMs": "20",
      },
    });
    for (let up = 1; up <= maxUps && record.ups === undefined; up++) {
      record.upsRun = up;
      const failed: Failure[] = [];
      const onEvent = (event: EngineEvent) => {
        const d = event.diagnosticEvent;
        if (d === undefined || d.severity !== "error") return;
        const message = d.urn ? firstLine(d.message) : d.message.trim().replace(/\s+/g, " ").slice(0, 400);
        if (d.urn) {
          const resource = d.urn.split("::").at(-1)!;
          failed.push({ up, resource, message, cause: causeOf(message) });
        } else if (!/^update failed$/i.test(message)) {
          record.otherErrors.push(`up ${up}: ${message}`);
        }
      };
      await faults(convergeFaults);
      const ok = await watched(`up ${up}`, (signal, onOutput) =>
        stack.up({ color: "never", continueOnError: mode === "continue", onEvent, onOutput, signal }),
      ).then(
        (result) => {
          record.steps.push({ up, changes: result.summary.resourceChanges ?? {} });
          return true;
        },
        () => false,
      );
      record.fired.push(await fired());
      await faults("");
      record.failures.push(...failed);
      if (!ok) continue;
      const changes: string[] = [];
      const onPreviewEvent = (event: EngineEvent) => {
        const step = event.resourcePreEvent?.metadata;
        if (step === undefined || step.op === "same" || step.type === "pulumi:pulumi:Stack") return;
        changes.push(`${step.urn.split("::").at(-1)} ${step.op} [${(step.diffs ?? []).join(",")}]`);
      };
      const unchanged = await watched(`preview after up ${up}`, (signal, onOutput) =>
        stack.preview({ color: "never", expectNoChanges: true, onEvent: onPreviewEvent, onOutput, signal }),
      ).then(
        () => true,
        (error: unknown) => {
          const why = changes.length > 0 ? changes.join("; ") : String(error).slice(0, 600).replace(/\s+/g, " ");
          const steps = record.steps.find((s) => s.up === up)?.changes;
          record.otherErrors.push(
            `preview after up ${up} (whose steps were ${JSON.stringify(steps)}) has changes: ${why}`,
          );
          return false;
        },
      );
      if (unchanged) record.ups = up;
    }
    for (const [i, f] of record.failures.entries()) {
      const earlier = record.failures.slice(0, i).some((e) => e.resource === f.resource && e.up < f.up);
      if (earlier && f.cause === "other" && !record.failedTwiceGone.includes(f.resource)) {
        record.failedTwiceGone.push(f.resource);
      }
    }

    const state = await stateEntries(stack);
    const inApi = await recordsInApi(api, prefix);
    for (const [kind, records] of Object.entries(inApi) as [Listed, { id: string; name: string }[]][]) {
      const held = new Set(state.filter((s) => listedKind[s.kind] === kind).map((s) => s.id));
      for (const r of records) if (!held.has(r.id)) record.leaks.push(`${kind} ${r.name} (${r.id})`);
      const names = records.map((r) => r.name);
      for (const name of new Set(names)) {
        const n = names.filter((x) => x === name).length;
        if (n > 1) record.duplicates.push(`${kind} ${name} ×${n}`);
      }
      const ids = new Set(records.map((r) => r.id));
      for (const s of state.filter((e) => listedKind[e.kind] === kind)) {
        if (!ids.has(s.id)) record.lost.push(`${s.name} (${s.id})`);
      }
    }
    for (const s of state.filter((e) => e.kind === "VolumeAttachment")) {
      const [volumeId, vmId] = s.id.split(":");
      const volume = await api.getVolume({ params: { id: volumeId! } }).catch(() => undefined);
      if (volume?.virtualMachineId !== vmId) record.lost.push(`${s.name} (${s.id})`);
    }

    await watched("destroy", (signal, onOutput) => stack.destroy({ color: "never", onOutput, signal })).catch(
      (error: unknown) => {
        record.destroyError = firstLine(String(error).split("error:").slice(1).join("error:") || String(error));
      },
    );
    const left = Object.values(await recordsInApi(api, prefix)).flat();
    record.destroyClean = record.destroyError === undefined && left.length === 0;
    await stack.workspace.removeStack(stack.name, { force: true }).catch(() => undefined);
  } finally {
    await api.close();
    await emulator.close();
    record.seconds = Math.round((performance.now() - started) / 1000);
  }
  return record;
}

function parseSeeds(text: string): number[] {
  return text.split(",").flatMap((part) => {
    const [a, b] = part.split("-").map(Number);
    return b === undefined ? [a!] : Array.from({ length: b - a! + 1 }, (_, i) => a! + i);
  });
}

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

function describeHang(h: Hang): string {
  const lines = [
    `${h.command} still running after ${h.minutes} min; requests never answered: ${h.unanswered.length > 0 ? h.unanswered.map((n) => `#${n}`).join(", ") : "none"}`,
    `jobs not ended: ${h.openJobs.length > 0 ? h.openJobs.join("; ") : "none"}`,
    "latest requests:",
    ...h.lastRequests.map((r) => `  ${r}`),
    "CLI output:",
    ...h.output.map((l) => `  ${l}`),
  ];
  return lines.join("\n      ");
}

function row(r: RunRecord): string {
  const cells = [
    String(r.seed),
    r.family,
    r.mode === "continue" ? "--continue-on-error" : "default",
    r.ups === undefined ? `>${r.upsRun}` : String(r.ups),
    String(r.failures.length),
    String(r.failures.filter((f) => f.cause === "other").length),
    String(r.failedTwiceGone.length),
    String(r.leaks.length),
    String(r.duplicates.length),
    String(r.lost.length),
    r.destroyClean ? "yes" : "NO",
    String(r.hangs.length),
    `${r.seconds}s`,
  ];
  return `| ${cells.join(" | ")} |`;
}

async function main(): Promise<void> {
  const version = usePulumiCli();
  if (version === undefined) throw new Error("no `pulumi` CLI on PATH and none built: run `npm run cli`");
  useLauncher();
  const seeds = parseSeeds(option("seeds", "1-8"));
  const families = option("sdks", "dynamic,plugin").split(",") as Family[];
  const modes = option("modes", "continue,default").split(",") as Mode[];
  const maxUps = Number(option("max-ups", "8"));
  const hangMinutes = Number(option("hang-minutes", "6"));
  const json = process.argv.includes("--json") ? option("json", "") : undefined;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-converge-"));
  fs.mkdirSync(path.join(work, "source"));
  fs.writeFileSync(path.join(work, "source", "Pulumi.yaml"), "name: converge\nruntime: nodejs\n");
  console.log(`converge: pulumi ${version}, seeds ${seeds.join(",")}, ${families.join("+")}, ${modes.join("+")}`);
  console.log(
    `faults: ${convergeFaults.split(";").slice(0, 5).join("; ")}; lost answers on ${mutatingRoutes.length} routes`,
  );
  const header =
    "| seed | SDK | mode | ups | failures | other cause | failed twice (fault gone) | leaks | duplicates | lost | destroy clean | hung | time |";
  const records: RunRecord[] = [];
  try {
    for (const seed of seeds) {
      for (const family of families) {
        for (const mode of modes) {
          const r = await run(seed, family, mode, maxUps, hangMinutes, work);
          records.push(r);
          console.log(`${header}\n${row(r)}`);
          console.log(
            `    faults fired per up (requests/jobs): ${r.fired.map((f) => `${f.requests}/${f.jobs}`).join(", ")}`,
          );
          for (const f of r.failures) {
            console.log(`    up ${f.up} ${f.resource} [${f.cause}]: ${f.message}`);
          }
          for (const e of r.otherErrors) console.log(`    ${e}`);
          for (const h of r.hangs) console.log(`    hung: ${describeHang(h)}`);
          for (const x of [...r.leaks, ...r.duplicates, ...r.lost]) console.log(`    ${x}`);
          if (r.destroyError) console.log(`    destroy: ${r.destroyError}`);
          if (json) fs.writeFileSync(json, JSON.stringify(records, null, 1));
        }
      }
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  console.log(`\n${records.length} runs\n${header}\n|${"---|".repeat(13)}`);
  for (const r of records) console.log(row(r));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
