/**
 * The lifecycle contract of every resource kind, as data: per kind, per step, what the program declares (plain
 * inputs, references to other resources of the program by name, secrets), what the engine must do to each resource,
 * what the API must hold afterwards, and the API actions made before the step (drift, deletion behind the stack,
 * faults). One runner per host plays it (test/lifecycle/*.test.ts); a step that does not apply to a kind says why.
 *
 * Three sequences, each one stack holding every kind: `main` (create, no-op up, quiet refresh, in place, replace,
 * drift found by refresh and repaired by up, bad inputs refused at check, deleted behind the stack, destroy),
 * `failed` (creates whose job fails, recorded and repaired by the next up) and `adopt` (existing resources refused
 * without `adopt`, taken over with it).
 */
import { expect } from "vitest";
import type { CloudClient } from "../../provider/client";
import type { LogEntry } from "../resources/helpers";

export type Kind =
  | "VirtualMachine"
  | "GpuVirtualMachine"
  | "Volume"
  | "VolumeAttachment"
  | "Network"
  | "ResourceGroup"
  | "User"
  | "ApiKey"
  | "ResourceGroupMember"
  | "UserRole";

/** What the engine did to one resource. A replacement is create-first unless it says delete-first. */
export type Op = "create" | "same" | "update" | "replace" | "replace-delete-first" | "delete";
/** What refresh found of one resource. */
export type Refreshed = "same" | "changed" | "gone";

/** Another resource of the program, by name: its id. */
export interface Ref {
  ref: string;
}
/** A secret input. */
export interface Secret {
  secret: string;
}
export const ref = (name: string): Ref => ({ ref: name });
export const secret = (value: string): Secret => ({ secret: value });
export const isRef = (value: unknown): value is Ref =>
  typeof value === "object" && value !== null && typeof (value as Ref).ref === "string";
export const isSecretInput = (value: unknown): value is Secret =>
  typeof value === "object" && value !== null && typeof (value as Secret).secret === "string";

/** One resource of a program. */
export interface Declared {
  kind: Kind;
  inputs: Record<string, unknown>;
}
/** A program: resources by name, in an order where references point backwards. */
export type Program = Record<string, Declared>;

/** A resource as the stack's state holds it (secrets revealed, `__provider` left out). */
export interface InState {
  id: string;
  outputs: Record<string, unknown>;
  initErrors: string[];
}

/** What the table needs from the emulator's catalogue. */
export interface Fixtures {
  fra: string;
  ams: string;
  /** The first configuration (id 1), the VMs' own. */
  small: { id: number; cpu: number; ram: number };
  /** The second configuration: a VM resized to it grows. */
  medium: { id: number; cpu: number; ram: number };
  /** The first volume type of `fra`, and its size ids by size in GB. */
  ssd: { id: number; sizeIds: Record<number, number> };
  /** A GPU series and data center offering 1 and 2 GPUs. */
  gpu: { seriesId: number; datacenterId: string };
  rescueImage: { id: string };
  /** The user the stack signs in as: the owner of the API keys it creates. */
  keyOwner: string;
}

/** What a step's API actions and assertions get. */
export interface Ctx {
  api: CloudClient;
  /** The state after the step (before it, for `before`), by resource name. */
  state: Record<string, InState>;
  /** The state before the step. */
  prior: Record<string, InState>;
  /** The error of the step's operation, if it failed. */
  error?: string;
  /** The requests the API received during the step's operation. */
  requests: LogEntry[];
  /** Values recorded by `before` actions (ids of resources made through the API), for declarations and checks. */
  made: Record<string, string>;
  /** Whether the API accepts `secret` as an API key. */
  accepted(secret: string): Promise<boolean>;
}

/** A step of one kind. */
export interface Step {
  /** The kind's resources at this step; omitted: as at the previous step. */
  declare?: (made: Record<string, string>) => Program;
  /** API actions before the operation (their values go to `made`). */
  before?: (ctx: Ctx) => Promise<void>;
  /** Emulator fault rules during the operation (`--faults` syntax). */
  faults?: string[];
  /** What the engine must do to each named resource (up, destroy), or what refresh must find. */
  ops?: Record<string, Op | Refreshed>;
  /** Per replaced resource, the properties the replacement must be for (in any order). */
  replaces?: Record<string, string[]>;
  /** Texts the operation's error must contain (a step meant to fail). */
  fails?: string[];
  /** What the API (and the state) must hold afterwards. */
  api?: (ctx: Ctx) => Promise<void>;
}

/** A step that does not apply to a kind, and why. In `main`, the kind's resources must stay as they are. */
export interface NotApplicable {
  na: string;
}

/** Bad inputs: refused at check, before any request, naming each property. */
export interface Bad {
  declare: (good: Program) => Program;
  /** The properties the refusal must name (what every host reports, the YAML host from the schema alone). */
  properties: string[];
  /** The provider's reasons, as the hosts that reach its Check show them. */
  reasons: string[];
  /** A text the refusal must not contain (a secret input's value). */
  hides?: string;
}

export const MAIN_STEPS = [
  "create",
  "same",
  "refresh",
  "update",
  "replace",
  "drift",
  "repair",
  "bad",
  "deleted",
  "recreate",
  "destroy",
] as const;
export const FAILED_STEPS = ["failed", "repaired", "destroyed"] as const;
export const ADOPT_STEPS = ["refused", "adopted", "destroyed"] as const;

/** The host operation of each step. */
export const OPERATION = {
  create: "up",
  same: "up",
  refresh: "refresh",
  update: "up",
  replace: "up",
  drift: "refresh",
  repair: "up",
  bad: "preview",
  deleted: "refresh",
  recreate: "up",
  destroy: "destroy",
  failed: "up",
  repaired: "up",
  refused: "up",
  adopted: "up",
  destroyed: "destroy",
} as const;
export type StepName = keyof typeof OPERATION;

export interface KindTable {
  kind: Kind;
  /** The resource the kind's cases are about (the others are what it needs). */
  subject: string;
  main: Record<Exclude<(typeof MAIN_STEPS)[number], "bad">, Step | NotApplicable> & { bad: Bad };
  failed: Record<(typeof FAILED_STEPS)[number], Step> | NotApplicable;
  adopt: Record<(typeof ADOPT_STEPS)[number], Step> | NotApplicable;
}

// ---------------------------------------------------------------- reading the API

const is404 = (e: unknown) => (e as { status?: number }).status === 404;
/** Whether a read of the API answers 404. */
export async function gone(read: () => Promise<unknown>): Promise<boolean> {
  return read().then(
    () => false,
    (e: unknown) => (is404(e) ? true : Promise.reject(e)),
  );
}
const key = async (api: CloudClient, id: string) => {
  const found = (await api.listApiKeys({ query: { limit: 100 } })).data.find((k) => k.id === id);
  if (found === undefined) throw Object.assign(new Error(`no API key ${id}`), { status: 404 });
  return found;
};
const team = (api: CloudClient, id: string) => api.getTeam({ params: { id: Number(id) }, query: { limit: 100 } });
/** Whether the attachment `<volumeId>:<virtualMachineId>` exists: that volume In-use on that VM. */
async function attached(api: CloudClient, id: string): Promise<boolean> {
  const [volumeId, vmId] = id.split(":");
  const volume = await api
    .getVolume({ params: { id: volumeId! } })
    .catch((e: unknown) => (is404(e) ? undefined : Promise.reject(e)));
  return volume?.status === "In-use" && volume.virtualMachineId === vmId;
}
const memberIds = async (api: CloudClient, teamId: string) => (await team(api, teamId)).members.map((m) => m.id).sort();
const rolesOf = async (api: CloudClient, userId: string) =>
  [...(await api.getUser({ params: { id: userId } })).roles].sort();
/** The routes of the requests about `id` (its path names it) that changed something. */
const mutationsOf = (ctx: Ctx, id: string) =>
  ctx.requests.filter((r) => r.method !== "GET" && r.route !== "queryJobs" && r.path.includes(id)).map((r) => r.route);
const idOf = (ctx: Ctx, name: string) => {
  const id = ctx.state[name]?.id;
  expect(id, `${name} in the state`).toBeTruthy();
  return id!;
};
const priorId = (ctx: Ctx, name: string) => ctx.prior[name]!.id;
/** Nothing was sent to the API about the resource. */
const quiet = (name: string) => async (ctx: Ctx) => expect(mutationsOf(ctx, idOf(ctx, name))).toEqual([]);
/** A replacement: a new id, and the old resource gone from the API. */
async function replacedAndGone(ctx: Ctx, name: string, read: (id: string) => Promise<unknown>) {
  expect(idOf(ctx, name)).not.toBe(priorId(ctx, name));
  expect(await gone(() => read(priorId(ctx, name)))).toBe(true);
}

/**
 * The `failed` sequence of a kind whose create runs a job: the job fails (fault `job`), the resource is recorded with
 * the job's error and the id of what the API holds (status Error); the next up replaces it (`repaired`).
 */
function failedJob(
  name: string,
  declared: Declared,
  job: string,
  error: string,
  read: (api: CloudClient, id: string) => Promise<{ status: string }>,
  repaired: { op: Op; status: string },
): Record<(typeof FAILED_STEPS)[number], Step> {
  return {
    failed: {
      declare: () => ({ [name]: declared }),
      faults: [`job=${job},fail=${error},count=2`],
      ops: { [name]: "create" },
      fails: [error],
      api: async (ctx) => {
        expect(ctx.state[name]?.initErrors.join(" ")).toContain(error);
        expect((await read(ctx.api, idOf(ctx, name))).status).toBe("Error");
      },
    },
    repaired: {
      ops: { [name]: repaired.op },
      api: async (ctx) => {
        await replacedAndGone(ctx, name, (id) => read(ctx.api, id));
        expect((await read(ctx.api, idOf(ctx, name))).status).toBe(repaired.status);
        expect(ctx.state[name]?.initErrors).toEqual([]);
      },
    },
    destroyed: {
      ops: { [name]: "delete" },
      api: async (ctx) => expect(await gone(() => read(ctx.api, priorId(ctx, name)))).toBe(true),
    },
  };
}

const PASSWORD = "Correct-Horse-42!";
const WEAK = "weakpassword";
const GHOST = "00000000-0000-4000-8000-000000000000";
const P = "lc";

/** The lifecycle table of every kind, for the emulator's catalogue `f`. */
export function lifecycleTable(f: Fixtures): KindTable[] {
  const vmRead = (api: CloudClient) => (id: string) => api.getVm({ params: { id } });
  const gpuRead = (api: CloudClient) => (id: string) => api.getGpuVm({ params: { id } });
  const volRead = (api: CloudClient) => (id: string) => api.getVolume({ params: { id } });
  const netRead = (api: CloudClient) => (id: string) => api.getNetwork({ params: { id } });
  const userRead = (api: CloudClient) => (id: string) => api.getUser({ params: { id } });

  // ------------------------------------------------------------ VirtualMachine
  /** The VM, and beside it one whose rescue mode the program declares (`vmx`, in rescue unless told otherwise). */
  const vm = (inputs: Record<string, unknown>, rescued = true): Program => ({
    vmx: {
      kind: "VirtualMachine",
      inputs: {
        name: `${P}-vmx`,
        datacenterId: f.fra,
        imageId: 1,
        configurationId: 1,
        ...(rescued ? { rescue: { sourceType: "catalog", sourceImageId: f.rescueImage.id } } : {}),
      },
    },
    vm: {
      kind: "VirtualMachine",
      inputs: {
        name: `${P}-vm`,
        datacenterId: f.fra,
        imageId: 1,
        configurationId: 1,
        shutdownBeforeDelete: true,
        resetTrigger: "r0",
        ...inputs,
      },
    },
  });
  const vmChanged = { name: `${P}-vm-2`, configurationId: f.medium.id, resetTrigger: "r1", exposePrivateKey: true };
  /** The VM's SSH-key reads during the step. */
  const keyReads = (ctx: Ctx) =>
    ctx.requests.filter((r) => r.route === "getVmSshKey" && r.path.includes(idOf(ctx, "vm")));
  /** Replaced: another image in another data center. */
  const vmMoved = { ...vmChanged, imageId: 2, datacenterId: f.ams };
  /** A resource group made through the API for `kind` (its id in `made`, as a ResourceGroup's `id` gives it). */
  const groupFor = (name: string) => async (ctx: Ctx) => {
    ctx.made[name] = String((await ctx.api.createTeam({ body: { name: `${P}-${name}` } })).teamId);
  };
  const dropGroup = (ctx: Ctx, name: string) => ctx.api.deleteTeam({ params: { id: Number(ctx.made[name]) } });
  const virtualMachine: KindTable = {
    kind: "VirtualMachine",
    subject: "vm",
    main: {
      create: {
        declare: () => vm({}),
        ops: { vm: "create", vmx: "create" },
        api: async (ctx) => {
          const live = await ctx.api.getVm({ params: { id: idOf(ctx, "vm") } });
          expect(live.status).toBe("Running");
          expect(live.virtualMachine).toMatchObject({
            name: `${P}-vm`,
            imageId: 1,
            configurationId: f.small.id,
            cpu: f.small.cpu,
            teamId: null,
            datacenter: { id: f.fra },
          });
          expect(ctx.state.vm?.outputs).toMatchObject({
            status: "Running",
            powerState: "running",
            cpu: f.small.cpu,
            privateIp: live.virtualMachine.primaryPrivateIp,
          });
          expect(ctx.state.vm?.outputs.publicIp ?? null).toBeNull();
          // no exposePrivateKey: the key is not read
          expect(ctx.state.vm?.outputs.sshPrivateKey).toBeUndefined();
          expect(keyReads(ctx)).toEqual([]);
          expect((await ctx.api.getVm({ params: { id: idOf(ctx, "vmx") } })).status).toBe("Rescued");
          expect(await ctx.api.getRescue({ params: { id: idOf(ctx, "vmx") } })).toMatchObject({
            rescued: true,
            image: { id: f.rescueImage.id },
          });
          expect(ctx.state.vmx?.outputs).toMatchObject({ rescued: true, rescueImage: { id: f.rescueImage.id } });
        },
      },
      same: { ops: { vm: "same" }, api: quiet("vm") },
      refresh: { ops: { vm: "same" } },
      update: {
        // vm: renamed, grown, reset and put in a resource group; vmx: `rescue` removed: the VM leaves rescue mode
        before: groupFor("vmGroup"),
        declare: (made) => vm({ ...vmChanged, teamId: made.vmGroup }, false),
        ops: { vm: "update", vmx: "update" },
        api: async (ctx) => {
          expect(await ctx.api.getRescue({ params: { id: idOf(ctx, "vmx") } })).toEqual({
            rescued: false,
            image: null,
          });
          expect((await ctx.api.getVm({ params: { id: idOf(ctx, "vmx") } })).status).toBe("Running");
          expect(idOf(ctx, "vm")).toBe(priorId(ctx, "vm"));
          const live = await ctx.api.getVm({ params: { id: idOf(ctx, "vm") } });
          expect(live.status).toBe("Running");
          expect(live.virtualMachine).toMatchObject({
            name: `${P}-vm-2`,
            configurationId: f.medium.id,
            cpu: f.medium.cpu,
            ram: f.medium.ram,
            teamId: Number(ctx.made.vmGroup),
          });
          expect(mutationsOf(ctx, idOf(ctx, "vm"))).toEqual(
            expect.arrayContaining(["updateVm", "resizeVm", "resetVm"]),
          );
          // exposePrivateKey turned on: the key read once, in place
          expect(keyReads(ctx)).toHaveLength(1);
          const { privateKey } = await ctx.api.getVmSshKey({ params: { id: idOf(ctx, "vm") } });
          expect(ctx.state.vm?.outputs.sshPrivateKey).toBe(privateKey);
        },
      },
      replace: {
        declare: (made) => vm({ ...vmMoved, teamId: made.vmGroup }, false),
        ops: { vm: "replace", vmx: "same" },
        replaces: { vm: ["datacenterId", "imageId"] },
        api: async (ctx) => {
          await replacedAndGone(ctx, "vm", vmRead(ctx.api));
          const live = await ctx.api.getVm({ params: { id: idOf(ctx, "vm") } });
          expect(live.status).toBe("Running");
          expect(live.virtualMachine).toMatchObject({
            name: `${P}-vm-2`,
            imageId: 2,
            configurationId: f.medium.id,
            datacenter: { id: f.ams },
            teamId: Number(ctx.made.vmGroup),
          });
        },
      },
      drift: {
        before: async (ctx) => {
          const id = ctx.state.vm!.id;
          await ctx.api.updateVm({ params: { id }, body: { name: "vm-by-hand" } });
          await ctx.api.stopVm({ params: { id } });
          const { jobId } = await ctx.api.rescueVm({
            params: { id: ctx.state.vmx!.id },
            body: { sourceType: "catalog", sourceImageId: f.rescueImage.id },
          });
          await ctx.api.jobs.wait(jobId);
        },
        ops: { vm: "changed", vmx: "changed" },
        api: async (ctx) => {
          expect(ctx.state.vm?.outputs).toMatchObject({ name: "vm-by-hand", status: "Stopped", powerState: "stopped" });
          expect(ctx.state.vmx?.outputs).toMatchObject({ rescued: true, rescueImage: { id: f.rescueImage.id } });
        },
      },
      repair: {
        // the same up leaves `teamId` out: the VM leaves its group
        declare: () => vm(vmMoved, false),
        ops: { vm: "update", vmx: "update" },
        api: async (ctx) => {
          const id = idOf(ctx, "vm");
          expect(id).toBe(priorId(ctx, "vm"));
          const live = await ctx.api.getVm({ params: { id } });
          expect(live.status).toBe("Running");
          expect(live.virtualMachine).toMatchObject({ name: `${P}-vm-2`, teamId: null });
          expect(await ctx.api.getRescue({ params: { id: idOf(ctx, "vmx") } })).toEqual({
            rescued: false,
            image: null,
          });
        },
      },
      bad: {
        declare: () =>
          vm(
            {
              name: "",
              datacenterId: "not-a-uuid",
              imageId: -1,
              configurationId: 1.5,
              powerState: "paused",
              adopt: true,
              networkInterfaces: [
                { networkId: f.fra, primary: true },
                { networkId: f.ams, primary: true },
              ],
            },
            false,
          ),
        properties: ["name", "datacenterId", "imageId", "configurationId", "powerState", "adopt", "networkInterfaces"],
        reasons: ["UUID", 'must be "running" or "stopped"', "VM names are not unique", "exactly one interface"],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.jobs.wait((await ctx.api.deleteVm({ params: { id: ctx.state.vm!.id } })).jobId);
        },
        ops: { vm: "gone" },
      },
      recreate: {
        ops: { vm: "create" },
        api: async (ctx) => {
          expect(await ctx.api.getVm({ params: { id: idOf(ctx, "vm") } })).toMatchObject({
            status: "Running",
            virtualMachine: { name: `${P}-vm-2`, imageId: 2 },
          });
        },
      },
      destroy: {
        ops: { vm: "delete" },
        api: async (ctx) => {
          const id = priorId(ctx, "vm");
          expect(await gone(() => vmRead(ctx.api)(id))).toBe(true);
          // shutdownBeforeDelete: stopped, then deleted
          const routes = mutationsOf(ctx, id);
          expect(routes.indexOf("stopVm")).toBeGreaterThanOrEqual(0);
          expect(routes.indexOf("stopVm")).toBeLessThan(routes.indexOf("deleteVm"));
          await dropGroup(ctx, "vmGroup");
        },
      },
    },
    failed: failedJob(
      "vm",
      { kind: "VirtualMachine", inputs: { name: `${P}f-vm`, datacenterId: f.fra, imageId: 1, configurationId: 1 } },
      "vm.create",
      "VM quota exceeded",
      (api, id) => api.getVm({ params: { id } }),
      { op: "replace", status: "Running" },
    ),
    adopt: { na: "VM names are not unique: `adopt` is refused at check (the bad step)" },
  };

  // ------------------------------------------------------------ GpuVirtualMachine
  const gpu = (inputs: Record<string, unknown>): Program => ({
    // powerState declared: without it a GPU VM's power is left alone (some series cannot be started)
    gpu: {
      kind: "GpuVirtualMachine",
      inputs: { name: `${P}-gpu`, ...f.gpu, gpuCount: 1, powerState: "running", ...inputs },
    },
  });
  const gpuVirtualMachine: KindTable = {
    kind: "GpuVirtualMachine",
    subject: "gpu",
    main: {
      create: {
        declare: () => gpu({}),
        ops: { gpu: "create" },
        api: async (ctx) => {
          const live = await gpuRead(ctx.api)(idOf(ctx, "gpu"));
          expect(live).toMatchObject({
            name: `${P}-gpu`,
            status: "Running",
            gpuCount: 1,
            teamId: null,
            series: { id: f.gpu.seriesId },
            datacenter: { id: f.gpu.datacenterId },
          });
          expect(live.publicIp).toBeTruthy();
          expect(ctx.state.gpu?.outputs).toMatchObject({
            publicIp: live.publicIp,
            jupyterLabUrl: live.jupyterLabUrl,
            status: "Running",
            powerState: "running",
            series: live.series,
            datacenter: live.datacenter,
          });
        },
      },
      same: { ops: { gpu: "same" }, api: quiet("gpu") },
      refresh: { ops: { gpu: "same" } },
      update: {
        // renamed and put in a resource group
        before: groupFor("gpuGroup"),
        declare: (made) => gpu({ name: `${P}-gpu-2`, teamId: made.gpuGroup }),
        ops: { gpu: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "gpu")).toBe(priorId(ctx, "gpu"));
          expect(await gpuRead(ctx.api)(idOf(ctx, "gpu"))).toMatchObject({
            name: `${P}-gpu-2`,
            status: "Running",
            teamId: Number(ctx.made.gpuGroup),
          });
          expect(mutationsOf(ctx, idOf(ctx, "gpu"))).toContain("updateGpuVm");
        },
      },
      replace: {
        declare: (made) => gpu({ name: `${P}-gpu-2`, teamId: made.gpuGroup, gpuCount: 2 }),
        ops: { gpu: "replace" },
        replaces: { gpu: ["gpuCount"] },
        api: async (ctx) => {
          await replacedAndGone(ctx, "gpu", gpuRead(ctx.api));
          expect(await gpuRead(ctx.api)(idOf(ctx, "gpu"))).toMatchObject({
            name: `${P}-gpu-2`,
            gpuCount: 2,
            status: "Running",
          });
        },
      },
      drift: {
        before: async (ctx) => {
          const id = ctx.state.gpu!.id;
          // renamed, out of its group, stopped
          await ctx.api.updateGpuVm({ params: { id }, body: { name: "gpu-by-hand", teamId: null } });
          await ctx.api.stopGpuVm({ params: { id } });
        },
        ops: { gpu: "changed" },
        api: async (ctx) =>
          expect(ctx.state.gpu?.outputs).toMatchObject({
            name: "gpu-by-hand",
            teamId: null,
            status: "Stopped",
            powerState: "stopped",
          }),
      },
      repair: {
        ops: { gpu: "update" },
        api: async (ctx) =>
          expect(await gpuRead(ctx.api)(idOf(ctx, "gpu"))).toMatchObject({
            name: `${P}-gpu-2`,
            status: "Running",
            teamId: Number(ctx.made.gpuGroup),
          }),
      },
      bad: {
        declare: () =>
          gpu({
            name: "",
            datacenterId: "not-a-uuid",
            seriesId: 1.5,
            gpuCount: 3,
            powerState: "paused",
            imageName: "ubuntu-24.04",
            imageId: 1,
          }),
        properties: ["name", "datacenterId", "seriesId", "gpuCount", "powerState"],
        reasons: ["UUID", "must be 1, 2, 4 or 8", "imageName names the image too: give only one of the two"],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.jobs.wait((await ctx.api.deleteGpuVm({ params: { id: ctx.state.gpu!.id } })).jobId);
        },
        ops: { gpu: "gone" },
      },
      recreate: {
        ops: { gpu: "create" },
        api: async (ctx) =>
          expect(await gpuRead(ctx.api)(idOf(ctx, "gpu"))).toMatchObject({
            name: `${P}-gpu-2`,
            gpuCount: 2,
            status: "Running",
          }),
      },
      destroy: {
        ops: { gpu: "delete" },
        api: async (ctx) => {
          expect(await gone(() => gpuRead(ctx.api)(priorId(ctx, "gpu")))).toBe(true);
          await dropGroup(ctx, "gpuGroup");
        },
      },
    },
    failed: failedJob(
      "gpu",
      { kind: "GpuVirtualMachine", inputs: { name: `${P}f-gpu`, ...f.gpu, gpuCount: 1 } },
      "gpu.create",
      "No GPU capacity left",
      (api, id) => api.getGpuVm({ params: { id } }),
      { op: "replace", status: "Running" },
    ),
    adopt: {
      refused: {
        // GPU VM names are not unique: one of the same name made elsewhere is left alone
        before: async (ctx) => {
          const made = await ctx.api.createGpuVm({ body: { name: `${P}a-gpu`, ...f.gpu, gpuCount: 1 } });
          await ctx.api.jobs.wait(made.jobId);
          ctx.made.gpu = made.id;
        },
        declare: () => ({ gpu: { kind: "GpuVirtualMachine", inputs: { name: `${P}a-gpu`, ...f.gpu, gpuCount: 1 } } }),
        ops: { gpu: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "gpu")).not.toBe(ctx.made.gpu);
          expect((await gpuRead(ctx.api)(idOf(ctx, "gpu"))).status).toBe("Running");
        },
      },
      adopted: { ops: { gpu: "same" } },
      destroyed: {
        ops: { gpu: "delete" },
        api: async (ctx) => {
          expect((await gpuRead(ctx.api)(ctx.made.gpu!)).status).toBe("Running");
          await ctx.api.jobs.wait((await ctx.api.deleteGpuVm({ params: { id: ctx.made.gpu! } })).jobId);
        },
      },
    },
  };

  // ------------------------------------------------------------ Volume
  const vol = (inputs: Record<string, unknown>): Program => ({
    vol: {
      kind: "Volume",
      inputs: { name: `${P}-vol`, datacenterId: f.fra, volumeTypeId: f.ssd.id, sizeGb: 10, ...inputs },
    },
  });
  const volA = (adopt: boolean): Program => ({
    vol: {
      kind: "Volume",
      inputs: { name: `${P}a-vol`, datacenterId: f.fra, volumeTypeId: f.ssd.id, sizeGb: 20, adopt },
    },
  });
  const volume: KindTable = {
    kind: "Volume",
    subject: "vol",
    main: {
      create: {
        declare: () => vol({}),
        ops: { vol: "create" },
        api: async (ctx) => {
          // with the size id the provider looked up
          const live = await volRead(ctx.api)(idOf(ctx, "vol"));
          expect(live).toMatchObject({
            name: `${P}-vol`,
            sizeGb: 10,
            status: "Available",
            volumeTypeId: f.ssd.id,
            volumeSizeId: f.ssd.sizeIds[10],
            datacenter: { id: f.fra },
            teamId: null,
          });
          expect(ctx.state.vol?.outputs).toMatchObject({
            volumeSizeId: f.ssd.sizeIds[10],
            datacenterName: live.datacenter.name,
          });
        },
      },
      same: { ops: { vol: "same" }, api: quiet("vol") },
      refresh: { ops: { vol: "same" } },
      update: {
        declare: () => vol({ sizeGb: 20 }),
        ops: { vol: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "vol")).toBe(priorId(ctx, "vol"));
          expect(await volRead(ctx.api)(idOf(ctx, "vol"))).toMatchObject({
            sizeGb: 20,
            volumeSizeId: f.ssd.sizeIds[20],
            status: "Available",
          });
          expect(mutationsOf(ctx, idOf(ctx, "vol"))).toEqual(["resizeVolume"]);
        },
      },
      replace: {
        // renamed (created first) into a resource group (set at creation only); a replacement may shrink
        before: groupFor("volGroup"),
        declare: (made) => vol({ sizeGb: 10, name: `${P}-vol-b`, teamId: made.volGroup }),
        ops: { vol: "replace" },
        replaces: { vol: ["name", "teamId"] },
        api: async (ctx) => {
          await replacedAndGone(ctx, "vol", volRead(ctx.api));
          expect(await volRead(ctx.api)(idOf(ctx, "vol"))).toMatchObject({
            name: `${P}-vol-b`,
            sizeGb: 10,
            teamId: Number(ctx.made.volGroup),
          });
        },
      },
      drift: {
        before: async (ctx) => {
          const { jobId } = await ctx.api.resizeVolume({ params: { id: ctx.state.vol!.id }, body: { newSizeGb: 50 } });
          await ctx.api.jobs.wait(jobId);
        },
        ops: { vol: "changed" },
        api: async (ctx) =>
          expect(ctx.state.vol?.outputs).toMatchObject({ sizeGb: 50, volumeSizeId: f.ssd.sizeIds[50] }),
      },
      repair: {
        // a grown volume cannot shrink back: the program takes the size it grew to, and converges without a request;
        // it also leaves `teamId` out, which leaves the volume in its group
        declare: () => vol({ sizeGb: 50, name: `${P}-vol-b` }),
        ops: { vol: "same" },
        api: async (ctx) => {
          expect(await volRead(ctx.api)(idOf(ctx, "vol"))).toMatchObject({
            sizeGb: 50,
            teamId: Number(ctx.made.volGroup),
          });
          expect(mutationsOf(ctx, idOf(ctx, "vol"))).toEqual([]);
        },
      },
      bad: {
        // a shrink of the 50 GB the volume grew to, a group that is no id, an unknown property
        declare: (good) => ({
          vol: {
            kind: "Volume",
            inputs: { ...good.vol!.inputs, sizeGb: 20, teamId: "ops", size: 10 },
          },
        }),
        properties: ["sizeGb", "teamId", "size"],
        reasons: ["volumes cannot shrink (50 GB → 20 GB)"],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.jobs.wait((await ctx.api.deleteVolume({ params: { id: ctx.state.vol!.id } })).jobId);
        },
        ops: { vol: "gone" },
      },
      recreate: {
        ops: { vol: "create" },
        api: async (ctx) =>
          expect(await volRead(ctx.api)(idOf(ctx, "vol"))).toMatchObject({
            name: `${P}-vol-b`,
            sizeGb: 50,
            status: "Available",
            teamId: null,
          }),
      },
      destroy: {
        ops: { vol: "delete" },
        api: async (ctx) => {
          expect(await gone(() => volRead(ctx.api)(priorId(ctx, "vol")))).toBe(true);
          await dropGroup(ctx, "volGroup");
        },
      },
    },
    // the unique name is kept: the failed volume is deleted first
    failed: failedJob(
      "vol",
      { kind: "Volume", inputs: { name: `${P}f-vol`, datacenterId: f.fra, volumeTypeId: f.ssd.id, sizeGb: 10 } },
      "volume.create",
      "Volume quota exceeded",
      (api, id) => api.getVolume({ params: { id } }),
      { op: "replace-delete-first", status: "Available" },
    ),
    adopt: {
      refused: {
        before: async (ctx) => {
          const made = await ctx.api.createVolume({
            body: {
              name: `${P}a-vol`,
              datacenterId: f.fra,
              volumeTypeId: f.ssd.id,
              volumeSizeId: f.ssd.sizeIds[10],
              sizeGb: 10,
            },
          });
          await ctx.api.jobs.wait(made.jobId);
          ctx.made.vol = made.id;
        },
        declare: () => volA(false),
        ops: {},
        fails: [`A volume named "${P}a-vol" already exists`, "Set `adopt: true` to manage it from this program"],
        api: async (ctx) => {
          expect(ctx.state.vol).toBeUndefined();
          expect((await volRead(ctx.api)(ctx.made.vol!)).sizeGb).toBe(10);
        },
      },
      adopted: {
        declare: () => volA(true),
        ops: { vol: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "vol")).toBe(ctx.made.vol);
          expect(await volRead(ctx.api)(ctx.made.vol!)).toMatchObject({ sizeGb: 20, volumeSizeId: f.ssd.sizeIds[20] });
        },
      },
      destroyed: {
        ops: { vol: "delete" },
        api: async (ctx) => expect(await gone(() => volRead(ctx.api)(ctx.made.vol!))).toBe(true),
      },
    },
  };

  // ------------------------------------------------------------ VolumeAttachment
  /** A VM, and a volume attached to it (`volume`: the volume's inputs). */
  const att = (volume: Record<string, unknown> = {}): Program => ({
    attVm: {
      kind: "VirtualMachine",
      inputs: { name: `${P}-att-vm`, datacenterId: f.fra, imageId: 1, configurationId: 1 },
    },
    attVol: {
      kind: "Volume",
      inputs: { name: `${P}-att-vol`, datacenterId: f.fra, volumeTypeId: f.ssd.id, sizeGb: 10, ...volume },
    },
    att: { kind: "VolumeAttachment", inputs: { volumeId: ref("attVol"), virtualMachineId: ref("attVm") } },
  });
  const attachedAsDeclared = async (ctx: Ctx) => {
    const id = idOf(ctx, "att");
    expect(id).toBe(`${idOf(ctx, "attVol")}:${idOf(ctx, "attVm")}`);
    expect(await attached(ctx.api, id)).toBe(true);
  };
  const volumeAttachment: KindTable = {
    kind: "VolumeAttachment",
    subject: "att",
    main: {
      create: {
        declare: () => att(),
        ops: { att: "create" },
        api: async (ctx) => {
          await attachedAsDeclared(ctx);
          expect(ctx.state.att?.outputs.status).toBe("In-use");
        },
      },
      same: { ops: { att: "same", attVol: "same" }, api: quiet("att") },
      refresh: { ops: { att: "same", attVol: "same" } },
      update: {
        // both inputs name the attachment (a change replaces it): its volume grows in place while attached
        declare: () => att({ sizeGb: 20 }),
        ops: { attVol: "update", att: "same" },
        api: async (ctx) => {
          expect(await volRead(ctx.api)(idOf(ctx, "attVol"))).toMatchObject({
            sizeGb: 20,
            status: "In-use",
            virtualMachineId: idOf(ctx, "attVm"),
          });
        },
      },
      replace: {
        // the volume replaced (renamed: created first) replaces its attachment: the new volume is attached, then the
        // old one detached and deleted
        declare: () => att({ sizeGb: 20, name: `${P}-att-vol-b` }),
        ops: { attVol: "replace", att: "replace" },
        replaces: { att: ["volumeId"] },
        api: async (ctx) => {
          await attachedAsDeclared(ctx);
          expect(await volRead(ctx.api)(idOf(ctx, "attVol"))).toMatchObject({
            name: `${P}-att-vol-b`,
            status: "In-use",
          });
          expect(await gone(() => volRead(ctx.api)(priorId(ctx, "attVol")))).toBe(true);
        },
      },
      drift: { na: "an attachment's drift is a detach: refresh finds it gone (the deleted step)" },
      repair: { na: "see drift" },
      bad: {
        declare: (good) => ({
          ...good,
          att: { kind: "VolumeAttachment", inputs: { volumeId: "vol-1", mountPoint: "/data" } },
        }),
        properties: ["volumeId", "virtualMachineId", "mountPoint"],
        reasons: ["UUID"],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.jobs.wait((await ctx.api.detachVolume({ params: { id: ctx.state.attVol!.id } })).jobId);
        },
        ops: { att: "gone" },
      },
      recreate: { ops: { att: "create", attVol: "same" }, api: attachedAsDeclared },
      destroy: {
        // the attachment goes first, then the volume
        ops: { att: "delete", attVol: "delete", attVm: "delete" },
        api: async (ctx) => expect(await gone(() => volRead(ctx.api)(priorId(ctx, "attVol")))).toBe(true),
      },
    },
    failed: {
      failed: {
        // a VM and a volume made through the API: the stack's own would meet the other kinds' faults
        before: async (ctx) => {
          const [job] = await ctx.api.createVm({
            body: { name: `${P}f-att-vm`, datacenterId: f.fra, imageId: 1, configurationId: 1 },
          });
          const disk = await ctx.api.createVolume({
            body: {
              name: `${P}f-att-vol`,
              datacenterId: f.fra,
              volumeTypeId: f.ssd.id,
              volumeSizeId: f.ssd.sizeIds[10],
              sizeGb: 10,
            },
          });
          ctx.made.host = (await ctx.api.jobs.wait(job!.id)).resourceId!;
          await ctx.api.jobs.wait(disk.jobId);
          ctx.made.disk = disk.id;
        },
        declare: (made) => ({
          att: { kind: "VolumeAttachment", inputs: { volumeId: made.disk, virtualMachineId: made.host } },
        }),
        // twice: a failed attach job is sent once more
        faults: ["job=volume.attach,fail=Hypervisor refused the disk,count=2"],
        ops: { att: "create" },
        fails: ["Hypervisor refused the disk"],
        api: async (ctx) => {
          // a failed attach leaves the volume Available with no VM: nothing exists to record
          expect(ctx.state.att).toBeUndefined();
          expect(await volRead(ctx.api)(ctx.made.disk!)).toMatchObject({ status: "Available", virtualMachineId: null });
        },
      },
      repaired: {
        ops: { att: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "att")).toBe(`${ctx.made.disk}:${ctx.made.host}`);
          expect(await attached(ctx.api, idOf(ctx, "att"))).toBe(true);
        },
      },
      destroyed: {
        ops: { att: "delete" },
        api: async (ctx) => {
          expect(await volRead(ctx.api)(ctx.made.disk!)).toMatchObject({ status: "Available", virtualMachineId: null });
          await ctx.api.jobs.wait((await ctx.api.deleteVolume({ params: { id: ctx.made.disk! } })).jobId);
          await ctx.api.jobs.wait((await ctx.api.deleteVm({ params: { id: ctx.made.host! } })).jobId);
        },
      },
    },
    adopt: {
      refused: {
        // an existing attachment is taken over without being asked to, and without an attach request
        before: async (ctx) => {
          const [job] = await ctx.api.createVm({
            body: { name: `${P}a-att-vm`, datacenterId: f.fra, imageId: 1, configurationId: 1 },
          });
          const disk = await ctx.api.createVolume({
            body: {
              name: `${P}a-att-vol`,
              datacenterId: f.fra,
              volumeTypeId: f.ssd.id,
              volumeSizeId: f.ssd.sizeIds[10],
              sizeGb: 10,
            },
          });
          ctx.made.host = (await ctx.api.jobs.wait(job!.id)).resourceId!;
          await ctx.api.jobs.wait(disk.jobId);
          ctx.made.disk = disk.id;
          await ctx.api.jobs.wait(
            (await ctx.api.attachVolume({ params: { id: disk.id }, body: { virtualMachineId: ctx.made.host } })).jobId,
          );
        },
        declare: (made) => ({
          att: { kind: "VolumeAttachment", inputs: { volumeId: made.disk, virtualMachineId: made.host } },
        }),
        ops: { att: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "att")).toBe(`${ctx.made.disk}:${ctx.made.host}`);
          expect(mutationsOf(ctx, ctx.made.disk!)).not.toContain("attachVolume");
        },
      },
      adopted: { ops: { att: "same" } },
      destroyed: {
        ops: { att: "delete" },
        api: async (ctx) => {
          expect(await volRead(ctx.api)(ctx.made.disk!)).toMatchObject({ status: "Available", virtualMachineId: null });
          await ctx.api.jobs.wait((await ctx.api.deleteVolume({ params: { id: ctx.made.disk! } })).jobId);
          await ctx.api.jobs.wait((await ctx.api.deleteVm({ params: { id: ctx.made.host! } })).jobId);
        },
      },
    },
  };

  // ------------------------------------------------------------ Network
  const net = (inputs: Record<string, unknown>): Program => ({
    net: {
      kind: "Network",
      inputs: { name: `${P}-net`, datacenterId: f.fra, networkType: "standard", description: "as created", ...inputs },
    },
  });
  const netA = (adopt: boolean): Program => ({
    net: {
      kind: "Network",
      inputs: { name: `${P}a-net`, datacenterId: f.fra, networkType: "standard", description: "managed", adopt },
    },
  });
  const netChanged = { description: "changed in place", dnsServers: ["1.1.1.1"], serveDNSServersEnabled: true };
  const network: KindTable = {
    kind: "Network",
    subject: "net",
    main: {
      create: {
        declare: () => net({}),
        ops: { net: "create" },
        api: async (ctx) => {
          const live = await netRead(ctx.api)(idOf(ctx, "net"));
          expect(live).toMatchObject({
            name: `${P}-net`,
            description: "as created",
            status: "Active",
            networkType: "standard",
            cidrBlock: "10.0.0.0/24",
            datacenter: { id: f.fra },
          });
          expect(ctx.state.net?.outputs.gateway).toBe(live.gateway);
        },
      },
      same: { ops: { net: "same" }, api: quiet("net") },
      refresh: { ops: { net: "same" } },
      update: {
        declare: () => net(netChanged),
        ops: { net: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "net")).toBe(priorId(ctx, "net"));
          expect(await netRead(ctx.api)(idOf(ctx, "net"))).toMatchObject({
            description: "changed in place",
            dnsServers: ["1.1.1.1"],
          });
          expect(mutationsOf(ctx, idOf(ctx, "net"))).toEqual(["updateNetwork"]);
        },
      },
      replace: {
        // the unique name is kept: the old network is deleted first
        declare: () => net({ ...netChanged, datacenterId: f.ams }),
        ops: { net: "replace-delete-first" },
        api: async (ctx) => {
          await replacedAndGone(ctx, "net", netRead(ctx.api));
          expect(await netRead(ctx.api)(idOf(ctx, "net"))).toMatchObject({
            name: `${P}-net`,
            datacenter: { id: f.ams },
          });
        },
      },
      drift: {
        before: async (ctx) => {
          await ctx.api.updateNetwork({ params: { id: ctx.state.net!.id }, body: { description: "edited by hand" } });
        },
        ops: { net: "changed" },
        api: async (ctx) => expect(ctx.state.net?.outputs).toMatchObject({ description: "edited by hand" }),
      },
      repair: {
        ops: { net: "update" },
        api: async (ctx) => expect((await netRead(ctx.api)(idOf(ctx, "net"))).description).toBe("changed in place"),
      },
      bad: {
        declare: () => ({
          net: {
            kind: "Network",
            inputs: {
              name: "",
              datacenterId: "not-a-uuid",
              networkType: "custom",
              snatEnabled: true,
              cidrBlock: "10.0.0.0/24",
              dhcpStartAddress: "10.0.1.5",
            },
          },
        }),
        properties: ["name", "datacenterId", "snatEnabled", "dhcpStartAddress"],
        reasons: ["UUID"],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.deleteNetwork({ params: { id: ctx.state.net!.id } });
        },
        ops: { net: "gone" },
      },
      recreate: {
        ops: { net: "create" },
        api: async (ctx) =>
          expect(await netRead(ctx.api)(idOf(ctx, "net"))).toMatchObject({
            name: `${P}-net`,
            status: "Active",
            datacenter: { id: f.ams },
          }),
      },
      destroy: {
        ops: { net: "delete" },
        api: async (ctx) => expect(await gone(() => netRead(ctx.api)(priorId(ctx, "net")))).toBe(true),
      },
    },
    // the unique name is kept: the failed network is deleted first
    failed: failedJob(
      "net",
      { kind: "Network", inputs: { name: `${P}f-net`, datacenterId: f.fra, networkType: "standard" } },
      "network.create",
      "Network quota exceeded",
      (api, id) => api.getNetwork({ params: { id } }),
      { op: "replace-delete-first", status: "Active" },
    ),
    adopt: {
      refused: {
        before: async (ctx) => {
          const made = await ctx.api.createNetwork({
            body: { name: `${P}a-net`, datacenterId: f.fra, networkType: "standard", description: "made elsewhere" },
          });
          await ctx.api.jobs.wait(made.jobId);
          ctx.made.net = made.id;
        },
        declare: () => netA(false),
        ops: {},
        fails: [`A network named "${P}a-net" already exists`, "Set `adopt: true` to manage it from this program"],
        api: async (ctx) => {
          expect(ctx.state.net).toBeUndefined();
          expect((await netRead(ctx.api)(ctx.made.net!)).description).toBe("made elsewhere");
        },
      },
      adopted: {
        declare: () => netA(true),
        ops: { net: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "net")).toBe(ctx.made.net);
          expect((await netRead(ctx.api)(ctx.made.net!)).description).toBe("managed");
        },
      },
      destroyed: {
        ops: { net: "delete" },
        api: async (ctx) => expect(await gone(() => netRead(ctx.api)(ctx.made.net!))).toBe(true),
      },
    },
  };

  // ------------------------------------------------------------ ResourceGroup
  const group = (name: string, inputs: Record<string, unknown> = {}): Program => ({
    group: { kind: "ResourceGroup", inputs: { name, ...inputs } },
  });
  const groupF = (member: unknown): Program => ({
    groupUser: { kind: "User", inputs: { email: `${P}f-group-user@example.com` } },
    group: { kind: "ResourceGroup", inputs: { name: `${P}f-group`, members: [member] } },
  });
  /** The group beside two users (`alice`, `bob`) it may list as members. */
  const groupMain = (name: string, inputs: Record<string, unknown> = {}): Program => ({
    alice: { kind: "User", inputs: { email: `${P}-group-alice@example.com` } },
    bob: { kind: "User", inputs: { email: `${P}-group-bob@example.com` } },
    ...group(name, inputs),
  });
  /** In place: renamed, a parent (a plain id) and members (order and repetition do not matter). */
  const groupChanged = (made: Record<string, string>) =>
    groupMain(`${P}-group-2`, { parentTeamId: Number(made.parent), members: [ref("bob"), ref("alice"), ref("bob")] });
  const bothMembers = async (ctx: Ctx) =>
    expect(await memberIds(ctx.api, idOf(ctx, "group"))).toEqual([idOf(ctx, "alice"), idOf(ctx, "bob")].sort());
  const resourceGroup: KindTable = {
    kind: "ResourceGroup",
    subject: "group",
    main: {
      create: {
        declare: () => groupMain(`${P}-group`),
        ops: { group: "create" },
        api: async (ctx) => {
          const id = idOf(ctx, "group");
          // the id is the integer team id as text; members not set by the program are not managed
          expect(id).toMatch(/^\d+$/);
          expect(ctx.state.group?.outputs.teamId).toBe(Number(id));
          expect(ctx.state.group?.outputs.members).toBeUndefined();
          expect(await team(ctx.api, id)).toMatchObject({ name: `${P}-group`, parentTeamId: null, memberCount: 0 });
        },
      },
      same: { ops: { group: "same" }, api: quiet("group") },
      refresh: { ops: { group: "same" } },
      update: {
        before: async (ctx) => {
          ctx.made.parent = String((await ctx.api.createTeam({ body: { name: `${P}-outside-parent` } })).teamId);
        },
        declare: groupChanged,
        ops: { group: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "group")).toBe(priorId(ctx, "group"));
          expect(await team(ctx.api, idOf(ctx, "group"))).toMatchObject({
            name: `${P}-group-2`,
            parentTeamId: Number(ctx.made.parent),
          });
          await bothMembers(ctx);
        },
      },
      replace: { na: "every property changes in place" },
      drift: {
        before: async (ctx) => {
          const id = Number(ctx.state.group!.id);
          await ctx.api.updateTeam({ params: { id }, body: { name: `${P}-group-by-hand` } });
          await ctx.api.removeTeamMember({ params: { id, userId: ctx.state.alice!.id } });
        },
        ops: { group: "changed" },
        api: async (ctx) =>
          expect(ctx.state.group?.outputs).toMatchObject({ name: `${P}-group-by-hand`, members: [idOf(ctx, "bob")] }),
      },
      repair: {
        ops: { group: "update" },
        api: async (ctx) => {
          expect((await team(ctx.api, idOf(ctx, "group"))).name).toBe(`${P}-group-2`);
          await bothMembers(ctx);
        },
      },
      bad: {
        declare: (good) => ({ ...good, ...group(" ", { parentTeamId: "first", members: ["bob"], colour: "red" }) }),
        properties: ["name", "parentTeamId", "members", "colour"],
        reasons: ["must not be empty", "must be the integer id", "UUID"],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.deleteTeam({ params: { id: Number(ctx.state.group!.id) } });
        },
        ops: { group: "gone" },
      },
      recreate: {
        ops: { group: "create" },
        api: async (ctx) => {
          expect(await team(ctx.api, idOf(ctx, "group"))).toMatchObject({
            name: `${P}-group-2`,
            parentTeamId: Number(ctx.made.parent),
          });
          await bothMembers(ctx);
        },
      },
      destroy: {
        ops: { group: "delete" },
        api: async (ctx) => {
          expect(await gone(() => team(ctx.api, priorId(ctx, "group")))).toBe(true);
          // the child went before the parent made outside the stack
          await ctx.api.deleteTeam({ params: { id: Number(ctx.made.parent) } });
        },
      },
    },
    failed: {
      failed: {
        // created without a job: what fails is setting its members (one is no user); recorded, finished by the next up
        declare: () => groupF(GHOST),
        ops: { group: "create" },
        fails: [`no such user in this entity: ${GHOST}`],
        api: async (ctx) => {
          expect(ctx.state.group?.initErrors.join(" ")).toContain("could not be set");
          expect((await team(ctx.api, idOf(ctx, "group"))).name).toBe(`${P}f-group`);
        },
      },
      repaired: {
        declare: () => groupF(ref("groupUser")),
        ops: { group: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "group")).toBe(priorId(ctx, "group"));
          expect(await memberIds(ctx.api, idOf(ctx, "group"))).toEqual([idOf(ctx, "groupUser")]);
          expect(ctx.state.group?.initErrors).toEqual([]);
        },
      },
      destroyed: {
        ops: { group: "delete" },
        api: async (ctx) => expect(await gone(() => team(ctx.api, priorId(ctx, "group")))).toBe(true),
      },
    },
    adopt: {
      refused: {
        before: async (ctx) => {
          ctx.made.group = String((await ctx.api.createTeam({ body: { name: `${P}a-group` } })).teamId);
        },
        // group names are unique ignoring case
        declare: () => group(`${P.toUpperCase()}A-Group`, { adopt: false }),
        ops: {},
        fails: [`A resource group named "${P.toUpperCase()}A-Group" already exists`],
        api: async (ctx) => {
          expect(ctx.error).toContain(`already exists (${ctx.made.group})`);
          expect(ctx.state.group).toBeUndefined();
          expect((await team(ctx.api, ctx.made.group!)).name).toBe(`${P}a-group`);
        },
      },
      adopted: {
        declare: () => ({
          adoptMember: { kind: "User", inputs: { email: `${P}a-group-member@example.com` } },
          ...group(`${P.toUpperCase()}A-Group`, { adopt: true, members: [ref("adoptMember")] }),
        }),
        ops: { group: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "group")).toBe(ctx.made.group);
          expect(await memberIds(ctx.api, ctx.made.group!)).toEqual([idOf(ctx, "adoptMember")]);
          expect((await team(ctx.api, ctx.made.group!)).name).toBe(`${P.toUpperCase()}A-Group`);
        },
      },
      destroyed: {
        ops: { group: "delete" },
        api: async (ctx) => expect(await gone(() => team(ctx.api, ctx.made.group!))).toBe(true),
      },
    },
  };

  // ------------------------------------------------------------ User
  const user = (inputs: Record<string, unknown>): Program => ({
    user: { kind: "User", inputs: { email: `${P}-user@example.com`, ...inputs } },
  });
  /** In place: names, email, roles and resource groups (the group made through the API before the step). */
  const userChanged = (made: Record<string, string>) => ({
    email: `${P}-user@example.org`,
    firstName: "Ada",
    lastName: "Lovelace",
    roleNames: ["vm-operator", "tenant-user"],
    teamIds: [Number(made.userGroup)],
  });
  const userKind: KindTable = {
    kind: "User",
    subject: "user",
    main: {
      create: {
        // the email is stored lower-case: the program's case is no change
        declare: () => user({ email: `${P.toUpperCase()}-User@Example.com` }),
        ops: { user: "create" },
        api: async (ctx) => {
          expect(await userRead(ctx.api)(idOf(ctx, "user"))).toMatchObject({
            email: `${P}-user@example.com`,
            inviteStatus: "pending",
            roles: ["tenant-user"],
            teamIds: [],
            deletedAt: null,
          });
          expect(ctx.state.user?.outputs.inviteStatus).toBe("pending");
        },
      },
      same: { ops: { user: "same" }, api: quiet("user") },
      refresh: { ops: { user: "same" } },
      update: {
        before: async (ctx) => {
          ctx.made.userGroup = String((await ctx.api.createTeam({ body: { name: `${P}-user-group` } })).teamId);
        },
        declare: (made) => user(userChanged(made)),
        ops: { user: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "user")).toBe(priorId(ctx, "user"));
          expect(ctx.state.user?.outputs.name).toBe("Ada Lovelace");
          const live = await userRead(ctx.api)(idOf(ctx, "user"));
          expect(live).toMatchObject({
            email: `${P}-user@example.org`,
            firstName: "Ada",
            lastName: "Lovelace",
            teamIds: [Number(ctx.made.userGroup)],
          });
          expect([...live.roles].sort()).toEqual(["tenant-user", "vm-operator"]);
          expect(mutationsOf(ctx, idOf(ctx, "user"))).toContain("updateUser");
        },
      },
      replace: {
        // invite → register: the unique email is kept, so the old user is deleted first
        declare: (made) => user({ ...userChanged(made), action: "register", password: secret(PASSWORD) }),
        ops: { user: "replace-delete-first" },
        api: async (ctx) => {
          await replacedAndGone(ctx, "user", userRead(ctx.api));
          expect(await userRead(ctx.api)(idOf(ctx, "user"))).toMatchObject({
            email: `${P}-user@example.org`,
            inviteStatus: "activated",
          });
        },
      },
      drift: {
        before: async (ctx) => {
          const id = ctx.state.user!.id;
          await ctx.api.updateUser({ params: { id }, body: { firstName: "Augusta" } });
          await ctx.api.removeUserRole({ params: { userId: id, roleName: "vm-operator" } });
          await ctx.api.removeTeamMember({ params: { id: Number(ctx.made.userGroup), userId: id } });
        },
        ops: { user: "changed" },
        api: async (ctx) =>
          expect(ctx.state.user?.outputs).toMatchObject({
            firstName: "Augusta",
            name: "Augusta Lovelace",
            roleNames: ["tenant-user"],
            teamIds: [],
          }),
      },
      repair: {
        ops: { user: "update" },
        api: async (ctx) => {
          const live = await userRead(ctx.api)(idOf(ctx, "user"));
          expect(live.firstName).toBe("Ada");
          expect([...live.roles].sort()).toEqual(["tenant-user", "vm-operator"]);
          expect(live.teamIds).toEqual([Number(ctx.made.userGroup)]);
        },
      },
      bad: {
        declare: () =>
          user({
            email: "not-an-email",
            action: "register",
            password: secret(WEAK),
            roleNames: ["tenant-user", "superuser"],
            teamIds: ["first"],
          }),
        properties: ["email", "password", "roleNames", "teamIds"],
        reasons: [
          "must be an email address",
          // a secret input: its failure names it in the reason, so the engine does not print the value beside it
          "password: must mix upper- and lower-case letters, contain a number",
          'unknown role "superuser"',
        ],
        hides: WEAK,
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.deleteUser({ params: { id: ctx.state.user!.id } });
        },
        ops: { user: "gone" },
      },
      recreate: {
        // soft-deleted: the email is free again
        ops: { user: "create" },
        api: async (ctx) =>
          expect(await userRead(ctx.api)(idOf(ctx, "user"))).toMatchObject({
            email: `${P}-user@example.org`,
            firstName: "Ada",
            inviteStatus: "activated",
            teamIds: [Number(ctx.made.userGroup)],
          }),
      },
      destroy: {
        ops: { user: "delete" },
        api: async (ctx) => {
          expect(await gone(() => userRead(ctx.api)(priorId(ctx, "user")))).toBe(true);
          await ctx.api.deleteTeam({ params: { id: Number(ctx.made.userGroup) } });
        },
      },
    },
    failed: {
      failed: {
        // created without a job: a create answered 500 is sent again, and makes one user
        declare: () => ({ user: { kind: "User", inputs: { email: `${P}f-user@example.com` } } }),
        faults: ["createUser,status=500,count=1"],
        ops: { user: "create" },
        api: async (ctx) => {
          expect(ctx.requests.filter((r) => r.route === "createUser").map((r) => r.status)).toContain(500);
          const users = (await ctx.api.listUsers({ query: { search: `${P}f-user@`, limit: 100 } })).data;
          expect(users.map((u) => u.id)).toEqual([idOf(ctx, "user")]);
          expect(ctx.state.user?.initErrors).toEqual([]);
        },
      },
      repaired: { ops: { user: "same" } },
      destroyed: {
        ops: { user: "delete" },
        api: async (ctx) => expect(await gone(() => userRead(ctx.api)(priorId(ctx, "user")))).toBe(true),
      },
    },
    adopt: {
      refused: {
        before: async (ctx) => {
          ctx.made.user = (
            await ctx.api.createUser({
              body: { email: `${P}a-user@example.com`, firstName: "Old", roleNames: ["tenant-admin"] },
            })
          ).id;
        },
        // emails are unique ignoring case
        declare: () => user({ email: `${P.toUpperCase()}A-user@example.com`, firstName: "New", adopt: false }),
        ops: {},
        fails: [`A user with the email ${P}a-user@example.com already exists`],
        api: async (ctx) => {
          expect(ctx.error).toContain(`already exists (${ctx.made.user})`);
          expect(ctx.state.user).toBeUndefined();
          expect((await userRead(ctx.api)(ctx.made.user!)).firstName).toBe("Old");
        },
      },
      adopted: {
        declare: () =>
          user({ email: `${P}a-user@example.com`, firstName: "New", roleNames: ["tenant-user"], adopt: true }),
        ops: { user: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "user")).toBe(ctx.made.user);
          expect(await userRead(ctx.api)(ctx.made.user!)).toMatchObject({ firstName: "New", roles: ["tenant-user"] });
        },
      },
      destroyed: {
        ops: { user: "delete" },
        api: async (ctx) => expect(await gone(() => userRead(ctx.api)(ctx.made.user!))).toBe(true),
      },
    },
  };

  // ------------------------------------------------------------ ApiKey
  const apiKey = (inputs: Record<string, unknown>): Program => ({
    key: { kind: "ApiKey", inputs: { name: `${P}-key`, expiresInDays: 60, ...inputs } },
  });
  const secretOf = (ctx: Ctx, name = "key") => ctx.state[name]?.outputs.key as string;
  const priorSecret = (ctx: Ctx) => ctx.prior.key?.outputs.key as string;
  const apiKeyKind: KindTable = {
    kind: "ApiKey",
    subject: "key",
    main: {
      create: {
        declare: () => apiKey({}),
        ops: { key: "create" },
        api: async (ctx) => {
          // an active key of the signed-in user
          expect(secretOf(ctx)).toMatch(/^svc_/);
          expect(await key(ctx.api, idOf(ctx, "key"))).toMatchObject({
            name: `${P}-key`,
            status: "Active",
            enabled: true,
            userId: f.keyOwner,
            start: secretOf(ctx).slice(0, 8),
          });
          expect(await ctx.accepted(secretOf(ctx))).toBe(true);
        },
      },
      same: {
        ops: { key: "same" },
        api: async (ctx) => {
          await quiet("key")(ctx);
          expect(secretOf(ctx)).toBe(priorSecret(ctx));
        },
      },
      refresh: { ops: { key: "same" } },
      update: {
        // rotated and suspended: a new secret on the same key, the old one refused, the new one too while suspended
        declare: () => apiKey({ rotation: "r1", enabled: false }),
        ops: { key: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "key")).toBe(priorId(ctx, "key"));
          expect(secretOf(ctx)).not.toBe(priorSecret(ctx));
          expect(mutationsOf(ctx, idOf(ctx, "key")).sort()).toEqual(["rotateApiKey", "setApiKeyStatus"]);
          expect(ctx.state.key?.outputs.status).toBe("Suspended");
          expect(await key(ctx.api, idOf(ctx, "key"))).toMatchObject({
            enabled: false,
            status: "Suspended",
            start: secretOf(ctx).slice(0, 8),
          });
          expect(await ctx.accepted(secretOf(ctx))).toBe(false);
          expect(await ctx.accepted(priorSecret(ctx))).toBe(false);
        },
      },
      replace: {
        // renamed, and no longer suspended: the new key is active
        declare: () => apiKey({ rotation: "r1", name: `${P}-key-b` }),
        ops: { key: "replace" },
        replaces: { key: ["name"] },
        api: async (ctx) => {
          await replacedAndGone(ctx, "key", (id) => key(ctx.api, id));
          expect(await ctx.accepted(priorSecret(ctx))).toBe(false);
          expect(await key(ctx.api, idOf(ctx, "key"))).toMatchObject({
            name: `${P}-key-b`,
            start: secretOf(ctx).slice(0, 8),
          });
          expect(await ctx.accepted(secretOf(ctx))).toBe(true);
        },
      },
      drift: {
        // suspended and rotated (the stack's secret is dead): refresh shows the suspension, the state keeps its secret
        before: async (ctx) => {
          const keyId = ctx.state.key!.id;
          await ctx.api.setApiKeyStatus({ params: { keyId }, body: { enabled: false } });
          ctx.made.foreignKey = (await ctx.api.rotateApiKey({ params: { keyId } })).key;
        },
        ops: { key: "changed" },
        api: async (ctx) => {
          expect(ctx.state.key?.outputs).toMatchObject({ enabled: false, status: "Suspended" });
          expect(secretOf(ctx)).toBe(priorSecret(ctx));
        },
      },
      repair: {
        // resumed and rotated again: the stack holds a working secret nobody else has
        ops: { key: "update" },
        api: async (ctx) => {
          expect([priorSecret(ctx), ctx.made.foreignKey]).not.toContain(secretOf(ctx));
          expect(await key(ctx.api, idOf(ctx, "key"))).toMatchObject({
            enabled: true,
            status: "Active",
            start: secretOf(ctx).slice(0, 8),
          });
          expect(await ctx.accepted(secretOf(ctx))).toBe(true);
          expect(await ctx.accepted(ctx.made.foreignKey!)).toBe(false);
        },
      },
      bad: {
        declare: () =>
          apiKey({
            name: " ",
            roleId: "root",
            expiresInDays: 0,
            metadata: "owner=ci",
            enabled: "yes",
            rotation: { at: 1 },
            key: "svc_mine",
            adopt: true,
          }),
        properties: ["name", "roleId", "expiresInDays", "metadata", "enabled", "rotation", "key", "adopt"],
        reasons: ["vm-operator", "is not a property of this resource: remove it"],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.deleteApiKey({ params: { keyId: ctx.state.key!.id } });
        },
        ops: { key: "gone" },
      },
      recreate: {
        ops: { key: "create" },
        api: async (ctx) => {
          expect((await key(ctx.api, idOf(ctx, "key"))).name).toBe(`${P}-key-b`);
          expect(await ctx.accepted(secretOf(ctx))).toBe(true);
        },
      },
      destroy: {
        ops: { key: "delete" },
        api: async (ctx) => {
          expect(await gone(() => key(ctx.api, priorId(ctx, "key")))).toBe(true);
          expect(await ctx.accepted(priorSecret(ctx))).toBe(false);
        },
      },
    },
    failed: {
      failed: {
        // created without a job: what fails is suspending it; recorded without its secret, finished by the next up
        declare: () => ({ key: { kind: "ApiKey", inputs: { name: `${P}f-key`, enabled: false } } }),
        faults: ["setApiKeyStatus,status=409,message=Key is busy,count=1"],
        ops: { key: "create" },
        fails: ["Key is busy"],
        api: async (ctx) => {
          expect(ctx.state.key?.initErrors.join(" ")).toContain("could not be suspended");
          expect(ctx.state.key?.outputs.key).toBeUndefined();
          expect(await key(ctx.api, idOf(ctx, "key"))).toMatchObject({ name: `${P}f-key`, enabled: true });
        },
      },
      repaired: {
        ops: { key: "update" },
        api: async (ctx) => {
          expect(idOf(ctx, "key")).toBe(priorId(ctx, "key"));
          expect(await key(ctx.api, idOf(ctx, "key"))).toMatchObject({
            enabled: false,
            start: secretOf(ctx).slice(0, 8),
          });
        },
      },
      destroyed: {
        ops: { key: "delete" },
        api: async (ctx) => expect(await gone(() => key(ctx.api, priorId(ctx, "key")))).toBe(true),
      },
    },
    adopt: { na: "API key names are not unique: `adopt` is refused at check (the bad step)" },
  };

  // ------------------------------------------------------------ ResourceGroupMember
  const memberBase: Program = {
    memberGroup: { kind: "ResourceGroup", inputs: { name: `${P}-member-group` } },
    memberUser: { kind: "User", inputs: { email: `${P}-member-user@example.com` } },
    memberUser2: { kind: "User", inputs: { email: `${P}-member-user2@example.com` } },
  };
  const member = (userName: string): Program => ({
    ...memberBase,
    member: { kind: "ResourceGroupMember", inputs: { teamId: ref("memberGroup"), userId: ref(userName) } },
  });
  const memberAsDeclared = async (ctx: Ctx, userName: string) => {
    const [teamId, userId] = [idOf(ctx, "memberGroup"), idOf(ctx, userName)];
    expect(idOf(ctx, "member")).toBe(`${teamId}:${userId}`);
    expect(await memberIds(ctx.api, teamId)).toEqual([userId]);
  };
  const resourceGroupMember: KindTable = {
    kind: "ResourceGroupMember",
    subject: "member",
    main: {
      create: {
        declare: () => member("memberUser"),
        ops: { member: "create" },
        api: (ctx) => memberAsDeclared(ctx, "memberUser"),
      },
      same: { ops: { member: "same" }, api: quiet("member") },
      refresh: { ops: { member: "same" } },
      update: { na: "both inputs name the membership: a change replaces it" },
      replace: {
        declare: () => member("memberUser2"),
        ops: { member: "replace" },
        api: (ctx) => memberAsDeclared(ctx, "memberUser2"),
      },
      drift: { na: "a membership's drift is its removal: refresh finds it gone (the deleted step)" },
      repair: { na: "see drift" },
      bad: {
        declare: (good) => ({
          ...good,
          member: { kind: "ResourceGroupMember", inputs: { teamId: "first", userId: "not-a-uuid" } },
        }),
        properties: ["teamId", "userId"],
        reasons: [],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.removeTeamMember({
            params: { id: Number(ctx.state.memberGroup!.id), userId: ctx.state.memberUser2!.id },
          });
        },
        ops: { member: "gone" },
      },
      recreate: { ops: { member: "create" }, api: (ctx) => memberAsDeclared(ctx, "memberUser2") },
      destroy: {
        ops: { member: "delete" },
        api: async (ctx) => expect(mutationsOf(ctx, priorId(ctx, "memberUser2"))).toContain("removeTeamMember"),
      },
    },
    failed: { na: "added without a job: an add that fails is an ordinary error with nothing to record" },
    adopt: {
      refused: {
        // a membership that exists is taken over without being asked to
        before: async (ctx) => {
          ctx.made.team = String((await ctx.api.createTeam({ body: { name: `${P}a-member-group` } })).teamId);
          ctx.made.member = (
            await ctx.api.createUser({ body: { email: `${P}a-member@example.com`, teamIds: [Number(ctx.made.team)] } })
          ).id;
        },
        declare: (made) => ({
          member: { kind: "ResourceGroupMember", inputs: { teamId: made.team, userId: made.member } },
        }),
        ops: { member: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "member")).toBe(`${ctx.made.team}:${ctx.made.member}`);
          expect(mutationsOf(ctx, ctx.made.member!)).toEqual([]);
        },
      },
      adopted: { ops: { member: "same" } },
      destroyed: {
        ops: { member: "delete" },
        api: async (ctx) => {
          expect(await memberIds(ctx.api, ctx.made.team!)).toEqual([]);
          await ctx.api.deleteUser({ params: { id: ctx.made.member! } });
          await ctx.api.deleteTeam({ params: { id: Number(ctx.made.team) } });
        },
      },
    },
  };

  // ------------------------------------------------------------ UserRole
  const role = (roleName: string): Program => ({
    roleUser: { kind: "User", inputs: { email: `${P}-role-user@example.com` } },
    role: { kind: "UserRole", inputs: { userId: ref("roleUser"), roleName } },
  });
  const roleAsDeclared = async (ctx: Ctx, roleName: string) => {
    const userId = idOf(ctx, "roleUser");
    expect(idOf(ctx, "role")).toBe(`${userId}:${roleName}`);
    expect(await rolesOf(ctx.api, userId)).toEqual(["tenant-user", roleName].sort());
  };
  const userRole: KindTable = {
    kind: "UserRole",
    subject: "role",
    main: {
      create: {
        declare: () => role("vm-operator"),
        ops: { role: "create" },
        api: (ctx) => roleAsDeclared(ctx, "vm-operator"),
      },
      same: { ops: { role: "same" }, api: quiet("role") },
      refresh: { ops: { role: "same" } },
      update: { na: "both inputs name the grant: a change replaces it" },
      replace: {
        declare: () => role("tenant-admin"),
        ops: { role: "replace" },
        api: (ctx) => roleAsDeclared(ctx, "tenant-admin"),
      },
      drift: { na: "a grant's drift is its removal: refresh finds it gone (the deleted step)" },
      repair: { na: "see drift" },
      bad: {
        declare: (good) => ({ ...good, role: { kind: "UserRole", inputs: { userId: GHOST, roleName: "superuser" } } }),
        properties: ["roleName"],
        reasons: ['unknown role "superuser"'],
      },
      deleted: {
        before: async (ctx) => {
          await ctx.api.removeUserRole({ params: { userId: ctx.state.roleUser!.id, roleName: "tenant-admin" } });
        },
        ops: { role: "gone" },
      },
      recreate: { ops: { role: "create" }, api: (ctx) => roleAsDeclared(ctx, "tenant-admin") },
      destroy: {
        ops: { role: "delete" },
        api: async (ctx) => expect(mutationsOf(ctx, priorId(ctx, "roleUser"))).toContain("removeUserRole"),
      },
    },
    failed: { na: "granted without a job: a grant that fails is an ordinary error with nothing to record" },
    adopt: {
      refused: {
        // a grant that exists is taken over without being asked to
        before: async (ctx) => {
          ctx.made.grantee = (
            await ctx.api.createUser({
              body: { email: `${P}a-role@example.com`, roleNames: ["tenant-user", "vm-operator"] },
            })
          ).id;
        },
        declare: (made) => ({ role: { kind: "UserRole", inputs: { userId: made.grantee, roleName: "vm-operator" } } }),
        ops: { role: "create" },
        api: async (ctx) => {
          expect(idOf(ctx, "role")).toBe(`${ctx.made.grantee}:vm-operator`);
          expect(await rolesOf(ctx.api, ctx.made.grantee!)).toEqual(["tenant-user", "vm-operator"]);
        },
      },
      adopted: { ops: { role: "same" } },
      destroyed: {
        ops: { role: "delete" },
        api: async (ctx) => {
          expect(await rolesOf(ctx.api, ctx.made.grantee!)).toEqual(["tenant-user"]);
          await ctx.api.deleteUser({ params: { id: ctx.made.grantee! } });
        },
      },
    },
  };

  return [
    virtualMachine,
    gpuVirtualMachine,
    volume,
    volumeAttachment,
    network,
    resourceGroup,
    userKind,
    apiKeyKind,
    resourceGroupMember,
    userRole,
  ];
}
