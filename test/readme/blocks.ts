import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import ts from "typescript";
import { parse as parseYaml } from "yaml";

/** A fenced code block of a markdown file. */
export interface CodeBlock {
  /** Language of the fence (`ts`, `sh`, ...), lower-case; "" when none. */
  lang: string;
  /** 1-based line of the block's first code line in the markdown file. */
  line: number;
  code: string;
}

/** A compile error of a block, placed on its line in the markdown file. */
export interface BlockError {
  /** 1-based line in the markdown file. */
  line: number;
  /** 1-based line where the block starts (its first code line). */
  blockLine: number;
  message: string;
}

/** Languages whose blocks are compiled; the others (sh, yaml, json, ...) are not. */
export const TYPESCRIPT = new Set(["ts", "typescript"]);

/** The fenced code blocks of a markdown text (``` or ~~~ fences, possibly indented), in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/.exec(lines[i]);
    if (open === null) continue;
    const [, indent, fence, lang] = open;
    const body: string[] = [];
    let j = i + 1;
    while (j < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[j])) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
      j++;
    }
    blocks.push({ lang: lang.toLowerCase(), line: i + 2, code: body.join("\n") });
    i = j;
  }
  return blocks;
}

/**
 * Where this package's entry points resolve for type checking: each `exports` entry of package.json mapped from its
 * compiled types (`./dist/sdk/index.d.ts`) to its source (`<root>/sdk/index.ts`), so blocks compile against the
 * sources without a build.
 */
export function packagePaths(root: string): Record<string, string[]> {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  const paths: Record<string, string[]> = {};
  for (const [entry, target] of Object.entries(manifest.exports)) {
    if (typeof target === "string" || target.types === undefined) continue;
    const source = target.types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts");
    paths[path.posix.join(manifest.name, entry)] = [path.join(root, source)];
  }
  // The plugin's SDK under the name `pulumi package add` installs it as (the schema's Node.js package name).
  const schema = JSON.parse(fs.readFileSync(path.join(root, "provider", "plugin", "schema.json"), "utf8")) as {
    language: { nodejs: { packageName: string } };
  };
  paths[schema.language.nodejs.packageName] = [path.join(root, "sdk", "plugin", "index.ts")];
  return paths;
}

/**
 * Type-checks the TypeScript blocks of a markdown text, each as a module of its own, against this package (its
 * sources, through {@link packagePaths}) and the repository's node_modules. Errors come back on their line of the
 * markdown file.
 */
export function typeCheckBlocks(markdown: string, root: string): BlockError[] {
  return typeCheckPages([{ file: "", markdown }], root).map(({ line, blockLine, message }) => ({
    line,
    blockLine,
    message,
  }));
}

/**
 * {@link typeCheckBlocks} for several markdown files in one compilation (the package is checked once, not once per
 * file): the blocks are written to a temporary directory (removed afterwards) whose node_modules links to the
 * repository's. Each error names its file (as given) and its line there; errors outside any block have line 0.
 */
export function typeCheckPages(
  pages: { file: string; markdown: string }[],
  root: string,
): (BlockError & { file: string })[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-blocks-"));
  try {
    fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
    const files = new Map<string, { file: string; block: CodeBlock }>();
    pages.forEach(({ file, markdown }, index) => {
      for (const block of codeBlocks(markdown).filter((b) => TYPESCRIPT.has(b.lang))) {
        const name = path.join(dir, `page-${index}-block-line-${block.line}.ts`);
        // `export {}` makes every block a module: blocks do not share declarations.
        fs.writeFileSync(name, `${block.code}\nexport {};\n`);
        files.set(name, { file, block });
      }
    });
    const options: ts.CompilerOptions = {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2023.d.ts"],
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      types: ["node"],
      typeRoots: [path.join(root, "node_modules", "@types")],
      esModuleInterop: true,
      skipLibCheck: true,
      resolveJsonModule: true,
      noFallthroughCasesInSwitch: true,
      paths: packagePaths(root),
    };
    const program = ts.createProgram([...files.keys()], options);
    const errors: (BlockError & { file: string })[] = [];
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const message = `TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")}`;
      const at = diagnostic.file === undefined ? undefined : files.get(path.resolve(diagnostic.file.fileName));
      if (at === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
        errors.push({ file: at?.file ?? "", line: 0, blockLine: 0, message });
        continue;
      }
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      errors.push({ file: at.file, line: at.block.line + line, blockLine: at.block.line, message });
    }
    return errors.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The hand-written documentation pages whose code blocks are checked, relative to the repository's root: README.md,
 * the registry's two pages (docs/_index.md, docs/installation-configuration.md) and every guide (docs/guides/*.md).
 * The reference pages (docs/reference) are generated and checked by test/tools/docs.test.ts.
 */
export function documentationPages(root: string): string[] {
  const guides = path.join(root, "docs", "guides");
  const pages = fs.existsSync(guides)
    ? fs
        .readdirSync(guides)
        .filter((f) => f.endsWith(".md"))
        .sort()
        .map((f) => `docs/guides/${f}`)
    : [];
  return ["README.md", "docs/_index.md", "docs/installation-configuration.md", ...pages];
}

/** A problem found in a YAML block, placed on its line in the markdown file. */
export interface YamlProblem {
  line: number;
  message: string;
}

interface SchemaSubset {
  config: { variables: Record<string, unknown> };
  resources: Record<string, { inputProperties?: Record<string, unknown> }>;
  functions: Record<string, { inputs?: { properties?: Record<string, unknown> }; outputs?: unknown }>;
}

/**
 * Checks the YAML blocks of a markdown text against the provider plugin's schema (provider/plugin/schema.json): each
 * block parses, every `type: cloudinfra:index:<Kind>` names a resource of the schema and gives only its inputs, every
 * `type: pulumi:providers:cloudinfra` only its settings, every `fn::invoke` a function of the schema with only its
 * arguments, and `return:` one of its outputs. Blocks may be parts of a `Pulumi.yaml` (a `plugins:` entry alone).
 */
export function checkYamlBlocks(markdown: string, root: string): YamlProblem[] {
  const schema = JSON.parse(
    fs.readFileSync(path.join(root, "provider", "plugin", "schema.json"), "utf8"),
  ) as SchemaSubset;
  const problems: YamlProblem[] = [];
  for (const block of codeBlocks(markdown).filter((b) => b.lang === "yaml" || b.lang === "yml")) {
    let document: unknown;
    try {
      document = parseYaml(block.code);
    } catch (error) {
      problems.push({ line: block.line, message: `does not parse: ${(error as Error).message}` });
      continue;
    }
    const lineOf = (needle: string) => {
      const at = block.code.split("\n").findIndex((l) => l.includes(needle));
      return block.line + Math.max(at, 0);
    };
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) return node.forEach(visit);
      if (node === null || typeof node !== "object") return;
      const record = node as Record<string, unknown>;
      const type = record.type;
      const properties = (record.properties ?? {}) as Record<string, unknown>;
      if (typeof type === "string" && type.startsWith("cloudinfra:")) {
        const resource = schema.resources[type];
        if (resource === undefined) problems.push({ line: lineOf(type), message: `no resource ${type} in the schema` });
        for (const key of Object.keys(properties)) {
          if (resource !== undefined && !(key in (resource.inputProperties ?? {}))) {
            problems.push({ line: lineOf(`${key}:`), message: `${type} has no input ${key}` });
          }
        }
      }
      if (type === "pulumi:providers:cloudinfra") {
        for (const key of Object.keys(properties)) {
          if (!(key in schema.config.variables)) {
            problems.push({ line: lineOf(`${key}:`), message: `the provider has no setting ${key}` });
          }
        }
      }
      const invoke = record["fn::invoke"] as Record<string, unknown> | undefined;
      if (invoke !== undefined && typeof invoke === "object") {
        const name = invoke.function as string;
        const fn = schema.functions[name];
        if (fn === undefined)
          problems.push({ line: lineOf(String(name)), message: `no function ${name} in the schema` });
        else {
          for (const key of Object.keys((invoke.arguments ?? {}) as Record<string, unknown>)) {
            if (!(key in (fn.inputs?.properties ?? {}))) {
              problems.push({ line: lineOf(`${key}:`), message: `${name} has no argument ${key}` });
            }
          }
          const outputs = fn.outputs as { properties?: Record<string, unknown> } | undefined;
          if (typeof invoke.return === "string" && !(invoke.return in (outputs?.properties ?? {}))) {
            problems.push({ line: lineOf("return:"), message: `${name} has no output ${invoke.return}` });
          }
        }
      }
      Object.values(record).forEach(visit);
    };
    visit(document);
  }
  return problems.sort((a, b) => a.line - b.line);
}
