import * as fs from "node:fs";
import * as path from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { kinds, type KindName } from "../../provider/resources";
import type { ResourceKind } from "../../provider/resources/kind";
import { repositoryRoot } from "../../tools/pulumi-cli";
import { sdkFile } from "../../tools/descriptions";
import { dataFunctions } from "../../provider/resources/lookups";
import { dynamicSdkFiles, handWrittenFunctions, kindSdkText, lookupsSdkText } from "../../tools/sdk-gen";

const root = repositoryRoot();
const committed = (name: string) => fs.readFileSync(path.join(root, "sdk", name), "utf8");
const kindNames = Object.keys(kinds) as KindName[];

/** The members of the class or interface `name` of a TypeScript source (properties only). */
function membersOf(source: string, name: string): string[] {
  const file = ts.createSourceFile("sdk.ts", source, ts.ScriptTarget.ES2022, true);
  const found = file.statements.find(
    (s): s is ts.ClassDeclaration | ts.InterfaceDeclaration =>
      (ts.isClassDeclaration(s) || ts.isInterfaceDeclaration(s)) && s.name?.text === name,
  );
  if (found === undefined) throw new Error(`no ${name} in the source`);
  return (found.members as ts.NodeArray<ts.Node>)
    .filter(
      (m): m is ts.PropertyDeclaration | ts.PropertySignature =>
        ts.isPropertyDeclaration(m) || ts.isPropertySignature(m),
    )
    .map((m) => m.name.getText(file));
}

describe("the dynamic SDK's files", () => {
  let files: Map<string, string>;
  beforeAll(async () => {
    files = await dynamicSdkFiles(root);
  }, 60_000);

  it.each([...kindNames.map(sdkFile), "lookups.ts"])("sdk/%s is what `npm run sdk-gen` writes", (name) => {
    expect(committed(name), `sdk/${name} is not what the declarations say: run \`npm run sdk-gen\``).toBe(
      files.get(name),
    );
  });

  it.each(kindNames)("%s declares an output for every input and every declared output, and nothing else", (kind) => {
    const { inputs, outputs } = kinds[kind];
    const declared = [...Object.keys(inputs.schema.shape), ...Object.keys(outputs.shape)];
    expect(membersOf(committed(sdkFile(kind)), kind).sort()).toEqual([...new Set(declared)].sort());
  });
});

describe("a kind's file follows its declaration", () => {
  const volume = kinds.Volume;

  it("an input dropped from the declaration is gone from the arguments and the outputs (Volume without teamId)", async () => {
    const { teamId: _input, ...shape } = volume.inputs.schema.shape;
    const { teamId: _field, ...fields } = volume.inputs.fields;
    const withoutTeam: ResourceKind = { ...volume, inputs: { schema: z.strictObject(shape), fields } };
    const before = await kindSdkText(volume);
    const after = await kindSdkText(withoutTeam);
    expect(before).toContain("  declare readonly teamId: pulumi.Output<number | null>;");
    expect(before).toContain("  teamId?: pulumi.Input<ResourceGroupRef>;");
    expect(after).not.toContain("declare readonly teamId");
    expect(after).not.toContain("teamId?:");
    // Nothing names the resource group any more: its type is not imported.
    expect(after).not.toContain("ResourceGroupRef");
  });

  it("an output dropped from the declaration's zod is gone from the class", async () => {
    const text = await kindSdkText({ ...volume, outputs: volume.outputs.omit({ createdAt: true }) });
    expect(await kindSdkText(volume)).toContain("  declare readonly createdAt: pulumi.Output<string>;");
    expect(text).not.toContain("createdAt");
  });

  it("types an output as its zod says: nullable, optional, a reported type", async () => {
    const changed: ResourceKind = {
      ...volume,
      outputs: volume.outputs.extend({
        colour: z.string().nullable().describe("A colour."),
        shade: z.enum(["light", "dark"]).optional().describe("A shade."),
      }),
      inputs: {
        ...volume.inputs,
        fields: { ...volume.inputs.fields, sizeGb: { ...volume.inputs.fields.sizeGb, reportedType: z.string() } },
      },
    };
    const text = await kindSdkText(changed);
    expect(text).toContain("  /** A colour. */\n  declare readonly colour: pulumi.Output<string | null>;");
    expect(text).toContain('  declare readonly shade: pulumi.Output<"light" | "dark" | undefined>;');
    expect(text).toContain("  declare readonly sizeGb: pulumi.Output<string>;");
  });

  it("follows a description changed in the declaration: the class's, an argument's, an output's", async () => {
    const { fields } = volume.inputs;
    const changed: ResourceKind = {
      ...volume,
      description: "A changed class doc.",
      inputs: {
        ...volume.inputs,
        fields: { ...fields, sizeGb: { ...fields.sizeGb, description: "A changed argument doc." } },
      },
      outputs: volume.outputs.extend({ createdAt: z.string().describe("A changed output doc.") }),
    };
    const text = await kindSdkText(changed);
    expect(text).toContain("\n/** A changed class doc. */\nexport class Volume ");
    expect(text).toContain("\n  /** A changed argument doc. */\n  sizeGb: pulumi.Input<number>;");
    expect(text).toContain("\n  /** A changed output doc. */\n  declare readonly createdAt: ");
  });

  it("follows a nested member's description (on the zod schema)", async () => {
    const vm = kinds.VirtualMachine;
    const nics = vm.inputs.fields.networkInterfaces!;
    const reported = nics.reportedShape!.extend({ id: z.string().describe("A changed id.") });
    const changed: ResourceKind = {
      ...vm,
      inputs: {
        ...vm.inputs,
        fields: {
          ...vm.inputs.fields,
          networkInterfaces: { ...nics, reportedShape: reported, reportedType: z.array(reported) },
        },
      },
    };
    expect(await kindSdkText(changed)).toMatch(/\/\*\* A changed id\. \*\/\s+id: string;/);
  });

  it("refuses an output the declaration leaves undescribed, naming it", async () => {
    const undescribed: ResourceKind = { ...volume, outputs: volume.outputs.extend({ colour: z.string() }) };
    await expect(kindSdkText(undescribed)).rejects.toThrow("Volume: the output colour has no description");
  });

  it("refuses a reported type that does not hold the objects the docs describe (reportedShape)", async () => {
    const vm = kinds.VirtualMachine;
    const nics = vm.inputs.fields.networkInterfaces!;
    const changed: ResourceKind = {
      ...vm,
      inputs: {
        ...vm.inputs,
        fields: { ...vm.inputs.fields, networkInterfaces: { ...nics, reportedType: undefined } },
      },
    };
    await expect(kindSdkText(changed)).rejects.toThrow("VirtualMachine: the input networkInterfaces reports objects");
  });
});

describe("the data functions' file (sdk/lookups.ts) follows dataFunctions", () => {
  const handWritten = handWrittenFunctions(root);

  it("leaves the functions sdk/data.ts writes by hand to it, and writes every other", async () => {
    const text = await lookupsSdkText(dataFunctions, handWritten);
    for (const name of Object.keys(dataFunctions)) {
      const declared = text.includes(`\nexport function ${name}(`);
      expect({ name, declared }).toEqual({ name, declared: !handWritten.has(name) });
    }
  });

  it("follows a changed function description, argument and result member, with the function's own example", async () => {
    const fn = dataFunctions.getVolumes!;
    const changed = {
      ...dataFunctions,
      getVolumes: {
        ...fn,
        description: "A changed function doc.",
        argsShape: fn.argsShape.extend({
          sizeGb: z.number().optional().describe("A changed filter doc."),
          colour: z.enum(["red", "blue"]).optional().describe("A new filter."),
        }),
        result: fn.result.extend({ count: z.number().describe("A changed count doc.") }),
      },
    };
    const text = await lookupsSdkText(changed, handWritten);
    expect(text).toContain(
      "/**\n * A changed function doc.\n *\n * @example\n * const { volumes, count } = await getVolumes({});\n */\nexport function getVolumes(",
    );
    expect(text).toContain("\n  /** A changed filter doc. */\n  sizeGb?: number;");
    expect(text).toContain('\n  /** A new filter. */\n  colour?: "red" | "blue";');
    expect(text).toMatch(
      /interface GetVolumesResult \{[\s\S]*?\/\*\* A changed count doc\. \*\/\n {2}count: number;\n\}/,
    );
  });

  it("refuses an argument the declaration does not describe, naming it", async () => {
    const fn = dataFunctions.getVolumes!;
    const changed = { ...dataFunctions, getVolumes: { ...fn, argsShape: fn.argsShape.extend({ colour: z.string() }) } };
    await expect(lookupsSdkText(changed, handWritten)).rejects.toThrow(
      "getVolumes's arguments: colour is not described by the declaration",
    );
  });
});
