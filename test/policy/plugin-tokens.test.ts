/**
 * The policy pack matches a kind under both hosts' type tokens: the SDK's dynamic resources
 * (`pulumi-nodejs:dynamic/cloudinfra:<Kind>`) and the provider plugin's (`cloudinfra:index:<Kind>`), for resource
 * validations, remediations and stack validations alike; other types stay not applicable.
 */
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { kindOf, typeToken, type Host, type Kind } from "../../policy";
import { toWire, type WireMap } from "../../tools/harness/wire";
import { guardProject, PolicyEngine, type PolicyResource } from "./engine";

const project = guardProject();
const engine = await PolicyEngine.start(project.dir);
afterAll(async () => {
  await engine.close();
  project.remove();
});
beforeEach(async () => {
  await engine.configure();
});

const FRA = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";

function resource(host: Host, kind: Kind, name: string, properties: object): PolicyResource {
  return {
    urn: `urn:pulumi:test::test::${typeToken(kind, host)}::${name}`,
    type: typeToken(kind, host),
    name,
    properties: toWire(properties) as WireMap,
  };
}

describe("both type tokens", () => {
  it("names a kind under either host, and nothing else", () => {
    expect(typeToken("Volume")).toBe("pulumi-nodejs:dynamic/cloudinfra:Volume");
    expect(typeToken("Volume", "plugin")).toBe("cloudinfra:index:Volume");
    expect(kindOf("cloudinfra:index:Volume")).toBe("Volume");
    expect(kindOf("pulumi-nodejs:dynamic/cloudinfra:Volume")).toBe("Volume");
    expect(kindOf("aws:s3/bucket:Bucket")).toBeUndefined();
  });

  for (const host of ["dynamic", "plugin"] as const) {
    it(`reports a too-large GPU count on a ${host} resource`, async () => {
      await engine.configure({ "max-gpu-count": "mandatory" });
      const { diagnostics } = await engine.analyze(
        resource(host, "GpuVirtualMachine", "big", {
          name: "big",
          datacenterId: FRA,
          seriesId: 1,
          gpuCount: 8,
          teamId: 3,
        }),
      );
      const [violation] = diagnostics.filter((d) => d.policyName === "max-gpu-count");
      expect(violation?.enforcementLevel).toBe("mandatory");
      expect(violation?.message).toContain("8");
    });

    it(`remediates a public IP away on a ${host} VM`, async () => {
      await engine.configure({ "no-public-ip": "remediate" });
      const vm = resource(host, "VirtualMachine", "web", {
        name: "web",
        datacenterId: FRA,
        imageId: 1,
        configurationId: 1,
        teamId: 3,
        allocatePublicIp: true,
      });
      const { remediations } = await engine.remediate(vm);
      expect(remediations.map((r) => [r.policyName, r.properties?.allocatePublicIp])).toEqual([
        ["no-public-ip", false],
      ]);
    });

    it(`counts ${host} VMs in the stack policy`, async () => {
      await engine.configure({ "max-instances": { enforcementLevel: "mandatory", maxVirtualMachines: 1 } });
      const vms = ["a", "b"].map((name) =>
        resource(host, "VirtualMachine", name, { name, datacenterId: FRA, imageId: 1, configurationId: 1, teamId: 3 }),
      );
      const { diagnostics } = await engine.analyzeStack(vms);
      const [over] = diagnostics.filter((d) => d.policyName === "max-instances");
      expect(over?.message).toContain("2 VirtualMachine resources (a, b) > maxVirtualMachines 1");
    });
  }

  it("leaves a resource of another provider not applicable", async () => {
    const other: PolicyResource = {
      urn: "urn:pulumi:test::test::aws:s3/bucket:Bucket::b",
      type: "aws:s3/bucket:Bucket",
      name: "b",
      properties: {},
    };
    const { diagnostics, notApplicable } = await engine.analyze(other);
    expect(diagnostics).toEqual([]);
    expect(notApplicable.find((n) => n.policyName === "max-gpu-count")?.reason).toContain(
      "cloudinfra:index:GpuVirtualMachine",
    );
  });
});
