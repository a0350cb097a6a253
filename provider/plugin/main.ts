#!/usr/bin/env node
/**
 * `pulumi-resource-cloudinfra`: the engine starts it with its own address as the first argument; it serves the
 * provider on a free port of 127.0.0.1 and prints that port as the first line on stdout.
 *
 * The engine waits for that port (and the first Check) before it goes on, on every `preview`, `up`, `refresh` and
 * `destroy`, so the start is kept short. The server and everything it uses (its dependencies and @pulumi/pulumi's
 * protos included) is one file, `server.bundle.js`, bundled and minified by `npm run build` (esbuild) from the same
 * sources: loading it spares resolving and reading some 330 modules, and a V8 code cache of it (see
 * {@link useCodeCache}) spares compiling it again at each start (Node 20 has no `module.enableCompileCache`).
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import Module from "node:module";
import * as os from "node:os";
import * as path from "node:path";
import * as vm from "node:vm";

/** The parts of node:module's CommonJS loader used here (public since Node 0.x, not in its type declarations). */
interface CommonJsModule {
  exports: unknown;
  require(id: string): unknown;
}
interface CommonJsLoader {
  prototype: { _compile(this: CommonJsModule, content: string, filename: string): unknown };
  wrap(source: string): string;
  _resolveFilename(request: string, parent: CommonJsModule, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths(request: string, parent: CommonJsModule): string[] | null;
  _extensions: unknown;
  _cache: unknown;
}

/**
 * Compiles the CommonJS modules loaded from now on with a V8 code cache kept in `dir` (one file per module, named by
 * a hash of the Node version, the file's path and its source, so an upgraded package or Node misses and recompiles).
 * Returns a function writing the entries that were missing, to call once the start is done (creating the cached data
 * then also keeps the functions compiled while loading). Any failure to read or write the cache only costs the
 * compile it would have saved.
 */
function useCodeCache(dir: string): () => void {
  const loader = Module as unknown as CommonJsLoader;
  const compile = loader.prototype._compile;
  const missing: { file: string; script: vm.Script }[] = [];
  const run = (mod: CommonJsModule, content: string, filename: string) => {
    const file = path.join(
      dir,
      createHash("sha1").update(`${process.version}\0${filename}\0`).update(content).digest("hex"),
    );
    let cachedData: Buffer | undefined;
    try {
      cachedData = fs.readFileSync(file);
    } catch {
      // not cached yet
    }
    let script: vm.Script;
    try {
      script = new vm.Script(loader.wrap(content.replace(/^#!.*/, "")), {
        filename,
        cachedData,
        // `import()` in these modules resolves as it would in any CommonJS module.
        importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
      });
    } catch {
      return compile.call(mod, content, filename); // let Node report the syntax error its own way
    }
    if (cachedData === undefined || script.cachedDataRejected) missing.push({ file, script });
    const moduleRequire = Object.assign((id: string) => mod.require(id), {
      resolve: Object.assign(
        (request: string, options?: unknown) => loader._resolveFilename(request, mod, false, options),
        { paths: (request: string) => loader._resolveLookupPaths(request, mod) },
      ),
      main: require.main,
      extensions: loader._extensions,
      cache: loader._cache,
    });
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(mod.exports, mod.exports, moduleRequire, mod, filename, path.dirname(filename));
  };
  loader.prototype._compile = function (this: CommonJsModule, content: string, filename: string) {
    return run(this, content, filename);
  };
  return () => {
    if (missing.length === 0) return;
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      for (const { file, script } of missing.splice(0)) {
        const temporary = `${file}.${process.pid}`;
        fs.writeFileSync(temporary, script.createCachedData());
        fs.renameSync(temporary, file);
      }
    } catch {
      // an unwritable cache: the next start compiles again
    }
  };
}

/** Where the code cache lives: CLOUDINFRA_CODE_CACHE (`off` for none), else the user's cache directory. */
function codeCacheDirectory(): string | undefined {
  const configured = process.env.CLOUDINFRA_CODE_CACHE;
  if (configured === "off") return undefined;
  return (
    configured ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache"), "cloudinfra", "plugin-code-cache")
  );
}

async function main(args: string[]): Promise<void> {
  const cacheDir = codeCacheDirectory();
  const saveCodeCache = cacheDir === undefined ? () => undefined : useCodeCache(cacheDir);
  // Loaded after the cache is in place, so that it serves the server and everything the server loads.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- after useCodeCache, not hoisted above it
  const { ProviderServer } = require("./server.bundle.js") as typeof import("./server");
  const engineAddress = args.find((a) => !a.startsWith("-"));
  const server = new ProviderServer();
  if (engineAddress) server.connectEngine(engineAddress);
  const port = await server.listen(0);
  process.stdout.write(`${port}\n`);
  setImmediate(saveCodeCache);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`cloudinfra provider failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
