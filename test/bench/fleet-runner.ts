/**
 * One runner of the fleet bench (test/bench/fleet.ts), as its own process: a CI runner's job, the CLI run for each of
 * its stacks one after the other, in the runner's environment (its HOME, PULUMI_HOME, backend URL, API key) and
 * checkout (the working directory). Only Node.js's own modules: it starts as fast as a runner's shell would.
 *
 * Arguments: the phase (setup, up, destroy), the stacks (comma-separated), the CLI's --parallel ("" for its default).
 * Prints one JSON line, its {@link RunnerReport}.
 */
import { execFile } from "node:child_process";

export type Phase = "setup" | "up" | "destroy";

/** What a runner process reports for a phase (one JSON line on stdout). */
export interface RunnerReport {
  /** Epoch ms: the phase's first CLI run started, its last ended. */
  startedAt: number;
  endedAt: number;
  /**
   * Per stack: when its CLI run started (epoch ms), its wall (ms), and the CPU time (ms, user + system) of the CLI
   * and every process under it (language host, program, provider), from the shell's `times`.
   */
  stacks: { stack: string; startedAt: number; wallMs: number; cpuMs?: number }[];
  failures: string[];
}

/** One runner process: runs its phase's CLI commands for each of its stacks, one after the other. */
async function fleetRunner(phase: Phase, stacks: string[], parallel: string): Promise<void> {
  // Through bash, whose `times` then prints the CPU time of the CLI and all it ran (children waited for).
  const script = 'pulumi "$@" --non-interactive --color never; status=$?; times >&2; exit $status';
  const pulumi = (args: string[]) =>
    new Promise<{ code: number; output: string; cpuMs?: number }>((resolve) => {
      execFile("bash", ["-c", script, "bash", ...args], { maxBuffer: 64 * 2 ** 20 }, (e, o, r) => {
        const clock = [...r.matchAll(/^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/gm)].pop();
        const cpuMs = clock
          ? (Number(clock[1]) * 60 + Number(clock[2]) + Number(clock[3]) * 60 + Number(clock[4])) * 1000
          : undefined;
        resolve({ code: e ? Number((e as { code?: number }).code ?? 1) : 0, output: `${o}\n${r}`, cpuMs });
      });
    });
  const report: RunnerReport = { startedAt: Date.now(), endedAt: 0, stacks: [], failures: [] };
  const run = async (stack: string, args: string[]) => {
    const started = Date.now();
    const result = await pulumi(args);
    report.stacks.push({ stack, startedAt: started, wallMs: Date.now() - started, cpuMs: result.cpuMs });
    if (result.code !== 0) {
      report.failures.push(`${stack}: pulumi ${args[0]} exited ${result.code}: ${result.output.slice(-1500)}`);
    }
  };
  const limits = parallel === "" ? [] : ["--parallel", parallel];
  if (phase === "setup") await run("-", ["login"]);
  for (const stack of stacks) {
    if (phase === "setup") await run(stack, ["stack", "init", stack, "--secrets-provider", "passphrase"]);
    if (phase === "up") await run(stack, ["up", "--yes", "--stack", stack, ...limits]);
    if (phase === "destroy") await run(stack, ["destroy", "--yes", "--stack", stack, ...limits]);
  }
  report.endedAt = Date.now();
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

const [phase, stacks, parallel] = process.argv.slice(2);
fleetRunner(phase as Phase, (stacks ?? "").split(","), parallel ?? "").then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
