/**
 * `npm run schema`: builds the plugin's Pulumi package schema (provider/plugin/schema.json) from the declarations: the
 * kinds' (their zod input and output schemas, how each input changes, their secret outputs, every description: the
 * kind's, each input's and output's, nested members' on the zod schemas), the data functions' (provider/resources/
 * lookups.ts: descriptions and zod schemas) and the settings' (provider/resources/settings.ts). Read from source text
 * still: the arguments' and results' descriptions of getGpuInventory and getVolumeSizes (sdk/data.ts: the contract's
 * types they return carry none), and the dynamic SDK classes' declared outputs, which must be exactly the kind's. A
 * test fails when the committed schema.json differs from what this builds. Never edit schema.json by hand.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { z } from "zod";
import { repositoryRoot } from "./pulumi-cli";
import { outputDescriptions, sdkFile } from "./descriptions";
import { PACKAGE, token } from "../provider/plugin/tokens";
import {
  kinds,
  numericSettings,
  settingDeclarations,
  settingSources,
  type KindName,
  type SettingName,
} from "../provider/resources";
import type { ResourceKind } from "../provider/resources/kind";
import { dataFunctions, lookupNames } from "../provider/resources/lookups";

type JsonSchema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  additionalProperties?: JsonSchema | boolean;
  const?: unknown;
  enum?: unknown[];
};
/** The Go module of the generated Go SDK (sdk/go): where a Go user `go get`s it from this repository. */
export const GO_MODULE = "github.com/cloudinfra/pulumi-cloudinfra/sdk/go";

/** A type of the Pulumi package schema (`type`, `items`, `$ref`, ...). */
export type SchemaType = Record<string, unknown>;
/** A property of the Pulumi package schema: its type, description and flags. */
export interface SchemaProperty extends SchemaType {
  description?: string;
  secret?: boolean;
  replaceOnChanges?: boolean;
}
interface ObjectType {
  type: "object";
  description?: string;
  properties: Record<string, SchemaProperty>;
  required?: string[];
}

// ---------------------------------------------------------------- the SDK's declarations, read as text

interface Declared {
  description?: string;
  /** The declared type's text, e.g. `pulumi.Output<string | undefined>`. */
  type?: string;
  /** The object type the value is or holds (through Input, Output, arrays and unions), when the SDK declares one. */
  shape?: () => Described | undefined;
}
/** What the SDK says of an object type: its description and its members'. */
interface Described {
  description?: string;
  members: Map<string, Declared>;
}
interface SdkFacts {
  members(container: string): Map<string, Declared>;
  doc(name: string): string | undefined;
}

function jsDoc(node: ts.Node): string | undefined {
  const docs = (node as { jsDoc?: ts.JSDoc[] }).jsDoc;
  const last = docs?.[docs.length - 1];
  if (last === undefined) return undefined;
  const text = typeof last.comment === "string" ? last.comment : ts.getTextOfJSDocComment(last.comment);
  return (
    text
      ?.replace(/\{@link ([^}]+)\}/g, "`$1`")
      .replace(/\s+/g, " ")
      .trim() || undefined
  );
}

/** Wrappers whose first type argument is the value's type. */
const wrappers = new Set(["pulumi.Input", "pulumi.Output", "Array"]);

function readSdk(file: string): SdkFacts {
  const text = fs.readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const declarations = new Map<
    string,
    ts.InterfaceDeclaration | ts.ClassDeclaration | ts.TypeAliasDeclaration | ts.FunctionDeclaration
  >();
  for (const statement of source.statements) {
    if (
      (ts.isInterfaceDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isFunctionDeclaration(statement)) &&
      statement.name
    ) {
      declarations.set(statement.name.text, statement);
    }
  }

  const membersOf = (members: ts.NodeArray<ts.TypeElement | ts.ClassElement>) => {
    const found = new Map<string, Declared>();
    for (const member of members) {
      if ((ts.isPropertySignature(member) || ts.isPropertyDeclaration(member)) && member.name) {
        const key = ts.isStringLiteral(member.name) ? member.name.text : member.name.getText(source);
        const type = member.type;
        found.set(key, {
          description: jsDoc(member),
          type: type?.getText(source),
          shape: () => (type ? describeType(type) : undefined),
        });
      }
    }
    return found;
  };

  /** The object type a type node is or holds; several (a union or intersection) merge their members. */
  function describeType(node: ts.TypeNode): Described | undefined {
    if (ts.isParenthesizedTypeNode(node)) return describeType(node.type);
    if (ts.isArrayTypeNode(node)) return describeType(node.elementType);
    if (ts.isTypeLiteralNode(node)) return { members: membersOf(node.members) };
    if (ts.isTypeReferenceNode(node)) {
      const name = node.typeName.getText(source);
      if (wrappers.has(name) && node.typeArguments?.[0]) return describeType(node.typeArguments[0]);
      return describe(name);
    }
    if (ts.isUnionTypeNode(node) || ts.isIntersectionTypeNode(node)) {
      const parts = node.types.map(describeType).filter((d) => d !== undefined);
      if (parts.length === 0) return undefined;
      const members = new Map<string, Declared>();
      for (const part of parts) {
        for (const [key, member] of part.members) {
          const known = members.get(key);
          // `never` only forbids a member in one branch: the branch that allows it says what it is.
          if (!known || (known.type === "never" && member.type !== "never")) members.set(key, member);
        }
      }
      return { description: parts.find((p) => p.description)?.description, members };
    }
    return undefined;
  }

  const described = new Map<string, Described | undefined>();
  function describe(name: string): Described | undefined {
    if (described.has(name)) return described.get(name);
    const declaration = declarations.get(name);
    let result: Described | undefined;
    if (declaration && (ts.isInterfaceDeclaration(declaration) || ts.isClassDeclaration(declaration))) {
      result = { description: jsDoc(declaration), members: membersOf(declaration.members) };
    } else if (declaration && ts.isTypeAliasDeclaration(declaration)) {
      described.set(name, undefined); // a type that refers to itself describes nothing more
      const type = describeType(declaration.type);
      result = type && { ...type, description: jsDoc(declaration) ?? type.description };
    }
    described.set(name, result);
    return result;
  }

  return {
    members: (container) => describe(container)?.members ?? new Map(),
    doc: (name) => {
      const declaration = declarations.get(name);
      return declaration && jsDoc(declaration);
    },
  };
}

// ---------------------------------------------------------------- the kinds' declarations

/** A described zod object (e.g. an output's value as the API reports it): its description and its members'. */
function describedObject(schema: z.ZodObject): Described {
  return {
    description: schema.description,
    members: new Map(
      Object.entries(schema.shape).map(([key, value]) => [key, { description: (value as z.ZodType).description }]),
    ),
  };
}

/** The kind's inputs as its declaration describes them. */
function inputDocs(kind: ResourceKind): Map<string, Declared> {
  return new Map(Object.entries(kind.inputs.fields).map(([key, field]) => [key, { description: field.description }]));
}

/** The kind's outputs as its declaration describes them (an object value as the API reports it too). */
function outputDocs(kind: ResourceKind): Map<string, Declared> {
  return new Map(
    [...outputDescriptions(kind)].map(([key, { description, reportedShape }]) => [
      key,
      { description, ...(reportedShape ? { shape: () => describedObject(reportedShape) } : {}) },
    ]),
  );
}

// ---------------------------------------------------------------- zod (JSON Schema) to Pulumi schema types

class TypeSink {
  readonly types: Record<string, ObjectType> = {};

  /**
   * A Pulumi schema type for a JSON Schema; objects with known properties become named types `owner`, described by
   * `described` when given (the type and its members), else by the JSON Schema's descriptions, else (the type only)
   * by `fallback` (the description of the property that holds it).
   */
  convert(schema: JsonSchema, owner: string, described?: Described, fallback?: string): SchemaType {
    const branches = (schema.anyOf ?? schema.oneOf)?.filter((b) => b.type !== "null");
    if (branches !== undefined) {
      const converted = branches.map((b, i) => this.convert(b, `${owner}${i}`, described, fallback));
      const distinct = [...new Map(converted.map((c) => [JSON.stringify(c), c])).values()];
      if (distinct.length === 1) return distinct[0]!;
      if (distinct.every((c) => c.type === "integer" || c.type === "number")) return { type: "number" };
      return { oneOf: distinct };
    }
    const types = (Array.isArray(schema.type) ? schema.type : [schema.type]).filter((t) => t !== "null");
    if (types.length > 1) {
      return { oneOf: types.map((type) => this.convert({ ...schema, type }, owner, described, fallback)) };
    }
    const type = types[0] ?? (schema.const !== undefined ? typeof schema.const : undefined);
    switch (type) {
      case "string":
      case "boolean":
      case "integer":
      case "number":
        return { type };
      case "array":
        return {
          type: "array",
          items: schema.items ? this.convert(schema.items, owner, described, fallback) : { $ref: "pulumi.json#/Any" },
        };
      case "object": {
        if (schema.properties && Object.keys(schema.properties).length > 0) {
          const required = schema.required?.length ? [...schema.required] : undefined;
          const description = described?.description ?? (schema.description as string | undefined) ?? fallback;
          this.types[token(owner)] = {
            type: "object",
            ...(description ? { description } : {}),
            properties: properties(schema, owner, this, described?.members ?? new Map()),
            ...(required ? { required } : {}),
          };
          return { $ref: `#/types/${token(owner)}` };
        }
        const values = typeof schema.additionalProperties === "object" ? schema.additionalProperties : {};
        return { type: "object", additionalProperties: this.convert(values, `${owner}Value`) };
      }
      default:
        return { $ref: "pulumi.json#/Any" };
    }
  }
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const jsonSchema = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as unknown as JsonSchema;
const outputJsonSchema = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: "output", unrepresentable: "any" }) as unknown as JsonSchema;

/** Properties of an object schema, each with its description in `described`, else the JSON Schema's. */
function properties(
  schema: JsonSchema,
  owner: string,
  sink: TypeSink,
  described: Map<string, Declared>,
): Record<string, SchemaProperty> {
  return Object.fromEntries(
    Object.entries(schema.properties ?? {}).map(([key, value]) => {
      const member = described.get(key);
      const description = member?.description ?? (value.description as string | undefined);
      const type = sink.convert(value, `${owner}${capital(key)}`, member?.shape?.(), description);
      return [key, { ...type, ...(description ? { description } : {}) }];
    }),
  );
}

// ---------------------------------------------------------------- settings

/** The provider's config variables: each setting's declaration, its default and range, its environment variable. */
function configVariables(): Record<string, SchemaProperty> {
  return Object.fromEntries(
    (Object.keys(settingSources) as SettingName[]).map((name) => {
      const numeric = (numericSettings as Partial<Record<SettingName, { fallback: number; min: number }>>)[name];
      const { description, secret } = settingDeclarations[name];
      const extra = numeric ? ` Default ${numeric.fallback}, at least ${numeric.min}.` : "";
      const property: SchemaProperty = {
        type: numeric ? "integer" : name === "skipCredentialsValidation" ? "boolean" : "string",
        description: `${description}${extra} Environment variable: ${settingSources[name]}.`.trim(),
      };
      if (secret) property.secret = true;
      return [name, property];
    }),
  );
}

// ---------------------------------------------------------------- the package schema

/** The package schema, built from the sources; `root` is the repository (for the SDK's declarations). */
export function buildSchema(root: string, version: string): Record<string, unknown> {
  const sink = new TypeSink();
  const resources: Record<string, unknown> = {};
  for (const kind of Object.keys(kinds) as KindName[]) {
    const sdk = readSdk(path.join(root, "sdk", sdkFile(kind)));
    const declared = outputDocs(kinds[kind]);
    const sdkOutputs = sdk.members(kind);
    const { inputs, outputs: outputSchema } = kinds[kind];
    const input = jsonSchema(inputs.schema);
    const inputProperties = properties(input, kind, sink, inputDocs(kinds[kind]));
    const secrets = new Set(kinds[kind].secretOutputs);
    for (const [key, field] of Object.entries(inputs.fields)) {
      if (field.change === "replace" && inputProperties[key]) inputProperties[key].replaceOnChanges = true;
    }
    for (const key of secrets) if (inputProperties[key]) inputProperties[key].secret = true;
    const outputs: Record<string, SchemaProperty> = {};
    for (const [key, value] of Object.entries(inputProperties)) {
      const { replaceOnChanges: _replace, ...rest } = value;
      outputs[key] = {
        ...rest,
        ...(declared.get(key)?.description ? { description: declared.get(key)!.description } : {}),
      };
    }
    Object.assign(outputs, properties(outputJsonSchema(outputSchema), kind, sink, declared));
    const undeclared = [...sdkOutputs.keys()].filter((key) => !(key in outputs));
    const missing = Object.keys(outputSchema.shape).filter((key) => !sdkOutputs.has(key));
    if (undeclared.length > 0 || missing.length > 0) {
      throw new Error(
        `sdk/${sdkFile(kind)} and the ${kind} kind disagree on its outputs: ` +
          [
            undeclared.length > 0 ? `the SDK declares ${undeclared.join(", ")}, which the kind does not` : "",
            missing.length > 0 ? `the kind declares ${missing.join(", ")}, which the SDK class does not` : "",
          ]
            .filter(Boolean)
            .join("; "),
      );
    }
    for (const key of secrets) if (outputs[key]) outputs[key].secret = true;
    resources[token(kind)] = {
      description: kinds[kind].description,
      properties: outputs,
      inputProperties,
      ...(input.required?.length ? { requiredInputs: input.required } : {}),
    };
  }
  const functions = functionSpecs(root, sink);
  const variables = configVariables();
  return {
    name: PACKAGE,
    displayName: "Cloud Infrastructure",
    version,
    description: "Pulumi provider for the Cloud Infrastructure Management API",
    keywords: ["pulumi", "cloudinfra", "category/cloud"],
    license: "Apache-2.0",
    meta: { moduleFormat: "(.*)" },
    config: { variables },
    provider: {
      description: "The cloudinfra provider: one API, one set of credentials and one entity per instance.",
      inputProperties: variables,
    },
    resources,
    functions,
    types: Object.fromEntries(Object.entries(sink.types).sort(([a], [b]) => a.localeCompare(b))),
    // The npm name `pulumi package add` installs the generated SDK under, and the one `pulumi import` code imports
    // (Pulumi's Node.js codegen uses this one name for both). The package bundles the same SDK at the subpath
    // @cloudinfra/pulumi/plugin (sdk/plugin), which npm refuses as a package name.
    // Go: the SDK is the module sdk/go of this repository (`npm run plugin-sdk`), imported as
    // github.com/cloudinfra/pulumi-cloudinfra/sdk/go/cloudinfra; its resources ask the engine for the plugin of the
    // schema's version (respectSchemaVersion), not a version guessed from the import path.
    language: {
      nodejs: { packageName: "@cloudinfra/pulumi-plugin" },
      go: {
        importBasePath: `${GO_MODULE}/cloudinfra`,
        modulePath: GO_MODULE,
        respectSchemaVersion: true,
      },
    },
  };
}

/**
 * Every data function of the registry, described by its declaration (provider/resources/lookups.ts: the function's
 * description, its arguments' and results' `.describe()`), a kind's lookups by the kind's declaration too. The GPU
 * inventory's and the volume sizes' arguments and results are still described by sdk/data.ts (the contract's types
 * they return carry no descriptions).
 */
function functionSpecs(root: string, sink: TypeSink): Record<string, unknown> {
  const data = readSdk(path.join(root, "sdk", "data.ts"));
  const specs: Record<string, unknown> = {};
  for (const name of Object.keys(dataFunctions).sort()) {
    const fn = dataFunctions[name]!;
    const cap = capital(name.replace(/^get/, ""));
    const inSdk = data.doc(name) !== undefined;
    const argsDocs = inSdk ? data.members(`Get${cap}Args`) : new Map<string, Declared>();
    let resultDocs = inSdk
      ? data.members(`Get${cap}Result`).size > 0
        ? data.members(`Get${cap}Result`)
        : data.members(cap)
      : new Map<string, Declared>();
    if (fn.describes !== undefined) {
      // What the function reports otherwise than the resource is described by the function (its `.describe()`).
      const own = new Set(fn.ownResults);
      const item: Described = {
        members: new Map([
          ["id", { description: `The ${fn.describes}'s id (its Pulumi id).` }],
          ...[...outputDocs(kinds[fn.describes])].filter(([key]) => !own.has(key)),
        ]),
      };
      const { single, plural } = lookupNames(fn.describes);
      resultDocs = name === single ? item.members : new Map([[plural, { shape: () => item }]]);
    }
    specs[token(name)] = functionSpec(sink, fn.description, cap, fn.argsShape, fn.result, argsDocs, resultDocs);
  }
  return specs;
}

function functionSpec(
  sink: TypeSink,
  description: string,
  cap: string,
  args: z.ZodObject,
  result: z.ZodObject,
  argsDocs: Map<string, Declared>,
  resultDocs: Map<string, Declared>,
): Record<string, unknown> {
  const inputs = jsonSchema(args);
  const outputs = outputJsonSchema(result);
  const argProperties = properties(inputs, `Get${cap}Args`, sink, argsDocs);
  return {
    description,
    // No arguments: no `properties` at all, as the CLI writes the schema back (`pulumi package get-schema`).
    inputs: {
      ...(Object.keys(argProperties).length > 0 ? { properties: argProperties } : {}),
      ...(inputs.required?.length ? { required: inputs.required } : {}),
    },
    outputs: {
      properties: properties(outputs, `Get${cap}Result`, sink, resultDocs),
      ...(outputs.required?.length ? { required: outputs.required } : {}),
    },
  };
}

/** The committed schema's path, beside the plugin's source. */
export function schemaPath(root: string): string {
  return path.join(root, "provider", "plugin", "schema.json");
}

/** The schema as committed: JSON formatted as the repository's Prettier formats it. */
export async function schemaText(root: string): Promise<string> {
  const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
  const prettier = await import("prettier");
  const options = (await prettier.resolveConfig(schemaPath(root))) ?? {};
  return prettier.format(JSON.stringify(buildSchema(root, manifest.version)), { ...options, parser: "json" });
}

async function main(): Promise<void> {
  const root = repositoryRoot();
  const text = await schemaText(root);
  fs.writeFileSync(schemaPath(root), text);
  // The build copies schema.json into dist/ only when it compiles: keep the built copy current too.
  fs.writeFileSync(path.join(root, "dist", "provider", "plugin", "schema.json"), text);
  process.stdout.write(`wrote ${path.relative(root, schemaPath(root))}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
