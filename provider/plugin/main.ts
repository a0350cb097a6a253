#!/usr/bin/env node
/**
 * `pulumi-resource-cloudinfra`: the engine starts it with its own address as the first argument; it serves the
 * provider on a free port of 127.0.0.1 and prints that port as the first line on stdout.
 */
import { ProviderServer } from "./server";

async function main(args: string[]): Promise<void> {
  const engineAddress = args.find((a) => !a.startsWith("-"));
  const server = new ProviderServer();
  if (engineAddress) server.connectEngine(engineAddress);
  const port = await server.listen(0);
  process.stdout.write(`${port}\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`cloudinfra provider failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
