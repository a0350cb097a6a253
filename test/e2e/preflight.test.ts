/**
 * Preview predicts what `up` would be refused (provider/resources/preflight.ts), through the real CLI against the
 * emulator, with both SDKs: one stack per SDK, each scenario a preview that fails with the message (naming the
 * property, what the API holds and the fix) while the emulator's request log shows no write, then the same plan with
 * the cause removed, which previews and ups cleanly.
 */
import { CommandError, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { CloudClient } from "../../provider/client";
import { cliWorld, describeCli } from "./helpers";
import { resource, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const { admin, member } = world.emulator.bootstrap.users;
const [fra, ams] = world.datacenters;
const series = world.emulator.bootstrap.fixtures.gpuSeries;
const h100 = series.find((s) => s.code === "h100")!;
const a100 = series.find((s) => s.code === "a100")!;
const SSD = 1;

/** The writes (anything but GET) the emulator received since `mark`. */
const writesSince = async (mark: number) =>
  (await world.requests(mark)).filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);

/** A preview that must fail: the CLI's whole output, and the writes it caused (none expected). */
async function failedPreview(stack: Stack): Promise<{ text: string; writes: string[] }> {
  const mark = world.mark();
  const error = await stack.preview({ color: "never" }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CommandError);
  return { text: String(error), writes: await writesSince(mark) };
}

/** Volumes made behind the stacks' backs (their ids are known at preview, as an existing volume's are). */
async function volumeIn(name: string, datacenterId: string): Promise<string> {
  const catalog = await world.api.volumeSizes({ params: { id: datacenterId } });
  const size = catalog.volumeTypes.find((t) => t.id === SSD)!.availableSizes.find((s) => s.sizeGb === 10)!;
  const job = await world.api.createVolume({
    body: { name, datacenterId, volumeTypeId: SSD, volumeSizeId: size.id, sizeGb: 10 },
  });
  return (await world.api.waitForJob(job.jobId)).resourceId!;
}

async function vmIn(name: string, datacenterId: string): Promise<string> {
  const [job] = await world.api.createVm({ body: { name, datacenterId, imageId: 1, configurationId: 1 } });
  return (await world.api.waitForJob(job!.id)).resourceId!;
}

const stacks: Stack[] = [];
afterAll(async () => {
  for (const stack of stacks) await stack.destroy({ color: "never" }).catch(() => undefined);
});

describeCli("preview predicts what up would refuse", () => {
  it("dynamic SDK: GPU capacity, a held volume name, attachability, permissions, the stack's key expiring", async () => {
    const plan: {
      gpu: { seriesId: number; gpuCount: 1 | 2 | 4 | 8 };
      adopt?: boolean;
      attach?: { volumeId: string; virtualMachineId: string };
      vmPower?: "running" | "stopped";
    } = { gpu: { seriesId: h100.id, gpuCount: 8 } };
    const held = await volumeIn("pfe-held", fra!.id);
    const stack = await world.stack("quickstart", async () => {
      const gpu = new cloudinfra.GpuVirtualMachine("gpu", { name: "pfe-gpu", datacenterId: fra!.id, ...plan.gpu });
      const outputs: Record<string, unknown> = { gpu: gpu.id };
      if (plan.adopt !== undefined) {
        outputs.vol = new cloudinfra.Volume("vol", {
          name: "pfe-held",
          datacenterId: fra!.id,
          volumeTypeId: SSD,
          sizeGb: 10,
          ...(plan.adopt ? { adopt: true } : {}),
        }).id;
      }
      if (plan.attach) outputs.att = new cloudinfra.VolumeAttachment("att", plan.attach).id;
      if (plan.vmPower) {
        outputs.vm = new cloudinfra.VirtualMachine("vm", {
          name: "pfe-vm",
          datacenterId: fra!.id,
          imageId: 1,
          configurationId: 1,
          powerState: plan.vmPower,
        }).id;
      }
      return outputs;
    });
    stacks.push(stack);

    // 1. GPU capacity: H100 × 8 is offered nowhere.
    let failed = await failedPreview(stack);
    expect(failed.text).toContain(`GPU VM "pfe-gpu": ${h100.name} with 8 GPU(s) is not available in ${fra!.name}`);
    expect(failed.text).toContain(`Available now for ${h100.name}: ${fra!.name} × 1`);
    expect(failed.text).toContain("when this preview ran");
    expect(failed.writes).toEqual([]);
    plan.gpu = { seriesId: a100.id, gpuCount: 1 };
    await stack.preview({ color: "never" });
    await stack.up({ color: "never" });

    // 2. A volume name an unmanaged volume holds.
    plan.adopt = false;
    failed = await failedPreview(stack);
    expect(failed.text).toContain(`A volume named "pfe-held" already exists (${held})`);
    expect(failed.text).toContain("Set `adopt: true` to manage it from this program, or choose another name");
    expect(failed.writes).toEqual([]);
    plan.adopt = true;
    await stack.preview({ color: "never" });
    expect((await stack.up({ color: "never" })).outputs.vol!.value).toBe(held);

    // 3. An attachment of existing ids: a VM of another data center.
    const vm = await vmIn("pfe-att-vm", fra!.id);
    const far = await volumeIn("pfe-far", ams!.id);
    const near = await volumeIn("pfe-near", fra!.id);
    plan.attach = { volumeId: far, virtualMachineId: vm };
    failed = await failedPreview(stack);
    expect(failed.text).toContain(
      `is in ${fra!.name}, not in the data center of volume ${far} "pfe-far", in ${ams!.name}`,
    );
    expect(failed.writes).toEqual([]);
    plan.attach = { volumeId: near, virtualMachineId: vm };
    await stack.preview({ color: "never" });
    await stack.up({ color: "never" });
    expect((await world.api.getVolume({ params: { id: near } })).virtualMachineId).toBe(vm);

    // 4. A power change by a key without vm:operate (the stack's key swapped for a tenant-user's).
    plan.vmPower = "running";
    await stack.up({ color: "never" });
    plan.vmPower = "stopped";
    await stack.setConfig("cloudinfra:apiKey", { value: member.apiKey, secret: true });
    failed = await failedPreview(stack);
    expect(failed.text).toContain(
      "needs the permission vm:operate or vm:write, which the credentials of this stack lack",
    );
    expect(failed.text).toContain(`they act as ${member.email} with the role(s) tenant-user`);
    expect(failed.writes).toEqual([]);
    await stack.setConfig("cloudinfra:apiKey", { value: admin.apiKey, secret: true });
    await stack.preview({ color: "never" });
    const stopped = await stack.up({ color: "never" });
    expect((await world.api.getVm({ params: { id: stopped.outputs.vm!.value as string } })).status).toBe("Stopped");

    // 5. The stack's own key Expiring: a warning with its expiry date, nothing refused.
    const session = new CloudClient({
      baseUrl: world.emulator.baseUrl,
      auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
    });
    const expiring = await session.createApiKey({ body: { name: "pfe-expiring", expiresInDays: 10 } });
    await session.close();
    await stack.setConfig("cloudinfra:apiKey", { value: expiring.key!, secret: true });
    const mark = world.mark();
    const warned = await stack.preview({ color: "never" });
    expect(`${warned.stdout}\n${warned.stderr}`).toContain(
      `expires on ${expiring.expiresAt.slice(0, 10)}: rotate it before then`,
    );
    expect(await writesSince(mark)).toEqual([]);
    await stack.setConfig("cloudinfra:apiKey", { value: admin.apiKey, secret: true });
  });

  it("plugin: GPU capacity and a held network name fail preview; cloudinfra:preflight warn lets it pass", async () => {
    const plan: { gpuCount: 1 | 2 | 4 | 8; netName: string } = { gpuCount: 8, netName: "pfp-held" };
    const job = await world.api.createNetwork({
      body: { name: "pfp-held", datacenterId: fra!.id, networkType: "standard" },
    });
    const held = (await world.api.waitForJob(job.jobId)).resourceId!;
    const stack = await world.stack("quickstart", async () => ({
      gpu: resource("GpuVirtualMachine", "gpu", {
        name: "pfp-gpu",
        datacenterId: fra!.id,
        seriesId: h100.id,
        gpuCount: plan.gpuCount,
      }).id,
      net: resource("Network", "net", { name: plan.netName, datacenterId: fra!.id, networkType: "standard" }).id,
    }));
    stacks.push(stack);

    // The engine stops at the first refused check: one cause at a time.
    plan.netName = "pfp-free";
    let failed = await failedPreview(stack);
    expect(failed.text).toContain(`${h100.name} with 8 GPU(s) is not available in ${fra!.name}`);
    expect(failed.writes).toEqual([]);
    plan.gpuCount = 1;
    plan.netName = "pfp-held";
    failed = await failedPreview(stack);
    expect(failed.text).toContain(`A network named "pfp-held" already exists (${held})`);
    expect(failed.text).toContain("Set `adopt: true` to manage it from this program, or choose another name");
    expect(failed.writes).toEqual([]);

    // As warnings: the preview passes and says the same.
    await stack.setConfig("cloudinfra:preflight", { value: "warn" });
    const warned = await stack.preview({ color: "never" });
    expect(warned.stdout).toContain('cloudinfra:preflight is "warn"');
    await stack.removeConfig("cloudinfra:preflight");

    plan.netName = "pfp-free";
    await stack.preview({ color: "never" });
    const up = await stack.up({ color: "never" });
    expect((await world.api.getGpuVm({ params: { id: up.outputs.gpu!.value as string } })).gpuCount).toBe(1);
    expect((await world.api.getNetwork({ params: { id: up.outputs.net!.value as string } })).name).toBe("pfp-free");
  });
});
