/**
 * The preview checks' scenarios (provider/resources/preflight.ts), one list for both SDKs: each brings one cause of a
 * refusal about (through the API behind the stack's back, or in the plan or the stack's config), says what preview
 * must print, removes the cause, and says what the API must hold after the `up` of the fixed plan. A plan is neutral
 * (kind, logical name, inputs) and rendered by either SDK: the dynamic resources of `@cloudinfra/pulumi` or the
 * plugin SDK's `@cloudinfra/pulumi/plugin`.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { PulumiFn, Stack } from "@pulumi/pulumi/automation";
import { expect } from "vitest";
import * as plugin from "@cloudinfra/pulumi/plugin";
import * as cloudinfra from "../../sdk";
import type { CloudClient } from "../../provider/client";
import type { CliWorld } from "./helpers";

export type Sdk = "dynamic" | "plugin";

/** A plan: each resource by logical name, with its kind and inputs. */
export type Plan = Record<string, { kind: string; props: Record<string, unknown> }>;

type Kind = new (name: string, args: Record<string, unknown>) => pulumi.CustomResource;

/** The program of a plan, read at each run, with either SDK; its outputs are the resources' ids. */
export function programOf(sdk: Sdk, plan: () => Plan): PulumiFn {
  return async () => {
    const outputs: Record<string, pulumi.Output<string>> = {};
    for (const [name, { kind, props }] of Object.entries(plan())) {
      const made = new ((sdk === "dynamic" ? cloudinfra : plugin) as unknown as Record<string, Kind>)[kind]!(
        name,
        props,
      );
      outputs[name] = made.id;
    }
    return outputs;
  };
}

/** What a scenario is given: the world, its SDK's stack, the plan the program renders, names of its own. */
export interface ScenarioRun {
  world: CliWorld;
  stack: Stack;
  plan: Plan;
  /** A prefix of the SDK's names (nothing of one SDK's scenarios meets the other's). */
  p: string;
  /** Signed-in sessions (tokens and clients) of the admin and of the member. */
  sessions: Record<"admin" | "member", { token: string; client: CloudClient }>;
}

/** One step: what preview must print, and how to remove the cause and check what the API holds afterwards. */
export interface Step {
  /** Texts the preview's output must contain. */
  says: string[];
  /** Expiring: preview passes with a warning (instead of failing). */
  warns?: true;
  /** Removes the cause. */
  fix(): Promise<void> | void;
  /** After the `up` of the fixed plan (its outputs: each resource's id): what the API must hold. */
  holds(outputs: Record<string, string>, mark: number): Promise<void>;
}

export interface Scenario {
  check: string;
  cause(run: ScenarioRun): Promise<Step>;
}

const SSD = 1;
const NVME = 2;

/** A volume made behind the stack's back (its id is known at preview, as an existing volume's is). */
export async function volumeIn(world: CliWorld, name: string, datacenterId: string): Promise<string> {
  const catalog = await world.api.volumeSizes({ params: { id: datacenterId } });
  const size = catalog.volumeTypes.find((t) => t.id === SSD)!.availableSizes.find((s) => s.sizeGb === 10)!;
  const job = await world.api.createVolume({
    body: { name, datacenterId, volumeTypeId: SSD, volumeSizeId: size.id, sizeGb: 10 },
  });
  return (await world.api.waitForJob(job.jobId)).resourceId!;
}

/**
 * An nvme 50 GB volume made behind the stack's back: a VM may hold at most 4 of that size (its maxVolumesPerVm in the
 * emulator's catalog), fewer than configuration 2's 8 volumes.
 */
export async function nvmeIn(world: CliWorld, name: string, datacenterId: string): Promise<string> {
  const catalog = await world.api.volumeSizes({ params: { id: datacenterId } });
  const size = catalog.volumeTypes.find((t) => t.id === NVME)!.availableSizes.find((s) => s.sizeGb === 50)!;
  const job = await world.api.createVolume({
    body: { name, datacenterId, volumeTypeId: NVME, volumeSizeId: size.id, sizeGb: 50 },
  });
  return (await world.api.waitForJob(job.jobId)).resourceId!;
}

/** A VM (configuration 1: at most 4 volumes; 2: at most 8) made behind the stack's back. */
export async function vmIn(world: CliWorld, name: string, datacenterId: string, configurationId = 1): Promise<string> {
  const [job] = await world.api.createVm({ body: { name, datacenterId, imageId: 1, configurationId } });
  return (await world.api.waitForJob(job!.id)).resourceId!;
}

export async function attach(world: CliWorld, volumeId: string, virtualMachineId: string): Promise<void> {
  const job = await world.api.attachVolume({ params: { id: volumeId }, body: { virtualMachineId } });
  await world.api.waitForJob(job.jobId);
}

/** The stack's config: a secret setting. */
const secret = (stack: Stack, key: string, value: string) =>
  stack.setConfig(`cloudinfra:${key}`, { value, secret: true });

/** The plan every scenario starts from: two VMs of the stack (running), which the permission scenarios change. */
export function basePlan(world: CliWorld, p: string): Plan {
  const fra = world.datacenters[0]!.id;
  const vm = (name: string, extra: Record<string, unknown>) => ({
    kind: "VirtualMachine",
    props: { name: `${p}-${name}`, datacenterId: fra, imageId: 1, configurationId: 1, ...extra },
  });
  return { vmA: vm("vma", { powerState: "running" }), vmB: vm("vmb", { resetTrigger: "0" }) };
}

/** A tenant-user's key lacks vm:operate (and vm:write): swapped in for the stack's admin key, then back. */
function memberKey(run: ScenarioRun): { lacking: string[]; fix: () => Promise<void> } {
  const { admin, member } = run.world.emulator.bootstrap.users;
  return {
    lacking: ["which the credentials of this stack lack", `they act as ${member.email} with the role(s) tenant-user`],
    fix: () => secret(run.stack, "apiKey", admin.apiKey),
  };
}

/**
 * The member without any role (its tenant-user role removed through the API) and its session as the stack's session
 * token, which an ApiKey is managed with; `fix` gives the role back and the admin's session to the stack.
 */
async function rolelessSession(run: ScenarioRun): Promise<{ lacking: string; fix: () => Promise<void> }> {
  const { member } = run.world.emulator.bootstrap.users;
  await run.world.api.removeUserRole({ params: { userId: member.id, roleName: "tenant-user" } });
  await secret(run.stack, "sessionToken", run.sessions.member.token);
  return {
    lacking: `they act as ${member.email} with the role(s) none`,
    fix: async () => {
      await run.world.api.addUserRole({ params: { userId: member.id }, body: { roleName: "tenant-user" } });
      await secret(run.stack, "sessionToken", run.sessions.admin.token);
    },
  };
}

const vmStatus = async (world: CliWorld, id: string) => (await world.api.getVm({ params: { id } })).status;

/** Every check of preflight.ts, in the order one stack meets them. */
export const scenarios: Scenario[] = [
  {
    check: "GPU capacity",
    async cause({ world, plan, p }) {
      const series = world.emulator.bootstrap.fixtures.gpuSeries;
      const [h100, a100] = [series.find((s) => s.code === "h100")!, series.find((s) => s.code === "a100")!];
      const fra = world.datacenters[0]!;
      const gpu = { name: `${p}-gpu`, datacenterId: fra.id, seriesId: h100.id, gpuCount: 8 };
      plan.gpu = { kind: "GpuVirtualMachine", props: gpu };
      return {
        says: [
          `GPU VM "${p}-gpu": ${h100.name} with 8 GPU(s) is not available in ${fra.name}`,
          `Available now for ${h100.name}: ${fra.name} × 1`,
          "when this preview ran",
        ],
        fix: () => void (plan.gpu!.props = { ...gpu, seriesId: a100.id, gpuCount: 1 }),
        async holds(outputs) {
          const made = await world.api.getGpuVm({ params: { id: outputs.gpu! } });
          expect([made.gpuCount, made.series.id, made.datacenter.id]).toEqual([1, a100.id, fra.id]);
          expect(await vmStatus(world, outputs.vmA!)).toBe("Running");
        },
      };
    },
  },
  {
    check: "held volume name",
    async cause({ world, plan, p }) {
      const fra = world.datacenters[0]!.id;
      const held = await volumeIn(world, `${p}-vheld`, fra);
      const props = { name: `${p}-vheld`, datacenterId: fra, volumeTypeId: SSD, sizeGb: 10 };
      plan.vol = { kind: "Volume", props };
      return {
        says: [
          `A volume named "${p}-vheld" already exists (${held})`,
          "Set `adopt: true` to manage it from this program, or choose another name",
        ],
        fix: () => void (plan.vol!.props = { ...props, adopt: true }),
        async holds(outputs) {
          expect(outputs.vol).toBe(held);
          const named = await world.api.listVolumes({ query: { search: `${p}-vheld` } });
          expect(named.data.map((v) => v.id)).toEqual([held]);
        },
      };
    },
  },
  {
    check: "held network name",
    async cause({ world, plan, p }) {
      const fra = world.datacenters[0]!.id;
      const job = await world.api.createNetwork({
        body: { name: `${p}-nheld`, datacenterId: fra, networkType: "standard" },
      });
      const held = (await world.api.waitForJob(job.jobId)).resourceId!;
      plan.net = { kind: "Network", props: { name: `${p}-nheld`, datacenterId: fra, networkType: "standard" } };
      return {
        says: [
          `A network named "${p}-nheld" already exists (${held})`,
          "Set `adopt: true` to manage it from this program, or choose another name",
        ],
        fix: () => void (plan.net!.props.name = `${p}-net`),
        async holds(outputs) {
          expect(outputs.net).not.toBe(held);
          expect((await world.api.getNetwork({ params: { id: outputs.net! } })).name).toBe(`${p}-net`);
          expect((await world.api.getNetwork({ params: { id: held } })).name).toBe(`${p}-nheld`);
        },
      };
    },
  },
  {
    check: "held user email",
    async cause({ world, plan, p }) {
      const email = `${p}-held@example.com`;
      const held = (await world.api.createUser({ body: { email, firstName: "Held" } })).id;
      // As a program may write it: the API stores emails lower-case, and the check compares them so.
      const props = { email: email.toUpperCase(), firstName: "Held" };
      plan.user = { kind: "User", props };
      return {
        says: [
          `A user with the email "${email}" already exists (${held})`,
          "Set `adopt: true` to manage it from this program, or choose another email",
        ],
        fix: () => void (plan.user!.props = { ...props, adopt: true }),
        async holds(outputs) {
          expect(outputs.user).toBe(held);
          const named = await world.api.listUsers({ query: { search: email } });
          expect(named.data.filter((u) => u.deletedAt === null).map((u) => u.id)).toEqual([held]);
        },
      };
    },
  },
  {
    check: "attachment to a VM of another data center",
    async cause({ world, plan, p }) {
      const [fra, ams] = world.datacenters;
      const vm = await vmIn(world, `${p}-att-vm`, fra!.id);
      const far = await volumeIn(world, `${p}-far`, ams!.id);
      const near = await volumeIn(world, `${p}-near`, fra!.id);
      plan.att = { kind: "VolumeAttachment", props: { volumeId: far, virtualMachineId: vm } };
      return {
        says: [`is in ${fra!.name}, not in the data center of volume ${far} "${p}-far", in ${ams!.name}`],
        fix: () => void (plan.att!.props.volumeId = near),
        async holds() {
          expect((await world.api.getVolume({ params: { id: near } })).virtualMachineId).toBe(vm);
          expect((await world.api.getVolume({ params: { id: far } })).virtualMachineId ?? null).toBeNull();
        },
      };
    },
  },
  {
    check: "attachment to a VM without room (counting the plan's other attachments)",
    async cause({ world, plan, p }) {
      const fra = world.datacenters[0]!.id;
      const vm = await vmIn(world, `${p}-full-vm`, fra);
      // 3 of its 4 volumes attached behind the stack's back: room for one of the plan's two attachments.
      for (const n of [1, 2, 3]) await attach(world, await volumeIn(world, `${p}-on-${n}`, fra), vm);
      const [one, two] = [await volumeIn(world, `${p}-add-1`, fra), await volumeIn(world, `${p}-add-2`, fra)];
      plan.add1 = { kind: "VolumeAttachment", props: { volumeId: one, virtualMachineId: vm } };
      plan.add2 = { kind: "VolumeAttachment", props: { volumeId: two, virtualMachineId: vm } };
      return {
        says: [`virtual machine "${p}-full-vm" (${vm}) holds 3 of its 4 volumes`, ", and this plan also attaches "],
        fix: () => void delete plan.add2,
        async holds() {
          expect((await world.api.getVolume({ params: { id: one } })).virtualMachineId).toBe(vm);
          expect((await world.api.getVolume({ params: { id: two } })).virtualMachineId ?? null).toBeNull();
          const there = await world.api.attachableVms({ params: { id: one } });
          expect(there.find((v) => v.id === vm)?.currentVolumeCount).toBe(4);
        },
      };
    },
  },
  {
    check: "vm:operate: powerState",
    async cause(run) {
      await secret(run.stack, "apiKey", run.world.emulator.bootstrap.users.member.apiKey);
      run.plan.vmA!.props.powerState = "stopped";
      const key = memberKey(run);
      return {
        says: [
          'powerState "stopped" (POST /resource/virtual-machines/{id}/stop) needs the permission vm:operate',
          ...key.lacking,
        ],
        fix: key.fix,
        async holds(outputs) {
          expect(await vmStatus(run.world, outputs.vmA!)).toBe("Stopped");
        },
      };
    },
  },
  {
    check: "vm:operate: resetTrigger and shutdownBeforeDelete",
    async cause(run) {
      await secret(run.stack, "apiKey", run.world.emulator.bootstrap.users.member.apiKey);
      Object.assign(run.plan.vmB!.props, { resetTrigger: "1", shutdownBeforeDelete: true });
      const key = memberKey(run);
      return {
        says: [
          "the reset a changed resetTrigger asks for (POST /resource/virtual-machines/{id}/reset) needs the permission vm:operate",
          "shutdownBeforeDelete (the VM's delete stops it first: POST /resource/virtual-machines/{id}/stop) needs the permission",
          ...key.lacking,
        ],
        fix: key.fix,
        async holds(outputs, mark) {
          const resets = (await run.world.requests(mark)).filter(
            (r) => r.method === "POST" && r.path.endsWith(`/resource/virtual-machines/${outputs.vmB!}/reset`),
          );
          // One reset, accepted.
          expect(resets.map((r) => r.status >= 200 && r.status < 300)).toEqual([true]);
        },
      };
    },
  },
  {
    check: "vm:operate: rescue",
    async cause(run) {
      await secret(run.stack, "apiKey", run.world.emulator.bootstrap.users.member.apiKey);
      const image = run.world.emulator.bootstrap.fixtures.rescueImages[0]!;
      run.plan.vmB!.props.rescue = { sourceType: "catalog", sourceImageId: image.id };
      const key = memberKey(run);
      return {
        says: [
          "the rescue (POST /resource/virtual-machines/{id}/rescue) needs the permission vm:operate",
          ...key.lacking,
        ],
        fix: key.fix,
        async holds(outputs) {
          expect((await run.world.api.getRescue({ params: { id: outputs.vmB! } })).rescued).toBe(true);
        },
      };
    },
  },
  {
    check: "api-keys:self: an ApiKey created by a session without it",
    async cause(run) {
      const session = await rolelessSession(run);
      run.plan.key = { kind: "ApiKey", props: { name: `${run.p}-key` } };
      return {
        says: [
          "creating an API key (POST /auth/api-keys/me) needs the permission api-keys:self",
          "which the credentials of this stack lack",
          session.lacking,
        ],
        fix: session.fix,
        async holds(outputs) {
          const keys = await run.sessions.admin.client.listApiKeys({ query: { search: `${run.p}-key` } });
          expect(keys.data.filter((k) => k.id === outputs.key).map((k) => [k.name, k.status])).toEqual([
            [`${run.p}-key`, "Active"],
          ]);
        },
      };
    },
  },
  {
    check: "api-keys:manage: the admin's ApiKey suspended with a tenant-user's key",
    async cause(run) {
      // The key of the stack (made by the admin's session in the step before); a suspension is sent with the stack's
      // API key: the member's has api-keys:self, which covers only the member's own keys.
      const { member } = run.world.emulator.bootstrap.users;
      await secret(run.stack, "apiKey", member.apiKey);
      run.plan.key!.props.enabled = false;
      const key = memberKey(run);
      return {
        says: [
          "changing enabled (PATCH /auth/api-keys/{keyId}/status) on a key that is not the caller's",
          `these credentials see no key named "${run.p}-key"`,
          "needs the permission api-keys:manage",
          ...key.lacking,
        ],
        fix: key.fix,
        async holds(outputs) {
          const keys = await run.sessions.admin.client.listApiKeys({ query: { search: `${run.p}-key` } });
          expect(keys.data.filter((k) => k.id === outputs.key).map((k) => k.status)).toEqual(["Suspended"]);
        },
      };
    },
  },
  {
    check: "the stack's own key Expiring (a warning)",
    async cause(run) {
      const expiring = await run.sessions.admin.client.createApiKey({
        body: { name: `${run.p}-expiring`, expiresInDays: 10 },
      });
      await secret(run.stack, "apiKey", expiring.key!);
      return {
        warns: true,
        says: [`expires on ${expiring.expiresAt.slice(0, 10)}: rotate it before then`],
        fix: () => secret(run.stack, "apiKey", run.world.emulator.bootstrap.users.admin.apiKey),
        async holds(outputs) {
          // The whole plan is still there, as the API holds it.
          expect(await vmStatus(run.world, outputs.vmA!)).toBe("Stopped");
        },
      };
    },
  },
];
