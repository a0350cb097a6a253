import { afterAll, beforeEach, describe, expect, it } from "vitest";
import type { ProgressLog } from "../../provider/client/progress";
import {
  checkResource,
  closeClients,
  configuration,
  handlerContext,
  kinds,
  type HandlerContext,
  type Props,
} from "../../provider/resources";
import { rememberedSessionToken } from "../helpers/session-token";
import { stackOnEmulator, type LogEntry } from "./helpers";

// Two cases where preview passed and `up` was refused (issue 26, found by the CLI table): an ApiKey change of another
// user's key (the API hides it: 404), and a VolumeAttachment past its volume size's `maxVolumesPerVm`. Each is checked
// as the hosts check it (checkResource, the previous *inputs* as the engine passes them), then sent as `up` sends it
// (with cloudinfra:preflight off), and what the API holds afterwards is read.
const stack = await stackOnEmulator({ jobDurationMs: 50 });
const { admin, member } = stack.emulator.bootstrap.users;
const [fra] = stack.datacenters;
afterAll(closeClients);
// Each test is a run of its own: fresh clients, so fresh shared reads.
beforeEach(closeClients);

const tokens = {
  admin: await rememberedSessionToken(stack.emulator, admin),
  member: await rememberedSessionToken(stack.emulator, member),
};

function run(values: Record<string, string>): HandlerContext & { warnings: string[] } {
  const warnings: string[] = [];
  const log: ProgressLog = { info: () => undefined, warn: (message) => warnings.push(message) };
  const config: Record<string, string> = {
    "cloudinfra:baseUrl": stack.emulator.baseUrl,
    "cloudinfra:pollIntervalMs": "20",
    ...values,
  };
  return { ...handlerContext({ configuration: configuration((key) => config[key]), log }), warnings };
}

const writes = (log: LogEntry[]) => log.filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => "succeeded",
    (e: unknown) => `failed: ${(e as Error).message}`,
  );

describe("ApiKey: a change of another user's key needs api-keys:manage", () => {
  /** A key made by `owner`'s session; its inputs and state as the stack would hold them. */
  async function keyOf(owner: "admin" | "member", name: string) {
    const ctx = run({ "cloudinfra:sessionToken": tokens[owner] });
    const inputs = (await checkResource(ctx, kinds.ApiKey, {}, { name })).inputs;
    const made = await kinds.ApiKey.create(ctx, inputs);
    await closeClients();
    return { id: made.id, inputs, state: made.outs };
  }
  const statusOf = async (id: string, name: string) =>
    (await stack.api.listApiKeys({ query: { search: name } })).data.find((k) => k.id === id)?.status;

  it("a tenant-user suspending the admin's key: preview fails naming api-keys:manage (from the key list, or the state's userId), nothing written; up's 404 is told as that permission, and the key stays Active", async () => {
    const key = await keyOf("admin", "gap-admins");
    const asMember = { "cloudinfra:apiKey": member.apiKey, "cloudinfra:sessionToken": tokens.member };
    const mark = stack.mark();
    // The engine passes the previous inputs: the owner is not in them, so the member's key list tells it.
    const checked = await checkResource(run(asMember), kinds.ApiKey, key.inputs, { ...key.inputs, enabled: false });
    expect(checked.failures.map((f) => f.property)).toEqual(["enabled"]);
    const [reason] = checked.failures.map((f) => f.reason);
    expect(reason).toContain(
      "changing enabled (PATCH /auth/api-keys/{keyId}/status) on a key that is not the caller's",
    );
    expect(reason).toContain('these credentials see no key named "gap-admins"');
    expect(reason).toContain("needs the permission api-keys:manage");
    expect(reason).toContain(`they act as ${member.email} with the role(s) tenant-user`);
    const log = await stack.requests(mark);
    expect(writes(log)).toEqual([]);
    // One list read for the key's name (shared by the run), besides the credentials check.
    expect(log.filter((r) => r.path.endsWith("/auth/api-keys")).length).toBeLessThanOrEqual(2);
    await closeClients();

    // Previous inputs that carry the owner (`userId`, when the API sent it): no list read is needed.
    const byOwner = await checkResource(
      run(asMember),
      kinds.ApiKey,
      { ...key.inputs, userId: key.state.userId },
      {
        ...key.inputs,
        rotation: "1",
      },
    );
    expect(byOwner.failures.map((f) => [f.property, f.reason.includes(`belongs to user ${admin.id}`)])).toEqual([
      ["rotation", true],
    ]);
    await closeClients();

    const up = await outcome(
      kinds.ApiKey.update(run({ ...asMember, "cloudinfra:preflight": "off" }), key.id, key.state, {
        ...key.inputs,
        enabled: false,
      }),
    );
    expect(up).toContain("answered 404: the key belongs to user");
    expect(up).toContain("needs the permission api-keys:manage");
    expect(up).not.toContain("pulumi refresh");
    expect(await statusOf(key.id, "gap-admins")).toBe("Active");
  });

  it("the member's own key and the admin (api-keys:manage) on the member's key: preview passes and up suspends", async () => {
    const own = await keyOf("member", "gap-own");
    const asMember = run({ "cloudinfra:apiKey": member.apiKey, "cloudinfra:sessionToken": tokens.member });
    const news = { ...own.inputs, enabled: false };
    expect((await checkResource(asMember, kinds.ApiKey, own.inputs, news)).failures).toEqual([]);
    await kinds.ApiKey.update(asMember, own.id, own.state, news);
    expect(await statusOf(own.id, "gap-own")).toBe("Suspended");
    await closeClients();

    const asAdmin = run({ "cloudinfra:apiKey": admin.apiKey, "cloudinfra:sessionToken": tokens.admin });
    const resumed = { ...own.inputs, enabled: true };
    expect((await checkResource(asAdmin, kinds.ApiKey, news, resumed)).failures).toEqual([]);
    await kinds.ApiKey.update(asAdmin, own.id, { ...own.state, enabled: false }, resumed);
    expect(await statusOf(own.id, "gap-own")).toBe("Active");
  });

  it("the caller's own key deleted behind the stack's back: up's 404 still says the key is gone (run refresh)", async () => {
    const own = await keyOf("member", "gap-gone");
    const asMember = run({ "cloudinfra:apiKey": member.apiKey });
    await stack.api.deleteApiKey({ params: { keyId: own.id } });
    const up = await outcome(kinds.ApiKey.update(asMember, own.id, own.state, { ...own.inputs, enabled: false }));
    expect(up).toContain(`API key ${own.id} no longer exists: run \`pulumi refresh\``);
  });
});

const catalog = await stack.api.volumeSizes({ params: { id: fra!.id } });
describe("VolumeAttachment: each volume size's maxVolumesPerVm", () => {
  const NVME = 2;
  const sizeOf = (type: number, gb: number) =>
    catalog.volumeTypes.find((t) => t.id === type)!.availableSizes.find((s) => s.sizeGb === gb)!;
  const nvme50 = sizeOf(NVME, 50);
  const ssd10 = sizeOf(1, 10);

  async function volume(name: string, size: typeof nvme50, type: number): Promise<string> {
    const job = await stack.api.createVolume({
      body: { name, datacenterId: fra!.id, volumeTypeId: type, volumeSizeId: size.id, sizeGb: size.sizeGb },
    });
    return (await stack.api.waitForJob(job.jobId)).resourceId!;
  }
  /** A VM of configuration 2 (room for 8 volumes) holding `n` nvme 50 GB volumes (that size's limit: 4). */
  async function vmWith(name: string, n: number): Promise<string> {
    const [job] = await stack.api.createVm({
      body: { name, datacenterId: fra!.id, imageId: 1, configurationId: 2 },
    });
    const vm = (await stack.api.waitForJob(job!.id)).resourceId!;
    for (let i = 1; i <= n; i++) {
      const j = await stack.api.attachVolume({
        params: { id: await volume(`${name}-on-${i}`, nvme50, NVME) },
        body: { virtualMachineId: vm },
      });
      await stack.api.waitForJob(j.jobId);
    }
    return vm;
  }
  const onVm = async (vm: string) =>
    (await stack.api.listVolumes({ query: { "filter[virtualMachineId]": vm } })).data.map((v) => v.name).sort();

  it("a 5th nvme 50 GB volume on a VM with room for 8: preview fails naming the size and its limit, nothing written; up is refused the same", async () => {
    expect(nvme50.maxVolumesPerVm).toBe(4);
    const vm = await vmWith("gap-size-vm", 4);
    const fifth = await volume("gap-size-5", nvme50, NVME);
    const ctx = run({ "cloudinfra:apiKey": admin.apiKey });
    const mark = stack.mark();
    const checked = await checkResource(ctx, kinds.VolumeAttachment, {}, { volumeId: fifth, virtualMachineId: vm });
    expect(checked.failures.map((f) => f.property)).toEqual(["virtualMachineId"]);
    expect(checked.failures[0]!.reason).toContain(
      `virtual machine "gap-size-vm" (${vm}) holds 4 volume(s) of size 50 GB (volumeSizeId ${nvme50.id}); a VM may hold at most 4 volumes of that size (maxVolumesPerVm`,
    );
    expect(checked.failures[0]!.reason).toContain(`no room for volume ${fifth} "gap-size-5"`);
    expect(writes(await stack.requests(mark))).toEqual([]);

    const up = await outcome(
      kinds.VolumeAttachment.create(run({ "cloudinfra:apiKey": admin.apiKey, "cloudinfra:preflight": "off" }), {
        volumeId: fifth,
        virtualMachineId: vm,
      }),
    );
    expect(up).toContain("already has 4 volumes of size 50 GB, the maximum per VM for that size (4)");
    expect(await onVm(vm)).toEqual([1, 2, 3, 4].map((i) => `gap-size-vm-on-${i}`));
  });

  it("counts the plan's other attachments of that size, not those of another size; the sizes read once per data center per run", async () => {
    const vm = await vmWith("gap-plan-vm", 3);
    const [a, b, ssd] = [
      await volume("gap-plan-a", nvme50, NVME),
      await volume("gap-plan-b", nvme50, NVME),
      await volume("gap-plan-ssd", ssd10, 1),
    ];
    const ctx = run({ "cloudinfra:apiKey": admin.apiKey });
    const mark = stack.mark();
    const checkOf = (volumeId: string, olds: Props = {}) =>
      checkResource(ctx, kinds.VolumeAttachment, olds, { volumeId, virtualMachineId: vm });
    expect((await checkOf(ssd)).failures).toEqual([]);
    expect((await checkOf(a)).failures).toEqual([]);
    const second = await checkOf(b);
    expect(second.failures.map((f) => f.reason)).toEqual([
      expect.stringContaining(
        `holds 3 volume(s) of size 50 GB (volumeSizeId ${nvme50.id}), and this plan also attaches ${a} "gap-plan-a" of that size`,
      ),
    ]);
    const log = await stack.requests(mark);
    expect(writes(log)).toEqual([]);
    expect(log.filter((r) => r.path.endsWith("/volume-sizes")).length).toBe(1);
    expect(log.filter((r) => r.path.endsWith("/resource/volumes") && r.method === "GET").length).toBe(1);

    // The plan without the second nvme attachment: up attaches both, and the VM holds 4 nvme volumes and the ssd one.
    const upCtx = run({ "cloudinfra:apiKey": admin.apiKey });
    for (const volumeId of [ssd, a]) await kinds.VolumeAttachment.create(upCtx, { volumeId, virtualMachineId: vm });
    expect(await onVm(vm)).toEqual(
      [...[1, 2, 3].map((i) => `gap-plan-vm-on-${i}`), "gap-plan-a", "gap-plan-ssd"].sort(),
    );
  });
});
