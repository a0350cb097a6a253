#!/usr/bin/env node
/**
 * `pulumi-resource-cloudinfra`: the engine starts it with its own address as the first argument; it serves the
 * provider on a free port of 127.0.0.1 and prints that port as the first line on stdout.
 *
 * The engine waits for that port (and the first Check) before it goes on, on every `preview`, `up`, `refresh` and
 * `destroy`, so the start is kept short. The server and everything it uses (its dependencies and @pulumi/pulumi's
 * protos included) is one file, `server.bundle.js`, bundled and minified by `npm run build` (esbuild) from the same
 * sources: loading it spares resolving and reading some 330 modules, and a V8 code cache of it (see
 * {@link loadBundle}) spares compiling it again at each start.
 */
import * as path from "node:path";
import { loadBundle } from "../code-cache";

async function main(args: string[]): Promise<void> {
  const bundle = loadBundle(path.join(__dirname, "server.bundle.js"));
  const { ProviderServer, endSessionsOnExitSignals } = bundle.exports as typeof import("./server");
  // The engine ends this process with SIGINT (then a kill after a short grace): sessions opened are signed out first.
  endSessionsOnExitSignals();
  const engineAddress = args.find((a) => !a.startsWith("-"));
  const server = new ProviderServer();
  if (engineAddress) server.connectEngine(engineAddress);
  const port = await server.listen(0);
  process.stdout.write(`${port}\n`);
  setImmediate(bundle.saveCodeCache);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`cloudinfra provider failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
