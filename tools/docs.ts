/**
 * `npm run docs`: the reference pages in docs/reference, one per resource and per function of the provider plugin,
 * generated from its schema (provider/plugin/schema.json): every input and output with its type, description, how a
 * change applies (in place, replaces, output only) and whether it is secret; object types with their properties; a
 * placeholder example in TypeScript and YAML; the import id. Never edited by hand: a test fails when the committed
 * pages differ from what this makes of the committed schema. Run after `npm run schema`. It also regenerates three
 * tables of the guides: the inputs the API does not report back (docs/guides/resources.md), the error codes with what
 * to do about each (docs/guides/troubleshooting.md) and the settings (docs/installation-configuration.md).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { kinds, type KindName } from "../provider/resources";
import { repositoryRoot } from "./pulumi-cli";
import { errorCodesTable, readmeTableRows, settingsTable, withTable, type ReadmeTable } from "./readme-tables";

/** A type of the Pulumi package schema: `type`, `items`, `additionalProperties`, `$ref` or `oneOf`. */
export interface SchemaType {
  type?: string;
  items?: SchemaType;
  additionalProperties?: SchemaType;
  $ref?: string;
  oneOf?: SchemaType[];
  enum?: { value: unknown; description?: string }[];
}

/** A property of the schema: its type and flags. */
export interface SchemaProperty extends SchemaType {
  description?: string;
  secret?: boolean;
  replaceOnChanges?: boolean;
}

interface ObjectSpec {
  description?: string;
  properties?: Record<string, SchemaProperty>;
  required?: string[];
}

interface ResourceSpec extends ObjectSpec {
  inputProperties?: Record<string, SchemaProperty>;
  requiredInputs?: string[];
}

interface FunctionSpec {
  description?: string;
  inputs?: ObjectSpec;
  outputs?: ObjectSpec;
}

/** The parts of a Pulumi package schema the reference is made of. */
export interface PackageSchema {
  name: string;
  description?: string;
  config?: { variables?: Record<string, SchemaProperty> };
  resources?: Record<string, ResourceSpec>;
  functions?: Record<string, FunctionSpec>;
  types?: Record<string, ObjectSpec & SchemaType>;
  language?: { nodejs?: { packageName?: string } };
}

/**
 * How `pulumi import` (and `Resource.get`) names an existing resource of each kind: the id each kind's `read` takes
 * (provider/resources/*). A kind added to the registry without one fails to compile here.
 */
export const importIds: Record<KindName, { id: string; example: string; notes?: string }> = {
  Network: { id: "the network's id (UUID)", example: "<network-id>" },
  VirtualMachine: { id: "the virtual machine's id (UUID)", example: "<vm-id>" },
  GpuVirtualMachine: { id: "the GPU virtual machine's id, as the API lists it", example: "<gpu-vm-id>" },
  Volume: { id: "the volume's id (UUID)", example: "<volume-id>" },
  VolumeAttachment: {
    id: "`<volumeId>:<virtualMachineId>`: the volume's id and the virtual machine's id, joined by a colon",
    example: "<volume-id>:<vm-id>",
    notes: "The volume must be attached to that virtual machine; otherwise the import finds nothing.",
  },
  ResourceGroup: {
    id: "the group's integer id (its `teamId`), as text",
    example: "42",
    notes: "Anything but an integer is refused before the API is asked.",
  },
  User: { id: "the user's id (UUID)", example: "<user-id>" },
  ApiKey: {
    id: "the key's id, as the API lists the keys of the signed-in user",
    example: "<api-key-id>",
    notes:
      "The API returns a key's secret only on creation and rotation: an imported key has no `key` output until " +
      "its `rotation` input changes.",
  },
  ResourceGroupMember: {
    id: "`<teamId>:<userId>`: the group's integer id and the user's id (UUID), joined by a colon",
    example: "42:<user-id>",
    notes: "The user must be a member of that group; otherwise the import finds nothing.",
  },
  UserRole: {
    id: "`<userId>:<roleName>`: the user's id (UUID) and the role's name, joined by a colon",
    example: "<user-id>:vm-operator",
    notes: "The user must hold that role; otherwise the import finds nothing.",
  },
};

const GENERATED_NOTE =
  "Generated from `provider/plugin/schema.json` by `npm run docs`: do not edit (change the kind's declaration, " +
  "then run `npm run schema` and `npm run docs`).";

/** `VirtualMachine` → `virtual-machine`, `getGpuInventory` → `get-gpu-inventory`. */
export const kebab = (name: string): string => name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();

const nameOf = (token: string): string => token.split(":").pop() ?? token;
const typeToken = (ref: string): string | undefined =>
  ref.startsWith("#/types/") ? decodeURIComponent(ref.slice("#/types/".length)) : undefined;

/** A table cell: one line, pipes escaped. */
const cell = (text: string): string => text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|");

/** The object types a type refers to, directly or through other object types, in the order they are met. */
function referencedTypes(schema: PackageSchema, roots: SchemaType[], found: string[] = []): string[] {
  const visit = (type: SchemaType | undefined): void => {
    if (type === undefined) return;
    const token = type.$ref === undefined ? undefined : typeToken(type.$ref);
    if (token !== undefined && !found.includes(token)) {
      const spec = schema.types?.[token];
      if (spec === undefined) throw new Error(`the schema refers to ${type.$ref}, which it does not define`);
      found.push(token);
      for (const property of Object.values(spec.properties ?? {})) visit(property);
    }
    visit(type.items);
    visit(type.additionalProperties);
    for (const alternative of type.oneOf ?? []) visit(alternative);
  };
  for (const root of roots) visit(root);
  return found;
}

/** A type as the reader sees it, object types linked to their section on the page. */
export function typeText(type: SchemaType): string {
  if (type.$ref !== undefined) {
    const token = typeToken(type.$ref);
    if (token !== undefined) return `[${nameOf(token)}](#${nameOf(token).toLowerCase()})`;
    if (type.$ref === "pulumi.json#/Any") return "any";
    if (type.$ref === "pulumi.json#/Archive") return "archive";
    if (type.$ref === "pulumi.json#/Asset") return "asset";
    return `\`${type.$ref}\``;
  }
  if (type.oneOf !== undefined) return type.oneOf.map(typeText).join(" or ");
  if (type.type === "array") return `array of ${type.items === undefined ? "any" : typeText(type.items)}`;
  if (type.type === "object") {
    return type.additionalProperties === undefined ? "object" : `map of ${typeText(type.additionalProperties)}`;
  }
  if (type.enum !== undefined) return type.enum.map((e) => `\`${JSON.stringify(e.value)}\``).join(", ");
  return type.type ?? "any";
}

/** A placeholder value of a type, as Pulumi's registry shows constructor examples: "string", 0, false, ... */
function placeholder(schema: PackageSchema, type: SchemaType, seen: string[] = []): unknown {
  if (type.$ref !== undefined) {
    const token = typeToken(type.$ref);
    if (token === undefined) return "any";
    if (seen.includes(token)) return {};
    const spec = schema.types?.[token];
    if (spec?.enum !== undefined) return spec.enum[0]?.value;
    return Object.fromEntries(
      Object.entries(spec?.properties ?? {}).map(([k, p]) => [k, placeholder(schema, p, [...seen, token])]),
    );
  }
  if (type.oneOf !== undefined) return placeholder(schema, type.oneOf[0]!, seen);
  if (type.enum !== undefined) return type.enum[0]?.value;
  switch (type.type) {
    case "string":
      return "string";
    case "integer":
    case "number":
      return 0;
    case "boolean":
      return false;
    case "array":
      return [placeholder(schema, type.items ?? { $ref: "pulumi.json#/Any" }, seen)];
    case "object":
      return { string: placeholder(schema, type.additionalProperties ?? { $ref: "pulumi.json#/Any" }, seen) };
    default:
      return "any";
  }
}

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A value as TypeScript source, indented by `depth` levels of two spaces. */
function tsValue(value: unknown, depth: number): string {
  const pad = "  ".repeat(depth + 1);
  const end = "  ".repeat(depth);
  if (Array.isArray(value)) return `[${value.map((v) => tsValue(v, depth)).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    const lines = entries.map(
      ([k, v]) => `${pad}${identifier.test(k) ? k : JSON.stringify(k)}: ${tsValue(v, depth + 1)},`,
    );
    return `{\n${lines.join("\n")}\n${end}}`;
  }
  return JSON.stringify(value);
}

/** A value as YAML under a key at `depth` levels of two spaces (block style; scalars as JSON, which YAML reads). */
function yamlEntries(value: Record<string, unknown>, depth: number): string[] {
  const pad = "  ".repeat(depth);
  const lines: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const name = identifier.test(key) ? key : JSON.stringify(key);
    if (Array.isArray(item)) {
      lines.push(`${pad}${name}:`);
      for (const element of item) {
        if (element !== null && typeof element === "object" && !Array.isArray(element)) {
          const [first, ...rest] = yamlEntries(element as Record<string, unknown>, depth + 2);
          lines.push(`${pad}  - ${first?.trimStart() ?? "{}"}`, ...rest);
        } else {
          lines.push(`${pad}  - ${yamlScalar(element)}`);
        }
      }
    } else if (item !== null && typeof item === "object") {
      const nested = yamlEntries(item as Record<string, unknown>, depth + 1);
      lines.push(nested.length === 0 ? `${pad}${name}: {}` : `${pad}${name}:`, ...nested);
    } else {
      lines.push(`${pad}${name}: ${yamlScalar(item)}`);
    }
  }
  return lines;
}

const yamlScalar = (value: unknown): string =>
  typeof value === "string" && /^[a-z]+$/.test(value) ? value : JSON.stringify(value);

function changeOf(property: SchemaProperty): string {
  return property.replaceOnChanges === true ? "replaces" : "in place";
}

const secretOf = (property: SchemaProperty): string => (property.secret === true ? "secret" : "");

function inputsTable(
  properties: Record<string, SchemaProperty>,
  required: string[],
  changes: boolean,
  heading = "input",
): string[] {
  const header = changes
    ? [`| ${heading} | type | required | change | secret | description |`, "| --- | --- | --- | --- | --- | --- |"]
    : [`| ${heading} | type | required | description |`, "| --- | --- | --- | --- |"];
  return [
    ...header,
    ...Object.entries(properties).map(([name, property]) => {
      const columns = [`\`${name}\``, typeText(property), required.includes(name) ? "required" : "optional"];
      if (changes) columns.push(changeOf(property), secretOf(property));
      return `| ${[...columns, property.description ?? ""].map(cell).join(" | ")} |`;
    }),
  ];
}

function outputsTable(
  properties: Record<string, SchemaProperty>,
  inputs: Record<string, SchemaProperty> | undefined,
  required: string[] | undefined,
): string[] {
  const columns = ["output", "type", ...(required ? ["always set"] : []), ...(inputs ? ["change", "secret"] : [])];
  return [
    `| ${[...columns, "description"].join(" | ")} |`,
    `| ${[...columns, "description"].map(() => "---").join(" | ")} |`,
    ...Object.entries(properties).map(([name, property]) => {
      const row = [`\`${name}\``, typeText(property)];
      if (required) row.push(required.includes(name) ? "yes" : "no");
      if (inputs) {
        const input = inputs[name];
        row.push(input === undefined ? "output only" : `input, ${changeOf(input)}`, secretOf(property));
      }
      return `| ${[...row, property.description ?? ""].map(cell).join(" | ")} |`;
    }),
  ];
}

function typesSection(schema: PackageSchema, roots: SchemaType[]): string[] {
  const tokens = referencedTypes(schema, roots);
  if (tokens.length === 0) return [];
  const lines = ["## Types", ""];
  for (const token of tokens) {
    const spec = schema.types![token]!;
    lines.push(`### ${nameOf(token)}`, "", `\`${token}\`${spec.description ? `: ${spec.description}` : ""}`, "");
    if (spec.enum !== undefined) {
      lines.push(
        "| value | description |",
        "| --- | --- |",
        ...spec.enum.map((e) => `| \`${JSON.stringify(e.value)}\` | ${cell(e.description ?? "")} |`),
        "",
      );
    } else {
      lines.push(...inputsTable(spec.properties ?? {}, spec.required ?? [], false, "property"), "");
    }
  }
  return lines;
}

const fence = (language: string, body: string[]): string[] => ["```" + language, ...body, "```"];

function resourcePage(schema: PackageSchema, token: string, spec: ResourceSpec, sdk: string): string {
  const name = nameOf(token);
  const inputs = spec.inputProperties ?? {};
  const outputs = spec.properties ?? {};
  const example = Object.fromEntries(Object.entries(inputs).map(([k, p]) => [k, placeholder(schema, p)]));
  const variable = name.charAt(0).toLowerCase() + name.slice(1);
  const resourceName = kebab(name);
  const importId = importIds[name as KindName];
  if (importId === undefined) throw new Error(`${token}: no import id format in tools/docs.ts (importIds)`);
  const secrets = Object.entries(outputs)
    .filter(([, p]) => p.secret === true)
    .map(([k]) => `\`${k}\``);
  return [
    `# ${name}`,
    "",
    `\`${token}\`: ${spec.description ?? ""}`,
    "",
    `[Reference index](README.md). ${GENERATED_NOTE}`,
    "",
    "## Example",
    "",
    "Every input with a placeholder value of its type (see the inputs below for what each accepts).",
    "",
    "TypeScript (the plugin's SDK; the dynamic resources of `@cloudinfra/pulumi` take the same arguments):",
    "",
    ...fence("ts", [
      `import * as cloudinfra from "${sdk}";`,
      "",
      `const ${variable} = new cloudinfra.${name}("${resourceName}", ${tsValue(example, 0)});`,
      "",
      `export const ${variable}Id = ${variable}.id;`,
    ]),
    "",
    "YAML:",
    "",
    ...fence("yaml", [
      "resources:",
      `  ${resourceName}:`,
      `    type: ${token}`,
      ...(Object.keys(example).length > 0 ? ["    properties:", ...yamlEntries(example, 3)] : []),
      "outputs:",
      `  ${variable}Id: \${${resourceName}.id}`,
    ]),
    "",
    "## Inputs",
    "",
    "A change of an input marked _replaces_ creates a new resource (the engine replaces it); the others are changed in place.",
    "",
    ...inputsTable(inputs, spec.requiredInputs ?? [], true),
    "",
    "## Outputs",
    "",
    secrets.length > 0
      ? `Every output is in the stack state; ${secrets.join(", ")} ${secrets.length > 1 ? "are" : "is"} stored and shown as secret${secrets.length > 1 ? "s" : ""}.`
      : "Every output is in the stack state; none is secret.",
    "",
    ...outputsTable(outputs, inputs, spec.required),
    "",
    "## Import",
    "",
    `The id is ${importId.id}.${importId.notes ? ` ${importId.notes}` : ""}`,
    "",
    ...fence("sh", [`pulumi import ${token} ${resourceName} '${importId.example}'`]),
    "",
    "In a program: `import: <id>` in the resource options, or `" +
      `cloudinfra.${name}.get("${resourceName}", id)` +
      "` to read it without managing it.",
    "",
    ...typesSection(schema, [...Object.values(inputs), ...Object.values(outputs)]),
  ].join("\n");
}

function functionPage(schema: PackageSchema, token: string, spec: FunctionSpec, sdk: string): string {
  const name = nameOf(token);
  const inputs = spec.inputs?.properties ?? {};
  const outputs = spec.outputs?.properties ?? {};
  // A lookup takes `id` or its name, exactly one: the example looks up by name; `entityId` is for child entities.
  const alternatives = new Set(["entityId", ...("name" in inputs || "email" in inputs ? ["id"] : [])]);
  const example = Object.fromEntries(
    Object.entries(inputs)
      .filter(([k]) => !alternatives.has(k))
      .map(([k, p]) => [k, placeholder(schema, p)]),
  );
  const firstOutput = Object.keys(outputs)[0];
  const noun = name.replace(/^get/, "").replace(/^./, (c) => c.toLowerCase());
  // A list's first output has the list's name (`networks`): the result is then `found`.
  const result = noun === firstOutput ? "found" : noun;
  return [
    `# ${name}`,
    "",
    `\`${token}\`: ${spec.description ?? ""}`,
    "",
    `[Reference index](README.md). ${GENERATED_NOTE}`,
    "",
    "## Example",
    "",
    "The arguments with a placeholder value of their type (see the inputs below for what each accepts).",
    "",
    `TypeScript: \`${name}(args)\` returns a promise, \`${name}Output(args)\` an output (for arguments that are outputs themselves):`,
    "",
    ...fence("ts", [
      `import * as cloudinfra from "${sdk}";`,
      "",
      `const ${result} = cloudinfra.${name}Output(${tsValue(example, 0)});`,
      "",
      ...(firstOutput === undefined ? [] : [`export const ${firstOutput} = ${result}.${firstOutput};`]),
    ]),
    "",
    "YAML:",
    "",
    ...fence("yaml", [
      "variables:",
      `  ${result}:`,
      "    fn::invoke:",
      `      function: ${token}`,
      ...(Object.keys(example).length > 0 ? ["      arguments:", ...yamlEntries(example, 4)] : []),
      ...(firstOutput === undefined ? [] : ["outputs:", `  ${firstOutput}: \${${result}.${firstOutput}}`]),
    ]),
    "",
    "## Inputs",
    "",
    ...(Object.keys(inputs).length > 0 ? inputsTable(inputs, spec.inputs?.required ?? [], false) : ["None."]),
    "",
    "## Outputs",
    "",
    ...outputsTable(outputs, undefined, spec.outputs?.required),
    "",
    ...typesSection(schema, [...Object.values(inputs), ...Object.values(outputs)]),
  ].join("\n");
}

function indexPage(schema: PackageSchema, pages: { file: string; token: string; description?: string }[]): string {
  const firstSentence = (text = "") => /^.*?\.(?=\s|$)/.exec(text)?.[0] ?? text;
  const row = (p: { file: string; token: string; description?: string }) =>
    `| [${nameOf(p.token)}](${p.file}) | \`${p.token}\` | ${cell(firstSentence(p.description))} |`;
  const resources = pages.filter((p) => schema.resources?.[p.token] !== undefined);
  const functions = pages.filter((p) => schema.functions?.[p.token] !== undefined);
  const variables = schema.config?.variables ?? {};
  return [
    `# ${schema.name} reference`,
    "",
    `${schema.description ?? ""}. ${GENERATED_NOTE}`,
    "",
    "Each page covers one resource or function of the provider plugin (`pulumi-resource-cloudinfra`): its inputs and",
    "outputs with their types, how a change of each input applies, which are secret, the object types it uses, an",
    "example in TypeScript and YAML, and the id `pulumi import` takes. The dynamic resources of `@cloudinfra/pulumi`",
    "(type tokens `pulumi-nodejs:dynamic/cloudinfra:<Kind>`) take the same inputs and have the same outputs; they",
    "cannot be imported (use `adopt: true` where a kind offers it). The TypeScript examples import",
    `\`${schema.language?.nodejs?.packageName ?? "the plugin's SDK"}\`, the SDK \`pulumi package add\` generates and installs`,
    "(the package bundles the same SDK as `@cloudinfra/pulumi/plugin`: see",
    "[the provider plugin](../guides/dynamic-vs-plugin.md#the-provider-plugin)). A YAML",
    "program, or a program using the bundled SDK, names the plugin in its `Pulumi.yaml`:",
    "",
    ...fence("yaml", [
      "plugins:",
      "  providers:",
      "    - name: cloudinfra",
      "      path: node_modules/@cloudinfra/pulumi",
    ]),
    "",
    "## Resources",
    "",
    "| resource | token | what it is |",
    "| --- | --- | --- |",
    ...resources.map(row),
    "",
    "## Functions",
    "",
    "| function | token | what it returns |",
    "| --- | --- | --- |",
    ...functions.map(row),
    "",
    "## Provider configuration",
    "",
    "Stack config `cloudinfra:<name>` (or the arguments of an explicit `cloudinfra.Provider`), each with an environment",
    "variable as fallback:",
    "",
    "| name | type | secret | description |",
    "| --- | --- | --- | --- |",
    ...Object.entries(variables).map(
      ([name, p]) => `| \`${name}\` | ${cell(typeText(p))} | ${secretOf(p)} | ${cell(p.description ?? "")} |`,
    ),
    "",
  ].join("\n");
}

/**
 * The reference pages of a schema, as committed (relative path under docs/reference → Markdown formatted as the
 * repository's Prettier formats it): README.md (the index and the provider's configuration), a page per resource
 * (`network.md`) and per function (`get-gpu-inventory.md`).
 */
export async function referencePages(
  schema: PackageSchema,
  root: string = repositoryRoot(),
): Promise<Map<string, string>> {
  const sdk = schema.language?.nodejs?.packageName ?? "@cloudinfra/pulumi/plugin";
  const raw = new Map<string, string>();
  const listed: { file: string; token: string; description?: string }[] = [];
  for (const [token, spec] of Object.entries(schema.resources ?? {})) {
    const file = `${kebab(nameOf(token))}.md`;
    raw.set(file, resourcePage(schema, token, spec, sdk));
    listed.push({ file, token, description: spec.description });
  }
  for (const [token, spec] of Object.entries(schema.functions ?? {})) {
    const file = `${kebab(nameOf(token))}.md`;
    if (raw.has(file)) throw new Error(`two pages would be ${file}: ${token} and another`);
    raw.set(file, functionPage(schema, token, spec, sdk));
    listed.push({ file, token, description: spec.description });
  }
  raw.set("README.md", indexPage(schema, listed));
  const prettier = await import("prettier");
  const pages = new Map<string, string>();
  for (const [file, text] of raw) {
    const target = path.join(referenceDirectory(root), file);
    const options = (await prettier.resolveConfig(target)) ?? {};
    pages.set(file, await prettier.format(text, { ...options, filepath: target, parser: "markdown" }));
  }
  return pages;
}

/** Where the reference pages are committed. */
export const referenceDirectory = (root: string = repositoryRoot()): string => path.join(root, "docs", "reference");

/** The committed schema. */
export function readSchema(root: string = repositoryRoot()): PackageSchema {
  return JSON.parse(fs.readFileSync(path.join(root, "provider", "plugin", "schema.json"), "utf8")) as PackageSchema;
}

/** Writes the reference pages of the committed schema into docs/reference (and nothing else there). */
export async function writeReference(root: string = repositoryRoot()): Promise<Map<string, string>> {
  const pages = await referencePages(readSchema(root), root);
  const target = referenceDirectory(root);
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(target, { recursive: true });
  for (const [file, text] of pages) fs.writeFileSync(path.join(target, file), text);
  return pages;
}

/** The inputs the documented API does not report back (rows of kind, input, when it is read back). */
export const unreportedInputsTable: ReadmeTable = {
  file: "docs/guides/resources.md",
  start: "<!-- unreported-inputs: generated from the kinds' inputFields; test/readme/readme.test.ts checks it -->",
  end: "<!-- /unreported-inputs -->",
  header: ["kind", "input", "reported back"],
  rows: () => unreportedInputs(),
};

/**
 * The inputs the documented API does not report back, from the kinds' declarations (provider/resources/fields.ts):
 * what `refresh` cannot see change against an API that sends only what the spec documents. Rows of kind, input, and
 * when it is read back.
 */
export function unreportedInputs(): [string, string, string][] {
  const said = { undocumented: "only where the API sends an undocumented field", never: "never" } as const;
  return Object.entries(kinds).flatMap(([kind, { inputs }]) =>
    Object.entries(inputs.fields)
      .filter(([, field]) => field.change !== "ignored" && field.reported !== "documented")
      .map(([input, field]): [string, string, string] => [
        kind,
        `\`${input}\``,
        said[field.reported as keyof typeof said],
      ]),
  );
}

/** The rows of the table of unreported inputs in the text of its page (docs/guides/resources.md), as cells. */
export function readmeUnreportedInputs(page: string): string[][] {
  return readmeTableRows(page, unreportedInputsTable);
}

async function main(): Promise<void> {
  const root = repositoryRoot();
  const pages = await writeReference(root);
  process.stdout.write(`wrote ${path.relative(root, referenceDirectory(root))} (${pages.size} pages)\n`);
  const prettier = await import("prettier");
  for (const table of [unreportedInputsTable, errorCodesTable, settingsTable]) {
    const file = path.join(root, table.file);
    const options = (await prettier.resolveConfig(file)) ?? {};
    const text = withTable(fs.readFileSync(file, "utf8"), table);
    fs.writeFileSync(file, await prettier.format(text, { ...options, parser: "markdown" }));
    process.stdout.write(`wrote the table ${table.start.replace(/^<!-- ([\w-]+):.*$/, "$1")} of ${table.file}\n`);
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
