/**
 * `npm run sdk-docs` (run by `npm run docs` too): writes the JSDoc of the dynamic SDK's resource files (sdk/<kind>.ts)
 * from the kinds' declarations: the class's (the kind's description), each argument's (the members of `<Kind>Args`
 * and of the interfaces it is made of: each input's description), each output's (`declare readonly`: the output's
 * description), and those of nested members (described on the zod schemas). Everything else in those files is written
 * by hand, their types checked against the declarations by test/resources/declaration.test.ts. Likewise the data
 * functions' file (sdk/lookups.ts) from provider/resources/lookups.ts: each function's doc with an example, its
 * arguments' and results' members. A test fails when a file's docs are not what this writes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { z } from "zod";
import { repositoryRoot } from "./pulumi-cli";
import { kinds, type KindName } from "../provider/resources";
import type { ResourceKind } from "../provider/resources/kind";
import { dataFunctions, type DataFunction } from "../provider/resources/lookups";
import { outputDescriptions, sdkFile } from "./descriptions";

/** The repository's Prettier width: a doc that fits in it is one line. */
const width = 120;
/** A longer doc is wrapped a little within it (as the SDK's hand-written docs were). */
const wrapWidth = 118;

/**
 * A JSDoc comment of `text` starting at column `indent`: one line when it fits, else wrapped; with an `example` (a
 * line of code, never wrapped) after it.
 */
export function jsDocComment(text: string, indent: number, example?: string): string {
  const single = `/** ${text} */`;
  if (example === undefined && indent + single.length <= width) return single;
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && indent + 3 + line.length + 1 + word.length > wrapWidth) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  if (example !== undefined) lines.push("", "@example", example);
  const pad = " ".repeat(indent);
  return ["/**", ...lines.map((l) => (l === "" ? `${pad} *` : `${pad} * ${l}`)), `${pad} */`].join("\n");
}

/** The object a value holds, through optional, nullable, default and arrays (the zod object that describes it). */
function objectOf(schema: z.ZodType | undefined): z.ZodObject | undefined {
  if (schema === undefined) return undefined;
  if (schema instanceof z.ZodObject) return schema;
  const def = schema.def as { innerType?: z.ZodType; element?: z.ZodType };
  return objectOf(def.innerType ?? def.element);
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

type Declaration = ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration;

/** The name of a member (a property), if it has one. */
const nameOf = (member: ts.Node) => {
  const name = (member as { name?: ts.PropertyName }).name;
  return name && (ts.isIdentifier(name) || ts.isStringLiteral(name)) ? name.text : undefined;
};

/** The properties of an interface, a class or a type written in place. */
const membersOf = (node: ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeLiteralNode) =>
  (node.members as ts.NodeArray<ts.Node>).filter(
    (m): m is ts.PropertySignature | ts.PropertyDeclaration => ts.isPropertySignature(m) || ts.isPropertyDeclaration(m),
  );

/** A source file whose docs are rewritten: its top-level declarations by name, `document`, then `text()`. */
function docEditor(name: string, source: string) {
  const file = ts.createSourceFile(name, source, ts.ScriptTarget.ES2022, true);
  const local = new Map<string, Declaration>();
  for (const statement of file.statements) {
    if (
      (ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isClassDeclaration(statement)) &&
      statement.name
    ) {
      local.set(statement.name.text, statement);
    }
  }
  const edits: Edit[] = [];
  return {
    file,
    local,
    /** Writes `text` (and an example) as the node's doc: in place of its JSDoc, or above it. */
    document(node: ts.Node, text: string, example?: string) {
      const start = node.getStart(file);
      const indent = start - file.text.lastIndexOf("\n", start - 1) - 1;
      const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
      const last = docs?.[docs.length - 1];
      const comment = jsDocComment(text, indent, example);
      if (last) edits.push({ start: last.getStart(file), end: last.end, text: comment });
      else edits.push({ start, end: start, text: `${comment}\n${" ".repeat(indent)}` });
    },
    /** The source with every doc written. */
    text() {
      let text = source;
      for (const edit of edits.sort((a, b) => b.start - a.start)) {
        text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
      }
      return text;
    },
  };
}

/**
 * The SDK file's text (`source`) with its docs written from the kind's declaration. Throws, naming it, on a member of
 * the arguments or the class that the declaration does not describe.
 */
export function withDocs(source: string, kind: ResourceKind): string {
  const { file, local, document, text } = docEditor(sdkFile(kind.name), source);

  /**
   * The nested objects a member's type holds (through Input, Output, arrays and unions): a type written in place has
   * the docs of the members it documents written; an interface of this file, its own doc and every member's.
   */
  const seen = new Set<string>();
  const nested = (type: ts.TypeNode | undefined, object: z.ZodObject): void => {
    if (type === undefined) return;
    if (ts.isParenthesizedTypeNode(type)) return nested(type.type, object);
    if (ts.isArrayTypeNode(type)) return nested(type.elementType, object);
    if (ts.isUnionTypeNode(type) || ts.isIntersectionTypeNode(type)) {
      for (const part of type.types) nested(part, object);
      return;
    }
    if (ts.isTypeLiteralNode(type)) {
      for (const member of membersOf(type)) {
        const key = nameOf(member);
        const docs = (member as { jsDoc?: ts.JSDoc[] }).jsDoc;
        if (key === undefined || !docs?.length) continue;
        document(member, described(object, key));
        nested(member.type, objectOf(object.shape[key] as z.ZodType) ?? object);
      }
      return;
    }
    if (ts.isTypeReferenceNode(type)) {
      type.typeArguments?.forEach((argument) => nested(argument, object));
      const declaration = local.get(type.typeName.getText(file));
      if (declaration && ts.isInterfaceDeclaration(declaration) && !seen.has(declaration.name.text)) {
        seen.add(declaration.name.text);
        if (object.description === undefined) {
          throw new Error(`${kind.name}: the object of ${declaration.name.text} has no description (.describe())`);
        }
        document(declaration, object.description);
        for (const member of membersOf(declaration)) {
          const key = nameOf(member);
          if (key === undefined) continue;
          document(member, described(object, key));
        }
      }
    }
  };
  const described = (object: z.ZodObject, key: string) => {
    const description = (object.shape[key] as z.ZodType | undefined)?.description;
    if (description === undefined) {
      throw new Error(`${kind.name}: the nested member ${key} has no description (.describe() on its zod schema)`);
    }
    return description;
  };

  /** The members of an interface the arguments are made of: each an input, documented as the declaration says. */
  const argumentsOf = (declaration: ts.InterfaceDeclaration) => {
    for (const member of membersOf(declaration)) {
      const key = nameOf(member);
      // `never` only forbids a member beside another (an image by name or by id): its doc says so, by hand.
      if (key === undefined || member.type?.kind === ts.SyntaxKind.NeverKeyword) continue;
      const field = kind.inputs.fields[key];
      if (field === undefined) throw new Error(`${kind.name}: the argument ${key} is not an input of the declaration`);
      document(member, field.description);
      const object = objectOf(kind.inputs.schema.shape[key] as z.ZodType | undefined);
      if (object) nested(member.type, object);
    }
  };
  const args = local.get(`${kind.name}Args`);
  if (args === undefined) throw new Error(`sdk/${sdkFile(kind.name)} declares no ${kind.name}Args`);
  const parts = (node: ts.Node): void => {
    if (ts.isInterfaceDeclaration(node)) return argumentsOf(node);
    if (ts.isTypeAliasDeclaration(node)) return parts(node.type);
    if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node)) return node.types.forEach(parts);
    if (ts.isParenthesizedTypeNode(node)) return parts(node.type);
    if (ts.isTypeReferenceNode(node)) {
      const declaration = local.get(node.typeName.getText(file));
      if (declaration) parts(declaration);
    }
  };
  parts(args);

  const resource = local.get(kind.name);
  if (resource === undefined || !ts.isClassDeclaration(resource)) {
    throw new Error(`sdk/${sdkFile(kind.name)} declares no class ${kind.name}`);
  }
  document(resource, kind.description);
  const outputs = outputDescriptions(kind);
  for (const member of membersOf(resource)) {
    const key = nameOf(member);
    if (key === undefined) continue;
    const output = outputs.get(key);
    if (output === undefined) throw new Error(`${kind.name}: the output ${key} is not an output of the declaration`);
    document(member, output.description);
    const value = (kind.outputs.shape[key] ?? kind.inputs.schema.shape[key]) as z.ZodType | undefined;
    const object = output.reportedShape ?? objectOf(value);
    if (object) nested(member.type, object);
  }

  return text();
}

/** The type a parameter or a return type names, through `InputsOf<...>`, `Promise<...>` and `pulumi.Output<...>`. */
function namedType(type: ts.TypeNode | undefined): string | undefined {
  if (type === undefined || !ts.isTypeReferenceNode(type)) return undefined;
  const name = type.typeName.getText();
  if (["InputsOf", "Promise", "pulumi.Output"].includes(name)) return namedType(type.typeArguments?.[0]);
  return name;
}

/** The one line of code a data function's doc shows: its call with an argument of the kind it takes. */
function exampleOf(name: string, fn: DataFunction): string {
  const list = Object.keys(fn.result.shape).filter((key) => key !== "count");
  if ("count" in fn.result.shape) return `const { ${list.join(", ")}, count } = await ${name}({});`;
  const args = fn.argsShape.shape;
  if ("email" in args) return `const found = await ${name}({ email: "someone@example.com" });`;
  if ("name" in args && fn.describes !== undefined) {
    const kebab = fn.describes.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
    return `const found = await ${name}({ name: "my-${kebab}" });`;
  }
  return `const ${name.charAt(3).toLowerCase()}${name.slice(4)} = await ${name}();`;
}

/**
 * The dynamic SDK's data functions file (sdk/lookups.ts, `source`) with its docs written from the data functions'
 * declarations (provider/resources/lookups.ts): each function's (its description and an example), its arguments'
 * members (and the shared `EntityArgs`), its result's members (and those of list items with their own interface).
 * A function `<name>Output` keeps its hand-written line (it points at `<name>`). Throws, naming it, on a member the
 * declaration does not describe.
 */
export function withLookupDocs(
  source: string,
  functions: Readonly<Record<string, DataFunction>> = dataFunctions,
): string {
  const { file, local, document, text } = docEditor("lookups.ts", source);
  const described = (object: z.ZodObject, key: string, where: string) => {
    const description = (object.shape[key] as z.ZodType | undefined)?.description;
    if (description === undefined) throw new Error(`${where}: ${key} is not described by the declaration`);
    return description;
  };
  const documented = new Set<ts.Node>();
  const members = (node: ts.Node | undefined, object: z.ZodObject, where: string): void => {
    if (node === undefined || documented.has(node)) return;
    documented.add(node);
    if (ts.isTypeAliasDeclaration(node)) return members(node.type, object, where);
    if (ts.isIntersectionTypeNode(node)) return node.types.forEach((part) => members(part, object, where));
    if (ts.isTypeReferenceNode(node)) {
      // A generic's (`OutputsOf<Kind>`: the resource class's outputs) are documented where it is declared.
      if (node.typeArguments?.length) return;
      return members(local.get(node.typeName.getText(file)), object, where);
    }
    if (!ts.isInterfaceDeclaration(node) && !ts.isTypeLiteralNode(node)) return;
    if (ts.isInterfaceDeclaration(node)) {
      for (const base of node.heritageClauses?.flatMap((h) => [...h.types]) ?? []) {
        members(local.get(base.expression.getText(file)), object, where);
      }
    }
    for (const member of membersOf(node)) {
      const key = nameOf(member);
      if (key === undefined) continue;
      document(member, described(object, key, where));
      // A list of items of their own interface (a VM list's): its members from the items' schema.
      const items = (object.shape[key] as z.ZodType).def as { element?: z.ZodType };
      const element = member.type && ts.isArrayTypeNode(member.type) ? member.type.elementType : undefined;
      if (items.element instanceof z.ZodObject && element && ts.isTypeReferenceNode(element)) {
        members(local.get(element.typeName.getText(file)), items.element, where);
      }
    }
  };
  for (const statement of file.statements) {
    if (!ts.isFunctionDeclaration(statement) || statement.name === undefined) continue;
    const name = statement.name.text;
    const fn = functions[name];
    if (fn === undefined) continue;
    document(statement, fn.description, exampleOf(name, fn));
    members(local.get(namedType(statement.parameters[0]?.type) ?? ""), fn.argsShape, `${name}'s arguments`);
    members(local.get(namedType(statement.type) ?? ""), fn.result, `${name}'s result`);
  }
  return text();
}

/** sdk/lookups.ts as this writes it. */
export function lookupDocsText(root: string): string {
  return withLookupDocs(fs.readFileSync(path.join(root, "sdk", "lookups.ts"), "utf8"));
}

/** The SDK file of a kind as this writes it. */
export function sdkDocsText(root: string, kind: KindName): string {
  return withDocs(fs.readFileSync(path.join(root, "sdk", sdkFile(kind)), "utf8"), kinds[kind]);
}

function main(): void {
  const root = repositoryRoot();
  const files: [string, string][] = (Object.keys(kinds) as KindName[]).map((kind) => [
    path.join(root, "sdk", sdkFile(kind)),
    sdkDocsText(root, kind),
  ]);
  files.push([path.join(root, "sdk", "lookups.ts"), lookupDocsText(root)]);
  for (const [file, text] of files) {
    if (text !== fs.readFileSync(file, "utf8")) {
      fs.writeFileSync(file, text);
      process.stdout.write(`wrote ${path.relative(root, file)}\n`);
    }
  }
}

if (require.main === module) {
  try {
    main();
  } catch (error) {
    console.error(error);
    process.exit(1);
  }
}
