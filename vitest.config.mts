import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  // The examples import the package by name, as a user's program does; here the name resolves to the sources.
  resolve: {
    alias: [
      { find: /^@cloudinfra\/pulumi$/, replacement: fileURLToPath(new URL("./sdk/index.ts", import.meta.url)) },
      {
        find: /^@cloudinfra\/pulumi\/policy$/,
        replacement: fileURLToPath(new URL("./policy/index.ts", import.meta.url)),
      },
      // The plugin's generated SDK loads its modules lazily with require(): the build's output (npm test builds first).
      {
        find: /^@cloudinfra\/pulumi\/plugin$/,
        replacement: fileURLToPath(new URL("./dist/sdk/plugin-sdk.js", import.meta.url)),
      },
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Most suites wait on jobs, timers and child processes (the CLI, its hosts, the plugin): two files at a time. The
    // default, one less than the cores, runs them one by one on the 2-core CI machine.
    maxWorkers: 2,
  },
});
