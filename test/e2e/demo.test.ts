import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, expect, it } from "vitest";
import { cliVersion } from "./helpers";

const root = path.resolve(__dirname, "../..");
/** Not copied: what `npm ci` and the build produce (node_modules is linked instead), and version control. */
const generated = new Set(["node_modules", "dist", "coverage", ".git"]);

/**
 * A copy of the repository as a fresh clone has it (sources only, no dist/), with the installed node_modules linked:
 * `npm run demo` builds into the copy, so the suites running meanwhile keep reading an untouched dist/.
 */
function freshCopy(): string {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-clone-"));
  fs.cpSync(root, copy, {
    recursive: true,
    filter: (file) =>
      path.basename(file) !== "node_modules" && !(path.dirname(file) === root && generated.has(path.basename(file))),
  });
  fs.symlinkSync(path.join(root, "node_modules"), path.join(copy, "node_modules"), "dir");
  return copy;
}

function run(command: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

const copy = freshCopy();
afterAll(() => {
  fs.rmSync(copy, { recursive: true, force: true });
  // The test host's support files for this copy (tools/harness/host.ts names them after the repository path).
  const digest = createHash("sha256").update(copy).digest("hex").slice(0, 12);
  fs.rmSync(path.join(os.tmpdir(), `pulumi-test-host-${digest}`), { recursive: true, force: true });
});

it("npm run demo builds, takes the quickstart through its whole life, prints the summary and exits 0 (with the real CLI when there is one)", async () => {
  const { code, out } = await run("npm", ["run", "demo"], copy);
  expect(code, out).toBe(0);
  expect(fs.existsSync(path.join(copy, "dist", "tools", "demo.js"))).toBe(true);

  // Says how the stack is run, in one line: the real CLI when there is one, else the test host.
  if (cliVersion === undefined) expect(out).toMatch(/^No `pulumi` CLI on PATH, and none built by `npm run cli`/m);
  else expect(out).toContain(`Running the real Pulumi CLI (${cliVersion}) on a copy of examples/quickstart`);
  // Step 1: the four resources were created, with their outputs and what the API holds.
  for (const name of ["network", "vm", "data", "data-on-vm"])
    expect(out).toMatch(new RegExp(`^ {3}\\+ +${name} `, "m"));
  expect(out).toContain("stack outputs:");
  expect(out).toMatch(/vmStatus += "Running"/);
  // Steps 3 and 4: refresh records the drift made behind the stack's back; up puts the declared values back.
  expect(out).toMatch(
    /^ {3}~ +network +Network +description: "quickstart network, managed by Pulumi" → "edited by hand/m,
  );
  expect(out).toMatch(/^ {3}~ +vm +VirtualMachine +.*status: "Running" → "Stopped"/m);
  expect(out).toMatch(/^ {3}~ +vm +VirtualMachine +.*status: "Stopped" → "Running"/m);
  // Step 5 and the summary.
  expect(out).toContain("the API holds: none of them");
  expect(out).toContain("Summary: created 4, drift found on 2 by refresh, repaired 2 in place, destroyed 4.");
});
