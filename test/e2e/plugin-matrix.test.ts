/**
 * The lifecycle matrix of the dynamic suites (test/resources/*.test.ts, points 1–11), for every kind the provider
 * plugin serves, through the real CLI against the emulator. One program holds all eight kinds, steered by stack config
 * (`app:phase`, `app:volumeSizeGb`, `app:bad`), so that each CLI operation moves every kind at once: create, up and
 * refresh without changes, in-place changes, replacements, drift made through the API, deletions behind the stack's
 * back, bad inputs, destroy. A create whose job fails (point 10) and adoption (point 11) have a stack each. Every
 * claim is checked against what the emulator holds and against the operations the engine reported. Two regressions
 * found on the way have a test here: a network whose last VM went away while its delete was refused, and a secret
 * input's value printed by the engine beside a check failure.
 *
 * Not applicable, as in the dynamic suites:
 * - 4. VolumeAttachment: both its inputs replace it; it stays the same while its volume grows and its VM is resized.
 * - 5. ResourceGroup: every property changes in place.
 * - 6. Volume: volumes cannot shrink, so a resize made through the API cannot be undone: refresh shows it, and the
 *   program that takes the new size converges without a request (the old size is refused at check, point 9).
 *   VolumeAttachment: its drift is a detach, which refresh shows as gone and the next up attaches again.
 * - 10. ResourceGroup, User, ApiKey are created without a job: the failures that matter are the dynamic suites' (a
 *   group whose members cannot be set, a key that cannot be suspended: recorded and finished by the next up; a user
 *   create answered 500: retried, without a duplicate). VolumeAttachment: a failed attach job leaves nothing to
 *   record; the next up attaches.
 * - 11. VirtualMachine, GpuVirtualMachine and ApiKey names are not unique: `adopt` is refused at check for VMs and
 *   keys (point 9), and a GPU VM of the same name made elsewhere is left alone. A VolumeAttachment takes over an
 *   existing attachment without being asked to.
 */
import * as pulumi from "@pulumi/pulumi";
import { CommandError, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import { beforeAll, describe, expect, it } from "vitest";
import { cliWorld, describeCli, gone } from "./helpers";
import { pluginResources, resource, TOKEN, useLauncher, type PluginStateResource } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const api = world.api;
const [fra, ams] = world.datacenters;
const [, medium] = world.emulator.bootstrap.fixtures.configurations;

/** A data center offering both 1 and 2 A100 GPUs now (gpuCount 1 → 2 replaces); A100s can be started. */
const a100 = world.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;
const gpuOffer = (await api.gpuInventory({ query: {} }))
  .filter((s) => s.seriesId === a100.id)
  .flatMap((s) =>
    s.availability
      .filter((a) => a.gpuCounts[1].available && a.gpuCounts[2].available)
      .map((a) => ({ seriesId: s.seriesId, datacenterId: a.datacenterId })),
  )[0]!;
/** The volume size id of 10 GB of the first volume type, for volumes made through the API. */
const ssd = (await api.volumeSizes({ params: { id: fra!.id } })).volumeTypes[0]!;
const tenGb = ssd.availableSizes.find((s) => s.sizeGb === 10)!;

/** The resources of the matrix program: their names in the stack, and their kinds. */
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
type Ids = Record<Name, string>;
const NAMES = Object.keys(KINDS) as Name[];

const PASSWORD = "Correct-Horse-42!";
const WEAK = "weakpassword";

// ---------------------------------------------------------------- reading the API

const read = {
  net: (id: string) => api.getNetwork({ params: { id } }),
  vm: (id: string) => api.getVm({ params: { id } }),
  gpu: (id: string) => api.getGpuVm({ params: { id } }),
  vol: (id: string) => api.getVolume({ params: { id } }),
  group: (id: string) => api.getTeam({ params: { id: Number(id) }, query: { limit: 100 } }),
  user: (id: string) => api.getUser({ params: { id } }),
  key: async (id: string) => {
    const found = (await api.listApiKeys({ query: { limit: 100 } })).data.find((k) => k.id === id);
    if (found === undefined) throw Object.assign(new Error(`no API key ${id}`), { status: 404 });
    return found;
  },
};

const gone404 = (e: unknown) => (e as { status?: number }).status === 404;

/** Whether the attachment `<volumeId>:<virtualMachineId>` exists in the API: that volume In-use on that VM. */
async function attached(id: string): Promise<boolean> {
  const [volumeId, virtualMachineId] = id.split(":");
  const volume = await read.vol(volumeId!).catch((e: unknown) => (gone404(e) ? undefined : Promise.reject(e)));
  return volume?.status === "In-use" && volume.virtualMachineId === virtualMachineId;
}

const { accepted, namesInApi: inApi } = world;
const nothing = { networks: [], vms: [], gpus: [], volumes: [], groups: [], users: [], keys: [] };

/** The requests since `mark` that changed something (reads and job polls left out), as route names. */
const mutations = async (mark: number) =>
  (await world.requests(mark)).filter((r) => r.method !== "GET" && r.route !== "queryJobs").map((r) => r.route!);

// ---------------------------------------------------------------- the engine's side

/** The operations the engine reported for the plugin's resources, per resource name, in the order they started. */
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
const each = (op: string, names: readonly Name[] = NAMES) => Object.fromEntries(names.map((n) => [n, [op]]));
/** The engine's order for a replacement: create-before-delete, or delete-before-replace (a unique name kept). */
const CREATE_FIRST = ["create-replacement", "replace", "delete-replaced"];
const DELETE_FIRST = ["delete-replaced", "replace", "create-replacement"];

async function up(stack: Stack) {
  const recorded = recorder();
  const result = await stack.up({ color: "never", onEvent: recorded.onEvent });
  const ids = Object.fromEntries(NAMES.map((n) => [n, result.outputs[n]?.value as string])) as Ids;
  return { result, ops: recorded.ops, ids, secret: result.outputs.secret?.value as string };
}

/** A failing up that goes on with what does not depend on the failures; its error's text. */
async function failingUp(stack: Stack): Promise<{ message: string; ops: Record<string, string[]> }> {
  const recorded = recorder();
  const error = await stack.up({ color: "never", continueOnError: true, onEvent: recorded.onEvent }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CommandError);
  return { message: String(error), ops: recorded.ops };
}

/** The plugin's resources in the stack's state, by name. */
async function inState(stack: Stack): Promise<Partial<Record<string, PluginStateResource>>> {
  const resources = (await pluginResources(stack)).filter((r) => r.type.startsWith(TOKEN));
  return Object.fromEntries(resources.map((r) => [r.urn.split("::").pop()!, r]));
}

// ---------------------------------------------------------------- the matrix program

/** Bad inputs per resource (those of the dynamic suites' point 9), given the good ones. */
const badInputs: Record<Name, (good: Record<string, unknown>) => Record<string, unknown>> = {
  net: () => ({
    name: "",
    datacenterId: "not-a-uuid",
    networkType: "custom",
    snatEnabled: true,
    cidrBlock: "10.0.0.0/24",
    dhcpStartAddress: "10.0.1.5",
  }),
  vm: () => ({
    name: "",
    datacenterId: "not-a-uuid",
    imageId: -1,
    configurationId: 1.5,
    powerState: "paused",
    adopt: true,
  }),
  gpu: () => ({
    name: "",
    datacenterId: "not-a-uuid",
    seriesId: 1.5,
    gpuCount: 3,
    powerState: "paused",
    imageName: "ubuntu-24.04",
    imageId: 1,
  }),
  // A shrink of the volume the stack holds (50 GB by then), with a group that is no id and an unknown property.
  vol: (good) => ({ ...good, sizeGb: 20, teamId: "ops", size: 10 }),
  att: () => ({ volumeId: "vol-1", mountPoint: "/data" }),
  group: () => ({ name: " ", parentTeamId: "first", members: ["bob"], colour: "red" }),
  user: () => ({
    email: "not-an-email",
    action: "register",
    password: pulumi.secret(WEAK),
    roleNames: ["tenant-user", "superuser"],
    teamIds: ["first"],
  }),
  key: () => ({
    name: " ",
    roleId: "root",
    expiresInDays: 0,
    metadata: "owner=ci",
    enabled: "yes",
    rotation: { at: 1 },
    key: "svc_mine",
    adopt: true,
  }),
};

/**
 * Every kind, wired as a user would (the attachment joins the stack's volume and VM). `app:phase`: `base`; `changed`
 * makes the in-place changes (description, VM name and size, GPU VM name, volume size, group name, user names, key
 * rotation); `replaced` keeps those and changes what replaces (network data center, image, GPU count, volume name,
 * user registration, key name). `app:volumeSizeGb` overrides the volume's size, `app:bad` gives one resource bad inputs.
 */
async function matrix() {
  const config = new pulumi.Config("app");
  const p = config.require("prefix");
  const phase = config.get("phase") ?? "base";
  const changed = phase !== "base";
  const replaced = phase === "replaced";
  const bad = config.get("bad");
  const inputs = (name: Name, good: Record<string, unknown>) => (bad === name ? badInputs[name](good) : good);

  const net = resource(
    "Network",
    "net",
    inputs("net", {
      name: `${p}-net`,
      datacenterId: (replaced ? ams : fra)!.id,
      networkType: "standard",
      description: changed ? "changed in place" : "as created",
    }),
  );
  const vm = resource(
    "VirtualMachine",
    "vm",
    inputs("vm", {
      name: changed ? `${p}-vm-2` : `${p}-vm`,
      datacenterId: fra!.id,
      imageId: replaced ? 2 : 1,
      configurationId: changed ? medium!.id : 1,
    }),
  );
  const gpu = resource(
    "GpuVirtualMachine",
    "gpu",
    // powerState declared: without it a GPU VM's power is left alone (some series cannot be started)
    inputs("gpu", {
      name: changed ? `${p}-gpu-2` : `${p}-gpu`,
      ...gpuOffer,
      gpuCount: replaced ? 2 : 1,
      powerState: "running",
    }),
  );
  const vol = resource(
    "Volume",
    "vol",
    inputs("vol", {
      name: replaced ? `${p}-vol-b` : `${p}-vol`,
      datacenterId: fra!.id,
      volumeTypeId: ssd.id,
      sizeGb: config.getNumber("volumeSizeGb") ?? (changed ? 20 : 10),
    }),
  );
  const att = resource("VolumeAttachment", "att", inputs("att", { volumeId: vol.id, virtualMachineId: vm.id }));
  const group = resource("ResourceGroup", "group", inputs("group", { name: changed ? `${p}-group-2` : `${p}-group` }));
  const user = resource(
    "User",
    "user",
    inputs("user", {
      email: `${p}-user@example.com`,
      ...(changed ? { firstName: "Ada", lastName: "Matrix" } : {}),
      ...(replaced ? { action: "register", password: pulumi.secret(PASSWORD) } : {}),
    }),
  );
  const key = resource(
    "ApiKey",
    "key",
    inputs("key", {
      name: replaced ? `${p}-key-b` : `${p}-key`,
      expiresInDays: 60,
      ...(changed ? { rotation: "r1" } : {}),
    }),
    ["key"],
  );
  return {
    net: net.id,
    vm: vm.id,
    gpu: gpu.id,
    vol: vol.id,
    att: att.id,
    group: group.id,
    user: user.id,
    key: key.id,
    secret: key.key,
  };
}

/** Stack config: the emulator, the admin's API key and, beside it, the sign-in an ApiKey is created with. */
const stackConfig = (prefix: string, extra: Record<string, string> = {}) => ({
  ...world.config,
  ...world.signIn,
  "app:prefix": prefix,
  ...extra,
});

describeCli("the lifecycle matrix of every kind through the provider plugin", () => {
  describe("one stack of all eight kinds, each CLI operation moving every kind", () => {
    let stack: Stack;
    /** The ids and the API key's secret the stack holds now. */
    let ids: Ids;
    let secret: string;

    beforeAll(async () => {
      stack = await world.stack("quickstart", matrix, stackConfig("mx"));
    });

    it("1. creates every kind: the API holds each as declared", async () => {
      const created = await up(stack);
      expect(created.ops).toEqual(each("create"));
      ({ ids, secret } = created);
      expect(await read.net(ids.net)).toMatchObject({
        name: "mx-net",
        description: "as created",
        status: "Active",
        datacenter: { id: fra!.id },
      });
      const vm = await read.vm(ids.vm);
      expect(vm.status).toBe("Running");
      expect(vm.virtualMachine).toMatchObject({ name: "mx-vm", imageId: 1, configurationId: 1 });
      expect(await read.gpu(ids.gpu)).toMatchObject({ name: "mx-gpu", status: "Running", gpuCount: 1 });
      expect(await read.vol(ids.vol)).toMatchObject({ name: "mx-vol", sizeGb: 10, status: "In-use" });
      expect(ids.att).toBe(`${ids.vol}:${ids.vm}`);
      expect(await attached(ids.att)).toBe(true);
      expect(await read.group(ids.group)).toMatchObject({ name: "mx-group", memberCount: 0 });
      expect(await read.user(ids.user)).toMatchObject({ email: "mx-user@example.com", inviteStatus: "pending" });
      expect(await read.key(ids.key)).toMatchObject({ name: "mx-key", status: "Active", start: secret.slice(0, 8) });
      expect(await accepted(secret)).toBe(true);
    });

    it("2. a second up changes nothing and sends no change to the API", async () => {
      const mark = world.mark();
      const recorded = recorder();
      const again = await stack.up({ color: "never", expectNoChanges: true, onEvent: recorded.onEvent });
      expect(recorded.ops).toEqual(each("same"));
      expect(Object.keys(again.summary.resourceChanges ?? {})).toEqual(["same"]);
      expect(await mutations(mark)).toEqual([]);
    });

    it("3. refresh without drift changes nothing", async () => {
      const before = await inState(stack);
      const recorded = recorder();
      const refreshed = await stack.refresh({ color: "never", expectNoChanges: true, onEvent: recorded.onEvent });
      expect(recorded.ops).toEqual(each("refresh"));
      expect(Object.keys(refreshed.summary.resourceChanges ?? {})).toEqual(["same"]);
      const after = await inState(stack);
      for (const name of NAMES) expect(after[name]?.outputs, name).toEqual(before[name]?.outputs);
    });

    it("4. in-place changes keep every id (VolumeAttachment: nothing changes in place, it stays the same)", async () => {
      await stack.setConfig("app:phase", { value: "changed" });
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
      const vm = await read.vm(ids.vm);
      expect(vm.status).toBe("Running");
      expect(vm.virtualMachine).toMatchObject({ name: "mx-vm-2", configurationId: medium!.id, cpu: medium!.cpu });
      expect(await read.gpu(ids.gpu)).toMatchObject({ name: "mx-gpu-2", status: "Running" });
      expect(await read.vol(ids.vol)).toMatchObject({ sizeGb: 20, status: "In-use", virtualMachineId: ids.vm });
      expect(await attached(ids.att)).toBe(true);
      expect((await read.group(ids.group)).name).toBe("mx-group-2");
      expect(await read.user(ids.user)).toMatchObject({ firstName: "Ada", lastName: "Matrix" });
      // rotated: a new secret on the same key, the old one refused
      expect(updated.secret).not.toBe(secret);
      expect(await read.key(ids.key)).toMatchObject({ status: "Active", start: updated.secret.slice(0, 8) });
      expect(await accepted(updated.secret)).toBe(true);
      expect(await accepted(secret)).toBe(false);
      secret = updated.secret;
    });

    it("5. replacements give new ids and the old ones are gone from the API (ResourceGroup: every property is in place)", async () => {
      await stack.setConfig("app:phase", { value: "replaced" });
      const replaced = await up(stack);
      expect(replaced.ops).toEqual({
        // unique names kept (network, user's email): the old one is deleted first
        net: DELETE_FIRST,
        vm: CREATE_FIRST,
        gpu: CREATE_FIRST,
        vol: CREATE_FIRST,
        // the new volume is attached to the new VM, then the old one detached
        att: CREATE_FIRST,
        group: ["same"],
        user: DELETE_FIRST,
        key: CREATE_FIRST,
      });
      const next = replaced.ids;
      expect(next.group).toBe(ids.group);
      for (const name of NAMES.filter((n) => n !== "group")) expect(next[name], name).not.toBe(ids[name]);

      expect(await gone(() => read.net(ids.net))).toBe(true);
      expect(await gone(() => read.vm(ids.vm))).toBe(true);
      expect(await gone(() => read.gpu(ids.gpu))).toBe(true);
      expect(await gone(() => read.vol(ids.vol))).toBe(true);
      expect(await attached(ids.att)).toBe(false);
      expect(await gone(() => read.user(ids.user))).toBe(true);
      expect(await gone(() => read.key(ids.key))).toBe(true);
      expect(await accepted(secret)).toBe(false);

      expect(await read.net(next.net)).toMatchObject({ name: "mx-net", datacenter: { id: ams!.id } });
      const vm = await read.vm(next.vm);
      expect(vm.status).toBe("Running");
      expect(vm.virtualMachine).toMatchObject({ name: "mx-vm-2", imageId: 2, configurationId: medium!.id });
      expect(await read.gpu(next.gpu)).toMatchObject({ name: "mx-gpu-2", gpuCount: 2, status: "Running" });
      expect(await read.vol(next.vol)).toMatchObject({ name: "mx-vol-b", sizeGb: 20, virtualMachineId: next.vm });
      expect(next.att).toBe(`${next.vol}:${next.vm}`);
      expect(await attached(next.att)).toBe(true);
      expect((await read.group(next.group)).name).toBe("mx-group-2");
      expect(await read.user(next.user)).toMatchObject({ email: "mx-user@example.com", inviteStatus: "activated" });
      expect(await read.key(next.key)).toMatchObject({ name: "mx-key-b", start: replaced.secret.slice(0, 8) });
      expect(await accepted(replaced.secret)).toBe(true);
      ({ ids, secret } = replaced);
    });

    it("6. drift made through the API is shown by refresh and repaired by the next up (Volume: a grown volume cannot shrink back; the program takes its size)", async () => {
      await api.updateNetwork({ params: { id: ids.net }, body: { description: "edited by hand" } });
      await api.updateVm({ params: { id: ids.vm }, body: { name: "vm-by-hand" } });
      await api.stopVm({ params: { id: ids.vm } });
      await api.updateGpuVm({ params: { id: ids.gpu }, body: { name: "gpu-by-hand" } });
      await api.stopGpuVm({ params: { id: ids.gpu } });
      await api.jobs.wait((await api.resizeVolume({ params: { id: ids.vol }, body: { newSizeGb: 50 } })).jobId);
      await api.jobs.wait((await api.detachVolume({ params: { id: ids.vol } })).jobId);
      await api.updateTeam({ params: { id: Number(ids.group) }, body: { name: "mx-group-by-hand" } });
      await api.updateUser({ params: { id: ids.user }, body: { firstName: "Augusta" } });
      await api.setApiKeyStatus({ params: { keyId: ids.key }, body: { enabled: false } });

      const recorded = recorder();
      const refreshed = await stack.refresh({ color: "never", onEvent: recorded.onEvent });
      expect(recorded.ops).toEqual(each("refresh"));
      expect(refreshed.summary.resourceChanges).toMatchObject({ update: 7, delete: 1 });
      const drifted = await inState(stack);
      expect(drifted.net?.outputs).toMatchObject({ description: "edited by hand" });
      expect(drifted.vm?.outputs).toMatchObject({ name: "vm-by-hand", powerState: "stopped" });
      expect(drifted.gpu?.outputs).toMatchObject({ name: "gpu-by-hand", powerState: "stopped" });
      expect(drifted.vol?.outputs).toMatchObject({ sizeGb: 50 });
      expect(drifted.att).toBeUndefined();
      expect(drifted.group?.outputs).toMatchObject({ name: "mx-group-by-hand" });
      expect(drifted.user?.outputs).toMatchObject({ firstName: "Augusta" });
      expect(drifted.key?.outputs).toMatchObject({ enabled: false, status: "Suspended" });

      await stack.setConfig("app:volumeSizeGb", { value: "50" });
      const mark = world.mark();
      const repaired = await up(stack);
      expect(repaired.ops).toEqual({ ...each("update"), vol: ["same"], att: ["create"] });
      expect(repaired.ids).toEqual(ids);
      expect((await read.net(ids.net)).description).toBe("changed in place");
      const vm = await read.vm(ids.vm);
      expect(vm.status).toBe("Running");
      expect(vm.virtualMachine.name).toBe("mx-vm-2");
      expect(await read.gpu(ids.gpu)).toMatchObject({ name: "mx-gpu-2", status: "Running" });
      expect(await read.vol(ids.vol)).toMatchObject({ sizeGb: 50, virtualMachineId: ids.vm });
      expect(await attached(ids.att)).toBe(true);
      expect((await read.group(ids.group)).name).toBe("mx-group-2");
      expect((await read.user(ids.user)).firstName).toBe("Ada");
      expect(await read.key(ids.key)).toMatchObject({ enabled: true, status: "Active" });
      expect(await accepted(secret)).toBe(true);
      const routes = await mutations(mark);
      expect(routes).not.toContain("resizeVolume");
      expect(routes.filter((r) => r === "attachVolume")).toHaveLength(1);
    });

    // 9 runs on the stack as 6 left it: the volume's shrink is a shrink of the size it grew to behind the stack.
    it("9. bad inputs are refused at check, naming each property, before any request about them (one preview per kind: the engine stops at the first resource whose check fails)", async () => {
      const expected: Record<Name, string[]> = {
        net: [
          "property name value",
          "property datacenterId value",
          "UUID",
          "property snatEnabled value",
          "property dhcpStartAddress value",
        ],
        vm: [
          "property name value",
          "property datacenterId value",
          "property imageId value",
          "property configurationId value",
          'property powerState value {paused} has a problem: must be "running" or "stopped"',
          // 11. does not apply to VMs
          "property adopt value {true} has a problem: VM names are not unique",
        ],
        gpu: [
          "property name value",
          "property datacenterId value",
          "property seriesId value",
          "property gpuCount value {3} has a problem: must be 1, 2, 4 or 8",
          "property powerState value",
          "imageName names the image too: give only one of the two",
        ],
        vol: [
          "property sizeGb value {20} has a problem: volumes cannot shrink (50 GB → 20 GB)",
          "property teamId value",
          "property size value",
        ],
        att: ["property volumeId value", "UUID", "property virtualMachineId", "property mountPoint value"],
        group: [
          "property name value { } has a problem: must not be empty",
          "property parentTeamId value",
          "property members.0",
          "property colour value",
        ],
        user: [
          "property email value {not-an-email} has a problem: must be an email address",
          // a secret input: its failure names it in the reason, so the engine does not print the value beside it
          "resource 'user' has a problem: password: must mix upper- and lower-case letters, contain a number",
          'unknown role "superuser"',
          "property teamIds.0",
        ],
        key: [
          "property name value",
          "property roleId value",
          "vm-operator",
          "property expiresInDays value",
          "property metadata value",
          "property enabled value",
          "property rotation value",
          // 11. does not apply to API keys
          "property adopt value {true} has a problem: is not a property of this resource: remove it",
          "property key value",
        ],
      };
      const before = (await stack.exportStack()).deployment as unknown;
      try {
        for (const name of NAMES) {
          await stack.setConfig("app:bad", { value: name });
          const mark = world.mark();
          const failed = await stack.preview({ color: "never" }).then(
            () => undefined,
            (e: unknown) => e,
          );
          expect(failed, name).toBeInstanceOf(CommandError);
          const message = String(failed);
          expect(message, name).toContain(`${TOKEN}${KINDS[name]} resource '${name}': property`);
          for (const text of expected[name]) expect(message, name).toContain(text);
          expect(message, name).not.toContain(WEAK);
          // Only the credentials were checked (GET /auth/check, by the plugin's Configure).
          const asked = (await world.requests(mark)).map((r) => r.route).filter((r) => r !== "check");
          expect(asked, name).toEqual([]);
        }
      } finally {
        await stack.removeConfig("app:bad");
      }
      expect((await stack.exportStack()).deployment).toEqual(before);
    });

    it("7. deleted behind the stack's back: refresh drops every kind, up recreates each with a new id", async () => {
      await api.jobs.wait((await api.detachVolume({ params: { id: ids.vol } })).jobId);
      await Promise.all([
        api.deleteVolume({ params: { id: ids.vol } }).then((r) => api.jobs.wait(r.jobId)),
        api.deleteVm({ params: { id: ids.vm } }).then((r) => api.jobs.wait(r.jobId)),
        api.deleteGpuVm({ params: { id: ids.gpu } }).then((r) => api.jobs.wait(r.jobId)),
        api.deleteNetwork({ params: { id: ids.net } }),
        api.deleteTeam({ params: { id: Number(ids.group) } }),
        api.deleteUser({ params: { id: ids.user } }),
        api.deleteApiKey({ params: { keyId: ids.key } }),
      ]);

      const refreshed = await stack.refresh({ color: "never" });
      expect(refreshed.summary.resourceChanges).toMatchObject({ delete: 8 });
      expect(await inState(stack)).toEqual({});

      const recreated = await up(stack);
      expect(recreated.ops).toEqual(each("create"));
      const next = recreated.ids;
      for (const name of NAMES) expect(next[name], name).not.toBe(ids[name]);
      expect(await read.net(next.net)).toMatchObject({ name: "mx-net", status: "Active", datacenter: { id: ams!.id } });
      expect(await read.vm(next.vm)).toMatchObject({ status: "Running", virtualMachine: { name: "mx-vm-2" } });
      expect(await read.gpu(next.gpu)).toMatchObject({ name: "mx-gpu-2", gpuCount: 2, status: "Running" });
      expect(await read.vol(next.vol)).toMatchObject({ name: "mx-vol-b", sizeGb: 50 });
      expect(await attached(next.att)).toBe(true);
      expect((await read.group(next.group)).name).toBe("mx-group-2");
      expect(await read.user(next.user)).toMatchObject({ firstName: "Ada", inviteStatus: "activated" });
      expect((await read.key(next.key)).name).toBe("mx-key-b");
      expect(await accepted(recreated.secret)).toBe(true);
      ({ ids, secret } = recreated);
    });

    it("8. destroy leaves nothing of the stack in the API", async () => {
      const recorded = recorder();
      await stack.destroy({ color: "never", onEvent: recorded.onEvent });
      expect(recorded.ops).toEqual(each("delete"));
      expect(await inApi("mx-")).toEqual(nothing);
      expect(await attached(ids.att)).toBe(false);
      expect(await accepted(secret)).toBe(false);
      expect(await inState(stack)).toEqual({});
    });
  });

  it("8. destroy deletes a network whose last VM went away between the API's refusal and the provider's look at it", async () => {
    // Regression: the delete was refused (409) while a VM was connected; when the VM was gone by the time the
    // provider listed the network's VMs, it reported the network as one that "cannot be deleted now" instead of
    // deleting it (seen in plugin-import's destroy, where imported VMs and networks are deleted side by side).
    const stack = await world.stack("quickstart", async () => {
      const net = resource("Network", "net", {
        name: "rc-net",
        datacenterId: fra!.id,
        networkType: "custom",
        cidrBlock: "10.70.0.0/24",
      });
      return { net: net.id };
    });
    const net = (await stack.up({ color: "never" })).outputs.net!.value as string;
    const [job] = await api.createVm({
      body: {
        name: "rc-vm",
        datacenterId: fra!.id,
        imageId: 1,
        configurationId: 1,
        networkInterfaces: [{ networkId: net, primary: true }],
      },
    });
    const vm = (await api.jobs.wait(job!.id)).resourceId!;

    // The provider's look at the network's VMs answers late; the VM is deleted once the delete has been refused.
    await world.faults("networkVms,latency=1500ms,count=1");
    const mark = world.mark();
    const destroyed = stack.destroy({ color: "never" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    try {
      const deadline = Date.now() + 60_000;
      while (!(await world.requests(mark)).some((r) => r.route === "deleteNetwork" && r.status === 409)) {
        if (Date.now() > deadline) throw new Error("the network's delete was never refused");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await api.jobs.wait((await api.deleteVm({ params: { id: vm } })).jobId);
      expect(await destroyed).toBeUndefined();
    } finally {
      await world.faults("");
    }
    const deletes = (await world.requests(mark)).filter((r) => r.route === "deleteNetwork").map((r) => r.status);
    expect(deletes).toEqual([409, 200]);
    expect(await gone(() => read.net(net))).toBe(true);
  });

  it("10. creates whose jobs fail are recorded with their ids and replaced by the next up; the kinds without jobs fail as the dynamic suites show, and are finished by the next up", async () => {
    // The attachment joins a VM and a volume made through the API: the stack's own would fail here.
    const [hostJob] = await api.createVm({
      body: { name: "host-jf", datacenterId: fra!.id, imageId: 1, configurationId: 1 },
    });
    const host = (await api.jobs.wait(hostJob!.id)).resourceId!;
    const disk = await api.createVolume({
      body: { name: "disk-jf", datacenterId: fra!.id, volumeTypeId: ssd.id, volumeSizeId: tenGb.id, sizeGb: 10 },
    });
    await api.jobs.wait(disk.jobId);
    const ghost = "00000000-0000-4000-8000-000000000000";

    const stack = await world.stack(
      "quickstart",
      async () => {
        const config = new pulumi.Config("app");
        const base = { datacenterId: fra!.id };
        const net = resource("Network", "net", { ...base, name: "jf-net", networkType: "standard" });
        const vm = resource("VirtualMachine", "vm", { ...base, name: "jf-vm", imageId: 1, configurationId: 1 });
        const gpu = resource("GpuVirtualMachine", "gpu", { name: "jf-gpu", ...gpuOffer, gpuCount: 1 });
        const vol = resource("Volume", "vol", { ...base, name: "jf-vol", volumeTypeId: ssd.id, sizeGb: 10 });
        const att = resource("VolumeAttachment", "att", { volumeId: disk.id, virtualMachineId: host });
        const user = resource("User", "user", { email: "jf-user@example.com" });
        const members = config.getBoolean("ghost") ? [ghost] : [user.id];
        const group = resource("ResourceGroup", "group", { name: "jf-group", members });
        const key = resource("ApiKey", "key", { name: "jf-key", enabled: false }, ["key"]);
        return {
          net: net.id,
          vm: vm.id,
          gpu: gpu.id,
          vol: vol.id,
          att: att.id,
          group: group.id,
          user: user.id,
          key: key.id,
          secret: key.key,
        };
      },
      stackConfig("jf", { "app:ghost": "true" }),
    );

    const mark = world.mark();
    await world.faults(
      [
        "job=network.create,fail=Network quota exceeded,count=1",
        "job=vm.create,fail=VM quota exceeded,count=1",
        "job=gpu.create,fail=No GPU capacity left,count=1",
        "job=volume.create,fail=Volume quota exceeded,count=1",
        "job=volume.attach,fail=Hypervisor refused the disk,count=1",
        "createUser,status=500,count=1",
        "setApiKeyStatus,status=409,message=Key is busy,count=1",
      ].join(";"),
    );
    const failed = await failingUp(stack).finally(() => world.faults(""));
    expect(failed.ops).toEqual(each("create"));
    for (const text of [
      "Network quota exceeded",
      "VM quota exceeded",
      "No GPU capacity left",
      "Volume quota exceeded",
      "Hypervisor refused the disk",
      `no such user in this entity: ${ghost}`,
      "Key is busy",
    ]) {
      expect(failed.message).toContain(text);
    }

    // Job kinds: recorded with the id of what the API holds, in status Error.
    const partial = await inState(stack);
    const recorded = (name: Name) => {
      expect(partial[name]?.id, name).toBeTruthy();
      return partial[name]!.id!;
    };
    const exported = (await stack.exportStack()).deployment as { resources: { urn: string; initErrors?: string[] }[] };
    const initErrors = (name: string) => exported.resources.find((r) => r.urn.endsWith(`::${name}`))?.initErrors ?? [];
    expect(initErrors("net").join(" ")).toContain("Network quota exceeded");
    expect(initErrors("vm").join(" ")).toContain("VM quota exceeded");
    expect(initErrors("gpu").join(" ")).toContain("No GPU capacity left");
    expect(initErrors("vol").join(" ")).toContain("Volume quota exceeded");
    const failedIds = {
      net: recorded("net"),
      vm: recorded("vm"),
      gpu: recorded("gpu"),
      vol: recorded("vol"),
    };
    expect((await read.net(failedIds.net)).status).toBe("Error");
    expect((await read.vm(failedIds.vm)).status).toBe("Error");
    expect((await read.gpu(failedIds.gpu)).status).toBe("Error");
    expect((await read.vol(failedIds.vol)).status).toBe("Error");
    // A failed attach leaves the volume Available with no VM: nothing exists to record.
    expect(partial.att).toBeUndefined();
    expect(await read.vol(disk.id)).toMatchObject({ status: "Available", virtualMachineId: null });
    // The group exists without its members, the key unsuspended and without its secret: both recorded.
    expect(initErrors("group").join(" ")).toContain("could not be set");
    expect((await read.group(partial.group!.id!)).name).toBe("jf-group");
    expect(initErrors("key").join(" ")).toContain("could not be suspended");
    expect(partial.key?.outputs?.key).toBeUndefined();
    expect(await read.key(partial.key!.id!)).toMatchObject({ name: "jf-key", enabled: true });
    // The user's create answered 500: sent again, one user.
    const posts = (await world.requests(mark)).filter((r) => r.route === "createUser").map((r) => r.status);
    expect(posts).toEqual([500, 201]);
    expect((await inApi("jf-")).users).toEqual(["jf-user@example.com"]);
    expect(initErrors("user")).toEqual([]);

    await stack.removeConfig("app:ghost");
    const repaired = await up(stack);
    expect(repaired.ops).toEqual({
      net: DELETE_FIRST,
      vm: CREATE_FIRST,
      gpu: CREATE_FIRST,
      vol: DELETE_FIRST,
      att: ["create"],
      group: ["update"],
      user: ["same"],
      key: ["update"],
    });
    const ids = repaired.ids;
    for (const name of ["net", "vm", "gpu", "vol"] as const) {
      expect(ids[name], name).not.toBe(failedIds[name]);
    }
    expect(await gone(() => read.net(failedIds.net))).toBe(true);
    expect(await gone(() => read.vm(failedIds.vm))).toBe(true);
    expect(await gone(() => read.gpu(failedIds.gpu))).toBe(true);
    expect(await gone(() => read.vol(failedIds.vol))).toBe(true);
    expect((await read.net(ids.net)).status).toBe("Active");
    expect((await read.vm(ids.vm)).status).toBe("Running");
    expect((await read.gpu(ids.gpu)).status).toBe("Running");
    expect((await read.vol(ids.vol)).status).toBe("Available");
    expect(ids.att).toBe(`${disk.id}:${host}`);
    expect(await attached(ids.att)).toBe(true);
    expect(ids.group).toBe(partial.group!.id);
    expect((await read.group(ids.group)).members.map((m) => m.id)).toEqual([ids.user]);
    expect(ids.key).toBe(partial.key!.id);
    expect(await read.key(ids.key)).toMatchObject({ enabled: false, start: repaired.secret.slice(0, 8) });
    const after = (await stack.exportStack()).deployment as typeof exported;
    expect(after.resources.filter((r) => (r.initErrors ?? []).length > 0)).toEqual([]);

    await stack.destroy({ color: "never" });
    expect(await inApi("jf-")).toEqual(nothing);
    expect(await read.vol(disk.id)).toMatchObject({ status: "Available", virtualMachineId: null });
    await api.jobs.wait((await api.deleteVolume({ params: { id: disk.id } })).jobId);
    await api.jobs.wait((await api.deleteVm({ params: { id: host } })).jobId);
  });

  it("11. adopts an existing Network, Volume, ResourceGroup and User by name with `adopt: true` (refused without it), takes over an existing attachment, and leaves a GPU VM of the same name alone", async () => {
    const net = await api.createNetwork({
      body: { name: "ad-net", datacenterId: fra!.id, networkType: "standard", description: "made elsewhere" },
    });
    const sized = { volumeTypeId: ssd.id, volumeSizeId: tenGb.id, sizeGb: 10, datacenterId: fra!.id };
    const vol = await api.createVolume({ body: { name: "ad-vol", ...sized } });
    const disk = await api.createVolume({ body: { name: "disk-ad", ...sized } });
    const otherGpu = await api.createGpuVm({ body: { name: "ad-gpu", ...gpuOffer, gpuCount: 1 } });
    const [hostJob] = await api.createVm({
      body: { name: "host-ad", datacenterId: fra!.id, imageId: 1, configurationId: 1 },
    });
    await Promise.all([net.jobId, vol.jobId, disk.jobId, otherGpu.jobId].map((job) => api.jobs.wait(job)));
    const host = (await api.jobs.wait(hostJob!.id)).resourceId!;
    await api.jobs.wait((await api.attachVolume({ params: { id: disk.id }, body: { virtualMachineId: host } })).jobId);
    const { teamId } = await api.createTeam({ body: { name: "ad-group" } });
    const user = await api.createUser({ body: { email: "ad-user@example.com", firstName: "Old" } });

    const stack = await world.stack(
      "quickstart",
      async () => {
        const adopt = new pulumi.Config("app").getBoolean("adopt");
        const net = resource("Network", "net", {
          name: "ad-net",
          datacenterId: fra!.id,
          networkType: "standard",
          description: "managed",
          adopt,
        });
        const vol = resource("Volume", "vol", {
          name: "ad-vol",
          datacenterId: fra!.id,
          volumeTypeId: ssd.id,
          sizeGb: 20,
          adopt,
        });
        // group names are unique ignoring case
        const group = resource("ResourceGroup", "group", { name: "AD-Group", adopt });
        const user = resource("User", "user", { email: "ad-user@example.com", firstName: "New", adopt });
        const att = resource("VolumeAttachment", "att", { volumeId: disk.id, virtualMachineId: host });
        const gpu = resource("GpuVirtualMachine", "gpu", { name: "ad-gpu", ...gpuOffer, gpuCount: 1 });
        return { net: net.id, vol: vol.id, group: group.id, user: user.id, att: att.id, gpu: gpu.id };
      },
      // A name held by another resource is retried briefly (it may be being given up in the same run): 1.5 s here.
      stackConfig("ad", { "cloudinfra:jobTimeoutMs": "1500" }),
    );

    const mark = world.mark();
    const refused = await failingUp(stack);
    expect(refused.ops).toEqual(each("create", ["net", "vol", "group", "user", "att", "gpu"]));
    for (const text of [
      `A network named "ad-net" already exists (${net.id})`,
      `A volume named "ad-vol" already exists (${vol.id})`,
      `A resource group named "AD-Group" already exists (${teamId})`,
      `A user with the email ad-user@example.com already exists (${user.id})`,
    ]) {
      expect(refused.message).toContain(`${text}. Set \`adopt: true\` to manage it from this program`);
    }
    const first = await inState(stack);
    expect(Object.keys(first).sort()).toEqual(["att", "gpu"]);
    // the attachment is taken over without an attach request; the GPU VM is the stack's own
    expect(first.att?.id).toBe(`${disk.id}:${host}`);
    expect(await mutations(mark)).not.toContain("attachVolume");
    expect(first.gpu?.id).not.toBe(otherGpu.id);
    expect((await read.gpu(first.gpu!.id!)).status).toBe("Running");
    // nothing was changed on the existing ones
    expect((await read.net(net.id)).description).toBe("made elsewhere");
    expect((await read.vol(vol.id)).sizeGb).toBe(10);
    expect((await read.user(user.id)).firstName).toBe("Old");

    await stack.setConfig("app:adopt", { value: "true" });
    const adopted = await up(stack);
    expect(adopted.ops).toEqual({ ...each("create", ["net", "vol", "group", "user"]), att: ["same"], gpu: ["same"] });
    expect(adopted.ids).toMatchObject({ net: net.id, vol: vol.id, group: String(teamId), user: user.id });
    expect((await read.net(net.id)).description).toBe("managed");
    expect((await read.vol(vol.id)).sizeGb).toBe(20);
    expect((await read.group(String(teamId))).name).toBe("AD-Group");
    expect((await read.user(user.id)).firstName).toBe("New");

    await stack.destroy({ color: "never" });
    expect(await inApi("ad-")).toEqual({ ...nothing, gpus: ["ad-gpu"] });
    expect((await read.gpu(otherGpu.id)).status).toBe("Running");
    expect(await read.vol(disk.id)).toMatchObject({ status: "Available", virtualMachineId: null });
    await api.jobs.wait((await api.deleteGpuVm({ params: { id: otherGpu.id } })).jobId);
    await api.jobs.wait((await api.deleteVolume({ params: { id: disk.id } })).jobId);
    await api.jobs.wait((await api.deleteVm({ params: { id: host } })).jobId);
  });
});
