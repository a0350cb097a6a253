import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type * as sdk from "../../sdk";
import { kinds } from "../../provider/resources";
import { dataFunctions } from "../../provider/resources/lookups";
import { diffSpecOf, inputsAsReported, type InputField, type InputFields } from "../../provider/resources/fields";
import { outputDescriptions } from "../../tools/descriptions";
import type { ApiKeyInputs, ApiKeyOutputs } from "../../provider/resources/api-key";
import type { OutputName } from "../../provider/resources/kind";
import type { GpuVirtualMachineInputs } from "../../provider/resources/gpu-virtual-machine";
import type { NetworkInputs } from "../../provider/resources/network";
import type { ResourceGroupInputs } from "../../provider/resources/resource-group";
import type { ResourceGroupMemberInputs } from "../../provider/resources/resource-group-member";
import type { UserRoleInputs } from "../../provider/resources/user-role";
import type { UserInputs } from "../../provider/resources/user";
import type { VirtualMachineInputs } from "../../provider/resources/virtual-machine";
import type { VolumeAttachmentInputs } from "../../provider/resources/volume-attachment";
import type { VolumeInputs } from "../../provider/resources/volume";

const sample: Record<string, unknown> = { string: "a", number: 1, boolean: true };

/** A value of the same type as `value` that differs from it. */
function other(value: unknown): unknown {
  if (typeof value === "string") return `${value}-changed`;
  if (typeof value === "number") return value + 1;
  if (typeof value === "boolean") return !value;
  if (Array.isArray(value)) return [...value, sample.string];
  return { changed: true };
}

describe.each(["VirtualMachine", "GpuVirtualMachine"] as const)("exposePrivateKey of %s", (name) => {
  const kind = kinds[name];
  const olds = { name: "a", status: "Running" };
  it("turned on, off or removed is an in-place change, never a replacement; absent on both sides is none", () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, boolean][] = [
      [olds, { ...olds, exposePrivateKey: true }, true],
      [{ ...olds, exposePrivateKey: true }, { ...olds, exposePrivateKey: false }, true],
      [{ ...olds, exposePrivateKey: true }, olds, true],
      [{ ...olds, exposePrivateKey: true }, { ...olds, exposePrivateKey: true }, false],
      [olds, olds, false],
    ];
    for (const [before, after, changes] of cases) {
      expect(kind.diff("id", before, after)).toMatchObject({ changes, replaces: [] });
    }
  });
});

describe.each(Object.entries(kinds))("the declaration of %s", (_name, kind) => {
  const { schema, fields } = kind.inputs;
  const inputNames = Object.keys(schema.shape);

  it("describes every output (the outputs beyond the inputs: .describe() on the zod outputs)", () => {
    expect(() => outputDescriptions(kind)).not.toThrow();
  });

  it("declares as secret outputs only outputs it has (an input's or one beyond the inputs)", () => {
    const outputNames = [...inputNames, ...Object.keys(kind.outputs.shape)];
    expect((kind.secretOutputs ?? []).filter((name) => !outputNames.includes(name))).toEqual([]);
  });

  it("classifies every input of its schema", () => {
    const unclassified = inputNames.filter((name) => !(name in fields));
    expect(unclassified).toEqual([]);
  });

  it("classifies nothing but inputs, except values only the provider sets (ignored)", () => {
    const strays = Object.entries(fields).filter(
      ([name, field]) => !inputNames.includes(name) && field.change !== "ignored",
    );
    expect(strays.map(([name]) => name)).toEqual([]);
  });

  it("diffs each input as classified: replace, in place, or not at all", () => {
    const olds: Record<string, unknown> = Object.fromEntries(inputNames.map((name) => [name, `old-${name}`]));
    for (const [name, field] of Object.entries(fields)) {
      if (!inputNames.includes(name)) continue;
      const result = kind.diff("id", olds, { ...olds, [name]: other(olds[name]) });
      const expected = {
        replace: { changes: true, replaced: true },
        inPlace: { changes: true, replaced: false },
        ignored: { changes: false, replaced: false },
      }[field.change];
      expect({ name, changes: result.changes, replaced: result.replaces.includes(name) }).toEqual({
        name,
        ...expected,
      });
    }
  });
});

describe("inputs the API does not report back", () => {
  const fields = {
    shown: { change: "inPlace", reported: "documented", description: "Reported by a documented answer." },
    extra: { change: "replace", reported: "undocumented", description: "Reported by an undocumented field." },
    hidden: { change: "replace", reported: "never", description: "Never reported." },
  } as const;

  it("keep the program's value when the API is silent, and take the API's when it speaks", () => {
    const given = { shown: "program", extra: "program", hidden: "program" };
    expect(inputsAsReported(fields, given, { shown: "api", extra: undefined, hidden: "api" })).toEqual({
      shown: "api",
      extra: "program",
      hidden: "program",
    });
    expect(inputsAsReported(fields, given, { shown: "api", extra: "api" })).toEqual({
      shown: "api",
      extra: "api",
      hidden: "program",
    });
  });

  it("derive the diff rules from the classification", () => {
    const schema = z.object({
      shown: z.string(),
      extra: z.string(),
      hidden: z.string().optional(),
      steer: z.boolean(),
    });
    const spec = diffSpecOf(schema, {
      ...fields,
      steer: { change: "ignored", reported: "never", clearable: false, description: "d" },
    });
    expect(spec).toMatchObject({
      inPlace: ["shown"],
      replaceOnChanges: ["extra", "hidden"],
      ignored: ["steer"],
      clearable: [],
      takenFromProgram: ["extra"],
    });
  });

  it("let an imported VM, whose image id the API does not report, take the program's without a replacement", () => {
    const virtualMachine = kinds.VirtualMachine;
    const imported = { name: "web", datacenterId: "dc", configurationId: 1, powerState: "running" };
    const program = { ...imported, imageId: 3 };
    expect(virtualMachine.diff("id", imported, program)).toMatchObject({ changes: false, replaces: [] });
    // Known, the image id still replaces the VM when the program changes it.
    expect(virtualMachine.diff("id", { ...imported, imageId: 2 }, program)).toMatchObject({ replaces: ["imageId"] });
  });
});

describe("the declaration's types", () => {
  it("refuse a kind's input left unclassified, or a name that is not an input", () => {
    // @ts-expect-error: `adopt` is an input of Volume and is not classified.
    const missing: InputFields<VolumeInputs> = {
      name: { change: "replace", reported: "documented", description: "d" },
      datacenterId: { change: "replace", reported: "documented", description: "d" },
      volumeTypeId: { change: "replace", reported: "documented", description: "d" },
      sizeGb: { change: "inPlace", reported: "documented", description: "d" },
      volumeSizeId: { change: "inPlace", reported: "documented", description: "d" },
      teamId: { change: "replace", reported: "documented", description: "d" },
    };
    const stray = {
      name: { change: "replace", reported: "documented", description: "d" },
      roleId: { change: "replace", reported: "undocumented", description: "d" },
      expiresInDays: { change: "replace", reported: "never", description: "d" },
      metadata: { change: "replace", reported: "undocumented", description: "d" },
      enabled: { change: "inPlace", reported: "documented", description: "d" },
      rotation: { change: "inPlace", reported: "never", description: "d" },
      // @ts-expect-error: `userId` is an output of ApiKey, not an input.
      userId: { change: "inPlace", reported: "documented", description: "d" },
    } satisfies InputFields<ApiKeyInputs>;
    expect([missing, stray]).toHaveLength(2);
  });

  it("refuse a secret output that is not an output of the kind", () => {
    const secrets = ["key", "name"] satisfies OutputName<typeof ApiKeyInputs, typeof ApiKeyOutputs>[];
    // @ts-expect-error: `sshPrivateKey` is an output of the VMs, not of ApiKey.
    const stray = ["sshPrivateKey"] satisfies OutputName<typeof ApiKeyInputs, typeof ApiKeyOutputs>[];
    expect([secrets, stray]).toHaveLength(2);
  });

  it("refuse an input without its description", () => {
    // @ts-expect-error: every input is described (the schema's text and the dynamic SDK's doc).
    const undescribed: InputField = { change: "replace", reported: "documented" };
    expect(undescribed.change).toBe("replace");
  });

  it("make each dynamic SDK class take exactly the inputs its kind declares", () => {
    // The program's inputs: every input the kind classifies, less those only the provider sets.
    type Declared<I> = Exclude<keyof I, "configurationSize">;
    type Args<T> = T extends unknown ? keyof T : never;
    expectTypeOf<keyof sdk.NetworkArgs>().toEqualTypeOf<Declared<NetworkInputs>>();
    expectTypeOf<keyof sdk.VirtualMachineArgs>().toEqualTypeOf<Declared<VirtualMachineInputs>>();
    expectTypeOf<Args<sdk.GpuVirtualMachineArgs>>().toEqualTypeOf<Declared<GpuVirtualMachineInputs>>();
    expectTypeOf<keyof sdk.VolumeArgs>().toEqualTypeOf<Declared<VolumeInputs>>();
    expectTypeOf<keyof sdk.VolumeAttachmentArgs>().toEqualTypeOf<Declared<VolumeAttachmentInputs>>();
    expectTypeOf<keyof sdk.ResourceGroupArgs>().toEqualTypeOf<Declared<ResourceGroupInputs>>();
    expectTypeOf<keyof sdk.UserArgs>().toEqualTypeOf<Declared<UserInputs>>();
    expectTypeOf<keyof sdk.ApiKeyArgs>().toEqualTypeOf<Declared<ApiKeyInputs>>();
    expectTypeOf<keyof sdk.ResourceGroupMemberArgs>().toEqualTypeOf<Declared<ResourceGroupMemberInputs>>();
    expectTypeOf<keyof sdk.UserRoleArgs>().toEqualTypeOf<Declared<UserRoleInputs>>();
  });
});

describe("the data functions' declarations", () => {
  // The GPU inventory's and the volume sizes' arguments and results are still described by sdk/data.ts.
  const declared = Object.entries(dataFunctions).filter(
    ([name]) => !["getGpuInventory", "getVolumeSizes"].includes(name),
  );
  const undescribed = (schema: z.ZodObject) => {
    const json = z.toJSONSchema(schema, { unrepresentable: "any" }) as {
      properties?: Record<string, { description?: string }>;
    };
    return Object.entries(json.properties ?? {})
      .filter(([, value]) => !value.description)
      .map(([key]) => key);
  };

  it.each(declared)("%s describes itself and each argument", (_name, fn) => {
    expect(fn.description).not.toBe("");
    expect(undescribed(fn.argsShape)).toEqual([]);
  });

  // A kind's single lookup has its result described by the kind's declaration (tools/schema.ts); the others their own.
  const ownResults = declared.filter(([name, fn]) => fn.describes === undefined || name !== `get${fn.describes}`);
  it.each(ownResults)("%s describes each result", (_name, fn) => {
    expect(undescribed(fn.result)).toEqual([]);
  });
});
