/**
 * `npm run sdk-gen` (run by `npm run docs` too): writes the dynamic SDK's files whole from the declarations, as
 * `npm run plugin-sdk` writes the plugin's. Each kind's file (sdk/<kind>.ts) from the kind (provider/resources): its
 * `<Kind>Args` (every input of `inputs.schema`, typed from the zod type, described by its field), the class with an
 * output per input (as reported: the field's `output` text and `reportedType`) and per member of `outputs`, its
 * secret outputs and inputs, its docs; the types the declarations name (`sdkTypes`) declared once and imported where
 * used. The data functions' file (sdk/lookups.ts) from `dataFunctions` (provider/resources/lookups.ts): each
 * function's arguments, result, docs with an example, and its `Output` form; those sdk/data.ts writes by hand (the
 * GPU inventory and the volume sizes, typed by the contract) are left to it. Never edit these files by hand: a test
 * fails when one is not what this writes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { z } from "zod";
import { repositoryRoot } from "./pulumi-cli";
import { outputDescriptions, sdkFile } from "./descriptions";
import { kinds } from "../provider/resources";
import { sdkTypes, type SdkTypeName } from "../provider/resources/fields";
import type { ResourceKind } from "../provider/resources/kind";
import { dataFunctions, type DataFunction } from "../provider/resources/lookups";

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

// ---------------------------------------------------------------- zod to TypeScript

type Io = "input" | "output";

/**
 * How a value is typed: `input` (what a program gives: zod's input type) or `output` (what it reads: zod's output
 * type); `wrap`: every nested value may be an output of another resource (`pulumi.Input`: a class's arguments).
 */
interface Style {
  readonly io: Io;
  readonly wrap: boolean;
  /** The column a member of an object written in place starts at (for its doc's wrapping). */
  readonly indent: number;
}

/** The zod definition, as far as typing reads it. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string | number>;
  values?: unknown[];
  in?: z.ZodType;
  out?: z.ZodType;
  keyType?: z.ZodType;
  valueType?: z.ZodType;
  left?: z.ZodType;
  right?: z.ZodType;
  getter?: () => z.ZodType;
}
const defOf = (schema: z.ZodType) => schema.def as unknown as Def;

const identifier = /^[A-Za-z_$][\w$]*$/;
const propertyName = (key: string) => (identifier.test(key) ? key : JSON.stringify(key));
const kebab = (name: string) => name.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();

/**
 * One generated file's types: the named types it declares (in the order met) and those it imports, and `aliases`:
 * schemas typed by a name of this file that the registry does not hold (a data function's result).
 */
class SdkFile {
  readonly declarations = new Map<string, string>();
  readonly imports = new Map<string, Set<string>>();
  readonly aliases = new Map<z.ZodType, string>();

  constructor(
    /** The kind whose file this is; undefined for sdk/lookups.ts. */
    readonly kind: string | undefined,
  ) {}

  /** `name` imported (as a type) from the SDK module `module` (e.g. `./resource-group`). */
  import(module: string, name: string): string {
    if (!this.imports.has(module)) this.imports.set(module, new Set());
    this.imports.get(module)!.add(name);
    return name;
  }

  /** The name of a registered schema: declared here (once), or imported from the file of the kind that declares it. */
  named(schema: z.ZodType, meta: SdkTypeName): string {
    if (meta.kind !== undefined && meta.kind !== this.kind) return this.import(`./${kebab(meta.kind)}`, meta.name);
    if (!this.declarations.has(meta.name)) {
      this.declarations.set(meta.name, "");
      this.declarations.set(meta.name, namedDeclaration(schema, meta, this));
    }
    return meta.name;
  }

  /** The import lines. */
  importLines(): string[] {
    return [...this.imports]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([module, names]) => `import type { ${[...names].sort().join(", ")} } from "${module}";`);
  }
}

/** A registered type's declaration: an interface (its members documented) or a type alias. */
function namedDeclaration(schema: z.ZodType, meta: SdkTypeName, file: SdkFile): string {
  const description = meta.description ?? schema.description;
  if (description === undefined) {
    throw new Error(`the SDK type ${meta.name} has no description: give it one in its sdkTypes entry or .describe()`);
  }
  const doc = jsDocComment(description, 0);
  if (schema instanceof z.ZodObject) {
    const style: Style = { io: meta.io, wrap: meta.io === "input", indent: 2 };
    const members = Object.entries(schema.shape).map(([key, value]) => {
      const member = value as z.ZodType;
      if (member.description === undefined) {
        throw new Error(`${meta.name}.${key} has no description: give it one with .describe() on its zod schema`);
      }
      return memberText(key, member, member.description, style, file);
    });
    return `${doc}\nexport interface ${meta.name} {\n${members.join("\n")}\n}`;
  }
  return `${doc}\nexport type ${meta.name} = ${typeText(schema, { io: meta.io, wrap: false, indent: 0 }, file, true)};`;
}

/** A member of an interface or of an object type: its doc (when there is one), name, `?` and type. */
function memberText(key: string, schema: z.ZodType, doc: string | undefined, style: Style, file: SdkFile): string {
  const { optional, value } = property(schema, style.io);
  const type = typeText(value, { ...style, indent: style.indent + 2 }, file);
  const pad = " ".repeat(style.indent);
  const comment = doc === undefined ? "" : `${pad}${jsDocComment(doc, style.indent)}\n`;
  return `${comment}${pad}${propertyName(key)}${optional ? "?" : ""}: ${style.wrap ? `pulumi.Input<${type}>` : type};`;
}

/** Whether a member may be left out (optional; on the input side, defaulted too), and its value's schema. */
function property(schema: z.ZodType, io: Io): { optional: boolean; value: z.ZodType } {
  let optional = false;
  let value = schema;
  for (;;) {
    const def = defOf(value);
    if (def.type === "optional") optional = true;
    else if (def.type === "default" || def.type === "prefault") optional ||= io === "input";
    else return { optional, value };
    value = def.innerType!;
  }
}

/** The TypeScript type of a zod schema. */
function typeText(schema: z.ZodType, style: Style, file: SdkFile, unnamed = false): string {
  return typeParts(schema, style, file, unnamed).join(" | ");
}

/** The members of the union a schema's type is (one for a type that is no union). */
function typeParts(schema: z.ZodType, style: Style, file: SdkFile, unnamed = false): string[] {
  if (!unnamed) {
    const alias = file.aliases.get(schema);
    if (alias !== undefined) return [alias];
    const meta = sdkTypes.get(schema);
    if (meta !== undefined && meta.io === style.io) return [file.named(schema, meta)];
  }
  const def = defOf(schema);
  const parts = (inner: z.ZodType) => typeParts(inner, style, file);
  const distinct = (list: string[]) => [...new Set(list)];
  switch (def.type) {
    case "string":
    case "number":
    case "boolean":
    case "bigint":
    case "null":
    case "undefined":
    case "unknown":
    case "any":
    case "never":
      return [def.type];
    case "enum":
      return distinct(Object.values(def.entries!).map((value) => JSON.stringify(value)));
    case "literal":
      return distinct(def.values!.map((value) => JSON.stringify(value)));
    case "optional":
      return distinct([...parts(def.innerType!), "undefined"]);
    case "nullable":
      return distinct([...parts(def.innerType!), "null"]);
    case "default":
    case "prefault":
      return style.io === "input" ? distinct([...parts(def.innerType!), "undefined"]) : parts(def.innerType!);
    case "readonly":
    case "catch":
      return parts(def.innerType!);
    case "lazy":
      return parts(def.getter!());
    case "pipe":
      // A transform at the end keeps its input's type (`sortedSet`); one that changes it needs a name (sdkTypes).
      if (style.io === "input" || defOf(def.out!).type === "transform") return parts(def.in!);
      return parts(def.out!);
    case "union":
      return distinct(def.options!.flatMap(parts));
    case "intersection":
      return [`${typeText(def.left!, style, file)} & ${typeText(def.right!, style, file)}`];
    case "array": {
      const element = parts(def.element!).join(" | ");
      if (style.wrap) return [`pulumi.Input<${element}>[]`];
      return [parts(def.element!).length > 1 ? `(${element})[]` : `${element}[]`];
    }
    case "record":
      return [`Record<${typeText(def.keyType!, style, file)}, ${typeText(def.valueType!, style, file)}>`];
    case "object": {
      const shape = (schema as z.ZodObject).shape;
      const members = Object.entries(shape).map(([key, value]) =>
        memberText(key, value as z.ZodType, (value as z.ZodType).description, style, file),
      );
      if (members.length === 0) return ["Record<string, never>"];
      if (members.some((member) => member.includes("/**"))) {
        return [`{\n${members.join("\n")}\n${" ".repeat(Math.max(style.indent - 2, 0))}}`];
      }
      return [`{ ${members.map((member) => member.trim().replace(/;$/, "")).join("; ")} }`];
    }
    default:
      throw new Error(`the dynamic SDK cannot type a zod ${def.type}: name its type (sdkTypes) or simplify the schema`);
  }
}

// ---------------------------------------------------------------- formatting

const header = (what: string) => `// Written by \`npm run sdk-gen\` from ${what}: never edit it by hand.`;

/** The text as the repository's Prettier writes it. */
async function formatted(text: string, root: string): Promise<string> {
  const prettier = await import("prettier");
  const options = (await prettier.resolveConfig(path.join(root, "sdk", "index.ts"))) ?? {};
  return prettier.format(text, { ...options, parser: "typescript" });
}

// ---------------------------------------------------------------- a kind's file

/** The article of a kind's name (`an ApiKey`, `a User`). */
const article = (name: string) => (/^[AEIO]/.test(name) ? "an" : "a");

/** The type an output holds: a declared output's, else the input's as reported. */
function outputSchema(kind: ResourceKind, key: string): z.ZodType {
  const output = kind.outputs.shape[key] as z.ZodType | undefined;
  if (output !== undefined) return output;
  const field = kind.inputs.fields[key]!;
  // The schema and the docs read the reported objects from reportedShape: the type must hold those objects.
  if (field.reportedShape !== undefined && objectOf(field.reportedType) !== field.reportedShape) {
    throw new Error(
      `${kind.name}: the input ${key} reports objects of their own (reportedShape): its reportedType must hold them`,
    );
  }
  return field.reportedType ?? (kind.inputs.schema.shape[key] as z.ZodType);
}

/** The object a value holds, through optional, nullable, default and arrays (the zod object that describes it). */
function objectOf(schema: z.ZodType | undefined): z.ZodObject | undefined {
  if (schema === undefined) return undefined;
  if (schema instanceof z.ZodObject) return schema;
  const def = defOf(schema);
  return objectOf(def.innerType ?? def.element);
}

/** sdk/<kind>.ts as this writes it, before formatting: `file` gathers the types it names. */
function kindText(kind: ResourceKind, file: SdkFile): string {
  const { schema, fields } = kind.inputs;
  const name = kind.name;
  const args: string[] = [];
  const style: Style = { io: "input", wrap: true, indent: 2 };
  const input = (key: string, required = false) => {
    const field = fields[key];
    if (field === undefined) throw new Error(`${name}: the input ${key} is not classified (inputs.fields)`);
    const value = schema.shape[key] as z.ZodType;
    return memberText(key, required ? property(value, "input").value : value, field.description, style, file);
  };
  const inputs = Object.keys(schema.shape);
  const exclusive = kind.exclusiveInputs;
  if (exclusive === undefined) {
    args.push(
      `${jsDocComment(`The arguments of ${article(name)} {@link ${name}}.`, 0)}\nexport interface ${name}Args {\n${inputs
        .map((key) => input(key))
        .join("\n")}\n}`,
    );
  } else {
    const alternatives = exclusive.alternatives.map((alternative) => alternative.input);
    const stray = alternatives.filter((key) => !inputs.includes(key));
    if (stray.length > 0) throw new Error(`${name}: exclusiveInputs names ${stray.join(", ")}, not inputs`);
    args.push(
      `${jsDocComment(`The arguments of ${article(name)} ${name} other than its ${exclusive.what} (see {@link ${name}Args}).`, 0)}\n` +
        `export interface ${name}BaseArgs {\n${inputs
          .filter((key) => !alternatives.includes(key))
          .map((key) => input(key))
          .join("\n")}\n}`,
    );
    exclusive.alternatives.forEach((alternative, index) => {
      const others = alternatives
        .filter((key) => key !== alternative.input)
        .map(
          (key) =>
            `  ${jsDocComment(`Not with \`${alternative.input}\`: one ${exclusive.what} only.`, 2)}\n  ${key}?: never;`,
        );
      args.push(
        `${jsDocComment(alternative.description, 0)}\nexport interface ${alternative.name} {\n${[
          input(alternative.input, index > 0),
          ...others,
        ].join("\n")}\n}`,
      );
    });
    const ways = alternatives.map((key) => `\`${key}\``);
    const given = `${ways.slice(0, -1).join(", by ")} or by ${ways[ways.length - 1]}`;
    args.push(
      `${jsDocComment(
        `The arguments of ${article(name)} ${name}. The ${exclusive.what} is given by ${given}, never ${alternatives.length > 2 ? "two" : "both"} (a program giving ${alternatives.length > 2 ? "two" : "both"} does not compile).`,
        0,
      )}\nexport type ${name}Args = ${name}BaseArgs & (${exclusive.alternatives.map((a) => a.name).join(" | ")});`,
    );
  }

  const outputs = [...outputDescriptions(kind)].map(([key, { description }]) => {
    const type = typeText(outputSchema(kind, key), { io: "output", wrap: false, indent: 4 }, file);
    return `  ${jsDocComment(description, 2)}\n  declare readonly ${propertyName(key)}: pulumi.Output<${type}>;`;
  });

  const secretInputs = (kind.secretInputs ?? []).map((key) => {
    const optional = property(schema.shape[key] as z.ZodType, "input").optional;
    const secret = `pulumi.secret(args.${key})`;
    return `      ${key}: ${optional ? `args.${key} === undefined ? undefined : ${secret}` : secret},`;
  });
  const props = secretInputs.length === 0 ? "{ ...outputPlaceholders, ...args }" : "inputs";
  // Literal lists, as the plugin SDK's classes have theirs: a class loads nothing of the provider to know them.
  const placeholders = [...new Set([...Object.keys(schema.shape), ...Object.keys(kind.outputs.shape)])];
  const secretOutputs = kind.secretOutputs ?? [];
  const options =
    secretOutputs.length === 0
      ? "opts"
      : `pulumi.mergeOptions(opts, { additionalSecretOutputs: ${JSON.stringify(secretOutputs)} })`;
  const constructor = [
    `  constructor(name: string, args: ${name}Args, opts?: pulumi.CustomResourceOptions) {`,
    ...(secretInputs.length === 0
      ? []
      : [
          "    // Its secret inputs are secrets wherever they are stored, even when the program passes them in clear.",
          `    const inputs = {\n      ...outputPlaceholders,\n      ...args,\n${secretInputs.join("\n")}\n    };`,
        ]),
    `    super(\n      provider,\n      name,\n      ${props},`,
    `      ${options},`,
    `      "cloudinfra",\n      "${name}",\n    );\n  }`,
  ].join("\n");

  const resource = `${jsDocComment(kind.description, 0)}\nexport class ${name} extends pulumi.dynamic.Resource {\n${outputs.join("\n")}\n\n${constructor}\n}`;

  return [
    header(`provider/resources/${sdkFile(name)}`),
    [
      'import * as pulumi from "@pulumi/pulumi";',
      'import { dynamicProvider } from "../provider/dynamic-providers/of-kind";',
      ...file.importLines(),
    ].join("\n"),
    `const provider = dynamicProvider("${name}");`,
    `${jsDocComment(
      `Every input and output of ${article(name)} ${name}, each \`undefined\`: passed to Pulumi beside the arguments, so that each one is an Output on the resource, set or not.`,
      0,
    )}\nconst outputPlaceholders = {\n${placeholders.map((key) => `  ${propertyName(key)}: undefined,`).join("\n")}\n};`,
    ...file.declarations.values(),
    ...args,
    resource,
  ].join("\n\n");
}

/** The declarations and imports of the generated file of `kind` (sdk/<kind>.ts), and its text before formatting. */
function kindSource(kind: ResourceKind): { file: SdkFile; text: string } {
  const file = new SdkFile(kind.name);
  return { file, text: kindText(kind, file) };
}

/** sdk/<kind>.ts as this writes it from the kind's declaration. */
export async function kindSdkText(kind: ResourceKind, root: string = repositoryRoot()): Promise<string> {
  return formatted(kindSource(kind).text, root);
}

// ---------------------------------------------------------------- the data functions' file

/** The data functions sdk/data.ts writes by hand (the functions it exports): this leaves them to it. */
export function handWrittenFunctions(root: string = repositoryRoot()): Set<string> {
  const file = path.join(root, "sdk", "data.ts");
  const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true);
  return new Set(
    source.statements
      .filter((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name !== undefined)
      .map((s) => s.name!.text),
  );
}

/** The one line of code a data function's doc shows: its call with an argument of the kind it takes. */
function exampleOf(name: string, fn: DataFunction): string {
  if (fn.example !== undefined) return fn.example;
  const list = Object.keys(fn.result.shape).filter((key) => key !== "count");
  if ("count" in fn.result.shape) return `const { ${list.join(", ")}, count } = await ${name}({});`;
  const args = fn.argsShape.shape;
  if ("email" in args) return `const found = await ${name}({ email: "someone@example.com" });`;
  if ("name" in args && fn.describes !== undefined) {
    return `const found = await ${name}({ name: "my-${kebab(fn.describes)}" });`;
  }
  return `const ${name.charAt(3).toLowerCase()}${name.slice(4)} = await ${name}();`;
}

const lookupsPreamble = `// The read side: one resource by id or exact name, lists with the API's filters, and who the caller is. The calls run
// in the program's process with its configuration (as getGpuInventory does); the plugin SDK offers the same functions
// as invokes \`cloudinfra:index:<name>\`. Types are written against the SDK classes, never the zod contract.

/** The plain value of each output of a resource class (what a lookup returns of it), with \`id\` as text. */
export type OutputsOf<R, Secret extends string = never> = {
  [
    K in Exclude<keyof R, "urn" | "id" | Secret> as R[K] extends pulumi.Output<unknown> ? K : never
  ]: R[K] extends pulumi.Output<infer T> ? T : never;
} & {
  /** The resource's id (its Pulumi id: use it where an input takes this resource's id). */
  id: string;
};

/** Arguments of a function, each of which may be an output of another resource. */
export type InputsOf<T> = { [K in keyof T]: pulumi.Input<T[K]> };

/** Where a function runs: \`parent\` is accepted for symmetry with the plugin SDK, whose invokes also take \`provider\`. */
export type LookupOptions = pulumi.InvokeOptions;`;

const lookupsCall = `/** Validates the arguments as the plugin does (a failure names the argument and the fix), then calls the function. */
async function call<T>(name: string, args: object): Promise<T> {
  const fn = (await providerModules()).dataFunctions[name]!;
  const plain = Object.fromEntries(Object.entries(args).filter(([, v]) => v !== undefined));
  const parsed = fn.args.safeParse(plain);
  if (!parsed.success) {
    const reasons = parsed.error.issues.map((issue) => {
      const property = issue.path.join(".");
      return property ? \`\\\`\${property}\\\` \${issue.message}\` : issue.message;
    });
    throw new pulumi.RunError(\`\${name}: \${reasons.join("; ")}\`);
  }
  return inProgram(name, async (ctx) => (await fn.call(ctx, parsed.data as never)) as T);
}

function output<A extends object, T>(name: string, args: InputsOf<A>): pulumi.Output<T> {
  return pulumi.output(args).apply((plain) => call<T>(name, plain as object));
}`;

/** sdk/lookups.ts as this writes it, before formatting, and the types it names. */
function lookupsSource(
  functions: Readonly<Record<string, DataFunction>>,
  handWritten: ReadonlySet<string>,
): { file: SdkFile; text: string } {
  const file = new SdkFile(undefined);
  const generated = Object.entries(functions).filter(([name]) => !handWritten.has(name));
  const capitalOf = (name: string) => name.replace(/^get/, "");
  for (const [name, fn] of generated) file.aliases.set(fn.result, `Get${capitalOf(name)}Result`);

  const plain: Style = { io: "input", wrap: false, indent: 2 };
  const result: Style = { io: "output", wrap: false, indent: 2 };
  // The entity argument every function shares, when they describe it alike.
  const entity = generated.map(([, fn]) => fn.argsShape.shape.entityId as z.ZodType | undefined).find(Boolean);
  const sharesEntity = (fn: DataFunction) => {
    const own = fn.argsShape.shape.entityId as z.ZodType | undefined;
    return (
      entity !== undefined &&
      own !== undefined &&
      own.description === entity.description &&
      typeText(own, plain, file) === typeText(entity, plain, file)
    );
  };
  const described = (schema: z.ZodType, where: string) => {
    if (schema.description === undefined) throw new Error(`${where} is not described by the declaration`);
    return schema.description;
  };
  const membersOf = (shape: Record<string, z.ZodType>, style: Style, where: string, skip: string[] = []) =>
    Object.entries(shape)
      .filter(([key]) => !skip.includes(key))
      .map(([key, value]) => memberText(key, value, described(value, `${where}: ${key}`), style, file));

  const sections: string[] = [];
  for (const [name, fn] of generated) {
    const cap = capitalOf(name);
    const argsName = `Get${cap}Args`;
    const resultName = `Get${cap}Result`;
    const single = fn.describes !== undefined && name === `get${fn.describes}`;
    const list = "count" in fn.result.shape;
    const optional = fn.args.safeParse({}).success;
    const parts: string[] = [`// ---------------------------------------------------------------- ${name}`];

    // Arguments.
    const inherits = sharesEntity(fn);
    const own = Object.keys(fn.argsShape.shape).filter((key) => !(inherits && key === "entityId"));
    const shape = fn.argsShape.shape as Record<string, z.ZodType>;
    const allOptional = own.every((key) => property(shape[key]!, "input").optional);
    const argsDoc = single
      ? `The arguments of {@link ${name}}: ${own.map((key) => `\`${key}\``).join(" or ")}, exactly one.`
      : list && allOptional
        ? `The filters of {@link ${name}} (the API's filters of its list); every one is optional.`
        : `The arguments of {@link ${name}}.`;
    if (inherits && own.length === 0) {
      parts.push(`${jsDocComment(argsDoc, 0)}\nexport type ${argsName} = EntityArgs;`);
    } else if (own.length === 0) {
      // A function without arguments (its route takes none): an empty object, said without an empty interface.
      parts.push(`${jsDocComment(`${name} takes no arguments.`, 0)}\nexport type ${argsName} = Record<string, never>;`);
    } else {
      const members = membersOf(shape, plain, `${name}'s arguments`, inherits ? ["entityId"] : []);
      parts.push(
        `${jsDocComment(argsDoc, 0)}\nexport interface ${argsName}${inherits ? " extends EntityArgs" : ""} {\n${members.join("\n")}\n}`,
      );
    }

    // Result.
    const resultShape = fn.result.shape as Record<string, z.ZodType>;
    if (single) {
      const kind = kinds[fn.describes!];
      const outputs = outputDescriptions(kind);
      const extras = Object.keys(resultShape).filter((key) => key !== "id" && !outputs.has(key));
      const secrets = kind.secretOutputs ?? [];
      const type = `OutputsOf<${file.import(`./${kebab(kind.name)}`, kind.name)}${
        secrets.length > 0 ? `, ${secrets.map((key) => JSON.stringify(key)).join(" | ")}` : ""
      }>`;
      const doc =
        `What {@link ${name}} returns: the outputs of the {@link ${kind.name}} found, as on the resource` +
        (secrets.length > 0 ? " (secrets excluded)" : "") +
        (extras.length > 0
          ? `, and what the resource leaves out because it moves with other resources (so that its refresh stays quiet): ${extras.map((key) => `\`${key}\``).join(", ")}`
          : "") +
        ".";
      const extra =
        extras.length > 0
          ? ` & {\n${membersOf(Object.fromEntries(extras.map((key) => [key, resultShape[key]!])), result, `${name}'s result`).join("\n")}\n}`
          : "";
      parts.push(`${jsDocComment(doc, 0)}\nexport type ${resultName} = ${type}${extra};`);
    } else {
      const members = membersOf(resultShape, result, `${name}'s result`);
      parts.push(
        `${jsDocComment(`What {@link ${name}} returns.`, 0)}\nexport interface ${resultName} {\n${members.join("\n")}\n}`,
      );
    }

    // The function and its Output form.
    const defaulted = optional ? " = {}" : "";
    parts.push(
      `${jsDocComment(fn.description, 0, exampleOf(name, fn))}\n` +
        `export function ${name}(args: ${argsName}${defaulted}, opts?: LookupOptions): Promise<${resultName}> {\n` +
        `  void opts;\n  return call("${name}", args);\n}`,
      `${jsDocComment(`{@link ${name}} with arguments that may be outputs; the result is an output.`, 0)}\n` +
        `export function ${name}Output(args: InputsOf<${argsName}>${defaulted}, opts?: LookupOptions): pulumi.Output<${resultName}> {\n` +
        `  void opts;\n  return output("${name}", args);\n}`,
    );
    sections.push(parts.join("\n\n"));
  }

  const entityArgs =
    entity === undefined
      ? []
      : [
          `${jsDocComment("The arguments every function accepts.", 0)}\nexport interface EntityArgs {\n${memberText(
            "entityId",
            entity,
            described(entity, "entityId"),
            plain,
            file,
          )}\n}`,
        ];
  const text = [
    header("dataFunctions (provider/resources/lookups.ts)"),
    [
      'import * as pulumi from "@pulumi/pulumi";',
      ...file.importLines(),
      'import { inProgram, providerModules } from "./data-context";',
    ].join("\n"),
    lookupsPreamble,
    ...entityArgs,
    lookupsCall,
    ...file.declarations.values(),
    ...sections,
  ].join("\n\n");
  return { file, text };
}

/** sdk/lookups.ts as this writes it from the data functions' declarations. */
export async function lookupsSdkText(
  functions: Readonly<Record<string, DataFunction>> = dataFunctions,
  handWritten: ReadonlySet<string> = handWrittenFunctions(),
  root: string = repositoryRoot(),
): Promise<string> {
  return formatted(lookupsSource(functions, handWritten).text, root);
}

// ---------------------------------------------------------------- every file

/**
 * Every file this writes (its path under sdk/ → its text). Throws when two files declare one type, or one imports a
 * type from a file that does not declare it.
 */
export async function dynamicSdkFiles(root: string = repositoryRoot()): Promise<Map<string, string>> {
  const sources = new Map<string, { file: SdkFile; text: string }>();
  for (const kind of Object.values(kinds) as ResourceKind[]) sources.set(sdkFile(kind.name), kindSource(kind));
  sources.set("lookups.ts", lookupsSource(dataFunctions, handWrittenFunctions(root)));
  const declaredIn = new Map<string, string>();
  for (const [name, { text }] of sources) {
    for (const match of text.matchAll(/^export (?:interface|type|class) (\w+)/gm)) {
      const other = declaredIn.get(match[1]!);
      if (other !== undefined) throw new Error(`sdk/${other} and sdk/${name} both declare ${match[1]}`);
      declaredIn.set(match[1]!, name);
    }
  }
  for (const [name, { text }] of sources) {
    for (const match of text.matchAll(/^import type \{ ([^}]+) \} from "\.\/([\w-]+)";$/gm)) {
      for (const imported of match[1]!.split(", ")) {
        if (declaredIn.get(imported) !== `${match[2]}.ts`) {
          throw new Error(`sdk/${name} imports ${imported} from ./${match[2]}, which does not declare it`);
        }
      }
    }
  }
  const files = new Map<string, string>();
  for (const [name, { text }] of sources) files.set(name, await formatted(text, root));
  return files;
}

async function main(): Promise<void> {
  const root = repositoryRoot();
  for (const [name, text] of await dynamicSdkFiles(root)) {
    const file = path.join(root, "sdk", name);
    if (!fs.existsSync(file) || text !== fs.readFileSync(file, "utf8")) {
      fs.writeFileSync(file, text);
      process.stdout.write(`wrote sdk/${name}\n`);
    }
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
