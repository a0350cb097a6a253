import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { chosenErrorStatus, ErrorEnvelope, errorStatus, routes, specErrorStatus } from "../../provider/api";
import { testEmulator } from "../helpers/emulator";

const spec = readFileSync(resolve(__dirname, "../../docs/spec/cloud-api.md"), "utf8");

/** The rows of the first Markdown table after `heading` whose header row is exactly `header`. */
function table(heading: string, header: string[]): string[][] {
  const start = spec.indexOf(`\n${heading}\n`);
  expect(start, `heading ${heading} in the spec`).toBeGreaterThanOrEqual(0);
  const lines = spec.slice(start).split("\n");
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, "")
      .split("|")
      .map((c) => c.trim());
  const at = lines.findIndex((l) => l.startsWith("|") && cells(l).join("|") === header.join("|"));
  expect(at, `table ${header.join(" | ")} under ${heading}`).toBeGreaterThan(0);
  const rows: string[][] = [];
  for (const line of lines.slice(at + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(cells(line));
  }
  return rows;
}

describe("contract ↔ emulator", () => {
  it("registers every route of the contract table under /v1", async () => {
    const em = await testEmulator();
    const missing = Object.entries(routes)
      .filter(([, r]) => !em.app.hasRoute({ method: r.method, url: `/v1${r.path}` }))
      .map(([name, r]) => `${name} (${r.method} ${r.path})`);
    expect(missing).toEqual([]);
  });

  it("answers 401 NOT_AUTHENTICATED with the error envelope on every authenticated route called without credentials", async () => {
    const em = await testEmulator();
    const wrong: string[] = [];
    let tested = 0;
    for (const [name, r] of Object.entries(routes)) {
      if (r.auth === "public" || r.auth === "twoFactor" || ("body" in r && r.body)) continue;
      const query =
        name === "jobStatus" ? `?jobIds=${randomUUID()}` : name === "cidrDetails" ? "?cidr=10.0.0.0/24" : "";
      const shape = "params" in r ? (r.params as unknown as z.ZodObject).shape : {};
      // Path parameters that pass validation, so that authentication is what fails.
      const url =
        r.path.replace(
          /:(\w+)/g,
          (_, p: string) => ["1", randomUUID()].find((v) => shape[p]?.safeParse(v).success) ?? "x",
        ) + query;
      tested++;
      const res = await em.call(r.method, url, { as: null });
      const envelope = ErrorEnvelope.safeParse(res.body);
      if (res.status !== 401 || res.body.error !== "NOT_AUTHENTICATED" || !envelope.success) {
        wrong.push(`${name}: ${res.status} ${String(res.body.error)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(tested).toBeGreaterThan(40);
  });
});

describe("error catalogue ↔ spec", () => {
  it("specErrorStatus is exactly the spec's error table (code and HTTP status)", () => {
    const rows = table("## Errors", ["Code", "HTTP", "Meaning"]);
    const fromSpec = Object.fromEntries(rows.map(([code, http]) => [code, Number(http)]));
    expect(rows.length).toBeGreaterThanOrEqual(11);
    expect(fromSpec).toEqual(specErrorStatus);
  });

  it("the codes we chose for the statuses the spec leaves unnamed use statuses the spec lists", () => {
    const statuses = new Set(table("## Errors", ["Status", "Meaning"]).map(([status]) => Number(status)));
    for (const status of Object.values(errorStatus)) expect(statuses).toContain(status);
    for (const code of Object.keys(chosenErrorStatus)) expect(Object.keys(specErrorStatus)).not.toContain(code);
    expect(spec).toContain("Error code strings for 404, 409 and 501 are not shown.");
    expect(Object.values(chosenErrorStatus).sort()).toEqual([404, 409, 501]);
  });
});
