/**
 * The kinds' descriptions as the generators read them (tools/schema.ts, tools/sdk-gen.ts): every one is in the
 * declaration (provider/resources), none is read back from the SDK's comments.
 */
import type { z } from "zod";
import type { ResourceKind } from "../provider/resources/kind";

/** The SDK file of a kind (kebab case of its name), under sdk/. */
export const sdkFile = (kind: string) => `${kind.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase()}.ts`;

/** An output as the declaration describes it: its text, and an object value as the API reports it (described zod). */
export interface OutputDescription {
  readonly description: string;
  readonly reportedShape?: z.ZodObject;
}

/**
 * The descriptions of a kind's outputs, for the schema and the dynamic SDK: each input as an output (its `output`
 * text, else the input's), then the outputs beyond the inputs (their `.describe()`). An output left undescribed
 * throws, naming it.
 */
export function outputDescriptions(kind: ResourceKind): Map<string, OutputDescription> {
  const described = new Map<string, OutputDescription>();
  for (const [key, field] of Object.entries(kind.inputs.fields)) {
    if (!(key in kind.inputs.schema.shape)) continue;
    const reportedShape = field.reportedShape;
    described.set(key, { description: field.output ?? field.description, ...(reportedShape ? { reportedShape } : {}) });
  }
  for (const [key, value] of Object.entries(kind.outputs.shape)) {
    const description = (value as z.ZodType).description;
    if (description === undefined) {
      throw new Error(
        `${kind.name}: the output ${key} has no description: give it one with .describe() in ${kind.name}Outputs`,
      );
    }
    described.set(key, { description });
  }
  return described;
}
