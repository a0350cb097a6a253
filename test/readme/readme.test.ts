import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readmeUnreportedInputs, unreportedInputs } from "../../tools/docs";
import { codeBlocks, TYPESCRIPT, typeCheckBlocks, type BlockError } from "./blocks";

const root = path.resolve(__dirname, "../..");
const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");

const report = (file: string, errors: BlockError[]) =>
  errors.map((e) => `${file}:${e.line} (block starting at line ${e.blockLine}): ${e.message}`).join("\n");

describe("README's table of the inputs the API does not report back", () => {
  it("is what the kinds' declarations say (run `npm run docs` when this fails)", () => {
    expect(readmeUnreportedInputs(readme)).toEqual(unreportedInputs());
    expect(unreportedInputs()).toContainEqual([
      "VirtualMachine",
      "`imageId`",
      "only where the API sends an undocumented field",
    ]);
  });
});

describe("README code blocks", () => {
  it("every TypeScript block type-checks against the package", () => {
    const errors = typeCheckBlocks(readme, root);
    expect(report("README.md", errors), "README.md blocks that do not compile").toBe("");
  });

  it("the README shows TypeScript for every resource kind and data function, and marks every block's language", () => {
    const blocks = codeBlocks(readme);
    const typescript = blocks.filter((b) => TYPESCRIPT.has(b.lang)).map((b) => b.code);
    for (const name of [
      "Network",
      "VirtualMachine",
      "GpuVirtualMachine",
      "Volume",
      "VolumeAttachment",
      "ResourceGroup",
      "User",
      "ApiKey",
    ]) {
      expect(
        typescript.some((code) => code.includes(`new cloudinfra.${name}(`)),
        name,
      ).toBe(true);
    }
    const lookups = ["Network", "Volume", "VirtualMachine", "GpuVirtualMachine", "ResourceGroup", "User"];
    for (const name of [
      "getGpuInventory",
      "getVolumeSizes",
      "getCaller",
      ...lookups.flatMap((kind) => [`get${kind}`, `get${kind}s`]),
    ]) {
      expect(
        typescript.some((code) => code.includes(name)),
        name,
      ).toBe(true);
    }
    // A block without a language would be neither compiled nor known not to be TypeScript.
    expect(blocks.filter((b) => b.lang === "").map((b) => b.line)).toEqual([]);
  });
});

describe("the block checker", () => {
  const markdown = [
    "# Title", // 1
    "", // 2
    "```sh", // 3
    "npm ci && not typescript at all", // 4
    "```", // 5
    "", // 6
    "```ts", // 7
    'import * as cloudinfra from "@cloudinfra/pulumi";', // 8
    "", // 9
    'new cloudinfra.Volume("v", { name: "v", datacenterId: "x", volumeTypeId: 1, sizeGb: "20" });', // 10
    "```", // 11
    "", // 12
    "```typescript", // 13
    "const same = 1;", // 14
    "export const ok: number = same;", // 15
    "```", // 16
    "", // 17
    "```ts", // 18
    "const same = 2;", // 19
    "unknownName();", // 20
    "```", // 21
  ].join("\n");

  it("finds each fence's language and first code line", () => {
    expect(codeBlocks(markdown).map((b) => [b.lang, b.line])).toEqual([
      ["sh", 4],
      ["ts", 8],
      ["typescript", 14],
      ["ts", 19],
    ]);
  });

  it("reports a type error on its README line, compiles each block apart, and leaves shell blocks alone", () => {
    const errors = typeCheckBlocks(markdown, root);
    expect(errors.map((e) => [e.line, e.blockLine])).toEqual([
      [10, 8],
      [20, 19],
    ]);
    expect(errors[0].message).toContain("not assignable to type 'Input<number>'");
    expect(errors[1].message).toContain("unknownName");
  });
});
