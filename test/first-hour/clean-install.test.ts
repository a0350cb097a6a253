/**
 * Issue 29, part 6: `npm ci` on a fresh clone warned "2 packages have install scripts not yet covered by
 * allowScripts" (esbuild, protobufjs). The decisions are recorded in package.json's `allowScripts` (esbuild's
 * postinstall checks its platform binary: allowed; protobufjs's only prints advice to packages depending on it:
 * denied). `npm ci --dry-run --offline` reads the lockfile and the policy without touching node_modules or the network,
 * and prints the same warnings a real `npm ci` does.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "../..");
const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  version: string;
  dependencies: Record<string, string>;
  workspaces: string[];
  allowScripts: Record<string, boolean>;
};

describe("a clean install of the repository", () => {
  it("`npm ci` warned of install scripts not covered by allowScripts: it prints no warning now", () => {
    const ci = spawnSync("npm", ["ci", "--dry-run", "--offline", "--no-audit", "--no-fund"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(ci.status, ci.stderr).toBe(0);
    expect((ci.stdout + ci.stderr).split("\n").filter((line) => /^npm (warn|error)/i.test(line))).toEqual([]);
    expect(pkg.allowScripts).toEqual({ esbuild: true, protobufjs: false });
  });

  it("every install script of the tree is decided in allowScripts (npm install-scripts ls)", () => {
    const listed = spawnSync("npm", ["install-scripts", "ls", "--json"], { cwd: root, encoding: "utf8" });
    expect(listed.status, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ allowScripts: [] });
  });

  it("the workspaces are in the lockfile, linked: `npm ci` installs each as a link to its folder, at the package's version", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8")) as {
      packages: Record<string, { name?: string; resolved?: string; link?: boolean }>;
    };
    expect(lock.packages[""]).toMatchObject({ workspaces: pkg.workspaces });
    for (const folder of pkg.workspaces) {
      const { name } = JSON.parse(fs.readFileSync(path.join(root, folder, "package.json"), "utf8")) as { name: string };
      expect(lock.packages[`node_modules/${name}`]).toEqual({ resolved: folder, link: true });
      // The main package depends on each at its own version (a workspace at another version would be looked up in the
      // registry); sdk/plugin's package.json takes the main package's version (the gen-sdk suite checks it).
      expect(pkg.dependencies[name], name).toBe(pkg.version);
      expect(fs.realpathSync(path.join(root, "node_modules", name))).toBe(fs.realpathSync(path.join(root, folder)));
    }
  });
});
