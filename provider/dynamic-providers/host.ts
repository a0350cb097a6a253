/**
 * `@cloudinfra/pulumi/dynamic/host`: the handlers the serialized dynamic providers call in Pulumi's dynamic-provider
 * host (`dynamicHandlers` of ../dynamic.ts), loaded at the first call from `dynamic.bundle.js`: that module and
 * everything it uses in one file, bundled by `npm run build` (esbuild) from the same sources, under the V8 code cache
 * the plugin uses (../code-cache.ts). The host loads our code at its first check or delete, which the engine waits
 * for: ~90 ms this way (its cache warm), ~280 ms module by module.
 *
 * One copy per host process: `@cloudinfra/pulumi/provider`'s `dynamicHandlers`, which stacks written by earlier
 * versions call, are these, so a host serving both forms keeps one client (one pacing of the API's rate limit).
 */
import * as path from "node:path";
import { loadBundle } from "../code-cache";

type Handlers = typeof import("../dynamic").dynamicHandlers;

let loaded: Handlers | undefined;

function handlers(): Handlers {
  if (loaded === undefined) {
    const bundle = loadBundle(path.join(__dirname, "..", "dynamic.bundle.js"));
    loaded = (bundle.exports as typeof import("../dynamic")).dynamicHandlers;
    setImmediate(bundle.saveCodeCache);
  }
  return loaded;
}

/** `dynamicHandlers` of ../dynamic.ts, from the bundle, loaded when one of them is first called. */
export const dynamicHandlers = new Proxy({} as Handlers, {
  get: (_target, name: keyof Handlers) => handlers()[name],
});
