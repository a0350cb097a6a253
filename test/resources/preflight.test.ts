import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import type { ProgressLog } from "../../provider/client/progress";
import {
  checkResource,
  closeClients,
  configuration,
  handlerContext,
  kinds,
  settingProblems,
  settingsOf,
  type HandlerContext,
  type KindName,
  type Props,
} from "../../provider/resources";
import { stackOnEmulator, type LogEntry } from "./helpers";

// The preview checks against the API's state (provider/resources/preflight.ts), run as the hosts run them
// (checkResource) against the in-process emulator: what they find, the messages, and the requests they cost — all
// reads, shared by the resources of a run.
const stack = await stackOnEmulator({ jobDurationMs: 50 });
const { admin, member } = stack.emulator.bootstrap.users;
const { fixtures } = stack.emulator.bootstrap;
const [fra, second] = stack.datacenters;
const nyc = stack.datacenters.find((d) => d.name.startsWith("nyc"))!;
const [ubuntu] = fixtures.images;
const small = { ...fixtures.configurations.find((c) => c.name === "s-2vcpu-4gb")!, maxVolumes: 4 }; // the emulator's catalog
const a100 = fixtures.gpuSeries.find((s) => s.code === "a100")!;
const h100 = fixtures.gpuSeries.find((s) => s.code === "h100")!;
const SSD = 1;
afterAll(closeClients);
// Each test is a run of its own: fresh clients, so fresh shared reads and a fresh credentials check.
beforeEach(closeClients);

/** A context of these `cloudinfra:*` values (the admin's key unless given), its warnings kept in `warnings`. */
function run(values: Record<string, string> = {}): HandlerContext & { warnings: string[] } {
  const warnings: string[] = [];
  const log: ProgressLog = { info: () => undefined, warn: (message) => warnings.push(message) };
  const config: Record<string, string> = {
    "cloudinfra:baseUrl": stack.emulator.baseUrl,
    "cloudinfra:apiKey": admin.apiKey,
    "cloudinfra:pollIntervalMs": "20",
    ...values,
  };
  return { ...handlerContext({ configuration: configuration((key) => config[key]), log }), warnings };
}

const check = (ctx: HandlerContext, kind: KindName, news: Props, olds: Props = {}) =>
  checkResource(ctx, kinds[kind], olds, news);

const writes = (log: LogEntry[]) => log.filter((r) => r.method !== "GET");
const calls = (log: LogEntry[], path: RegExp) => log.filter((r) => path.test(r.path)).length;

async function volumeIn(name: string, datacenterId: string): Promise<string> {
  const job = await stack.api.createVolume({
    body: { name, datacenterId, volumeTypeId: SSD, volumeSizeId: sizeIdOf(datacenterId), sizeGb: 10 },
  });
  const done = await stack.api.waitForJob(job.jobId);
  return done.resourceId!;
}
const sizeIds = new Map<string, number>();
function sizeIdOf(datacenterId: string): number {
  return sizeIds.get(datacenterId)!;
}

describe("cloudinfra:preflight", () => {
  it("is error by default, warn or off when set, and anything else is a settings problem naming the values", () => {
    const base = { "cloudinfra:baseUrl": stack.emulator.baseUrl, "cloudinfra:apiKey": admin.apiKey };
    const of = (extra: Record<string, string>) => configuration((k) => ({ ...base, ...extra })[k]);
    expect(settingsOf(of({})).preflight).toBe("error");
    expect(settingsOf(of({ "cloudinfra:preflight": "warn" })).preflight).toBe("warn");
    expect(settingsOf(of({ "cloudinfra:preflight": "OFF" })).preflight).toBe("off");
    expect(settingProblems(of({ "cloudinfra:preflight": "strict" }))).toEqual([
      expect.stringContaining('cloudinfra:preflight (stack config) must be one of error, warn, off, not "strict"'),
    ]);
  });
});

describe("GPU capacity at preview", () => {
  const gpu = (name: string, seriesId: number, gpuCount: number, datacenterId = fra!.id) => ({
    name,
    datacenterId,
    seriesId,
    gpuCount,
  });

  it("fails a create the inventory has no capacity for, listing what is available, with one inventory read", async () => {
    const ctx = run();
    const mark = stack.mark();
    const refused = await check(ctx, "GpuVirtualMachine", gpu("big", h100.id, 8));
    expect(refused.failures).toHaveLength(1);
    expect(refused.failures[0]!.property).toBe("gpuCount");
    const reason = refused.failures[0]!.reason;
    expect(reason).toContain(`GPU VM "big": ${h100.name} with 8 GPU(s) is not available in ${fra!.name} (${fra!.id})`);
    expect(reason).toMatch(/GET \/resource\/gpu\/inventory at \d{4}-\d\d-\d\dT[\d:.]+Z, when this preview ran/);
    expect(reason).toContain("which still reports the API's 409");
    // What the API holds now: every data center offers h100 × 1, none × 8.
    expect(reason).toContain(`Available now for ${h100.name}: ${fra!.name} × 1, ${fra!.name} × 2, ${fra!.name} × 4`);
    expect(reason).toContain(`(data center ids: ${fra!.name} = ${fra!.id}, `);
    expect(reason).not.toMatch(/× 8/);

    // nyc-1 has no capacity above 2 GPUs; 1 GPU there is fine. The inventory is read once for the run.
    expect((await check(ctx, "GpuVirtualMachine", gpu("nyc-4", a100.id, 4, nyc.id))).failures).toEqual([
      expect.objectContaining({
        property: "gpuCount",
        reason: expect.stringContaining(`with 4 GPU(s) is not available in ${nyc.name}`),
      }),
    ]);
    expect((await check(ctx, "GpuVirtualMachine", gpu("nyc-1", a100.id, 1, nyc.id))).failures).toEqual([]);
    const log = await stack.requests(mark);
    expect(writes(log)).toEqual([]);
    expect(calls(log, /\/resource\/gpu\/inventory$/)).toBe(1);
    expect(calls(log, /\/auth\/check$/)).toBe(1);
  });

  it("checks a replacement, not an update that keeps the combination; an unknown series names the series", async () => {
    const ctx = run();
    const olds = gpu("g", a100.id, 1);
    const mark = stack.mark();
    expect((await check(ctx, "GpuVirtualMachine", { ...olds, name: "g2" }, olds)).failures).toEqual([]);
    expect(calls(await stack.requests(mark), /inventory/)).toBe(0);
    const replaced = await check(ctx, "GpuVirtualMachine", gpu("g", h100.id, 8), olds);
    expect(replaced.failures.map((f) => f.property)).toEqual(["gpuCount"]);
    const unknown = await check(ctx, "GpuVirtualMachine", gpu("g", 999, 1));
    expect(unknown.failures).toEqual([
      {
        property: "seriesId",
        reason: expect.stringContaining(`no GPU series 999`),
      },
    ]);
    expect(unknown.failures[0]!.reason).toContain(`${a100.code} (seriesId ${a100.id})`);
  });

  it("a failing inventory read warns and lets the preview go on; warn turns a failure into a warning; off reads nothing", async () => {
    await stack.faults("gpuInventory,status=503");
    try {
      const ctx = run({ "cloudinfra:maxRetries": "0" });
      expect((await check(ctx, "GpuVirtualMachine", gpu("x", h100.id, 8))).failures).toEqual([]);
      expect(ctx.warnings).toEqual([expect.stringMatching(/^GPU VM "x": preview could not check GPU capacity .*503/)]);
    } finally {
      await stack.faults("");
    }
    await closeClients();
    const warned = run({ "cloudinfra:preflight": "warn" });
    expect((await check(warned, "GpuVirtualMachine", gpu("x", h100.id, 8))).failures).toEqual([]);
    expect(warned.warnings).toEqual([
      expect.stringMatching(
        /^"x": gpuCount: GPU VM "x": .* with 8 GPU\(s\) is not available .*cloudinfra:preflight is "warn"/,
      ),
    ]);
    await closeClients();
    const off = run({ "cloudinfra:preflight": "off" });
    const mark = stack.mark();
    expect((await check(off, "GpuVirtualMachine", gpu("x", h100.id, 8))).failures).toEqual([]);
    expect(calls(await stack.requests(mark), /inventory|api-keys/)).toBe(0);
  });
});

describe("names at preview", () => {
  it("a volume create whose name is held fails with adopt or another name; adopt and free names pass; one list read", async () => {
    const catalog = await stack.api.volumeSizes({ params: { id: fra!.id } });
    sizeIds.set(
      fra!.id,
      catalog.volumeTypes.find((t) => t.id === SSD)!.availableSizes.find((s) => s.sizeGb === 10)!.id,
    );
    const held = await volumeIn("pf-held", fra!.id);
    const ctx = run();
    const volume = (name: string, extra: Props = {}) => ({
      name,
      datacenterId: fra!.id,
      volumeTypeId: SSD,
      sizeGb: 10,
      ...extra,
    });
    const mark = stack.mark();
    const refused = await check(ctx, "Volume", volume("pf-held"));
    expect(refused.failures).toEqual([
      {
        property: "name",
        reason: expect.stringContaining(
          `A volume named "pf-held" already exists (${held}), and volume names are unique`,
        ),
      },
    ]);
    expect(refused.failures[0]!.reason).toContain(
      "Set `adopt: true` to manage it from this program, or choose another name",
    );
    expect((await check(ctx, "Volume", volume("pf-held", { adopt: true }))).failures).toEqual([]);
    expect((await check(ctx, "Volume", volume("pf-free"))).failures).toEqual([]);
    // An update keeping the name is not a create: nothing to check. Nor is a replacement's second check (the engine
    // sends it without previous inputs): the name is the stack's own.
    expect((await check(ctx, "Volume", volume("pf-held"), volume("pf-held"))).failures).toEqual([]);
    const replacement = volume("pf-held", { datacenterId: second!.id });
    expect((await check(ctx, "Volume", replacement, volume("pf-held"))).failures).toEqual([]);
    expect((await check(ctx, "Volume", replacement)).failures).toEqual([]);
    const log = await stack.requests(mark);
    expect(writes(log)).toEqual([]);
    expect(log.filter((r) => r.path.endsWith("/resource/volumes")).length).toBe(1);
  });

  it("a network create or rename to a held name fails", async () => {
    const ctx = run();
    const network = (name: string) => ({ name, datacenterId: fra!.id, networkType: "standard" });
    const created = await kinds.Network.create(
      ctx,
      (await checkResource(ctx, kinds.Network, {}, network("pf-net"))).inputs,
    );
    await closeClients();
    const next = run();
    const mark = stack.mark();
    expect((await check(next, "Network", network("pf-net"))).failures).toEqual([
      { property: "name", reason: expect.stringContaining(`A network named "pf-net" already exists (${created.id})`) },
    ]);
    const renamed = await check(next, "Network", network("pf-net"), network("pf-other"));
    expect(renamed.failures[0]!.reason).toMatch(
      /would refuse this rename with a 409 \(the network list at .*\)\. Choose another name$/,
    );
    expect(writes(await stack.requests(mark))).toEqual([]);
    await kinds.Network.delete(next, created.id, created.outs);
  });
});

describe("user emails at preview", () => {
  it("a user create or email change to an email another user holds fails; adopt, free emails and updates pass; one list read", async () => {
    const ctx = run();
    const user = (email: string, extra: Props = {}) => ({ email, firstName: "Pf", ...extra });
    // As the program may write it: the check lower-cases emails, as the API stores them.
    const held = member.email.toUpperCase();
    const mark = stack.mark();
    const refused = await check(ctx, "User", user(held));
    expect(refused.failures).toEqual([
      {
        property: "email",
        reason: expect.stringContaining(
          `A user with the email "${member.email}" already exists (${member.id}), and user emails (among users that ` +
            "are not deleted) are unique: the API would refuse this create with a 409 (the user list at ",
        ),
      },
    ]);
    expect(refused.failures[0]!.reason).toMatch(
      /when this preview ran\)\. Set `adopt: true` to manage it from this program, or choose another email$/,
    );
    expect((await check(ctx, "User", user(held, { adopt: true }))).failures).toEqual([]);
    expect((await check(ctx, "User", user("pf-free@example.com"))).failures).toEqual([]);
    // An email change to a held email is refused too (in place: no adopt then); keeping the email is no change.
    const changed = await check(ctx, "User", user(member.email), user("pf-mine@example.com"));
    expect(changed.failures).toEqual([
      {
        property: "email",
        reason: expect.stringMatching(/refuse this email change with a 409 .*Choose another email$/),
      },
    ]);
    expect((await check(ctx, "User", user(member.email), user(member.email))).failures).toEqual([]);
    // A replacement (new action) keeps its email: its second check, without previous inputs, is the stack's own.
    const replaced = user(member.email, { action: "register", password: "Pf-Passw0rd!long" });
    expect((await check(ctx, "User", replaced, user(member.email))).failures).toEqual([]);
    expect((await check(ctx, "User", replaced)).failures).toEqual([]);
    const log = await stack.requests(mark);
    expect(writes(log)).toEqual([]);
    expect(log.filter((r) => r.path.endsWith("/users")).length).toBe(1);

    // What preview said is what the API answers: the create is refused, a free email is created.
    await expect(stack.api.createUser({ body: { email: member.email } })).rejects.toMatchObject({ status: 409 });
  });

  it("a user deleted (softly) frees its email; a failing list read warns and lets the preview go on", async () => {
    const made = await stack.api.createUser({ body: { email: "pf-gone@example.com" } });
    await stack.api.deleteUser({ params: { id: made.id } });
    const ctx = run();
    expect((await check(ctx, "User", { email: "pf-gone@example.com" })).failures).toEqual([]);
    await closeClients();
    const failing = run({ "cloudinfra:maxRetries": "0" });
    await stack.faults("listUsers,status=503");
    try {
      expect((await check(failing, "User", { email: member.email })).failures).toEqual([]);
    } finally {
      await stack.faults("");
    }
    expect(failing.warnings).toEqual([
      expect.stringContaining(`user "${member.email}": preview could not check whether the user email is free`),
    ]);
  });
});

describe("attachability at preview", () => {
  it("fails a VM of another data center, and a VM whose volumes the plan's attachments would overfill", async () => {
    const ctx = run();
    const catalog = await stack.api.volumeSizes({ params: { id: second!.id } });
    sizeIds.set(
      second!.id,
      catalog.volumeTypes.find((t) => t.id === SSD)!.availableSizes.find((s) => s.sizeGb === 10)!.id,
    );
    const vmInputs = (
      await checkResource(
        ctx,
        kinds.VirtualMachine,
        {},
        {
          name: "pf-vm",
          datacenterId: fra!.id,
          imageId: ubuntu!.id,
          configurationId: small.id,
        },
      )
    ).inputs;
    const vm = await kinds.VirtualMachine.create(ctx, vmInputs);
    const local = [];
    for (let i = 0; i <= small.maxVolumes; i++) local.push(await volumeIn(`pf-local-${i}`, fra!.id));
    const elsewhere = await volumeIn("pf-far", second!.id);
    await closeClients();

    const preview = run();
    const mark = stack.mark();
    const far = await check(preview, "VolumeAttachment", { volumeId: elsewhere, virtualMachineId: vm.id });
    expect(far.failures).toEqual([
      {
        property: "virtualMachineId",
        reason: expect.stringContaining(
          `virtual machine "pf-vm" (${vm.id}) is in ${fra!.name}, not in the data center of volume ${elsewhere} ` +
            `"pf-far", in ${second!.name}`,
        ),
      },
    ]);
    // The VM holds none of its 4; the plan attaches 5: the first 4 fit, the fifth is refused, naming the others.
    const verdicts = [];
    for (const volumeId of local) {
      verdicts.push((await check(preview, "VolumeAttachment", { volumeId, virtualMachineId: vm.id })).failures);
    }
    expect(verdicts.slice(0, small.maxVolumes)).toEqual(Array(small.maxVolumes).fill([]));
    const last = verdicts[small.maxVolumes]!;
    expect(last).toHaveLength(1);
    expect(last[0]!.reason).toContain(`virtual machine "pf-vm" (${vm.id}) holds 0 of its ${small.maxVolumes} volumes`);
    expect(last[0]!.reason).toContain(`this plan also attaches ${local.slice(0, small.maxVolumes).join(", ")}`);
    const gone = await check(preview, "VolumeAttachment", {
      volumeId: "00000000-0000-4000-8000-000000000000",
      virtualMachineId: vm.id,
    });
    expect(gone.failures).toEqual([{ property: "volumeId", reason: expect.stringContaining("does not exist") }]);
    const log = await stack.requests(mark);
    expect(writes(log)).toEqual([]);
    // One read per distinct volume, one credentials check (and, for the failure, the volume and VM by id).
    expect(calls(log, /available-virtual-machines$/)).toBe(local.length + 2);
    expect(calls(log, /\/auth\/check$/)).toBe(1);

    // The same plan without the fifth attachment: up attaches the four (each checked again, with the same verdict).
    await closeClients();
    const up = run();
    for (const volumeId of local.slice(0, small.maxVolumes)) {
      const checked = await check(up, "VolumeAttachment", { volumeId, virtualMachineId: vm.id });
      expect(checked.failures).toEqual([]);
      await kinds.VolumeAttachment.create(up, checked.inputs);
    }
    const listed = await stack.api.listVolumes({ query: { "filter[virtualMachineId]": vm.id, limit: 100 } });
    expect(listed.data).toHaveLength(small.maxVolumes);
    // What preview said of the fifth is what the API answers.
    await expect(
      stack.api.attachVolume({ params: { id: local[small.maxVolumes]! }, body: { virtualMachineId: vm.id } }),
    ).rejects.toMatchObject({ status: 409 });
  });
});

describe("permissions at preview", () => {
  it("a power change by credentials without vm:operate fails, naming the permission, the roles and the fix", async () => {
    const ctx = run();
    const inputs = (
      await checkResource(
        ctx,
        kinds.VirtualMachine,
        {},
        {
          name: "pf-op",
          datacenterId: fra!.id,
          imageId: ubuntu!.id,
          configurationId: small.id,
        },
      )
    ).inputs;
    const vm = await kinds.VirtualMachine.create(ctx, inputs);
    expect(vm.id).toBeTruthy();
    await closeClients();

    const asMember = run({ "cloudinfra:apiKey": member.apiKey });
    const mark = stack.mark();
    const stopped = await check(asMember, "VirtualMachine", { ...inputs, powerState: "stopped" }, inputs);
    expect(stopped.failures).toEqual([
      {
        property: "powerState",
        reason: expect.stringContaining(
          'powerState "stopped" (POST /resource/virtual-machines/{id}/stop) needs the permission vm:operate or ' +
            `vm:write, which the credentials of this stack lack: they act as ${member.email} with the role(s) tenant-user`,
        ),
      },
    ]);
    expect(stopped.failures[0]!.reason).toContain('`roleId: "vm-operator"` for vm:operate');
    const rescued = await check(
      asMember,
      "VirtualMachine",
      { ...inputs, rescue: { sourceType: "catalog", sourceImageId: fixtures.rescueImages[0]!.id }, resetTrigger: "1" },
      { ...inputs, resetTrigger: "0" },
    );
    expect(rescued.failures.map((f) => f.property).sort()).toEqual(["rescue", "resetTrigger"]);
    expect(rescued.failures.find((f) => f.property === "rescue")!.reason).toContain("needs the permission vm:operate,");
    const log = await stack.requests(mark);
    expect(writes(log)).toEqual([]);
    expect(calls(log, /\/auth\/check$/)).toBe(1);

    // The admin's key has the permission: the same plan passes, and up stops the VM.
    await closeClients();
    const asAdmin = run();
    const allowed = await check(asAdmin, "VirtualMachine", { ...inputs, powerState: "stopped" }, inputs);
    expect(allowed.failures).toEqual([]);
    await kinds.VirtualMachine.update(asAdmin, vm.id, vm.outs, allowed.inputs);
    expect((await stack.api.getVm({ params: { id: vm.id } })).status).toBe("Stopped");
  });
});

describe("the provider's own key", () => {
  it("Expiring warns once per run with the expiry date and how to rotate", async () => {
    const session = new CloudClient({
      baseUrl: stack.emulator.baseUrl,
      auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
    });
    const created = await session.createApiKey({ body: { name: "pf-expiring", expiresInDays: 10 } });
    await session.close();
    const ctx = run({ "cloudinfra:apiKey": created.key! });
    const network = { name: "pf-any", datacenterId: fra!.id, networkType: "standard" };
    await check(ctx, "Network", network);
    await check(ctx, "Network", network);
    expect(ctx.warnings).toEqual([
      expect.stringContaining(
        `The API key of this stack (cloudinfra:apiKey, "pf-expiring", ${created.start}…) expires on ` +
          `${created.expiresAt.slice(0, 10)}: rotate it`,
      ),
    ]);
    // The admin's own key is not Expiring: no warning.
    await closeClients();
    const fresh = run();
    await check(fresh, "Network", network);
    expect(fresh.warnings).toEqual([]);
  });
});
