/**
 * Go builds as the language host (cli/language-host/golang.go) does them: the machine's Go (GOTOOLCHAIN=local),
 * go.sum completed when an entry is missing (-mod=mod unless GOFLAGS chooses), `-trimpath` (packages compile the same
 * wherever the project is, so a copy of it builds from the cache), and the build cache outside the repository:
 * $GOCACHE when set, else ${XDG_CACHE_HOME:-~/.cache}/cloudinfra/go-build.
 *
 * `npm run go-cache` (run by .ci/run before the tests, and by the Go suites before their first build) compiles every Go
 * module of the repository into that cache once, so that no test's timeout has to cover a cold compile of the Pulumi
 * Go SDK and ours.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repositoryRoot } from "./pulumi-cli";

/** The build cache of the language host and of {@link goBuild}: $GOCACHE, else the one under the user's cache. */
export function goBuildCache(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GOCACHE) return env.GOCACHE;
  return path.join(env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "cloudinfra", "go-build");
}

/** The environment of a `go` command, as the language host sets it. */
export function goEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const flags = env.GOFLAGS ?? "";
  return {
    ...env,
    GOTOOLCHAIN: "local",
    GOFLAGS: flags.includes("-mod=") ? flags : `${flags} -mod=mod`.trim(),
    GOCACHE: goBuildCache(env),
  };
}

/**
 * The longest {@link warmGoBuildCache} may take: the hook timeout of the suites that build Go. With a cold cache, on
 * the 2-core machine busy with other builds and tests (load average about 20), the first build of examples/go (the
 * Pulumi Go SDK, its dependencies and sdk/go) took 748 s, and sdk/go and test/e2e/go-program then 57 s and 35 s more
 * (docs/guides/go.md): about 840 s in all. This is about twice that. Warm, it takes seconds.
 */
export const GO_CACHE_TIMEOUT = 1_800_000;

/** Whether `go` is on PATH. */
export function hasGo(): boolean {
  return spawnSync("go", ["version"], { stdio: "ignore" }).status === 0;
}

/**
 * `go <args>` in `dir` with {@link goEnv} (and `extra` variables); throws with what go printed when it fails. Returns
 * its output.
 */
export function goRun(dir: string, args: string[], extra: NodeJS.ProcessEnv = {}): string {
  const run = spawnSync("go", args, { cwd: dir, encoding: "utf8", env: goEnv({ ...process.env, ...extra }) });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`go ${args.join(" ")} in ${dir} failed:\n${run.stdout}${run.stderr}`);
  return run.stdout + run.stderr;
}

/** Builds the main package in `dir` as the language host builds a program (its flags), to `out`. */
export function goBuild(dir: string, out: string, extra: NodeJS.ProcessEnv = {}): void {
  goRun(dir, ["build", "-buildvcs=false", "-trimpath", "-ldflags=-w -s", "-o", out, "."], extra);
}

/** The Go modules of the repository whose builds the suites run: their directories and whether they hold a program. */
export const goModules = [
  { dir: path.join("sdk", "go"), program: false },
  { dir: path.join("examples", "go"), program: true },
  { dir: path.join("test", "e2e", "go-program"), program: true },
];

/**
 * Compiles each Go module of the repository into the build cache ({@link goBuildCache}); `-mod=readonly`: their
 * committed go.sum is the truth. Returns the seconds each took.
 */
export function warmGoBuildCache(root: string = repositoryRoot()): Record<string, number> {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-go-cache-"));
  const seconds: Record<string, number> = {};
  try {
    for (const { dir, program } of goModules) {
      const started = performance.now();
      const flags = { GOFLAGS: `${process.env.GOFLAGS ?? ""} -mod=readonly`.trim() };
      if (program) goBuild(path.join(root, dir), path.join(out, "program"), flags);
      else goRun(path.join(root, dir), ["build", "-buildvcs=false", "-trimpath", "./..."], flags);
      seconds[dir] = Math.round((performance.now() - started) / 100) / 10;
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
  return seconds;
}

/**
 * A Go module proxy in a directory (GOPROXY=file://<dir>) serving this repository's sdk/go at `version` (default: the
 * package's), as the module proxy serves it once the repository tags `sdk/go/v<version>`: what `go get` and
 * `go mod tidy` of a user's program then download. Returns the directory.
 */
export function goSdkProxy(dir: string, root: string = repositoryRoot(), version?: string): string {
  const modulePath = goModuleOf(path.join(root, "sdk", "go"));
  const tag = `v${version ?? (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }).version}`;
  const at = path.join(dir, ...modulePath.split("/"), "@v");
  fs.mkdirSync(at, { recursive: true });
  fs.writeFileSync(path.join(at, "list"), `${tag}\n`);
  fs.writeFileSync(path.join(at, `${tag}.info`), JSON.stringify({ Version: tag, Time: "2026-01-01T00:00:00Z" }));
  fs.copyFileSync(path.join(root, "sdk", "go", "go.mod"), path.join(at, `${tag}.mod`));
  // The zip holds the module's files under `<module>@<version>/`, no directory entries.
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-go-zip-"));
  try {
    const prefix = `${modulePath}@${tag}`;
    fs.cpSync(path.join(root, "sdk", "go"), path.join(staging, ...prefix.split("/")), { recursive: true });
    const zip = spawnSync("zip", ["-qrD", path.join(at, `${tag}.zip`), prefix], { cwd: staging, encoding: "utf8" });
    if (zip.status !== 0) throw new Error(`zip of ${prefix} failed: ${zip.stderr || String(zip.error)}`);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

/** The module path of the go.mod in `dir`. */
export function goModuleOf(dir: string): string {
  const found = /^module\s+(\S+)/m.exec(fs.readFileSync(path.join(dir, "go.mod"), "utf8"))?.[1];
  if (found === undefined) throw new Error(`${dir}/go.mod names no module`);
  return found;
}

function main(): void {
  if (!hasGo()) {
    process.stdout.write("go-cache: no `go` on PATH: nothing to build (the Go suites need Go)\n");
    return;
  }
  const seconds = warmGoBuildCache();
  for (const [dir, s] of Object.entries(seconds)) process.stdout.write(`go-cache: ${dir} built in ${s} s\n`);
  process.stdout.write(`go-cache: ${goBuildCache()}\n`);
}

if (require.main === module) main();
