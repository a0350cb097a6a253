/**
 * The API coverage table (docs/api-coverage.md, `npm run docs`): the contract's route table is the spec's endpoint
 * tables, both ways; every route is called by something in provider/ or says why not, never both; the calls are found
 * in the code (a text scan of the plain call forms finds nothing the compiler's scan misses); and the committed page
 * is what the generator writes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { routes, type RouteName } from "../../provider/api";
import {
  coverageCounts,
  coverageFile,
  coverageMarkdown,
  internalUseNames,
  routeUses,
  specPath,
  uncalledReasons,
} from "../../tools/coverage";

const root = path.resolve(__dirname, "../..");
const spec = fs.readFileSync(path.join(root, "docs", "spec", "cloud-api.md"), "utf8");
const uses = routeUses(root);

/**
 * `METHOD /path` of every row of the spec's endpoint tables (those whose header starts with Method and Path, under
 * `## Endpoints`): `.../x` is under the section's base path (`### Virtual machines (/resource/virtual-machines)`),
 * and a query written into the path (`?jobIds={jobId}`) is no part of it.
 */
function specEndpoints(): string[] {
  const section = spec.slice(spec.indexOf("\n## Endpoints\n"), spec.indexOf("\n## Authentication\n"));
  const found: string[] = [];
  let base = "";
  let inTable = false;
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, "")
      .split("|")
      .map((c) => c.trim());
  for (const line of section.split("\n")) {
    const heading = /^### .*\((\/[^)]+)\)$/.exec(line);
    if (line.startsWith("### ")) base = heading?.[1] ?? "";
    if (!line.startsWith("|")) {
      inTable = false;
      continue;
    }
    const [first, second] = cells(line);
    if (first === "Method" && second === "Path") {
      inTable = true;
      continue;
    }
    if (!inTable || /^-+$/.test(first ?? "")) continue;
    let route = second!.split("?")[0]!;
    if (route.startsWith("...")) route = base + route.slice(3);
    found.push(`${first} ${route}`);
  }
  return [...new Set(found)].sort();
}

describe("the API coverage table", () => {
  it("covers the spec: every endpoint row of its tables is a route of the contract, and every route such a row", () => {
    const fromSpec = specEndpoints();
    const fromRoutes = [...new Set(Object.values(routes).map((r) => `${r.method} ${specPath(r.path)}`))].sort();
    expect(fromSpec.length).toBeGreaterThan(90);
    expect(
      fromRoutes.filter((e) => !fromSpec.includes(e)),
      "routes the spec's tables do not have",
    ).toEqual([]);
    expect(
      fromSpec.filter((e) => !fromRoutes.includes(e)),
      "endpoints of the spec the route table lacks",
    ).toEqual([]);
    expect(Object.keys(routes).length, "one route per endpoint").toBe(fromRoutes.length);
  });

  it("gives every route a caller or a reason, and no called route a reason (drop its entry from uncalledReasons in tools/coverage.ts)", () => {
    const neither = [...uses].filter(([name, use]) => use.sites.length === 0 && !uncalledReasons[name]);
    expect(
      neither.map(([name]) => name),
      "routes nothing calls, without a reason in uncalledReasons",
    ).toEqual([]);
    const both = [...uses].filter(([name, use]) => use.sites.length > 0 && uncalledReasons[name]);
    expect(
      both.map(([name, use]) => `${name} (called in ${use.sites.map((s) => `${s.file}:${s.line}`).join(", ")})`),
      "routes called yet given a reason in uncalledReasons (tools/coverage.ts): drop their entries",
    ).toEqual([]);
    for (const name of Object.keys(uncalledReasons)) expect(Object.keys(routes)).toContain(name);
    for (const [name, use] of uses) {
      if (use.sites.length === 0) continue;
      expect(
        use.kinds.length + use.dataFunctions.length + use.internal.length,
        `${name} is called but attributed to nothing`,
      ).toBeGreaterThan(0);
    }
  });

  it("finds known calls and attributes them: to kinds, data functions (through the helpers they call), and internal uses", () => {
    const use = (name: RouteName) => uses.get(name)!;
    expect(use("createNetwork").kinds).toEqual(["Network"]);
    expect(use("check").dataFunctions).toContain("getCaller");
    expect(use("check").internal).toContain("credentials check (once per run)");
    expect(use("signIn").internal).toEqual(["sign-in (email, password, TOTP)"]);
    expect(use("queryJobs").internal).toEqual(["job polling (client.jobs)"]);
    expect(use("gpuInventory").dataFunctions).toEqual(["getGpuInventory"]);
    expect(use("gpuInventory").kinds).toEqual(["GpuVirtualMachine"]);
    // A lookup's list route serves its single and list functions; its read by id only the single one.
    expect(use("listNetworks").dataFunctions).toEqual(["getNetwork", "getNetworks"]);
    expect(use("getNetwork").dataFunctions).toEqual(["getNetwork"]);
    // Through helpers: getResourceGroup's byId calls teamWithMembers; getVirtualMachine's calls the kind's observe,
    // whose address reader searches the list.
    expect(use("getTeam").dataFunctions).toEqual(["getResourceGroup"]);
    expect(use("listVms").sites.map((s) => s.unit)).toContain("AddressReader.search");
    expect(use("listVms").dataFunctions).toContain("getVirtualMachine");
    // A bulk deleter's call, in a closure handed to the client's BatchedDeleter.
    expect(use("bulkDeleteVolumes").kinds).toEqual(["Volume"]);
  });

  it("names only internal uses that call a route (a renamed declaration leaves its name unused)", () => {
    const named = new Set([...uses.values()].flatMap((u) => u.internal));
    expect(Object.values(internalUseNames).filter((name) => !named.has(name))).toEqual([]);
  });

  it('misses no plain call: every `api.<route>(` and `listAll("<route>"` of provider/ is a call site it found', () => {
    const found = new Set([...uses.values()].flatMap((u) => u.sites.map((s) => `${s.route} ${s.file}:${s.line}`)));
    const names: ReadonlySet<string> = new Set(Object.keys(routes));
    const scanned: string[] = [];
    const walk = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true })
        .flatMap((e) => (e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)]));
    for (const file of walk(path.join(root, "provider")).filter((f) => f.endsWith(".ts"))) {
      const relative = path.relative(root, file).split(path.sep).join("/");
      if (relative.startsWith("provider/api/")) continue;
      const text = fs.readFileSync(file, "utf8");
      for (const match of text.matchAll(/\bapi\s*\.\s*(\w+)\s*\(|\blistAll\(\s*"(\w+)"/g)) {
        const route = match[1] ?? match[2]!;
        if (!names.has(route)) continue;
        const offset = match.index + match[0].indexOf(route);
        const line = text.slice(0, offset).split("\n").length;
        scanned.push(`${route} ${relative}:${line}`);
      }
    }
    expect(scanned.length).toBeGreaterThan(50);
    expect(scanned.filter((s) => !found.has(s))).toEqual([]);
  });

  it("is committed as the generator writes it (run `npm run docs` when this fails)", async () => {
    const { called, reasoned, total } = coverageCounts(uses);
    expect(called + reasoned).toBe(total);
    expect(fs.readFileSync(coverageFile(root), "utf8")).toBe(await coverageMarkdown(uses));
  });
});
