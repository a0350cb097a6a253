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

/**
 * Loads `file` as a CommonJS module, compiled with the cached data kept in `dir` (one file named by a hash of the Node
 * version, the file's path and its source, so an upgraded package or Node misses and compiles again), or without a
 * cache when `dir` is undefined. Any failure to read or write the cache only costs the compile it would have saved.
 * The module gets its own `require` (for Node's built-in modules); it is not put in `require.cache`.
 */
export function loadBundle(file: string, dir: string | undefined = codeCacheDirectory()): LoadedBundle {
  const source = fs.readFileSync(file, "utf8");
  const cacheFile =
    dir === undefined
      ? undefined
      : path.join(dir, createHash("sha1").update(`${process.version}\0${file}\0`).update(source).digest("hex"));
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
      } catch {
        // an unwritable cache: the next process compiles again
      }
    },
  };
}
