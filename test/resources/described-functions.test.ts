/**
 * Descriptions name only functions that exist. Regression: VirtualMachine's `rescue` sent users to
 * `getRescueImages`, which no data function or SDK export ever was. Every `getXxx` / `getXxxOutput` a description
 * mentions (in backticks or not) must be a data function (provider/resources/lookups.ts `dataFunctions`) or an export of
 * the SDK (sdk/index.ts): in the kinds' declarations (their description, each input's description and output text, the
 * `.describe()` texts of their zod schemas at any depth), in every data function's description, arguments and result,
 * and in what is generated from them (the schema, the reference pages, the SDKs' doc comments).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import * as sdk from "../../sdk";
import { kinds } from "../../provider/resources";
import { dataFunctions } from "../../provider/resources/lookups";

const root = path.resolve(__dirname, "../..");
const known = new Set([...Object.keys(dataFunctions), ...Object.keys(sdk)]);
const functionName = /\bget[A-Z][A-Za-z0-9]*/g;

/** Every `.describe()` text of a zod schema and of the schemas inside it, at any depth. */
function describedTexts(schema: z.ZodType, seen = new Set<unknown>()): string[] {
  const texts: string[] = [];
  const visit = (value: unknown): void => {
    if (typeof value !== "object" || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) return value.forEach(visit);
    if ("_zod" in value) {
      const description = (value as z.ZodType).description;
      if (description !== undefined) texts.push(description);
      return visit((value as { _zod: { def: unknown } })._zod.def);
    }
    Object.values(value).forEach(visit);
  };
  visit(schema);
  return texts;
}

/** Texts by where they are said (for the failure message). */
function declaredTexts(): [string, string][] {
  const texts: [string, string][] = [];
  for (const [name, kind] of Object.entries(kinds)) {
    texts.push([name, kind.description]);
    for (const [input, field] of Object.entries(kind.inputs.fields)) {
      texts.push([`${name}.${input}`, field.description]);
      if (field.output !== undefined) texts.push([`${name}.${input} (output)`, field.output]);
      if (field.reportedShape) for (const t of describedTexts(field.reportedShape)) texts.push([`${name}.${input}`, t]);
    }
    for (const t of describedTexts(kind.inputs.schema)) texts.push([`${name} inputs`, t]);
    for (const t of describedTexts(kind.outputs)) texts.push([`${name} outputs`, t]);
  }
  for (const [name, fn] of Object.entries(dataFunctions)) {
    texts.push([name, fn.description]);
    for (const schema of [fn.args, fn.argsShape])
      for (const t of describedTexts(schema)) texts.push([`${name} args`, t]);
    for (const t of describedTexts(fn.result)) texts.push([`${name} result`, t]);
  }
  return texts;
}

function filesUnder(dir: string, ext: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : filesUnder(full, ext);
    return entry.name.endsWith(ext) ? [full] : [];
  });
}

/** The generated texts: the schema, the reference pages, and the SDKs' doc comments (their code calls helpers). */
function generatedTexts(): [string, string][] {
  const read = (file: string) => fs.readFileSync(file, "utf8");
  const comments = (text: string) =>
    text
      .split("\n")
      .filter((line) => /^\s*(\*|\/\*\*|\/\/)/.test(line))
      .join("\n");
  return [
    ["provider/plugin/schema.json", read(path.join(root, "provider", "plugin", "schema.json"))],
    ...filesUnder(path.join(root, "docs", "reference"), ".md").map((file): [string, string] => [file, read(file)]),
    ...filesUnder(path.join(root, "sdk", "plugin"), ".ts").map((file): [string, string] => [
      file,
      comments(read(file)),
    ]),
  ].map(([file, text]) => [path.isAbsolute(file) ? path.relative(root, file) : file, text]);
}

const unknownNames = (texts: [string, string][]) =>
  texts.flatMap(([where, text]) =>
    [...new Set(text.match(functionName) ?? [])].filter((name) => !known.has(name)).map((name) => `${where}: ${name}`),
  );

describe("the functions descriptions name exist (a data function or an SDK export)", () => {
  it("in the kinds' and data functions' declarations", () => {
    const texts = declaredTexts();
    // The walk reaches the nested descriptions (VirtualMachine's `networkInterfaces` items, a list's filters).
    expect(texts.length).toBeGreaterThan(200);
    expect(unknownNames(texts)).toEqual([]);
  });

  it("in the schema, the reference pages and the SDKs (regenerate with npm run schema, docs, plugin-sdk)", () => {
    expect(unknownNames(generatedTexts())).toEqual([]);
  });

  it("finds a name in backticks and one said plainly, with or without Output", () => {
    const texts: [string, string][] = [["here", "see `getRescueImages` or getNetworkOutput, or getNowhereOutput"]];
    expect(unknownNames(texts)).toEqual(["here: getRescueImages", "here: getNowhereOutput"]);
  });
});
