import { afterAll, describe, expect, it } from "vitest";
import { seedCatalog } from "../../emulator/fixtures";
import {
  defaultConfigurations,
  defaultGpuSeries,
  guardConfig,
  typeToken,
  type CloudinfraGuardArgs,
  type Kind,
} from "../../policy";
import { guardProject, PolicyEngine, type PolicyResource } from "./engine";

const projects: { remove(): void }[] = [];
const engines: PolicyEngine[] = [];
afterAll(async () => {
  await Promise.all(engines.map((e) => e.close()));
  for (const p of projects) p.remove();
});

/** A pack project serving `new CloudinfraGuard(args)`, started as `pulumi` starts it. */
async function serve(args: CloudinfraGuardArgs): Promise<PolicyEngine> {
  const project = guardProject(args);
  projects.push(project);
  const engine = await PolicyEngine.start(project.dir);
  engines.push(engine);
  return engine;
}

function resource(kind: Kind, properties: Record<string, string | number>): PolicyResource {
  return { urn: `urn:pulumi:test::test::${typeToken(kind)}::r`, type: typeToken(kind), name: "r", properties };
}

const levelsOf = async (engine: PolicyEngine, r: PolicyResource) =>
  Object.fromEntries((await engine.analyze(r)).diagnostics.map((d) => [d.policyName, d.enforcementLevel]));

describe("guardConfig", () => {
  it("maps each setting to its policy's name, a bare level or the level with the config", () => {
    expect(guardConfig({ all: "advisory", maxGpuCount: { enforcementLevel: "mandatory", max: 4 } })).toEqual({
      all: "advisory",
      "max-gpu-count": { enforcementLevel: "mandatory", max: 4 },
    });
    expect(guardConfig({ noPublicIp: "remediate", maxInstances: "disabled" })).toEqual({
      "no-public-ip": "remediate",
      "max-instances": "disabled",
    });
    expect(guardConfig()).toEqual({});
  });

  it("gives a setting without a level the `all` level (the engine would read it as advisory)", () => {
    expect(guardConfig({ all: "mandatory", maxVolumeSize: { maxSizeGb: 100 } })).toEqual({
      all: "mandatory",
      "max-volume-size": { enforcementLevel: "mandatory", maxSizeGb: 100 },
    });
    expect(guardConfig({ maxVolumeSize: { maxSizeGb: 100 } })["max-volume-size"]).toMatchObject({
      enforcementLevel: "advisory",
    });
    // left-out values count as not given
    expect(guardConfig({ all: "disabled", maxGpuCount: { enforcementLevel: undefined, max: undefined } })).toEqual({
      all: "disabled",
      "max-gpu-count": { enforcementLevel: "disabled" },
    });
  });

  it("hands `catalogue` to every policy that reads one, unless it has its own", () => {
    const catalogue = { "7": { name: "c7", cpu: 2, ram: 2, disk: 20 } };
    const own = { "8": { cpu: 1, ram: 1, disk: 10 } };
    expect(guardConfig({ catalogue, maxVmSize: "mandatory", maxReportedVmSize: { catalogue: own } })).toEqual({
      "allowed-vm-configurations": { enforcementLevel: "advisory", catalogue },
      "max-vm-size": { enforcementLevel: "mandatory", catalogue },
      "max-reported-vm-size": { enforcementLevel: "advisory", catalogue: own },
    });
  });

  it("reports every mistake at once, naming the setting and what is valid", () => {
    const args = {
      all: "strict",
      maxGpus: "mandatory",
      maxGpuCount: { maxCount: 2, enforcementLevel: "blocking" },
      noPublicIp: 3,
    } as unknown as CloudinfraGuardArgs;
    const error = (() => {
      try {
        guardConfig(args);
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(TypeError);
    const lines = error!.message.split("\n").map((l) => l.trim());
    expect(lines).toEqual([
      "CloudinfraGuard:",
      'all: "strict" is not an enforcement level (advisory, mandatory, remediate, disabled)',
      expect.stringMatching(
        /^unknown setting "maxGpus"; the settings are all, catalogue, api, allowedVmConfigurations, /,
      ),
      'maxGpuCount: unknown config "maxCount"; its config is max',
      'maxGpuCount.enforcementLevel: "blocking" is not an enforcement level (advisory, mandatory, remediate, disabled)',
      "noPublicIp: give an enforcement level or an object of { enforcementLevel, ...config }",
    ]);
  });

  it("hands `api` to the policies that read the API, under their own settings, and refuses unknown members", () => {
    const api = { baseUrl: "https://api.example.com/v1", apiKeyVariable: "POLICY_KEY" };
    expect(
      guardConfig({ api, gpuCapacity: "mandatory", deployingKeyPermissions: { baseUrl: "http://own/v1" } }),
    ).toEqual({
      "gpu-capacity": { enforcementLevel: "mandatory", ...api },
      "deploying-key-permissions": {
        enforcementLevel: "advisory",
        apiKeyVariable: "POLICY_KEY",
        baseUrl: "http://own/v1",
      },
    });
    expect(() => guardConfig({ api: { apiKey: "svc_x" } as never })).toThrow(
      'api: unknown config "apiKey"; it is baseUrl, entityId, apiKeyVariable',
    );
  });

  it("defaults its catalogues to the emulator's fixed catalog", () => {
    const catalog = seedCatalog();
    expect(defaultConfigurations).toEqual(
      Object.fromEntries(
        catalog.configurations.map((c) => [String(c.id), { name: c.name, cpu: c.cpu, ram: c.ram, disk: c.disk }]),
      ),
    );
    expect(defaultGpuSeries).toEqual(Object.fromEntries(catalog.gpuSeries.map((s) => [String(s.id), s.code])));
  });
});

describe("CloudinfraGuard served as a pack", () => {
  it("applies the issue's example: every policy advisory, max-gpu-count mandatory at 4 GPUs", async () => {
    const engine = await serve({ all: "advisory", maxGpuCount: { enforcementLevel: "mandatory", max: 4 } });
    expect(engine.info.name).toBe("cloudinfra-guard");
    expect(await levelsOf(engine, resource("GpuVirtualMachine", { seriesId: 1, gpuCount: 8, teamId: 1 }))).toEqual({
      "max-gpu-count": "mandatory",
    });
    expect(await levelsOf(engine, resource("GpuVirtualMachine", { seriesId: 1, gpuCount: 4, teamId: 1 }))).toEqual({});
    expect(await levelsOf(engine, resource("Volume", { sizeGb: 1000 }))).toEqual({
      "max-volume-size": "advisory",
      "require-resource-group": "advisory",
    });
  });

  it("keeps the `all` level for settings given only config, and the stack's policy config still applies on top", async () => {
    const engine = await serve({
      all: "mandatory",
      maxVolumeSize: { maxSizeGb: 100 },
      requireResourceGroup: "disabled",
    });
    const volume = resource("Volume", { sizeGb: 200 });
    expect(await levelsOf(engine, volume)).toEqual({ "max-volume-size": "mandatory" });
    await engine.configure({ "max-volume-size": { enforcementLevel: "advisory", maxSizeGb: 500 } });
    expect(await levelsOf(engine, volume)).toEqual({});
    await engine.configure({ "max-volume-size": "advisory" });
    expect(await levelsOf(engine, volume)).toEqual({ "max-volume-size": "advisory" });
  });

  it("fails to start, saying why, when a setting is wrong", async () => {
    const failing = serve({ maxGpus: 2 } as unknown as CloudinfraGuardArgs);
    await expect(failing).rejects.toThrow(/did not start[\s\S]*CloudinfraGuard:\s+unknown setting "maxGpus"/);
  });
});
