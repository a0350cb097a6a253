import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { typeToken, type Kind, type KindInputs } from "../../policy";
import { toWire, UNKNOWN, type WireMap } from "../../tools/harness/wire";
import {
  guardProject,
  PolicyConfigError,
  PolicyEngine,
  type Diagnostic,
  type PolicyConfigFile,
  type PolicyResource,
} from "./engine";

// One pack process for the file, served from dist/ exactly as a pack project runs it; each test configures it.
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

function resource(kind: Kind, name: string, properties: object): PolicyResource {
  return {
    urn: `urn:pulumi:test::test::${typeToken(kind)}::${name}`,
    type: typeToken(kind),
    name,
    // as the engine holds them: a property left out (undefined) is absent
    properties: toWire({ __provider: "exports.handler = ...", ...properties }) as WireMap,
  };
}

/** A VM's inputs as the program gives them (SDK args), in a resource group. */
const vm = (args: Partial<KindInputs<"VirtualMachine">> = {}) =>
  ({ name: "app", datacenterId: FRA, imageId: 1, configurationId: 1, teamId: 3, ...args }) as const;
const gpu = (args: Partial<KindInputs<"GpuVirtualMachine">> = {}) =>
  ({ name: "train", datacenterId: FRA, seriesId: 1, gpuCount: 1, teamId: 3, ...args }) as const;
const volume = (args: Partial<KindInputs<"Volume">> = {}) =>
  ({ name: "data", datacenterId: FRA, volumeTypeId: 1, sizeGb: 20, teamId: 3, ...args }) as const;
const apiKey = (args: Partial<KindInputs<"ApiKey">> = {}) => ({ name: "ci", ...args }) as const;

/** The diagnostics of `policy` for one resource, with the stack config `config` applied first. */
async function diagnose(policy: string, kind: Kind, props: object, name = "r"): Promise<Diagnostic[]> {
  const { diagnostics } = await engine.analyze(resource(kind, name, props));
  return diagnostics.filter((d) => d.policyName === policy);
}

async function configure(config: PolicyConfigFile) {
  await engine.configure(config);
}

describe("the pack as the engine sees it", () => {
  it("lists every policy, resource or stack, advisory by default, with the schema defaults as its config", async () => {
    expect(engine.info).toMatchObject({ name: "cloudinfra-guard", version: "0.0.1" });
    const types = Object.fromEntries(engine.info.policies.map((p) => [p.name, p.type]));
    expect(types).toEqual({
      "allowed-gpu-series": "resource",
      "allowed-vm-configurations": "resource",
      "deploying-key-permissions": "resource",
      "gpu-capacity": "resource",
      "max-api-key-lifetime": "resource",
      "max-gpu-count": "resource",
      "max-instances": "stack",
      "max-reported-vm-size": "stack",
      "max-vm-size": "resource",
      "max-volume-size": "resource",
      "no-public-ip": "resource",
      "require-resource-group": "resource",
      "single-membership-owner": "stack",
    });
    expect(new Set(engine.info.policies.map((p) => p.enforcementLevel))).toEqual(new Set(["advisory"]));
    const config = await engine.configure();
    expect(config["max-gpu-count"]).toEqual({ enforcementLevel: "advisory", properties: { max: 4 } });
    expect(config["max-vm-size"].properties).toMatchObject({ maxCpu: 8, maxRam: 32, maxDisk: 200 });
    expect(config["max-vm-size"].properties?.catalogue).toMatchObject({ "4": { cpu: 16, ram: 64, disk: 400 } });
  });

  it("refuses a stack config that does not match the policies' configSchema, naming every problem", async () => {
    const error = await engine
      .configure({
        "max-gpu-count": { max: "four" },
        "max-vm-size": { maxCpu: 0, catalogue: { "9": { cpu: 2, ram: 4 } } },
        "require-resource-group": { kinds: ["Network"] },
        "allowed-gpu-series": { series: { a100: "a100" } },
      })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PolicyConfigError);
    const errors = (error as PolicyConfigError).errors.join("\n");
    expect(errors).toContain("max-gpu-count: max must be integer");
    expect(errors).toContain("max-vm-size: maxCpu must be >= 1");
    expect(errors).toContain("max-vm-size: catalogue/9 must have required property 'disk'");
    expect(errors).toContain("require-resource-group: kinds/0 must be equal to one of the allowed values");
    expect(errors).toContain("allowed-gpu-series: series must match pattern");
    await expect(engine.configure({ "max-gpu-count": "blocking" })).rejects.toThrow(/not a valid enforcement level/);
  });

  it("skips a disabled policy and applies `all` before the per-policy levels", async () => {
    await configure({ all: "disabled", "max-volume-size": "mandatory" });
    expect(await diagnose("max-gpu-count", "GpuVirtualMachine", gpu({ gpuCount: 8 }))).toEqual([]);
    const [d] = await diagnose("max-volume-size", "Volume", volume({ sizeGb: 1000 }));
    expect(d.enforcementLevel).toBe("mandatory");
  });

  it("reports the policies of other kinds as not applicable", async () => {
    const { diagnostics, notApplicable } = await engine.analyze(
      resource("Network", "net", { name: "n", datacenterId: FRA, networkType: "standard" }),
    );
    expect(diagnostics).toEqual([]);
    expect(notApplicable.map((n) => n.policyName).sort()).toEqual([
      "allowed-gpu-series",
      "allowed-vm-configurations",
      "deploying-key-permissions",
      "gpu-capacity",
      "max-api-key-lifetime",
      "max-gpu-count",
      "max-vm-size",
      "max-volume-size",
      "no-public-ip",
      "require-resource-group",
    ]);
  });

  it("lets the host's proxy report a size unknown during a preview as 'can't run during preview' (advisory)", async () => {
    await configure({ "max-gpu-count": "mandatory", "max-vm-size": "mandatory" });
    const [count] = await diagnose("max-gpu-count", "GpuVirtualMachine", gpu({ gpuCount: UNKNOWN as never }));
    expect(count.enforcementLevel).toBe("advisory");
    expect(count.message).toContain("can't run policy 'max-gpu-count'");
    expect(count.message).toContain(".gpuCount can't be known during preview");
    const [size] = await diagnose("max-vm-size", "VirtualMachine", vm({ configurationId: UNKNOWN as never }));
    expect(size.message).toContain(".configurationId can't be known during preview");
  });
});

describe("allowed-vm-configurations", () => {
  it("by default allows the catalogue's configurations and reports an id it does not know", async () => {
    for (const configurationId of [1, 2, 3, 4]) {
      expect(await diagnose("allowed-vm-configurations", "VirtualMachine", vm({ configurationId }))).toEqual([]);
    }
    const [d] = await diagnose("allowed-vm-configurations", "VirtualMachine", vm({ configurationId: 9 }));
    expect(d.message).toContain("configuration 9 is not in the policy's catalogue (1 (s-2vcpu-4gb), 2 (m-4vcpu-8gb)");
    expect(d.enforcementLevel).toBe("advisory");
  });

  it("checks an allow-list of ids and catalogue names, with the stack's own catalogue", async () => {
    await configure({ "allowed-vm-configurations": { enforcementLevel: "mandatory", allowed: ["s-2vcpu-4gb", 2] } });
    expect(await diagnose("allowed-vm-configurations", "VirtualMachine", vm({ configurationId: 1 }))).toEqual([]);
    expect(await diagnose("allowed-vm-configurations", "VirtualMachine", vm({ configurationId: 2 }))).toEqual([]);
    const [d] = await diagnose("allowed-vm-configurations", "VirtualMachine", vm({ configurationId: 3 }));
    expect(d).toMatchObject({ enforcementLevel: "mandatory" });
    expect(d.message).toContain("configuration 3 l-8vcpu-32gb (8 vCPU, 32 GB RAM, 200 GB disk) is not allowed");

    await configure({
      "allowed-vm-configurations": { catalogue: { "17": { name: "gp-17", cpu: 2, ram: 8, disk: 80 } } },
    });
    expect(await diagnose("allowed-vm-configurations", "VirtualMachine", vm({ configurationId: 17 }))).toEqual([]);
    expect(await diagnose("allowed-vm-configurations", "VirtualMachine", vm({ configurationId: 1 }))).toHaveLength(1);
  });
});

describe("max-vm-size", () => {
  it("judges the configuration's size from the catalogue against maxCpu / maxRam / maxDisk", async () => {
    expect(await diagnose("max-vm-size", "VirtualMachine", vm({ configurationId: 3 }))).toEqual([]);
    const [big] = await diagnose("max-vm-size", "VirtualMachine", vm({ configurationId: 4 }));
    expect(big.message).toContain(
      "configuration 4 xl-16vcpu-64gb (16 vCPU, 64 GB RAM, 400 GB disk) is too large: 16 vCPU > maxCpu 8; " +
        "64 GB RAM > maxRam 32; 400 GB disk > maxDisk 200.",
    );
    const [unknown] = await diagnose("max-vm-size", "VirtualMachine", vm({ configurationId: 9 }));
    expect(unknown.message).toContain("configuration 9 is not in the policy's catalogue");

    await configure({ "max-vm-size": { maxCpu: 16, maxRam: 64, maxDisk: 400 } });
    expect(await diagnose("max-vm-size", "VirtualMachine", vm({ configurationId: 4 }))).toEqual([]);
    await configure({ "max-vm-size": { maxRam: 6 } });
    const [ram] = await diagnose("max-vm-size", "VirtualMachine", vm({ configurationId: 2 }));
    expect(ram.message).toMatch(/too large: 8 GB RAM > maxRam 6\.$/);
  });
});

describe("max-gpu-count", () => {
  it("reports more GPUs than `max` (default 4) at the configured level", async () => {
    expect(await diagnose("max-gpu-count", "GpuVirtualMachine", gpu({ gpuCount: 4 }))).toEqual([]);
    expect((await diagnose("max-gpu-count", "GpuVirtualMachine", gpu({ gpuCount: 8 })))[0]).toMatchObject({
      enforcementLevel: "advisory",
      message: expect.stringContaining("gpuCount 8 > max 4."),
    });
    await configure({ "max-gpu-count": { enforcementLevel: "mandatory", max: 2 } });
    expect(await diagnose("max-gpu-count", "GpuVirtualMachine", gpu({ gpuCount: 2 }))).toEqual([]);
    expect((await diagnose("max-gpu-count", "GpuVirtualMachine", gpu({ gpuCount: 4 })))[0].enforcementLevel).toBe(
      "mandatory",
    );
  });
});

describe("allowed-gpu-series", () => {
  it("allows the known series by default and an allow-list by id or code", async () => {
    expect(await diagnose("allowed-gpu-series", "GpuVirtualMachine", gpu({ seriesId: 2 }))).toEqual([]);
    const [unknown] = await diagnose("allowed-gpu-series", "GpuVirtualMachine", gpu({ seriesId: 3 }));
    expect(unknown.message).toContain("GPU series 3 is not in the policy's series (1 (a100), 2 (h100))");

    await configure({ "allowed-gpu-series": { allowed: ["A100"] } });
    expect(await diagnose("allowed-gpu-series", "GpuVirtualMachine", gpu({ seriesId: 1 }))).toEqual([]);
    const [h100] = await diagnose("allowed-gpu-series", "GpuVirtualMachine", gpu({ seriesId: 2 }));
    expect(h100.message).toContain("GPU series 2 (h100) is not allowed; allowed: A100.");
    await configure({ "allowed-gpu-series": { allowed: [2] } });
    expect(await diagnose("allowed-gpu-series", "GpuVirtualMachine", gpu({ seriesId: 2 }))).toEqual([]);
  });
});

describe("max-volume-size", () => {
  it("reports volumes larger than maxSizeGb (default 500)", async () => {
    expect(await diagnose("max-volume-size", "Volume", volume({ sizeGb: 500 }))).toEqual([]);
    expect((await diagnose("max-volume-size", "Volume", volume({ sizeGb: 1000 })))[0].message).toContain(
      "sizeGb 1000 > maxSizeGb 500.",
    );
    await configure({ "max-volume-size": { maxSizeGb: 100 } });
    expect(await diagnose("max-volume-size", "Volume", volume({ sizeGb: 200 }))).toHaveLength(1);
  });
});

describe("no-public-ip", () => {
  it("reports a VM asking for a public IP unless its resource name is allowed", async () => {
    expect(await diagnose("no-public-ip", "VirtualMachine", vm())).toEqual([]);
    expect(await diagnose("no-public-ip", "VirtualMachine", vm({ allocatePublicIp: false }))).toEqual([]);
    const [d] = await diagnose("no-public-ip", "VirtualMachine", vm({ allocatePublicIp: true }), "web");
    expect(d.message).toContain("VM web asks for a public IP");
    await configure({ "no-public-ip": { enforcementLevel: "mandatory", allowedNames: ["bastion"] } });
    expect(await diagnose("no-public-ip", "VirtualMachine", vm({ allocatePublicIp: true }), "bastion")).toEqual([]);
    expect((await diagnose("no-public-ip", "VirtualMachine", vm({ allocatePublicIp: true }), "web"))[0]).toMatchObject({
      enforcementLevel: "mandatory",
    });
  });

  it("remediates by turning allocatePublicIp off, keeping the other inputs", async () => {
    await configure({ "no-public-ip": { enforcementLevel: "remediate", allowedNames: ["bastion"] } });
    const web = resource("VirtualMachine", "web", vm({ allocatePublicIp: true }));
    const { remediations } = await engine.remediate(web);
    expect(remediations).toEqual([
      { policyName: "no-public-ip", properties: { ...web.properties, allocatePublicIp: false }, diagnostic: undefined },
    ]);
    expect(await engine.remediate(resource("VirtualMachine", "bastion", vm({ allocatePublicIp: true })))).toEqual({
      remediations: [],
      notApplicable: [],
    });
    // a run remediates before it analyzes: nothing is left to report
    const run = await engine.run([{ resource: web, outputs: {} }]);
    expect(run.inputs[web.urn].allocatePublicIp).toBe(false);
    expect(run.diagnostics.filter((d) => d.policyName === "no-public-ip")).toEqual([]);
  });
});

describe("require-resource-group", () => {
  it("reports VMs, GPU VMs and volumes without a teamId; a teamId not known yet counts as given", async () => {
    for (const [kind, props] of [
      ["VirtualMachine", vm({ teamId: undefined })],
      ["GpuVirtualMachine", gpu({ teamId: undefined })],
      ["Volume", volume({ teamId: undefined })],
    ] as const) {
      const [d] = await diagnose("require-resource-group", kind, props, "nogroup");
      expect(d.message).toContain(`${kind} nogroup has no teamId`);
    }
    expect(await diagnose("require-resource-group", "VirtualMachine", vm({ teamId: null }))).toHaveLength(1);
    expect(await diagnose("require-resource-group", "VirtualMachine", vm({ teamId: 5 }))).toEqual([]);
    expect(await diagnose("require-resource-group", "GpuVirtualMachine", gpu({ teamId: "12" }))).toEqual([]);
    // a ResourceGroup created in the same preview: its teamId reaches the policy as the unknown sentinel
    expect(await diagnose("require-resource-group", "Volume", volume({ teamId: UNKNOWN as never }))).toEqual([]);

    await configure({ "require-resource-group": { kinds: ["Volume"] } });
    expect(await diagnose("require-resource-group", "VirtualMachine", vm({ teamId: undefined }))).toEqual([]);
    expect(await diagnose("require-resource-group", "Volume", volume({ teamId: undefined }))).toHaveLength(1);
  });

  it("remediates with defaultTeamId when one is configured", async () => {
    const loose = resource("Volume", "data", volume({ teamId: undefined }));
    await configure({ "require-resource-group": "remediate" });
    expect((await engine.remediate(loose)).remediations).toEqual([]);
    expect((await engine.analyze(loose)).diagnostics.map((d) => d.enforcementLevel)).toEqual(["mandatory"]);

    await configure({ "require-resource-group": { enforcementLevel: "remediate", defaultTeamId: 7 } });
    const [fixed] = (await engine.remediate(loose)).remediations;
    expect(fixed.properties).toEqual({ ...loose.properties, teamId: 7 });
    expect((await engine.remediate(resource("Volume", "grouped", volume({ teamId: 3 })))).remediations).toEqual([]);
  });
});

describe("max-api-key-lifetime", () => {
  it("reports keys valid longer than maxDays, counting a missing expiresInDays as the API's 90", async () => {
    expect(await diagnose("max-api-key-lifetime", "ApiKey", apiKey({ expiresInDays: 30 }))).toEqual([]);
    expect(await diagnose("max-api-key-lifetime", "ApiKey", apiKey())).toEqual([]);
    expect((await diagnose("max-api-key-lifetime", "ApiKey", apiKey({ expiresInDays: 365 })))[0].message).toContain(
      "expiresInDays 365 > maxDays 90.",
    );
    await configure({ "max-api-key-lifetime": { maxDays: 30 } });
    expect((await diagnose("max-api-key-lifetime", "ApiKey", apiKey()))[0].message).toContain(
      "no expiresInDays (the API gives 90) > maxDays 30.",
    );
  });

  it("remediates by setting expiresInDays to maxDays", async () => {
    await configure({ "max-api-key-lifetime": { enforcementLevel: "remediate", maxDays: 30 } });
    const key = resource("ApiKey", "ci", apiKey());
    const run = await engine.run([{ resource: key, outputs: {} }]);
    expect(run.remediations[key.urn].map((r) => r.policyName)).toEqual(["max-api-key-lifetime"]);
    expect(run.inputs[key.urn]).toEqual({ ...key.properties, expiresInDays: 30 });
    expect(run.diagnostics.filter((d) => d.policyName === "max-api-key-lifetime")).toEqual([]);
  });
});

describe("stack policies", () => {
  const reported = (name: string, size: { configurationId: number; cpu: number; ram: number; disk: number }) => ({
    resource: resource("VirtualMachine", name, vm({ configurationId: size.configurationId })),
    outputs: { ...vm({ configurationId: size.configurationId }), ...size } as WireMap,
  });

  it("max-instances counts the VMs and GPU VMs of the stack", async () => {
    const vms = Array.from({ length: 11 }, (_, i) => ({
      resource: resource("VirtualMachine", `vm-${i}`, vm()),
      outputs: vm() as WireMap,
    }));
    const gpus = Array.from({ length: 3 }, (_, i) => ({
      resource: resource("GpuVirtualMachine", `gpu-${i}`, gpu()),
      outputs: gpu() as unknown as WireMap,
    }));
    const stack = (rs: typeof vms) => engine.analyzeStack(rs.map((r) => ({ ...r.resource, properties: r.outputs })));
    const ok = await stack([...vms.slice(0, 10), ...gpus.slice(0, 2)]);
    expect(ok.diagnostics.filter((d) => d.policyName === "max-instances")).toEqual([]);
    const over = (await stack([...vms, ...gpus])).diagnostics.filter((d) => d.policyName === "max-instances");
    expect(over.map((d) => d.message.split("\n")[1])).toEqual([
      `11 VirtualMachine resources (${vms.map((v) => v.resource.name).join(", ")}) > maxVirtualMachines 10.`,
      "3 GpuVirtualMachine resources (gpu-0, gpu-1, gpu-2) > maxGpuVirtualMachines 2.",
    ]);
    expect(over[0].urn).toBe("");
    await configure({ "max-instances": { maxVirtualMachines: 20, maxGpuVirtualMachines: 3 } });
    expect((await stack([...vms, ...gpus])).diagnostics.filter((d) => d.policyName === "max-instances")).toEqual([]);
  });

  it("single-membership-owner warns when a group's members or a user's roles are managed inline and as resources", async () => {
    const USER = "0b5d4a1e-7c1f-4f7e-9a55-1c8f2f6d3a10";
    const listed = resource("ResourceGroup", "platform", { name: "platform", members: [USER], teamId: 7 });
    const open = resource("ResourceGroup", "open", { name: "open", teamId: 8 });
    const joins = (teamId: number, name: string) => resource("ResourceGroupMember", name, { teamId, userId: USER });
    const user = resource("User", "ana", { email: "ana@example.com", roleNames: ["tenant-user"], teamIds: [7] });
    const plain = resource("User", "bo", { email: "bo@example.com" });
    const grant = (from: PolicyResource, name: string) => ({
      ...resource("UserRole", name, { userId: USER, roleName: "vm-operator" }),
      propertyDependencies: { userId: [from.urn] },
    });
    const messages = async (rs: PolicyResource[]) =>
      (await engine.analyzeStack(rs)).diagnostics
        .filter((d) => d.policyName === "single-membership-owner")
        .map((d) => d.message.split("\n")[1]);
    expect(await messages([listed, open, plain, joins(8, "in-open"), grant(plain, "bo-vm")])).toEqual([]);
    expect(await messages([listed, open, user, plain, joins(7, "in-platform"), grant(user, "ana-vm")])).toEqual([
      expect.stringMatching(
        /^User ana joins resource group 7 through teamIds, whose members ResourceGroup platform lists/,
      ),
      expect.stringMatching(
        /^ResourceGroupMember in-platform adds a member to resource group 7, whose members ResourceGroup platform lists/,
      ),
      expect.stringMatching(/^UserRole ana-vm grants a role to user ana, whose roleNames the program gives/),
    ]);
  });

  it("max-reported-vm-size checks the sizes the provider reports, skips VMs not created yet, and the catalogue", async () => {
    await configure({ "max-reported-vm-size": "mandatory" });
    const run = await engine.run([
      reported("small", { configurationId: 1, cpu: 2, ram: 4, disk: 50 }),
      reported("huge", { configurationId: 4, cpu: 16, ram: 64, disk: 400 }),
      reported("drifted", { configurationId: 2, cpu: 4, ram: 16, disk: 100 }),
      // planned in a preview: no size reported yet
      { resource: resource("VirtualMachine", "planned", vm()), outputs: { ...vm(), cpu: UNKNOWN } as WireMap },
    ]);
    const found = run.mandatory.filter((d) => d.policyName === "max-reported-vm-size");
    expect(found.map((d) => [d.urn.split("::").pop(), d.message.split("\n")[1]])).toEqual([
      [
        "huge",
        "VM huge is reported with 16 vCPU, 64 GB RAM, 400 GB disk: 16 vCPU > maxCpu 8; 64 GB RAM > maxRam 32; " +
          "400 GB disk > maxDisk 200.",
      ],
      [
        "drifted",
        "VM drifted: the catalogue says configuration 2 m-4vcpu-8gb (4 vCPU, 8 GB RAM, 100 GB disk), the API reports " +
          "4 vCPU, 16 GB RAM, 100 GB disk: update `catalogue` (max-vm-size relies on it).",
      ],
    ]);
    await configure({ "max-reported-vm-size": { checkCatalogue: false, maxCpu: 16, maxRam: 64, maxDisk: 400 } });
    const relaxed = await engine.analyzeStack(
      [reported("huge", { configurationId: 4, cpu: 16, ram: 64, disk: 400 })].map((r) => ({
        ...r.resource,
        properties: r.outputs,
      })),
    );
    expect(relaxed.diagnostics).toEqual([]);
  });
});
