/**
 * The package as an earlier commit built it, for the upgrade suite (upgrade.test.ts): `git worktree add --detach` of
 * the commit, `npm ci --prefer-offline` there, `npm run build`, `npm pack` (one tarball before the plugin SDK became
 * the workspace `@cloudinfra/pulumi-plugin`, one per workspace since), the worktree removed. The tarballs are kept in
 * a cache outside the repository keyed by the commit, so a run builds it at most once and later runs not at all.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** The earlier build: its tarballs (absolute paths), and how long it took when it was built (0 when cached). */
export interface EarlierBuild {
  commit: string;
  tarballs: string[];
  builtSeconds: number;
  /** Seconds of the build that made the cache entry (recorded in it). */
  coldSeconds: number;
}

/** Where earlier builds are cached: `CLOUDINFRA_UPGRADE_CACHE`, else ~/.cache/cloudinfra/upgrade (or XDG's). */
export function upgradeCacheDirectory(): string {
  return (
    process.env.CLOUDINFRA_UPGRADE_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "cloudinfra", "upgrade")
  );
}

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 });

/**
 * The package built at `ref` of the repository `root`, from the cache when it holds it. A failed step throws with
 * its output; the temporary worktree is removed either way.
 */
export function earlierBuild(root: string, ref: string): EarlierBuild {
  let commit: string;
  try {
    commit = run("git", ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], root).trim();
  } catch {
    throw new Error(
      `the upgrade suite builds the package at ${ref}, which this repository's history lacks ` +
        "(a shallow clone? fetch the history: git fetch --unshallow)",
    );
  }
  const entry = path.join(upgradeCacheDirectory(), commit);
  const record = path.join(entry, "build.json");
  if (fs.existsSync(record)) {
    const built = JSON.parse(fs.readFileSync(record, "utf8")) as { tarballs: string[]; seconds: number };
    const tarballs = built.tarballs.map((file) => path.join(entry, file));
    if (tarballs.every((file) => fs.existsSync(file))) {
      return { commit, tarballs, builtSeconds: 0, coldSeconds: built.seconds };
    }
  }

  const started = performance.now();
  fs.mkdirSync(upgradeCacheDirectory(), { recursive: true });
  const scratch = fs.mkdtempSync(path.join(upgradeCacheDirectory(), `.${commit.slice(0, 12)}-`));
  const checkout = path.join(scratch, "src");
  const packed = path.join(scratch, "packed");
  fs.mkdirSync(packed);
  try {
    run("git", ["worktree", "add", "--detach", checkout, commit], root);
    try {
      // The lockfile of that commit, packages from npm's cache where it has them.
      run("npm", ["ci", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"], checkout);
      run("npm", ["run", "build", "--silent"], checkout);
      const manifest = JSON.parse(fs.readFileSync(path.join(checkout, "package.json"), "utf8")) as {
        workspaces?: string[];
      };
      const workspaces = (manifest.workspaces ?? []).length > 0 ? ["--workspaces", "--include-workspace-root"] : [];
      const out = run(
        "npm",
        ["pack", ...workspaces, "--json", "--loglevel=error", "--pack-destination", packed],
        checkout,
      );
      const files = (JSON.parse(out) as { filename: string }[]).map((p) => p.filename);
      const seconds = Math.round((performance.now() - started) / 1000);
      fs.writeFileSync(path.join(packed, "build.json"), JSON.stringify({ commit, tarballs: files, seconds }, null, 2));
    } finally {
      run("git", ["worktree", "remove", "--force", checkout], root);
    }
    fs.rmSync(entry, { recursive: true, force: true });
    fs.renameSync(packed, entry);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const built = JSON.parse(fs.readFileSync(record, "utf8")) as { tarballs: string[]; seconds: number };
  return {
    commit,
    tarballs: built.tarballs.map((file) => path.join(entry, file)),
    builtSeconds: built.seconds,
    coldSeconds: built.seconds,
  };
}
