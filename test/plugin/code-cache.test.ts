/**
 * The bundles the engine waits for, loaded with a V8 code cache (provider/code-cache.ts): the plugin's server at its
 * start, the dynamic provider's handlers in Pulumi's dynamic-provider host at their first call
 * (`@cloudinfra/pulumi/dynamic/host`).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadBundle } from "../../provider/code-cache";
import { root } from "./launcher";

const temporary: string[] = [];
const tempDir = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  temporary.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of temporary.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A CommonJS file requiring a built-in module, as a bundle does. */
function bundleFile(body = ""): string {
  const file = path.join(tempDir("cloudinfra-bundle-"), "bundle.js");
  fs.writeFileSync(file, `const path = require("node:path");\nexports.base = path.basename(__filename);\n${body}\n`);
  return file;
}

/**
 * What `loadBundle(file, dir)` gives in a fresh Node process (dist/provider/code-cache.js): a process compiles a
 * source once, so a second load in this one would not read the cache. `save` calls saveCodeCache after the load.
 */
function loadInProcess(file: string, dir: string | undefined, save = true) {
  const script = `
    const { loadBundle } = require(${JSON.stringify(path.join(root, "dist/provider/code-cache.js"))});
    const [file, dir, save] = JSON.parse(process.argv[1]);
    const bundle = loadBundle(file, dir ?? undefined);
    if (save) bundle.saveCodeCache();
    console.log(JSON.stringify({ fromCache: bundle.fromCache, exports: bundle.exports }));`;
  const result = spawnSync(process.execPath, ["-e", script, JSON.stringify([file, dir ?? null, save])], {
    encoding: "utf8",
  });
  expect(result.stderr).toBe("");
  return JSON.parse(result.stdout) as { fromCache: boolean; exports: Record<string, unknown> };
}

describe("loadBundle", () => {
  it("runs the file as a CommonJS module, writes its cache only when asked, then compiles nothing again", () => {
    const file = bundleFile("exports.sum = 2 + 3;");
    const dir = path.join(tempDir("cloudinfra-cache-"), "nested");
    expect(loadInProcess(file, dir, false)).toEqual({ fromCache: false, exports: { base: "bundle.js", sum: 5 } });
    expect(fs.existsSync(dir)).toBe(false);
    expect(loadInProcess(file, dir).fromCache).toBe(false);
    expect(fs.readdirSync(dir)).toHaveLength(1);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
    const cached = loadInProcess(file, dir);
    expect(cached).toEqual({ fromCache: true, exports: { base: "bundle.js", sum: 5 } });
    expect(fs.readdirSync(dir)).toHaveLength(1);
  });

  it("misses when the source changes and replaces that file's entry (not another file's); replaces a rejected cache", () => {
    const file = bundleFile();
    const other = bundleFile();
    const dir = tempDir("cloudinfra-cache-");
    loadInProcess(file, dir);
    loadInProcess(other, dir);
    const before = fs.readdirSync(dir);
    expect(before).toHaveLength(2);
    fs.appendFileSync(file, "exports.more = 1;\n");
    expect(loadInProcess(file, dir)).toMatchObject({ fromCache: false, exports: { more: 1 } });
    const after = fs.readdirSync(dir);
    expect(after).toHaveLength(2);
    expect(after.filter((entry) => before.includes(entry))).toHaveLength(1); // the other file's
    expect(loadInProcess(file, dir).fromCache).toBe(true);
    expect(loadInProcess(other, dir).fromCache).toBe(true);

    for (const entry of fs.readdirSync(dir)) fs.writeFileSync(path.join(dir, entry), "not a code cache");
    expect(loadInProcess(file, dir).fromCache).toBe(false);
    expect(loadInProcess(file, dir).fromCache).toBe(true);
  });

  it("without a directory, or with one it cannot write, loads all the same", () => {
    const file = bundleFile();
    expect(loadInProcess(file, undefined)).toMatchObject({ fromCache: false, exports: { base: "bundle.js" } });
    const blocked = path.join(tempDir("cloudinfra-cache-"), "a-file");
    fs.writeFileSync(blocked, "");
    expect(loadInProcess(file, path.join(blocked, "cache"))).toMatchObject({ fromCache: false });
  });

  it("reports a syntax error with the file's name", () => {
    const file = bundleFile("exports.broken = (;");
    let error: unknown;
    try {
      loadBundle(file, undefined);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(SyntaxError);
    expect((error as Error).stack).toContain(file);
  });
});

describe("the dynamic provider's handlers in the host (@cloudinfra/pulumi/dynamic/host, built in dist/)", () => {
  /** Runs `script` in a fresh Node process from the repository, with the code cache in `cacheDir`. */
  const run = (script: string, cacheDir: string) => {
    const result = spawnSync(process.execPath, ["-e", script], {
      cwd: root,
      env: { ...process.env, CLOUDINFRA_CODE_CACHE: cacheDir },
      encoding: "utf8",
    });
    expect(result.stderr).toBe("");
    return JSON.parse(result.stdout) as Record<string, unknown>;
  };
  const script = `
    const t0 = process.hrtime.bigint();
    const host = require("./dist/provider/dynamic-providers/host.js").dynamicHandlers;
    const modules = () => Object.keys(require.cache).filter((f) => f.includes("dist/provider/")).length;
    const loadedByRequire = modules();
    host.diff("Network", "n-1", { name: "a" }, { name: "b" }).then((diff) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      const loadedByTheCall = modules() - loadedByRequire;
      const same = require("./dist/provider/index.js").dynamicHandlers === host;
      setImmediate(() => console.log(JSON.stringify({ diff, same, loadedByRequire, loadedByTheCall, ms })));
    });`;

  it("are loaded from the bundle at their first call, the same ones as @cloudinfra/pulumi/provider's, and cached", () => {
    const cacheDir = tempDir("cloudinfra-cache-");
    const first = run(script, cacheDir);
    expect(first.diff).toMatchObject({ changes: true });
    expect(first.same).toBe(true);
    // The handlers' modules come from the bundle, not one by one: host.js and code-cache.js are all that loads.
    expect(first.loadedByRequire).toBe(2);
    expect(first.loadedByTheCall).toBe(0);
    expect(fs.readdirSync(cacheDir)).toHaveLength(1);
    const second = run(script, cacheDir);
    expect(second.diff).toEqual(first.diff);
    expect(fs.readdirSync(cacheDir)).toHaveLength(1);
    console.log(
      `dynamic handlers' first call: ${Math.round(first.ms as number)} ms, then ${Math.round(second.ms as number)} ms cached`,
    );
  });
});
