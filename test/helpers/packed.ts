/**
 * The package and its plugin SDK packed once for every suite that installs them: `npm pack --workspaces
 * --include-workspace-root` (what `npm run pack-all` runs) of this checkout, kept in a cache outside the repository
 * keyed by a hash of everything the two tarballs are made of (each package's package.json and top-level files, and
 * every file under the paths its "files" names: the built dist/, the sources, sdk/plugin/bin). A suite gets the
 * tarballs of the code as it is now, never of an older build: a change to any of those files is another key, so
 * another pack.
 *
 * Safe when vitest runs suites in parallel worker processes: the first to miss takes a lock (a directory made
 * atomically) and packs into a scratch directory it then renames to the key's entry in one step; the others wait for
 * the entry (or take the lock over when its owner died). The rename alone keeps an entry whole even when two packed
 * at once (the second one's is dropped). The tarballs are read-only: a suite installs them and never changes them.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** One tarball, as `npm pack --json` describes it, with its absolute path in the cache. */
export interface PackedTarball {
  name: string;
  version: string;
  /** The tarball's file name, as npm named it (e.g. cloudinfra-pulumi-0.1.0.tgz). */
  filename: string;
  /** Its absolute path. */
  file: string;
  /** The files it holds, as npm lists them (paths relative to the package). */
  files: { path: string; size: number; mode: number }[];
}

export interface Packed {
  /** The cache key: a hash of what the tarballs are made of. */
  key: string;
  /** The entry's directory (holding the tarballs and pack.json). */
  directory: string;
  /** Every tarball, in npm's order (the root package first). */
  tarballs: PackedTarball[];
  /** Whether this call ran `npm pack` (false: another suite or run packed the same content). */
  packedHere: boolean;
  /** Seconds the pack that made the entry took. */
  seconds: number;
}

/** Where packs are kept: `CLOUDINFRA_PACK_CACHE`, else ~/.cache/cloudinfra/packed (or XDG's). */
export function packCacheDirectory(): string {
  return (
    process.env.CLOUDINFRA_PACK_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "cloudinfra", "packed")
  );
}

/** Bumped when what this helper packs, or how, changes: entries of an earlier helper are not reused. */
const FORMAT = "packed/1 npm pack --workspaces --include-workspace-root";
/** Entries unused for this long are removed when a new one is made. */
const KEEP_MS = 2 * 24 * 3600_000;
/** A lock older than this is taken over even when its owner still seems alive (a pack takes seconds). */
const LOCK_STALE_MS = 10 * 60_000;

const GLOB = /[*?[\]{}!]/;

interface Manifest {
  name?: string;
  files?: string[];
  main?: string;
  bin?: string | Record<string, string>;
  workspaces?: string[];
  bundleDependencies?: unknown;
  bundledDependencies?: unknown;
}

const readManifest = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) as Manifest;

/** Every regular file under `dir` (relative to `base`), skipping node_modules, .git and symbolic links to directories. */
function walk(base: string, dir: string, into: Set<string>, excluded: (rel: string) => boolean): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === ".git") continue;
    const file = path.join(dir, entry.name);
    const rel = path.relative(base, file).split(path.sep).join("/");
    if (excluded(rel)) continue;
    if (entry.isDirectory()) walk(base, file, into, excluded);
    else if (entry.isFile()) into.add(rel);
    else if (entry.isSymbolicLink() && fs.statSync(file, { throwIfNoEntry: false })?.isFile()) into.add(rel);
  }
}

/**
 * The files of the package in `dir` that its tarball can hold: a superset of what npm packs (every top-level file,
 * everything under each path "files" names up to its first glob, "main" and the bins; a negated plain path is left
 * out, a negated glob is not applied). Listing more than npm packs only makes a new key more often; never fewer.
 */
export function packageInputs(dir: string): string[] {
  const manifest = readManifest(dir);
  if (manifest.bundleDependencies !== undefined || manifest.bundledDependencies !== undefined) {
    throw new Error(`${dir}/package.json bundles dependencies: the pack cache's key does not cover node_modules`);
  }
  const negated = (manifest.files ?? [])
    .filter((f) => f.startsWith("!") && !GLOB.test(f.slice(1)))
    .map((f) => f.slice(1).replace(/^\.\//, "").replace(/\/+$/, ""));
  const excluded = (rel: string) => negated.some((n) => rel === n || rel.startsWith(`${n}/`));
  const files = new Set<string>();
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.isFile() && entry.name !== ".git") files.add(entry.name); // a worktree's .git file: never packed
  }
  const roots =
    manifest.files === undefined
      ? [""]
      : manifest.files
          .filter((f) => !f.startsWith("!"))
          .map((f) => {
            const segments = f.replace(/^\.\//, "").split("/");
            const plain = segments.findIndex((s) => GLOB.test(s));
            return (plain === -1 ? segments : segments.slice(0, plain)).join("/").replace(/\/+$/, "");
          });
  const bins = typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {});
  for (const named of [...roots, ...(manifest.main === undefined ? [] : [manifest.main]), ...bins]) {
    const full = path.join(dir, named);
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (stat?.isDirectory()) walk(dir, full, files, excluded);
    else if (stat?.isFile()) files.add(path.relative(dir, full).split(path.sep).join("/"));
  }
  return [...files].sort();
}

/** The directories npm packs for `npm pack --workspaces --include-workspace-root` in `root`: the root, then each workspace. */
export function packedPackages(root: string): string[] {
  const workspaces = readManifest(root).workspaces ?? [];
  for (const workspace of workspaces) {
    if (GLOB.test(workspace)) {
      throw new Error(
        `package.json workspace "${workspace}" is a pattern: test/helpers/packed.ts takes plain paths only`,
      );
    }
  }
  return ["", ...workspaces.map((w) => w.replace(/^\.\//, "").replace(/\/+$/, ""))];
}

/** The hash of everything the tarballs of `root` are made of: each file's path, executable bit and content. */
export function packKey(root: string): string {
  const hash = createHash("sha256").update(`${FORMAT}\n`);
  for (const pkg of packedPackages(root)) {
    const dir = path.join(root, pkg);
    for (const rel of packageInputs(dir)) {
      const file = path.join(dir, rel);
      const executable = (fs.statSync(file).mode & 0o111) !== 0;
      hash.update(`${pkg}\0${rel}\0${executable ? "x" : "-"}\0`);
      hash.update(createHash("sha256").update(fs.readFileSync(file)).digest("hex"));
      hash.update("\n");
    }
  }
  return hash.digest("hex").slice(0, 32);
}

interface EntryRecord {
  key: string;
  seconds: number;
  packed: Omit<PackedTarball, "file">[];
}

/** The entry of `key` when it is complete; "damaged" when a file of it is missing (removed by hand?). */
function readEntry(directory: string, key: string): Packed | "damaged" | undefined {
  const record = path.join(directory, "pack.json");
  if (!fs.existsSync(record)) return fs.existsSync(directory) ? "damaged" : undefined;
  const made = JSON.parse(fs.readFileSync(record, "utf8")) as EntryRecord;
  const tarballs = made.packed.map((p) => ({ ...p, file: path.join(directory, p.filename) }));
  if (made.key !== key || !tarballs.every((t) => fs.existsSync(t.file))) return "damaged";
  try {
    const now = new Date();
    fs.utimesSync(directory, now, now); // in use: kept by the pruning below
  } catch {
    // another user's entry: theirs to keep
  }
  return { key, directory, tarballs, packedHere: false, seconds: made.seconds };
}

/** The complete entry of `key`, or a clear error. */
function entryOf(directory: string, key: string): Packed {
  const read = readEntry(directory, key);
  if (read === undefined || read === "damaged") throw new Error(`the pack cache entry ${directory} is incomplete`);
  return read;
}

/** Whether the process `pid` (on this host) is gone. */
function gone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH";
  }
}

/** Takes the lock (true), else false; the lock of a dead owner, or a stale one, is removed for the next try. */
function tryLock(lock: string): boolean {
  try {
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, "owner"), JSON.stringify({ pid: process.pid, host: os.hostname() }));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const stat = fs.statSync(lock, { throwIfNoEntry: false });
  if (stat === undefined) return false; // released meanwhile: the caller looks again
  let owner: { pid: number; host: string } | undefined;
  try {
    owner = JSON.parse(fs.readFileSync(path.join(lock, "owner"), "utf8")) as { pid: number; host: string };
  } catch {
    owner = undefined; // being written
  }
  const dead = owner !== undefined && owner.host === os.hostname() && gone(owner.pid);
  if (dead || Date.now() - stat.mtimeMs > LOCK_STALE_MS) fs.rmSync(lock, { recursive: true, force: true });
  return false;
}

/** Removes entries and scratch directories unused for {@link KEEP_MS}. */
function prune(cache: string): void {
  for (const name of fs.readdirSync(cache)) {
    const full = path.join(cache, name);
    const stat = fs.statSync(full, { throwIfNoEntry: false });
    if (stat !== undefined && Date.now() - stat.mtimeMs > KEEP_MS) fs.rmSync(full, { recursive: true, force: true });
  }
}

/** Runs `npm pack` of `root` into a scratch directory and renames it to `entry`; the entry is whole or absent. */
function pack(root: string, cache: string, key: string, entry: string): Packed {
  const scratch = fs.mkdtempSync(path.join(cache, `.${key.slice(0, 12)}-`));
  fs.chmodSync(scratch, 0o755); // mkdtemp's 0700 would hide the entry from other users of the same cache
  try {
    const started = performance.now();
    const output = execFileSync(
      "npm",
      ["pack", "--workspaces", "--include-workspace-root", "--json", "--loglevel=error", "--pack-destination", scratch],
      { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 << 20 },
    );
    const seconds = Math.round((performance.now() - started) / 100) / 10;
    if (packKey(root) !== key) {
      throw new Error(
        `${root} changed while npm packed it (a build running?): its tarballs may mix two versions; run the suite again`,
      );
    }
    const packed = (JSON.parse(output) as (Omit<PackedTarball, "file"> & Record<string, unknown>)[]).map(
      ({ name, version, filename, files }) => ({ name, version, filename, files }),
    );
    for (const p of packed) fs.chmodSync(path.join(scratch, p.filename), 0o444);
    fs.writeFileSync(path.join(scratch, "pack.json"), JSON.stringify({ key, seconds, packed } satisfies EntryRecord));
    try {
      fs.renameSync(scratch, entry);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "ENOTEMPTY" && code !== "EEXIST") throw error;
      return entryOf(entry, key); // another process made the same entry first: theirs is as good
    }
    return { ...entryOf(entry, key), packedHere: true };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * The tarballs of the package and its plugin SDK as `npm run pack-all` makes them from `root` (the checkout by
 * default; dist/ as `npm run build` left it), from the cache when it holds this content, else packed now (once, for
 * every process asking at the same time). Waits at most `timeoutMs` for another process's pack.
 */
export async function packed(
  root = path.resolve(__dirname, "../.."),
  { cache = packCacheDirectory(), timeoutMs = 240_000 }: { cache?: string; timeoutMs?: number } = {},
): Promise<Packed> {
  const made = await packedOnce(root, cache, timeoutMs);
  console.log(
    `packed ${made.tarballs.map((t) => t.filename).join(" + ")} (${made.key.slice(0, 12)}): ` +
      (made.packedHere ? `npm pack here, ${made.seconds} s` : `from the cache (npm pack took ${made.seconds} s)`),
  );
  return made;
}

async function packedOnce(root: string, cache: string, timeoutMs: number): Promise<Packed> {
  const key = packKey(root);
  const entry = path.join(cache, key);
  const lock = `${entry}.lock`;
  fs.mkdirSync(cache, { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ready = readEntry(entry, key);
    if (ready !== undefined && ready !== "damaged") return ready;
    if (tryLock(lock)) {
      try {
        // Made between the look above and the lock: use it. A damaged one (a tarball removed by hand) is made again.
        const found = readEntry(entry, key);
        if (found !== undefined && found !== "damaged") return found;
        if (found === "damaged") fs.rmSync(entry, { recursive: true, force: true });
        const made = pack(root, cache, key, entry);
        prune(cache);
        return made;
      } finally {
        fs.rmSync(lock, { recursive: true, force: true });
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`waited ${timeoutMs / 1000} s for another process to pack ${root} into ${entry}: remove ${lock}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The tarball of the package named `name`. */
export function tarballOf(pack: Packed, name: string): PackedTarball {
  const found = pack.tarballs.find((t) => t.name === name);
  if (found === undefined) {
    throw new Error(`npm packed ${pack.tarballs.map((t) => t.name).join(", ")}, not ${name}`);
  }
  return found;
}
