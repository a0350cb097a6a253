/**
 * The documentation pages a user reads (README.md, docs/_index.md, docs/installation-configuration.md and
 * docs/guides/*.md): every code block is checked by its language (TypeScript type-checked against the package, YAML
 * against the plugin's schema, Go compiled against the Go SDK, the rest explained in {@link UNCHECKED}), the
 * generated tables are what their sources say, the README stays a front door, and the registry's pages carry the
 * front matter the Pulumi registry reads.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { readmeUnreportedInputs, unreportedInputs } from "../../tools/docs";
import { readmeTableRows, settingsTable } from "../../tools/readme-tables";
import { checkYamlBlocks, codeBlocks, documentationPages, TYPESCRIPT, typeCheckBlocks, typeCheckPages } from "./blocks";

const root = path.resolve(__dirname, "../..");
const read = (page: string) => fs.readFileSync(path.join(root, page), "utf8");
const pages = documentationPages(root);
const readme = read("README.md");

/**
 * The languages whose blocks no test runs, and why; a block of any other language than these and the checked ones
 * (TypeScript, YAML, Go) fails the test below.
 */
const UNCHECKED: Record<string, string> = {
  sh: "shell commands run against a user's own API, project or checkout; the README's first block is run by test/e2e/demo.test.ts (`npm run demo`) and CI (`npm test`), the templates' by test/e2e/templates.test.ts",
  text: "what the demo or the provider prints: output, not code",
  json: "a file given to `pulumi import --file`: its format is Pulumi's, read by the CLI; test/e2e/plugin-sdk-package.test.ts imports with one",
};

describe("README.md, the front door", () => {
  it("is at most 250 lines: the rest lives in docs/", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
  });

  it("opens with the two commands that work on a fresh machine, then says what it is, with a short example", () => {
    const [first] = codeBlocks(readme);
    expect(first?.lang).toBe("sh");
    expect(first?.code.split("\n").map((l) => l.replace(/\s+#.*$/, ""))).toEqual([
      "npm ci && npm run demo",
      "npm ci && npm test",
    ]);
    expect(readme).toMatch(/^## What it is$/m);
    expect(codeBlocks(readme).some((b) => TYPESCRIPT.has(b.lang) && b.code.includes("new cloudinfra.Network("))).toBe(
      true,
    );
  });

  it("links the registry's pages and every guide", () => {
    for (const page of pages.filter((p) => p !== "README.md")) expect(readme, page).toContain(`](${page})`);
  });
});

describe("the registry's pages have the front matter the Pulumi registry reads", () => {
  it.each(["docs/_index.md", "docs/installation-configuration.md"])("%s", (page) => {
    const text = read(page);
    const front = /^---\n([\s\S]*?)\n---\n/.exec(text)?.[1];
    expect(front, `${page} starts with front matter`).toBeDefined();
    expect(front).toMatch(/^title: \S.*$/m);
    expect(front).toMatch(/^meta_desc: \S.*$/m);
    expect(front).toMatch(/^layout: package$/m);
  });

  it("docs/_index.md has the example in TypeScript, YAML and Go", () => {
    expect(new Set(codeBlocks(read("docs/_index.md")).map((b) => b.lang))).toEqual(new Set(["ts", "yaml", "go", "sh"]));
  });
});

describe("the generated tables are what their sources say (run `npm run docs` when this fails)", () => {
  it("the inputs the API does not report back (docs/guides/resources.md), from the kinds' declarations", () => {
    expect(readmeUnreportedInputs(read("docs/guides/resources.md"))).toEqual(unreportedInputs());
    expect(unreportedInputs()).toContainEqual([
      "VirtualMachine",
      "`imageId`",
      "only where the API sends an undocumented field",
    ]);
  });

  it("the settings (docs/installation-configuration.md), from provider/resources/settings.ts", () => {
    const rows = readmeTableRows(read(settingsTable.file), settingsTable);
    expect(rows).toEqual(settingsTable.rows());
    expect(rows).toContainEqual([
      "`cloudinfra:apiKey`",
      "`CLOUDINFRA_API_KEY`",
      "yes",
      "none",
      "API key (`svc_...`): one of the three ways to authenticate.",
    ]);
    expect(rows.find(([key]) => key === "`cloudinfra:jobTimeoutMs`")?.[3]).toBe("`1800000` (30 min); at least 1000");
    expect(rows.find(([key]) => key === "`cloudinfra:maxRetries`")?.[3]).toBe("`3`; 0 to 10");
  });
});

describe("the code blocks of the documentation pages", () => {
  it("every TypeScript block type-checks against the package", () => {
    const errors = typeCheckPages(
      pages.map((file) => ({ file, markdown: read(file) })),
      root,
    );
    expect(
      errors.map((e) => `${e.file}:${e.line} (block starting at line ${e.blockLine}): ${e.message}`).join("\n"),
      "blocks that do not compile",
    ).toBe("");
  }, 300_000); // one compilation of every page's blocks: 81 s measured on the loaded 2-core machine

  it.each(pages)("%s: every YAML block parses and names what the plugin's schema has", (page) => {
    const problems = checkYamlBlocks(read(page), root).map((p) => `${page}:${p.line}: ${p.message}`);
    expect(problems).toEqual([]);
  });

  it("every block names its language, one that is checked or explained", () => {
    const checked = new Set([...TYPESCRIPT, "yaml", "go"]);
    const unexplained = pages.flatMap((page) =>
      codeBlocks(read(page))
        .filter((b) => !checked.has(b.lang) && !(b.lang in UNCHECKED))
        .map((b) => `${page}:${b.line} (\`${b.lang}\`)`),
    );
    expect(unexplained).toEqual([]);
  });

  it("the pages show TypeScript for every resource kind and data function", () => {
    const typescript = pages.flatMap((page) =>
      codeBlocks(read(page))
        .filter((b) => TYPESCRIPT.has(b.lang))
        .map((b) => b.code),
    );
    for (const name of [
      "Network",
      "VirtualMachine",
      "GpuVirtualMachine",
      "Volume",
      "VolumeAttachment",
      "ResourceGroup",
      "ResourceGroupMember",
      "UserRole",
      "User",
      "ApiKey",
    ]) {
      expect(
        typescript.some((code) => code.includes(`new cloudinfra.${name}(`)),
        name,
      ).toBe(true);
    }
    const lookups = ["Network", "Volume", "VirtualMachine", "GpuVirtualMachine", "ResourceGroup", "User", "ApiKey"];
    for (const name of [
      "getGpuInventory",
      "getVolumeSizes",
      "getCaller",
      "getNetworkVirtualMachines",
      "getAttachableVirtualMachines",
      "getVirtualMachineMetrics",
      "getEntityUsage",
      "getUsageMonths",
      ...lookups.flatMap((kind) => [`get${kind}`, `get${kind}s`]),
    ]) {
      expect(
        typescript.some((code) => code.includes(name)),
        name,
      ).toBe(true);
    }
  });
});

describe("the block checkers", () => {
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
    "", // 22
    "```yaml", // 23
    "resources:", // 24
    "  net:", // 25
    "    type: cloudinfra:index:Network", // 26
    "    properties:", // 27
    "      name: app", // 28
    "      colour: blue", // 29
    "  other:", // 30
    "    type: cloudinfra:index:Nothing", // 31
    "variables:", // 32
    "  sizes:", // 33
    "    fn::invoke:", // 34
    "      function: cloudinfra:index:getVolumeSizes", // 35
    "      arguments:", // 36
    "        datacenter: x", // 37
    "      return: sizes", // 38
    "```", // 39
    "", // 40
    "```yaml", // 41
    "a: [unclosed", // 42
    "```", // 43
  ].join("\n");

  it("finds each fence's language and first code line", () => {
    expect(codeBlocks(markdown).map((b) => [b.lang, b.line])).toEqual([
      ["sh", 4],
      ["ts", 8],
      ["typescript", 14],
      ["ts", 19],
      ["yaml", 24],
      ["yaml", 42],
    ]);
  });

  it("reports a type error on its line, compiles each block apart, and leaves shell blocks alone", () => {
    const errors = typeCheckBlocks(markdown, root);
    expect(errors.map((e) => [e.line, e.blockLine])).toEqual([
      [10, 8],
      [20, 19],
    ]);
    expect(errors[0]!.message).toContain("not assignable to type 'Input<number>'");
    expect(errors[1]!.message).toContain("unknownName");
  });

  it("reports a YAML block's unknown input, resource, argument and output on their lines, and one that does not parse", () => {
    const problems = checkYamlBlocks(markdown, root);
    expect(problems.map((p) => p.line)).toEqual([29, 31, 37, 38, 42]);
    expect(problems.map((p) => p.message)).toEqual([
      "cloudinfra:index:Network has no input colour",
      "no resource cloudinfra:index:Nothing in the schema",
      "cloudinfra:index:getVolumeSizes has no argument datacenter",
      "cloudinfra:index:getVolumeSizes has no output sizes",
      expect.stringContaining("does not parse"),
    ]);
  });
});
