// `npm run bundle` (part of `npm run build`): the two files the engine waits for, each one minified file with its
// dependencies, loaded under a V8 code cache (provider/code-cache.ts):
// - dist/provider/plugin/server.bundle.js, the plugin's server (provider/plugin/main.ts);
// - dist/provider/dynamic.bundle.js, the dynamic provider's handlers (provider/dynamic-providers/host.ts).
//
// In them, `undici` is the parts of it the provider imports, not its index, which also loads fetch, WebSocket,
// EventSource, caches and mocks, and Node's own copy of undici through `globalThis.Headers` (~20 ms of every start).
// Each part loads at its first use (Headers and cookies serve the session sign-in only).
import * as fs from "node:fs";
import * as path from "node:path";
import * as esbuild from "esbuild";

/** What the provider imports from undici: the module of undici that has it, and its name there (else the module). */
const undiciParts = {
  Pool: ["undici/lib/dispatcher/pool"],
  Headers: ["undici/lib/web/fetch/headers", "Headers"],
  getSetCookies: ["undici/lib/web/cookies", "getSetCookies"],
};

/** The names the provider's sources import from undici as values (`import type` and `type X` left out). */
function undiciImports(dir) {
  const names = new Set();
  for (const entry of fs.readdirSync(dir, { recursive: true })) {
    if (!entry.endsWith(".ts")) continue;
    const source = fs.readFileSync(path.join(dir, entry), "utf8");
    for (const [, list] of source.matchAll(/import\s+\{([^}]*)\}\s+from\s+"undici"/g)) {
      for (const item of list.split(",").map((s) => s.trim())) {
        if (item !== "" && !item.startsWith("type ")) names.add(item.split(/\s+as\s+/)[0]);
      }
    }
  }
  return names;
}

const missing = [...undiciImports("provider")].filter((name) => !(name in undiciParts));
if (missing.length > 0) {
  throw new Error(`tools/bundle.mjs: add ${missing.join(", ")} to undiciParts (the provider imports it from undici)`);
}

const slimUndici = {
  name: "slim-undici",
  setup(build) {
    build.onResolve({ filter: /^undici$/ }, () => ({ path: "undici", namespace: "slim-undici" }));
    build.onLoad({ filter: /.*/, namespace: "slim-undici" }, () => ({
      resolveDir: path.resolve(),
      loader: "js",
      contents: [
        // What undici's index does for every dispatcher: the request methods (`pool.request`).
        'Object.assign(require("undici/lib/dispatcher/dispatcher").prototype, require("undici/lib/api"));',
        ...Object.entries(undiciParts).map(([name, [module, member]]) => {
          const value = `require(${JSON.stringify(module)})${member ? `.${member}` : ""}`;
          return `Object.defineProperty(exports, ${JSON.stringify(name)}, { enumerable: true, get: () => ${value} });`;
        }),
      ].join("\n"),
    }));
  },
};

await esbuild.build({
  entryPoints: { "plugin/server.bundle": "provider/plugin/server.ts", "dynamic.bundle": "provider/dynamic.ts" },
  outdir: "dist/provider",
  bundle: true,
  minify: true,
  platform: "node",
  target: "node20",
  mainFields: ["module", "main"],
  logLevel: "warning",
  plugins: [slimUndici],
});
