/**
 * Loading a bundle (one CommonJS file that requires only Node's built-in modules, made by `npm run build` with
 * esbuild) with a V8 code cache, so that a process after the first compiles nothing of it again: Node 20 has no
 * `module.enableCompileCache`. Serves the processes the engine waits for: the plugin at its start, and Pulumi's
 * dynamic-provider host at its first call to our code.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import Module from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import * as vm from "node:vm";

/** Where the code cache lives: CLOUDINFRA_CODE_CACHE (`off` for none), else the user's cache directory. */
export function codeCacheDirectory(): string | undefined {
  const configured = process.env.CLOUDINFRA_CODE_CACHE;
  if (configured === "off") return undefined;
  return (
    configured ?? path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "cloudinfra", "code-cache")
  );
}

/** A bundle as {@link loadBundle} loaded it. */
export interface LoadedBundle {
  exports: unknown;
  /** Whether it was compiled from the cache (V8 accepted the cached data). */
  fromCache: boolean;
  /**
   * Writes the bundle's code cache when it was missing or rejected (else does nothing). Call it once the process has
   * run what it starts with: the cached data then also holds the functions compiled while running, not only the
   * top-level code.
   */
  saveCodeCache(): void;
}

const sha1 = (...parts: string[]) => createHash("sha1").update(parts.join("\0")).digest("hex");

/**
 * Loads `file` as a CommonJS module, compiled with the cached data kept in `dir`, or without a cache when `dir` is
 * undefined. The cache holds one entry per file: `<hash of its path>.<hash of the Node version and its source>`, so an
 * upgraded package or Node misses, compiles again and replaces the entry. Any failure to read or write the cache only
 * costs the compile it would have saved. The module gets its own `require` (for Node's built-in modules); it is not
 * put in `require.cache`.
 */
export function loadBundle(file: string, dir: string | undefined = codeCacheDirectory()): LoadedBundle {
  const source = fs.readFileSync(file, "utf8");
  const entryOfFile = `${sha1(file)}.`;
  const entry = `${entryOfFile}${sha1(process.version, source)}`;
  const cacheFile = dir === undefined ? undefined : path.join(dir, entry);
  let cachedData: Buffer | undefined;
  try {
    if (cacheFile !== undefined) cachedData = fs.readFileSync(cacheFile);
  } catch {
    // not cached yet
  }
  const script = new vm.Script(Module.wrap(source), {
    filename: file,
    cachedData,
    // `import()` in the bundle resolves as it would in any CommonJS module.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} as unknown, filename: file, id: file, loaded: false };
  const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
  wrapper.call(module.exports, module.exports, Module.createRequire(file), module, file, path.dirname(file));
  module.loaded = true;
  const fromCache = cachedData !== undefined && script.cachedDataRejected !== true;
  let missing = cacheFile !== undefined && !fromCache;
  return {
    exports: module.exports,
    fromCache,
    saveCodeCache() {
      if (!missing || cacheFile === undefined || dir === undefined) return;
      missing = false;
      try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        const temporary = `${cacheFile}.${process.pid}`;
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, cacheFile);
        // The entries of this file's earlier sources (temporary files, `<entry>.<pid>`, are other processes' writes).
        for (const other of fs.readdirSync(dir)) {
          if (other.startsWith(entryOfFile) && other !== entry && !other.includes(".", entryOfFile.length)) {
            fs.rmSync(path.join(dir, other), { force: true });
          }
        }
      } catch {
        // an unwritable cache: the next process compiles again
      }
    },
  };
}
