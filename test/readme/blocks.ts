import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import ts from "typescript";

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
 * sources, through {@link packagePaths}) and the repository's node_modules. The blocks are written to a temporary
 * directory (removed afterwards) whose node_modules links to the repository's. Errors come back on their line of the
 * markdown file.
 */
export function typeCheckBlocks(markdown: string, root: string): BlockError[] {
  const blocks = codeBlocks(markdown).filter((b) => TYPESCRIPT.has(b.lang));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "readme-blocks-"));
  try {
    fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir");
    const files = new Map<string, CodeBlock>();
    for (const block of blocks) {
      const file = path.join(dir, `block-line-${block.line}.ts`);
      // `export {}` makes every block a module: blocks do not share declarations.
      fs.writeFileSync(file, `${block.code}\nexport {};\n`);
      files.set(file, block);
    }
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
    const errors: BlockError[] = [];
    for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
      const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
      const block = diagnostic.file === undefined ? undefined : files.get(path.resolve(diagnostic.file.fileName));
      if (block === undefined || diagnostic.file === undefined || diagnostic.start === undefined) {
        errors.push({ line: 0, blockLine: 0, message: `TS${diagnostic.code}: ${message}` });
        continue;
      }
      const at = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      errors.push({ line: block.line + at.line, blockLine: block.line, message: `TS${diagnostic.code}: ${message}` });
    }
    return errors.sort((a, b) => a.line - b.line);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
