/**
 * Issue 8, items 2 and 7: the package and the repository's settings. 72 source maps pointed at `.ts` files that were
 * not shipped; no LICENSE; no CHANGELOG; the emulator had no bin; `.npmrc` silenced npm's errors; the lockfile held
 * `cookie@2.0.2` (Node ≥ 22) while `engines` said ≥ 20.19.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "../..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  bin: Record<string, string>;
  engines: { node: string };
};
const packed = JSON.parse(
  execFileSync("npm", ["pack", "--dry-run", "--json", "--loglevel=error"], { cwd: root, encoding: "utf8" }),
) as { files: { path: string }[] }[];
const files = new Set(packed[0]!.files.map((f) => f.path));

describe("the packed package", () => {
  it("72 source maps pointed at .ts files that were not shipped: every map's sources are in the package", () => {
    const maps = [...files].filter((f) => f.endsWith(".js.map"));
    expect(maps.length).toBeGreaterThan(50);
    const missing: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(fs.readFileSync(path.join(root, map), "utf8")) as { sources: string[] };
      for (const source of sources) {
        const shipped = path.posix.normalize(path.posix.join(path.posix.dirname(map), source));
        if (!files.has(shipped)) missing.push(`${map} → ${shipped}`);
      }
    }
    expect(missing).toEqual([]);
    expect([...files].filter((f) => f.endsWith(".test.ts"))).toEqual([]);
  });

  it("had no LICENSE and no CHANGELOG: both are shipped (Apache-2.0, a compatibility promise)", () => {
    expect(files.has("LICENSE")).toBe(true);
    expect(fs.readFileSync(path.join(root, "LICENSE"), "utf8")).toContain("Apache License");
    expect(files.has("CHANGELOG.md")).toBe(true);
    const changelog = fs.readFileSync(path.join(root, "CHANGELOG.md"), "utf8");
    expect(changelog).toContain("## Compatibility promise");
    expect(changelog).toContain("## [Unreleased]");
  });

  it("the emulator could only start from a checkout: its bin is shipped, executable by node, with a shebang", () => {
    const bin = pkg.bin["cloudinfra-emulator"];
    expect(bin).toBe("dist/emulator/cli.js");
    expect(files.has(bin!)).toBe(true);
    expect(fs.readFileSync(path.join(root, bin!), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
    const help = spawnSync(process.execPath, [path.join(root, bin!), "--help"], { encoding: "utf8" });
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: cloudinfra-emulator [options]");
  });
});

describe("the repository's settings", () => {
  it("`.npmrc` had loglevel=silent: `npm run nosuch` printed nothing and exited 1; now npm says what is wrong", () => {
    expect(fs.readFileSync(path.join(root, ".npmrc"), "utf8")).not.toMatch(/^\s*loglevel\s*=\s*silent/m);
    const result = spawnSync("npm", ["run", "nosuch"], { cwd: root, encoding: "utf8" });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain('Missing script: "nosuch"');
  });

  it("the lockfile held cookie@2.0.2 (Node ≥ 22) while engines said ≥ 20.19: every runtime dependency accepts the engines' oldest Node", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
      packages: Record<string, { version?: string; dev?: boolean; engines?: { node?: string } | string[] }>;
    };
    const oldest = semver.minVersion(pkg.engines.node)!;
    const refusing = Object.entries(lock.packages)
      .filter(([where, entry]) => where !== "" && !entry.dev)
      .filter(([, entry]) => {
        const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
        return range !== undefined && !semver.satisfies(oldest, range);
      })
      .map(([where, entry]) => `${where}@${entry.version}`);
    expect(refusing).toEqual([]);
  });
});
