import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { kinds, type KindName } from "../../provider/resources";
import type { ResourceKind } from "../../provider/resources/kind";
import { repositoryRoot } from "../../tools/pulumi-cli";
import { sdkFile } from "../../tools/descriptions";
import { dataFunctions } from "../../provider/resources/lookups";
import { lookupDocsText, sdkDocsText, withDocs, withLookupDocs } from "../../tools/sdk-docs";

const root = repositoryRoot();
const sdkSource = (kind: KindName) => fs.readFileSync(path.join(root, "sdk", sdkFile(kind)), "utf8");

describe("the dynamic SDK's docs", () => {
  it.each(Object.keys(kinds) as KindName[])(
    "of sdk/%s are what its declaration says (run `npm run sdk-docs` when this fails)",
    (kind) => {
      expect(sdkSource(kind)).toBe(sdkDocsText(root, kind));
    },
  );

  it("follow a description changed in the declaration: the class's, an argument's, an output's", () => {
    const volume = kinds.Volume;
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
    const text = withDocs(sdkSource("Volume"), changed);
    expect(text).toContain("\n/** A changed class doc. */\nexport class Volume ");
    expect(text).toContain("\n  /** A changed argument doc. */\n  sizeGb: pulumi.Input<number>;");
    expect(text).toContain("\n  /** A changed output doc. */\n  declare readonly createdAt: ");
    expect(text).not.toBe(sdkSource("Volume"));
  });

  it("follow a nested member's description (on the zod schema), in an interface of the SDK", () => {
    const vm = kinds.VirtualMachine;
    const nics = vm.inputs.fields.networkInterfaces!;
    const reported = nics.reportedShape!;
    const changed: ResourceKind = {
      ...vm,
      inputs: {
        ...vm.inputs,
        fields: {
          ...vm.inputs.fields,
          networkInterfaces: {
            ...nics,
            reportedShape: reported
              .extend({ id: z.string().describe("A changed id.") })
              .describe(reported.description!),
          },
        },
      },
    };
    expect(withDocs(sdkSource("VirtualMachine"), changed)).toContain("\n  /** A changed id. */\n  id: string;");
  });

  it("refuse an argument or an output that the declaration does not have, naming it", () => {
    const source = sdkSource("Volume");
    const extraArgument = source.replace(
      "  adopt?: pulumi.Input<boolean>;\n",
      "  adopt?: pulumi.Input<boolean>;\n  colour?: pulumi.Input<string>;\n",
    );
    expect(() => withDocs(extraArgument, kinds.Volume)).toThrow("Volume: the argument colour is not an input");
    const extraOutput = source.replace(
      "  declare readonly createdAt",
      "  declare readonly colour: pulumi.Output<string>;\n  declare readonly createdAt",
    );
    expect(() => withDocs(extraOutput, kinds.Volume)).toThrow("Volume: the output colour is not an output");
  });

  it("refuse an output the declaration leaves undescribed, naming it", () => {
    const volume = kinds.Volume;
    const undescribed: ResourceKind = { ...volume, outputs: volume.outputs.extend({ colour: z.string() }) };
    expect(() => withDocs(sdkSource("Volume"), undescribed)).toThrow("Volume: the output colour has no description");
  });
});

describe("the dynamic SDK's data function docs (sdk/lookups.ts)", () => {
  const source = () => fs.readFileSync(path.join(root, "sdk", "lookups.ts"), "utf8");

  it("are what the data functions' declarations say (run `npm run sdk-docs` when this fails)", () => {
    expect(source()).toBe(lookupDocsText(root));
  });

  it("follow a changed function description, argument and result member, with the function's own example", () => {
    const fn = dataFunctions.getVolumes!;
    const changed = {
      ...dataFunctions,
      getVolumes: {
        ...fn,
        description: "A changed function doc.",
        argsShape: fn.argsShape.extend({ sizeGb: z.number().optional().describe("A changed filter doc.") }),
        result: fn.result.extend({ count: z.number().describe("A changed count doc.") }),
      },
    };
    const text = withLookupDocs(source(), changed);
    expect(text).toContain(
      "/**\n * A changed function doc.\n *\n * @example\n * const { volumes, count } = await getVolumes({});\n */\nexport function getVolumes(",
    );
    expect(text).toContain("\n  /** A changed filter doc. */\n  sizeGb?: number;");
    expect(text).toMatch(/interface GetVolumesResult \{[^}]*\/\*\* A changed count doc\. \*\/\n {2}count: number;/);
  });

  it("refuse an argument the declaration does not describe, naming it", () => {
    const extra = source().replace(
      "export interface GetVolumesArgs extends EntityArgs {\n",
      "export interface GetVolumesArgs extends EntityArgs {\n  colour?: string;\n",
    );
    expect(() => withLookupDocs(extra)).toThrow("getVolumes's arguments: colour is not described by the declaration");
  });
});
