import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseCli } from "../../emulator/cli";
import { loadStateFile } from "../../emulator/persistence";
import type { Bootstrap } from "../../emulator/state";

// The package script builds first (`npm run emulator` = tsc + node dist/emulator/cli.js); so does `npm test`.
const cli = resolve(__dirname, "../../dist/emulator/cli.js");
const dir = mkdtempSync(join(tmpdir(), "cloudinfra-cli-"));
const children: ChildProcess[] = [];

beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npx tsc -p tsconfig.json)`);
});
afterEach(() => {
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  child: ChildProcess;
  firstLine: Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  let stdout = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  const lines = createInterface({ input: child.stdout! });
  const firstLine = new Promise<string>((resolveLine, reject) => {
    lines.once("line", resolveLine);
    child.once("exit", (code) => reject(new Error(`emulator exited (${code}) before printing: ${stderr}`)));
  });
  firstLine.catch(() => {}); // awaited only by the tests that expect a start
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; stdout: string }>(
    (resolveExit) => child.once("close", (code, signal) => resolveExit({ code, signal, stderr, stdout })),
  );
  return { child, firstLine, exit };
}

describe("emulator CLI", () => {
  it("with --port 0 --json prints the bootstrap first, serves the API over a socket, and exits 0 on SIGTERM", async () => {
    const emulator = run(["--port", "0", "--json", "--job-duration-ms", "50", "--rate-limit", "0"]);
    const bootstrap = JSON.parse(await emulator.firstLine) as Bootstrap;
    expect(bootstrap.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(bootstrap.users.admin.apiKey).toMatch(/^svc_.{28}$/);
    expect(Object.keys(bootstrap.users).sort()).toEqual(["admin", "member", "outsider"]);
    expect(bootstrap.fixtures.datacenters.length).toBeGreaterThanOrEqual(2);

    const check = await fetch(`${bootstrap.baseUrl}/auth/check`, {
      headers: { "X-API-Key": bootstrap.users.admin.apiKey },
    });
    expect(check.status).toBe(200);
    const body = (await check.json()) as { data: { user: { email: string }; activeEntity: { id: string } } };
    expect(body.data.user.email).toBe(bootstrap.users.admin.email);
    expect(body.data.activeEntity.id).toBe(bootstrap.entityId);

    const served = await fetch(bootstrap.baseUrl.replace(/\/v1$/, "/__admin/bootstrap"));
    expect(((await served.json()) as { data: Bootstrap }).data).toEqual(bootstrap);

    emulator.child.kill("SIGTERM");
    const { code, signal } = await emulator.exit;
    expect(signal).toBeNull();
    expect(code).toBe(0);
  });

  it("flushes --state on SIGINT and prints the same bootstrap when restarted from it", async () => {
    const file = join(dir, "cli-state.json");
    const first = run(["--port", "0", "--json", "--state", file]);
    const printed = JSON.parse(await first.firstLine) as Bootstrap;
    first.child.kill("SIGINT");
    expect((await first.exit).code).toBe(0);
    expect(loadStateFile(file)?.bootstrap?.users).toEqual(printed.users);

    const second = run(["--port", "0", "--json", "--state", file]);
    const again = JSON.parse(await second.firstLine) as Bootstrap;
    expect({ ...again, baseUrl: "" }).toEqual({ ...printed, baseUrl: "" });
    second.child.kill("SIGTERM");
    expect((await second.exit).code).toBe(0);
  });

  it("prints a short human banner without --json", async () => {
    const emulator = run(["--port", "0"]);
    expect(await emulator.firstLine).toMatch(/^cloudinfra emulator listening on http:\/\/127\.0\.0\.1:\d+\/v1$/);
    emulator.child.kill("SIGTERM");
    expect((await emulator.exit).code).toBe(0);
  });

  it.each([
    [["--bogus"], /Unknown option '--bogus'/],
    [["--port", "abc"], /--port must be an integer/],
    [["--port", "70000"], /--port must be at most 65535/],
    [["--rate-limit", "-1"], /rate-limit/],
    [["--faults", "check,colour=red"], /--faults: .*unknown field "colour"/],
    [["stray"], /stray/],
  ])("refuses %j with a clear error and exit code 2", async (args, message) => {
    const { code, stderr, stdout } = await run(args).exit;
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).toContain("Usage: cloudinfra-emulator [options]");
    expect(stdout).toBe("");
  });
});

describe("parseCli", () => {
  it("maps every flag to an emulator option, with the documented defaults", () => {
    expect(parseCli([])).toEqual({
      json: false,
      help: false,
      options: {
        port: 8787,
        host: "127.0.0.1",
        jobDurationMs: undefined,
        rateLimit: undefined,
        stateFile: undefined,
        faults: undefined,
        seed: undefined,
        logRequests: false,
        adminToken: undefined,
        adminApi: true,
        specFieldsOnly: false,
      },
    });
    expect(
      parseCli([
        "--port=0",
        "--host",
        "0.0.0.0",
        "--json",
        "--job-duration-ms",
        "200",
        "--rate-limit",
        "0",
        "--state",
        "s.json",
        "--faults",
        "check,status=500",
        "--seed",
        "9",
        "--log-requests",
        "--spec-fields-only",
      ]),
    ).toEqual({
      json: true,
      help: false,
      options: {
        port: 0,
        host: "0.0.0.0",
        jobDurationMs: 200,
        rateLimit: 0,
        stateFile: "s.json",
        faults: "check,status=500",
        seed: 9,
        logRequests: true,
        adminToken: undefined,
        adminApi: true,
        specFieldsOnly: true,
      },
    });
  });

  it("rejects a zero job duration and an empty state file name", () => {
    expect(() => parseCli(["--job-duration-ms", "0"])).toThrow(/--job-duration-ms must be an integer ≥ 1/);
    expect(() => parseCli(["--state", ""])).toThrow(/--state needs a file name/);
  });
});
