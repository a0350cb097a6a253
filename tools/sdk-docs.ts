/**
 * `npm run sdk-docs` (run by `npm run docs` too): writes the JSDoc of the dynamic SDK's resource files (sdk/<kind>.ts)
 * from the kinds' declarations: the class's (the kind's description), each argument's (the members of `<Kind>Args`
 * and of the interfaces it is made of: each input's description), each output's (`declare readonly`: the output's
 * description), and those of nested members (described on the zod schemas). Everything else in those files is written
 * by hand, their types checked against the declarations by test/resources/declaration.test.ts. A test fails when a
 * file's docs are not what this writes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { z } from "zod";
import { repositoryRoot } from "./pulumi-cli";
import { kinds, type KindName } from "../provider/resources";
import type { ResourceKind } from "../provider/resources/kind";
import { outputDescriptions, sdkFile } from "./descriptions";

/** The repository's Prettier width: a doc that fits in it is one line. */
const width = 120;
/** A longer doc is wrapped a little within it (as the SDK's hand-written docs were). */
const wrapWidth = 118;

/** A JSDoc comment of `text` starting at column `indent`: one line when it fits, else wrapped. */
export function jsDocComment(text: string, indent: number): string {
  const single = `/** ${text} */`;
  if (indent + single.length <= width) return single;
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
  const pad = " ".repeat(indent);
  return ["/**", ...lines.map((l) => `${pad} * ${l}`), `${pad} */`].join("\n");
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

/**
 * The SDK file's text (`source`) with its docs written from the kind's declaration. Throws, naming it, on a member of
 * the arguments or the class that the declaration does not describe.
 */
export function withDocs(source: string, kind: ResourceKind): string {
  const file = ts.createSourceFile(sdkFile(kind.name), source, ts.ScriptTarget.ES2022, true);
  const local = new Map<string, ts.InterfaceDeclaration | ts.TypeAliasDeclaration | ts.ClassDeclaration>();
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

  /** Writes `text` as the node's doc: in place of its JSDoc, or above it. */
  const document = (node: ts.Node, text: string) => {
    const start = node.getStart(file);
    const indent = start - file.text.lastIndexOf("\n", start - 1) - 1;
    const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
    const last = docs?.[docs.length - 1];
    const comment = jsDocComment(text, indent);
    if (last) edits.push({ start: last.getStart(file), end: last.end, text: comment });
    else edits.push({ start, end: start, text: `${comment}\n${" ".repeat(indent)}` });
  };

  const nameOf = (member: ts.Node) => {
    const name = (member as { name?: ts.PropertyName }).name;
    return name && (ts.isIdentifier(name) || ts.isStringLiteral(name)) ? name.text : undefined;
  };
  const membersOf = (node: ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeLiteralNode) =>
    (node.members as ts.NodeArray<ts.Node>).filter(
      (m): m is ts.PropertySignature | ts.PropertyDeclaration =>
        ts.isPropertySignature(m) || ts.isPropertyDeclaration(m),
    );

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

  let text = source;
  for (const edit of edits.sort((a, b) => b.start - a.start)) {
    text = text.slice(0, edit.start) + edit.text + text.slice(edit.end);
  }
  return text;
}

/** The SDK file of a kind as this writes it. */
export function sdkDocsText(root: string, kind: KindName): string {
  return withDocs(fs.readFileSync(path.join(root, "sdk", sdkFile(kind)), "utf8"), kinds[kind]);
}

function main(): void {
  const root = repositoryRoot();
  for (const kind of Object.keys(kinds) as KindName[]) {
    const file = path.join(root, "sdk", sdkFile(kind));
    const text = sdkDocsText(root, kind);
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
