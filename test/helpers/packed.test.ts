/**
 * test/helpers/packed.ts on a small package with a workspace (the shape of this repository: a root with "files" and a
 * negated build directory, a workspace whose "files" are globs), in a scratch cache: worker processes asking at once
 * share one `npm pack`, a change to a packed file is a new pack of the new content, a change outside what npm packs
 * is not, and a lock left by a dead process does not block the next run while a live owner's does.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildSync } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packed, packKey, type Packed } from "./packed";

let work: string;
let mini: string;
let cache: string;
let driver: string;
/** A directory whose `npm` counts its runs in `npmRuns` before running npm. */
let counting: string;
let npmRuns: string;

/** Writes `content` to `file` under the small package. */
const write = (file: string, content: string) => {
  fs.mkdirSync(path.dirname(path.join(mini, file)), { recursive: true });
  fs.writeFileSync(path.join(mini, file), content);
};

/** The content of `file` in the tarball `tgz` (npm puts a package's files under package/). */
const inTarball = (tgz: string, file: string) =>
  execFileSync("tar", ["-xzOf", tgz, `package/${file}`], { encoding: "utf8" });

beforeAll(() => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-packed-"));
  mini = path.join(work, "mini");
  cache = path.join(work, "cache");
  write(
    "package.json",
    JSON.stringify({ name: "mini", version: "1.0.0", files: ["dist", "!dist/tools"], workspaces: ["sub"] }),
  );
  write("dist/index.js", "module.exports = 1;\n");
  write("dist/tools/tool.js", "module.exports = 'tool';\n");
  write("src/index.ts", "export = 1;\n");
  write("sub/package.json", JSON.stringify({ name: "mini-sub", version: "1.0.0", files: ["bin/**/*.js"] }));
  write("sub/bin/index.js", "module.exports = 'sub';\n");
  counting = path.join(work, "bin");
  npmRuns = path.join(work, "npm-runs");
  const npm = execFileSync("bash", ["-c", "command -v npm"], { encoding: "utf8" }).trim();
  fs.mkdirSync(counting);
  fs.writeFileSync(path.join(counting, "npm"), `#!/bin/sh\necho "$*" >> '${npmRuns}'\nexec '${npm}' "$@"\n`, {
    mode: 0o755,
  });
  // The helper in a process of its own, as vitest's workers run it: prints what packed() returned.
  driver = path.join(work, "driver.cjs");
  buildSync({
    stdin: {
      contents: `import { packed } from ${JSON.stringify(path.join(__dirname, "packed.ts"))};
packed(process.argv[2], { cache: process.argv[3] }).then((p) => process.stdout.write("\\n" + JSON.stringify(p)));`,
      resolveDir: __dirname,
      loader: "ts",
    },
    bundle: true,
    platform: "node",
    format: "cjs",
    outfile: driver,
    logLevel: "warning",
  });
});

afterAll(() => fs.rmSync(work, { recursive: true, force: true }));

/** Runs the driver in `count` processes started together; resolves to what each one's packed() returned. */
async function packedInProcesses(count: number): Promise<Packed[]> {
  const runs = Array.from(
    { length: count },
    () =>
      new Promise<Packed>((resolve, reject) => {
        const child = spawn(process.execPath, [driver, mini, cache], {
          stdio: ["ignore", "pipe", "pipe"],
          env: { ...process.env, PATH: `${counting}${path.delimiter}${process.env.PATH}` },
        });
        let out = "";
        let err = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        child.stderr.on("data", (d: Buffer) => (err += d.toString()));
        child.on("exit", (code) =>
          code === 0 ? resolve(JSON.parse(out.trim().split("\n").at(-1)!) as Packed) : reject(new Error(err)),
        );
      }),
  );
  return Promise.all(runs);
}

describe("test/helpers/packed.ts", () => {
  it("three processes asking at once: one npm pack, the same two tarballs for all, read-only", async () => {
    const results = await packedInProcesses(3);
    expect(
      fs
        .readFileSync(npmRuns, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("pack ")),
    ).toHaveLength(1);
    expect(results.filter((r) => r.packedHere)).toHaveLength(1);
    const files = results.map((r) => r.tarballs.map((t) => t.file));
    expect(new Set(files.map((f) => f.join("\n"))).size).toBe(1);
    expect(results[0]!.tarballs.map((t) => [t.name, t.filename])).toEqual([
      ["mini", "mini-1.0.0.tgz"],
      ["mini-sub", "mini-sub-1.0.0.tgz"],
    ]);
    for (const file of files[0]!) expect(fs.statSync(file).mode & 0o222).toBe(0);
    expect(inTarball(files[0]![0]!, "dist/index.js")).toBe("module.exports = 1;\n");
    expect(inTarball(files[0]![1]!, "bin/index.js")).toBe("module.exports = 'sub';\n");
    // The entry, nothing else: no lock, no scratch directory left.
    expect(fs.readdirSync(cache)).toEqual([results[0]!.key]);
    // A later run takes it from the cache.
    const again = await packed(mini, { cache });
    expect(again.packedHere).toBe(false);
    expect(again.tarballs.map((t) => t.file)).toEqual(files[0]);
  }, 120_000);

  it("a change to a packed file, of either package, is a new pack holding it; a change to what npm leaves out is not", async () => {
    const before = await packed(mini, { cache });
    write("dist/tools/tool.js", "module.exports = 'another tool';\n"); // "!dist/tools"
    write("src/index.ts", "export = 2;\n"); // not in "files"
    expect(packKey(mini)).toBe(before.key);

    write("dist/index.js", "module.exports = 2;\n");
    const root = await packed(mini, { cache });
    expect(root.key).not.toBe(before.key);
    expect(root.packedHere).toBe(true);
    expect(inTarball(root.tarballs[0]!.file, "dist/index.js")).toBe("module.exports = 2;\n");
    // The earlier entry is still whole, for a run of the earlier content.
    expect(inTarball(before.tarballs[0]!.file, "dist/index.js")).toBe("module.exports = 1;\n");

    write("sub/bin/index.js", "module.exports = 'sub 2';\n");
    const sub = await packed(mini, { cache });
    expect(sub.key).not.toBe(root.key);
    expect(inTarball(sub.tarballs[1]!.file, "bin/index.js")).toBe("module.exports = 'sub 2';\n");
  }, 120_000);

  it("a lock whose owner died is taken over; a live owner's lock is waited for, then named in the error", async () => {
    write("dist/index.js", "module.exports = 3;\n");
    const key = packKey(mini);
    const lock = path.join(cache, `${key}.lock`);
    const dead = spawnSync(process.execPath, ["-e", ""]).pid!;
    fs.mkdirSync(lock);
    fs.writeFileSync(path.join(lock, "owner"), JSON.stringify({ pid: dead, host: os.hostname() }));
    const taken = await packed(mini, { cache });
    expect(taken.packedHere).toBe(true);
    expect(fs.existsSync(lock)).toBe(false);

    write("dist/index.js", "module.exports = 4;\n");
    const held = path.join(cache, `${packKey(mini)}.lock`);
    fs.mkdirSync(held);
    fs.writeFileSync(path.join(held, "owner"), JSON.stringify({ pid: process.pid, host: os.hostname() }));
    await expect(packed(mini, { cache, timeoutMs: 1_000 })).rejects.toThrow(`remove ${held}`);
    fs.rmSync(held, { recursive: true });
  }, 120_000);
});
