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
    ],
  },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
});
