/**
 * Every kind the provider plugin serves, declared in a Pulumi YAML program and run by Pulumi's own YAML language host
 * through the real CLI, with the plugin taken from this package's directory (`plugins: providers: path:`): create,
 * preview with no changes, an in-place change of every kind made through stack config, refresh with no changes, and
 * destroy, each step checked against what the emulator holds and the operations the engine reported. The volume's
 * type comes from a lookup (`fn::invoke` of cloudinfra:index:getVolumeSizes), type-checked by the host against the
 * plugin's schema.
 */
import { CommandError, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import { beforeAll, expect, it } from "vitest";
import { pluginResources, TOKEN } from "../plugin/launcher";
import { cliWorld } from "./helpers";
import { describeYaml, yamlProject } from "./yaml-host";

// Only the project's plugin entry may serve cloudinfra.
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
const world = await cliWorld();
const api = world.api;
const [fra] = world.datacenters;
const [, medium] = world.emulator.bootstrap.fixtures.configurations;
const [ssd] = (await api.volumeSizes({ params: { id: fra!.id } })).volumeTypes;
/** A GPU combination the emulator offers now. */
const gpuOffer = (await api.gpuInventory({ query: {} })).flatMap((s) =>
  s.availability.flatMap((a) =>
    ([1, 2, 4, 8] as const)
      .filter((n) => a.gpuCounts[n].available)
      .map((n) => ({ seriesId: s.seriesId, datacenterId: a.datacenterId, gpuCount: n })),
  ),
)[0]!;

/** The program: the eight kinds wired as a user would, the in-place settings read from stack config. */
const program = `name: yaml-kinds
runtime: yaml
plugins:
  providers:
    - name: cloudinfra
      path: (the package directory)
config:
  prefix:
    type: string
  datacenterId:
    type: string
  gpuDatacenterId:
    type: string
  gpuSeriesId:
    type: integer
  gpuCount:
    type: integer
  label:
    type: string
    default: a
  description:
    type: string
    default: as created
  configurationId:
    type: integer
    default: 1
  volumeSizeGb:
    type: integer
    default: 10
  firstName:
    type: string
    default: Ada
  rotation:
    type: string
    default: r0
variables:
  volumeTypes:
    fn::invoke:
      function: cloudinfra:index:getVolumeSizes
      arguments:
        datacenterId: \${datacenterId}
      return: volumeTypes
resources:
  net:
    type: cloudinfra:index:Network
    properties:
      name: \${prefix}-net
      datacenterId: \${datacenterId}
      networkType: standard
      description: \${description}
  vm:
    type: cloudinfra:index:VirtualMachine
    properties:
      name: \${prefix}-vm-\${label}
      datacenterId: \${datacenterId}
      imageId: 1
      configurationId: \${configurationId}
      networkInterfaces:
        - networkId: \${net.id}
          primary: true
  gpu:
    type: cloudinfra:index:GpuVirtualMachine
    properties:
      name: \${prefix}-gpu-\${label}
      datacenterId: \${gpuDatacenterId}
      seriesId: \${gpuSeriesId}
      gpuCount: \${gpuCount}
  vol:
    type: cloudinfra:index:Volume
    properties:
      name: \${prefix}-vol
      datacenterId: \${datacenterId}
      volumeTypeId: \${volumeTypes[0].id}
      sizeGb: \${volumeSizeGb}
  att:
    type: cloudinfra:index:VolumeAttachment
    properties:
      volumeId: \${vol.id}
      virtualMachineId: \${vm.id}
  group:
    type: cloudinfra:index:ResourceGroup
    properties:
      name: \${prefix}-group-\${label}
  user:
    type: cloudinfra:index:User
    properties:
      email: \${prefix}-user@example.com
      firstName: \${firstName}
      lastName: Yaml
  key:
    type: cloudinfra:index:ApiKey
    properties:
      name: \${prefix}-key
      expiresInDays: 60
      rotation: \${rotation}
outputs:
  net: \${net.id}
  vm: \${vm.id}
  gpu: \${gpu.id}
  vol: \${vol.id}
  att: \${att.id}
  group: \${group.id}
  user: \${user.id}
  key: \${key.id}
  secret: \${key.key}
  gpuSeries: \${gpu.series.name}
`;

const KINDS = {
  net: "Network",
  vm: "VirtualMachine",
  gpu: "GpuVirtualMachine",
  vol: "Volume",
  att: "VolumeAttachment",
  group: "ResourceGroup",
  user: "User",
  key: "ApiKey",
} as const;
type Name = keyof typeof KINDS;
const NAMES = Object.keys(KINDS) as Name[];
type Ids = Record<Name, string>;

const read = {
  net: (id: string) => api.getNetwork({ params: { id } }),
  vm: (id: string) => api.getVm({ params: { id } }),
  gpu: (id: string) => api.getGpuVm({ params: { id } }),
  vol: (id: string) => api.getVolume({ params: { id } }),
  group: (id: string) => api.getTeam({ params: { id: Number(id) }, query: { limit: 100 } }),
  user: (id: string) => api.getUser({ params: { id } }),
  key: async (id: string) => (await api.listApiKeys({ query: { limit: 100 } })).data.find((k) => k.id === id),
};

const { accepted, namesInApi: inApi } = world;

/** The requests since `mark` that changed something (reads and job polls left out), as route names. */
const mutations = async (mark: number) =>
  (await world.requests(mark)).filter((r) => r.method !== "GET" && r.route !== "queryJobs").map((r) => r.route!);

/** The operations the engine reported for the plugin's resources, per resource name. */
function recorder(): { ops: Record<string, string[]>; onEvent: (event: EngineEvent) => void } {
  const ops: Record<string, string[]> = {};
  return {
    ops,
    onEvent(event) {
      const meta = event.resourcePreEvent?.metadata;
      if (meta === undefined || !meta.type.startsWith(TOKEN)) return;
      (ops[meta.urn.split("::").pop()!] ??= []).push(meta.op);
    },
  };
}
const each = (op: string) => Object.fromEntries(NAMES.map((n) => [n, [op]]));

async function up(stack: Stack) {
  const recorded = recorder();
  const result = await stack.up({ color: "never", onEvent: recorded.onEvent });
  const ids = Object.fromEntries(NAMES.map((n) => [n, result.outputs[n]?.value as string])) as Ids;
  return { ops: recorded.ops, ids, secret: result.outputs.secret?.value as string, result };
}

describeYaml("every kind in a Pulumi YAML program, through the plugin", () => {
  let stack: Stack;
  let ids: Ids;
  let secret: string;

  beforeAll(async () => {
    stack = await world.stack(yamlProject(world, program), undefined, {
      ...world.config,
      // An API key is created by a signed-in user: the sign-in settings sit beside the API key.
      ...world.signIn,
      prefix: "ym",
      datacenterId: fra!.id,
      gpuDatacenterId: gpuOffer.datacenterId,
      gpuSeriesId: String(gpuOffer.seriesId),
      gpuCount: String(gpuOffer.gpuCount),
    });
  });

  it("creates each kind: the API holds it as declared, the state under its cloudinfra:index token", async () => {
    const created = await up(stack);
    expect(created.ops).toEqual(each("create"));
    ({ ids, secret } = created);
    expect(created.result.outputs.secret!.secret).toBe(true);

    expect(await read.net(ids.net)).toMatchObject({
      name: "ym-net",
      description: "as created",
      status: "Active",
      datacenter: { id: fra!.id },
    });
    const vm = await read.vm(ids.vm);
    expect(vm).toMatchObject({
      status: "Running",
      virtualMachine: { name: "ym-vm-a", imageId: 1, configurationId: 1 },
    });
    const gpu = await read.gpu(ids.gpu);
    expect(gpu).toMatchObject({ name: "ym-gpu-a", gpuCount: gpuOffer.gpuCount });
    // A typed object output (GpuVirtualMachine.series) read by its field.
    expect(created.result.outputs.gpuSeries?.value).toBe(gpu.series.name);
    expect(await read.vol(ids.vol)).toMatchObject({
      name: "ym-vol",
      sizeGb: 10,
      volumeTypeId: ssd!.id,
      status: "In-use",
      virtualMachineId: ids.vm,
    });
    expect(ids.att).toBe(`${ids.vol}:${ids.vm}`);
    expect(await read.group(ids.group)).toMatchObject({ name: "ym-group-a" });
    expect(await read.user(ids.user)).toMatchObject({
      email: "ym-user@example.com",
      firstName: "Ada",
      lastName: "Yaml",
    });
    expect(await read.key(ids.key)).toMatchObject({ name: "ym-key", status: "Active", start: secret.slice(0, 8) });
    expect(await accepted(secret)).toBe(true);

    const types = (await pluginResources(stack)).filter((r) => r.type.startsWith(TOKEN)).map((r) => r.type);
    expect(types.sort()).toEqual(
      Object.values(KINDS)
        .map((k) => `${TOKEN}${k}`)
        .sort(),
    );
  });

  it("preview finds nothing to change and sends no change to the API", async () => {
    const mark = world.mark();
    const preview = await stack.preview({ color: "never", expectNoChanges: true });
    expect(Object.keys(preview.changeSummary)).toEqual(["same"]);
    expect(await mutations(mark)).toEqual([]);
  });

  it("an in-place change of every kind through stack config keeps every id (the attachment stays the same)", async () => {
    await stack.setAllConfig({
      label: { value: "b" },
      description: { value: "changed in place" },
      configurationId: { value: String(medium!.id) },
      volumeSizeGb: { value: "20" },
      firstName: { value: "Grace" },
      rotation: { value: "r1" },
    });
    const mark = world.mark();
    const updated = await up(stack);
    expect(updated.ops).toEqual({ ...each("update"), att: ["same"] });
    expect(updated.ids).toEqual(ids);
    const routes = await mutations(mark);
    expect(routes).toEqual(
      expect.arrayContaining([
        "updateNetwork",
        "updateVm",
        "resizeVm",
        "updateGpuVm",
        "resizeVolume",
        "updateTeam",
        "updateUser",
        "rotateApiKey",
      ]),
    );
    expect(routes.filter((r) => /^(create|delete|attach|detach)/i.test(r))).toEqual([]);

    expect((await read.net(ids.net)).description).toBe("changed in place");
    expect(await read.vm(ids.vm)).toMatchObject({
      status: "Running",
      virtualMachine: { name: "ym-vm-b", configurationId: medium!.id, cpu: medium!.cpu },
    });
    expect((await read.gpu(ids.gpu)).name).toBe("ym-gpu-b");
    expect(await read.vol(ids.vol)).toMatchObject({ sizeGb: 20, status: "In-use", virtualMachineId: ids.vm });
    expect((await read.group(ids.group)).name).toBe("ym-group-b");
    expect((await read.user(ids.user)).firstName).toBe("Grace");
    // rotated: a new secret on the same key, the old one refused
    expect(updated.secret).not.toBe(secret);
    expect(await read.key(ids.key)).toMatchObject({ status: "Active", start: updated.secret.slice(0, 8) });
    expect(await accepted(updated.secret)).toBe(true);
    expect(await accepted(secret)).toBe(false);
    secret = updated.secret;
  });

  it("refresh finds no drift: nothing changes in the state or in the API", async () => {
    const before = Object.fromEntries((await pluginResources(stack)).map((r) => [r.urn, r.outputs]));
    const holding = await inApi("ym-");
    const mark = world.mark();
    const recorded = recorder();
    const refreshed = await stack.refresh({ color: "never", expectNoChanges: true, onEvent: recorded.onEvent });
    expect(recorded.ops).toEqual(each("refresh"));
    expect(Object.keys(refreshed.summary.resourceChanges ?? {})).toEqual(["same"]);
    expect(Object.fromEntries((await pluginResources(stack)).map((r) => [r.urn, r.outputs]))).toEqual(before);
    expect(await mutations(mark)).toEqual([]);
    expect(await inApi("ym-")).toEqual(holding);
  });

  it("the host type-checks a program against the plugin's schema: an unknown property and an unknown field of a lookup's result fail preview, before any request", async () => {
    const typo = await world.stack(
      yamlProject(
        world,
        [
          "name: yaml-typo",
          "runtime: yaml",
          "plugins:",
          "  providers:",
          "    - name: cloudinfra",
          "      path: (the package directory)",
          "variables:",
          "  volumeTypes:",
          "    fn::invoke:",
          "      function: cloudinfra:index:getVolumeSizes",
          "      arguments:",
          `        datacenterId: ${fra!.id}`,
          "      return: volumeTypes",
          "resources:",
          "  net:",
          "    type: cloudinfra:index:Network",
          "    properties:",
          "      name: ym-typo",
          `      datacenterId: ${fra!.id}`,
          "      networkType: standard",
          "      colour: red",
          "  gpu:",
          "    type: cloudinfra:index:GpuVirtualMachine",
          "    properties:",
          "      name: ym-typo-gpu",
          `      datacenterId: ${gpuOffer.datacenterId}`,
          `      seriesId: ${gpuOffer.seriesId}`,
          `      gpuCount: ${gpuOffer.gpuCount}`,
          "outputs:",
          "  size: ${volumeTypes[0].sizeGb}",
          "  series: ${gpu.series.nmae}",
          "",
        ].join("\n"),
      ),
    );
    const mark = world.mark();
    const error = await typo.preview({ color: "never" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CommandError);
    expect(String(error)).toContain("Property colour does not exist on 'cloudinfra:index:Network'");
    expect(String(error)).toContain("sizeGb does not exist on volumeTypes[0]");
    // GpuVirtualMachine.series is typed in the schema (it was Any): a mistyped field of it fails too.
    expect(String(error)).toMatch(/nmae does not exist/);
    expect(await mutations(mark)).toEqual([]);
    expect((await api.listNetworks({ query: { search: "ym-typo" } })).data).toEqual([]);
  });

  it("destroy deletes every kind from the API", async () => {
    const recorded = recorder();
    await stack.destroy({ color: "never", onEvent: recorded.onEvent });
    expect(recorded.ops).toEqual(each("delete"));
    expect(await inApi("ym-")).toEqual({
      networks: [],
      vms: [],
      gpus: [],
      volumes: [],
      groups: [],
      users: [],
      keys: [],
    });
    expect(await accepted(secret)).toBe(false);
    expect((await pluginResources(stack)).filter((r) => r.type.startsWith(TOKEN))).toEqual([]);
  });
});
