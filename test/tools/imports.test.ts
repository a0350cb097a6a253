/**
 * Imports point one way: tests may import anything; nothing outside test/ imports test/ (the demo once ran its
 * fallback through test/harness, which now lives in tools/harness).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { expect, it } from "vitest";

const root = path.resolve(__dirname, "../..");
const sources = ["tools", "provider", "sdk", "policy", "emulator", "examples", "templates"];
const skipped = new Set(["node_modules", "dist"]);

function files(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return skipped.has(entry.name) ? [] : files(full);
    return /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

const specifier = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;

it("no source outside test/ imports a module under test/", () => {
  const testDir = path.join(root, "test") + path.sep;
  const offenders = sources
    .flatMap((dir) => files(path.join(root, dir)))
    .flatMap((file) =>
      [...fs.readFileSync(file, "utf8").matchAll(specifier)]
        .map((match) => match[1]!)
        .filter((spec) => spec.startsWith(".") && path.resolve(path.dirname(file), spec).startsWith(testDir))
        .map((spec) => `${path.relative(root, file)} imports ${spec}`),
    );
  expect(offenders).toEqual([]);
});
