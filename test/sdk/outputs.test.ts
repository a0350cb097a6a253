/**
 * Each dynamic SDK class exposes every output its kind declares (the inputs, and the outputs beyond them): a property
 * the class declares but leaves out of the placeholders it passes to Pulumi would stay undefined on the resource.
 * The class's declared properties are the schema's, which `npm run schema` builds only when they equal the kind's.
 */
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { kinds, type KindName } from "../../provider/resources";
import schema from "../../provider/plugin/schema.json";
import * as sdk from "../../sdk";

beforeAll(() =>
  pulumi.runtime.setMocks(
    {
      newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs as Record<string, unknown> }),
      call: (args) => args.inputs as Record<string, unknown>,
    },
    "project",
    "stack",
    false,
  ),
);

const dc = "0b5d4a1e-7c1f-4f7e-9a55-1c8f2f6d3a10";
const minimal: Record<KindName, () => pulumi.CustomResource> = {
  Network: () => new sdk.Network("net", { name: "n", datacenterId: dc, networkType: "standard" }),
  VirtualMachine: () => new sdk.VirtualMachine("vm", { name: "vm", datacenterId: dc, imageId: 1, configurationId: 1 }),
  GpuVirtualMachine: () => new sdk.GpuVirtualMachine("gpu", { name: "g", datacenterId: dc, seriesId: 1, gpuCount: 1 }),
  Volume: () => new sdk.Volume("vol", { name: "v", datacenterId: dc, volumeTypeId: 1, sizeGb: 10 }),
  VolumeAttachment: () => new sdk.VolumeAttachment("att", { volumeId: "vol-id", virtualMachineId: "vm-id" }),
  ResourceGroup: () => new sdk.ResourceGroup("group", { name: "rg" }),
  User: () => new sdk.User("user", { email: "someone@example.com" }),
  ApiKey: () => new sdk.ApiKey("key", { name: "ci" }),
  ResourceGroupMember: () => new sdk.ResourceGroupMember("member", { teamId: 1, userId: "user-id" }),
  UserRole: () => new sdk.UserRole("role", { userId: "user-id", roleName: "vm-operator" }),
};

describe.each(Object.keys(kinds) as KindName[])("the dynamic SDK's %s", (kind) => {
  it("has an output for every property its kind declares", () => {
    const resource = minimal[kind]() as unknown as Record<string, unknown>;
    const declared = Object.keys(
      (schema.resources as Record<string, { properties: Record<string, unknown> }>)[`cloudinfra:index:${kind}`]!
        .properties,
    );
    expect(declared).toEqual(expect.arrayContaining(Object.keys(kinds[kind].outputs.shape)));
    const missing = declared.filter((key) => !pulumi.Output.isInstance(resource[key]));
    expect(missing).toEqual([]);
  });
});
