/**
 * Each kind's declaration of its outputs is true to what it records: after a program of every kind goes up, against
 * the emulator as it is and against one that sends only what the spec documents, every recorded output is an input or
 * a declared output, and every declared output has the declared type.
 */
import { describe, expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { kinds, type KindName } from "../../provider/resources";
import { destroy, up } from "../../tools/harness";
import { revealMap, withoutProvider } from "../../tools/harness/wire";
import { stackOnEmulator } from "./helpers";

const TYPE_PREFIX = "pulumi-nodejs:dynamic/cloudinfra:";

describe.each([
  ["the emulator as it is", false],
  ["an emulator that sends only what the spec documents", true],
])("declared outputs, against %s", (_name, specFieldsOnly) => {
  it("cover every output each kind records, with the declared types", async () => {
    const stack = await stackOnEmulator({ specFieldsOnly, jobDurationMs: 100 });
    const [fra] = stack.datacenters;
    const admin = stack.emulator.bootstrap.users.admin;
    const gpu = (await stack.api.gpuInventory({ query: {} })).flatMap((s) =>
      s.availability
        .filter((a) => a.gpuCounts[1].available)
        .map((a) => ({ seriesId: s.seriesId, datacenterId: a.datacenterId, gpuCount: 1 as const })),
    )[0]!;
    const program = () => {
      const group = new cloudinfra.ResourceGroup("group", { name: "out-group" });
      const net = new cloudinfra.Network("net", {
        name: "out-net",
        datacenterId: fra.id,
        networkType: "custom",
        cidrBlock: "10.70.0.0/24",
      });
      const vm = new cloudinfra.VirtualMachine("vm", {
        name: "out-vm",
        datacenterId: fra.id,
        imageId: 1,
        configurationId: 1,
        allocatePublicIp: true,
        teamId: group.teamId,
        networkInterfaces: [{ networkId: net.id, primary: true }],
      });
      new cloudinfra.GpuVirtualMachine("gpu", { name: "out-gpu", ...gpu });
      const vol = new cloudinfra.Volume("vol", { name: "out-vol", datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 });
      new cloudinfra.VolumeAttachment("att", { volumeId: vol.id, virtualMachineId: vm.id });
      const user = new cloudinfra.User("user", { email: "out-user@acme.example", roleNames: ["tenant-user"] });
      new cloudinfra.ResourceGroupMember("member", { teamId: group.id, userId: user.id });
      new cloudinfra.UserRole("role", { userId: user.id, roleName: "vm-operator" });
      new cloudinfra.ApiKey("key", { name: "out-key", expiresInDays: 90 });
      return {};
    };
    const options = stack.options({
      config: {
        "cloudinfra:baseUrl": stack.emulator.baseUrl,
        "cloudinfra:apiKey": { secret: admin.apiKey },
        "cloudinfra:email": admin.email,
        "cloudinfra:password": { secret: admin.password },
        "cloudinfra:totpSecret": { secret: admin.totpSecret },
        "cloudinfra:pollIntervalMs": "20",
      },
    });
    const created = await up(program, options);
    const recorded = created.state.resources.filter((r) => r.type.startsWith(TYPE_PREFIX));
    expect(recorded.map((r) => r.type.slice(TYPE_PREFIX.length)).sort()).toEqual(Object.keys(kinds).sort());
    for (const resource of recorded) {
      const name = resource.type.slice(TYPE_PREFIX.length) as KindName;
      const kind = kinds[name];
      const outputs = withoutProvider(revealMap(resource.outputs));
      const undeclared = Object.keys(outputs).filter(
        (key) => !(key in kind.inputs.schema.shape) && !(key in kind.outputs.shape),
      );
      expect({ kind: name, undeclared }).toEqual({ kind: name, undeclared: [] });
      const declared = Object.fromEntries(Object.keys(kind.outputs.shape).map((key) => [key, outputs[key]]));
      const parsed = kind.outputs.safeParse(declared);
      expect({ kind: name, issues: parsed.error?.issues ?? [] }).toEqual({ kind: name, issues: [] });
    }
    await destroy(options);
  });
});
