/**
 * The seeded table of plans, valid and invalid, that preview's verdict and `up`'s outcome must agree on: in process at
 * handler level (test/resources/preflight-table.test.ts) and through the real CLI with both SDKs
 * (test/e2e/preflight-table.test.ts). The committed fixture, test/fixtures/preflight-cases.json, is what `casesOf`
 * makes of its seed (the in-process suite compares them). Regenerate it after changing the generator:
 *
 *     npx esbuild test/e2e/preflight-cases.ts --bundle --platform=node --format=cjs | node - --write-preflight-cases
 *
 * The cases are independent of each other, so that a plan may hold all of them at once: each has objects of its own
 * (named by its index: its volume, network, VM, attachment), and no two GPU cases ask for the same series, data
 * center and count (capacity one case takes is never capacity another case counts on).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { seededRandom } from "../../emulator/seeded-random";

export type Case =
  | { kind: "gpu"; series: "a100" | "h100"; datacenter: 0 | 1 | 2; gpuCount: 1 | 2 | 4 | 8 }
  | { kind: "volume"; held: boolean; adopt: boolean }
  | { kind: "network"; held: boolean; adopt: boolean }
  | { kind: "attach"; near: boolean; full: boolean; sizeFull: boolean }
  | { kind: "power"; key: "admin" | "member"; powerState: "running" | "stopped" };

export const SEED = 26;
export const COUNT = 30;
export const casesFile = path.join(__dirname, "..", "fixtures", "preflight-cases.json");

const series = ["a100", "h100"] as const;
const datacenters = [0, 1, 2] as const;
const gpuCounts = [1, 2, 4, 8] as const;

export function casesOf(seed: number, count: number): Case[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const gpuTaken = new Set<string>();
  const kinds = ["gpu", "volume", "network", "attach", "power"] as const;
  return Array.from({ length: count }, (): Case => {
    // Once every GPU combination is taken, the other kinds only.
    const kind = pick(gpuTaken.size < series.length * datacenters.length * gpuCounts.length ? kinds : kinds.slice(1));
    switch (kind) {
      case "gpu":
        for (;;) {
          const gpu = {
            kind,
            series: pick(series),
            datacenter: pick(datacenters),
            gpuCount: pick(gpuCounts),
          } satisfies Case;
          const key = `${gpu.series}/${gpu.datacenter}/${gpu.gpuCount}`;
          if (gpuTaken.has(key)) continue;
          gpuTaken.add(key);
          return gpu;
        }
      case "volume":
      case "network":
        return { kind, held: next() < 0.5, adopt: next() < 0.5 };
      case "attach": {
        // To a VM of the volume's data center with room, of another data center, of the same one but full, or with
        // room but holding its volume size's maxVolumesPerVm (an nvme 50 GB volume on a VM with 4 of them).
        const vm = pick(["near", "far", "full", "sizeFull"] as const);
        return { kind, near: vm !== "far", full: vm === "full", sizeFull: vm === "sizeFull" };
      }
      case "power":
        return { kind, key: pick(["admin", "member"] as const), powerState: pick(["running", "stopped"] as const) };
    }
  });
}

/** The committed table. */
export function committedCases(): { seed: number; cases: Case[] } {
  return JSON.parse(fs.readFileSync(casesFile, "utf8")) as { seed: number; cases: Case[] };
}

if (process.argv.includes("--write-preflight-cases")) {
  const file = path.resolve("test", "fixtures", "preflight-cases.json");
  fs.writeFileSync(file, `${JSON.stringify({ seed: SEED, cases: casesOf(SEED, COUNT) }, null, 2)}\n`);
  console.log(`wrote ${file}`);
}
