/**
 * The reference pages (docs/reference, `npm run docs`): committed as generated from the committed schema, every
 * property of the schema on its page, object types rendered with their properties, and the examples valid: the
 * TypeScript ones type-check against the plugin's SDK, the YAML ones name only inputs the schema declares.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { kinds } from "../../provider/resources";
import {
  importIds,
  readSchema,
  referenceDirectory,
  referencePages,
  typeText,
  type PackageSchema,
} from "../../tools/docs";
import { codeBlocks, typeCheckBlocks } from "../readme/blocks";

const root = path.resolve(__dirname, "../..");
const schema = readSchema(root);
const pages = await referencePages(schema, root);
const nameOf = (token: string) => token.split(":").pop()!;

describe("reference docs generated from the schema", () => {
  it("are committed as npm run docs makes them from the committed schema (run `npm run docs` when this fails)", () => {
    const committed = fs.readdirSync(referenceDirectory(root)).sort();
    expect(committed).toEqual([...pages.keys()].sort());
    for (const [file, text] of pages) {
      expect(fs.readFileSync(path.join(referenceDirectory(root), file), "utf8"), `docs/reference/${file}`).toBe(text);
    }
  });

  it("have a page per resource and per function, each listed in the index, and an import id for every kind", () => {
    const index = pages.get("README.md")!;
    const tokens = [...Object.keys(schema.resources ?? {}), ...Object.keys(schema.functions ?? {})];
    expect(tokens.length).toBeGreaterThan(0);
    for (const token of tokens) expect(index).toContain(`\`${token}\``);
    expect(pages.size).toBe(tokens.length + 1);
    expect(Object.keys(importIds).sort()).toEqual(Object.keys(kinds).sort());
  });

  it("list every input and output of every resource with its type, how a change applies and whether it is secret", () => {
    for (const [token, resource] of Object.entries(schema.resources ?? {})) {
      const page = [...pages.values()].find((text) => text.startsWith(`# ${nameOf(token)}\n`))!;
      const row = (section: string, name: string) => {
        const body = page.slice(page.indexOf(`## ${section}`));
        return body
          .split("\n")
          .find((line) => line.startsWith(`| \`${name}\` `))
          ?.split(/(?<!\\)\|/)
          .map((c) => c.trim());
      };
      for (const [name, input] of Object.entries(resource.inputProperties ?? {})) {
        const cells = row("Inputs", name);
        expect(cells, `${token} input ${name}`).toBeDefined();
        expect(cells![2]).toBe(typeText(input).replace(/\|/g, "\\|"));
        expect(cells![3]).toBe(resource.requiredInputs?.includes(name) ? "required" : "optional");
        expect(cells![4]).toBe(input.replaceOnChanges ? "replaces" : "in place");
        expect(cells![5]).toBe(input.secret ? "secret" : "");
      }
      for (const [name, output] of Object.entries(resource.properties ?? {})) {
        const cells = row("Outputs", name);
        expect(cells, `${token} output ${name}`).toBeDefined();
        const input = resource.inputProperties?.[name];
        expect(cells![3]).toBe(
          input === undefined ? "output only" : `input, ${input.replaceOnChanges ? "replaces" : "in place"}`,
        );
        expect(cells![4]).toBe(output.secret ? "secret" : "");
      }
      expect(page).toContain(`pulumi import ${token} `);
    }
  });

  it("render object types ($ref to #/types/...) with their properties, nested ones too, and refuse a dangling $ref", async () => {
    const fixture: PackageSchema = {
      name: "cloudinfra",
      resources: {
        "cloudinfra:index:Network": {
          description: "A network.",
          inputProperties: {
            name: { type: "string", description: "Name." },
            routes: {
              type: "array",
              items: { $ref: "#/types/cloudinfra:index:NetworkRoute" },
              description: "Static routes.",
              replaceOnChanges: true,
            },
          },
          requiredInputs: ["name"],
          properties: {
            name: { type: "string" },
            pool: { $ref: "#/types/cloudinfra:index:NetworkPool", description: "The pool." },
            token: { type: "string", secret: true },
          },
        },
      },
      types: {
        "cloudinfra:index:NetworkRoute": {
          type: "object",
          description: "One static route.",
          properties: { via: { $ref: "#/types/cloudinfra:index:NetworkHop", description: "Next hop." } },
          required: ["via"],
        },
        "cloudinfra:index:NetworkHop": {
          type: "object",
          description: "A next hop.",
          properties: { address: { type: "string", description: "Its address." } },
        },
        "cloudinfra:index:NetworkPool": {
          type: "object",
          description: "A pool.",
          properties: { start: { type: "string", description: "First address." } },
        },
        "cloudinfra:index:Unused": { type: "object", properties: { x: { type: "string" } } },
      },
    };
    const page = (await referencePages(fixture, root)).get("network.md")!;
    expect(page).toMatch(/\| `routes` +\| array of \[NetworkRoute\]\(#networkroute\) +\| optional \| replaces/);
    expect(page).toMatch(/\| `pool` +\| \[NetworkPool\]\(#networkpool\) +\| output only/);
    expect(page).toMatch(/\| `token` +\| string +\| output only +\| secret/);
    for (const type of ["NetworkRoute", "NetworkHop", "NetworkPool"]) expect(page).toContain(`### ${type}\n`);
    expect(page).toMatch(/\| `via` +\| \[NetworkHop\]\(#networkhop\) +\| required \| Next hop\. +\|/);
    expect(page).toMatch(/\| `address` +\| string +\| optional \| Its address\. +\|/);
    expect(page).not.toContain("Unused");
    // the examples fill object types in with their properties
    expect(page).toContain('routes: [\n    {\n      via: {\n        address: "string",');
    expect(page).toContain("      routes:\n        - via:\n            address: string");

    const dangling = structuredClone(fixture);
    delete dangling.types!["cloudinfra:index:NetworkHop"];
    await expect(referencePages(dangling, root)).rejects.toThrow(/#\/types\/cloudinfra:index:NetworkHop/);
    const unknownKind = structuredClone(fixture);
    unknownKind.resources = { "cloudinfra:index:Router": fixture.resources!["cloudinfra:index:Network"]! };
    await expect(referencePages(unknownKind, root)).rejects.toThrow(/Router: no import id format/);
  });

  it("have TypeScript examples that type-check against the plugin's SDK", () => {
    // All pages in one program (one type-check), each error traced back to its page and line.
    const starts: [string, number][] = [];
    let line = 1;
    for (const [file, text] of pages) {
      starts.push([file, line]);
      line += text.split("\n").length;
    }
    const markdown = [...pages.values()].join("\n");
    expect(codeBlocks(markdown).filter((b) => b.lang === "ts").length).toBe(pages.size - 1);
    const errors = typeCheckBlocks(markdown, root).map((e) => {
      const [file, start] = starts.filter(([, at]) => at <= e.line).pop()!;
      return `docs/reference/${file}:${e.line - start + 1}: ${e.message}`;
    });
    expect(errors).toEqual([]);
  });

  it("have YAML examples naming a resource type or function of the schema and only its declared inputs", () => {
    for (const [file, text] of pages) {
      for (const block of codeBlocks(text).filter((b) => b.lang === "yaml")) {
        const program = parse(block.code) as {
          resources?: Record<string, { type: string; properties?: Record<string, unknown> }>;
          variables?: Record<string, { "fn::invoke": { function: string; arguments?: Record<string, unknown> } }>;
        };
        for (const resource of Object.values(program.resources ?? {})) {
          const spec = schema.resources?.[resource.type];
          expect(spec, `${file}: ${resource.type}`).toBeDefined();
          expect(Object.keys(resource.properties ?? {})).toEqual(Object.keys(spec!.inputProperties ?? {}));
        }
        for (const variable of Object.values(program.variables ?? {})) {
          const spec = schema.functions?.[variable["fn::invoke"].function];
          expect(spec, `${file}: ${variable["fn::invoke"].function}`).toBeDefined();
          // Every argument declared, every required one given (a lookup's example takes its name, not its id).
          const given = Object.keys(variable["fn::invoke"].arguments ?? {});
          expect(given.filter((k) => !(k in (spec!.inputs?.properties ?? {})))).toEqual([]);
          expect((spec!.inputs?.required ?? []).filter((k) => !given.includes(k))).toEqual([]);
        }
      }
    }
  });
});
