/**
 * A VM or GPU VM delete job that failed is followed by a read of the machine before the delete is sent once more
 * (issue 30): when the machine is gone all the same (a back end that removed it and still reported the job failed),
 * the delete is done, with a warning naming the failed job, and nothing is sent again. Likewise a failed attach job
 * whose volume is attached to that VM all the same.
 *
 * Its own emulator: the jobs' failure effects are replaced for this file (the machine is removed, the volume attached,
 * although the job fails), which the emulator's fault rules cannot express.
 */
import { expect, it } from "vitest";
import { registerJobEffects } from "../../emulator/jobs";
import { GpuVirtualMachine, Volume, VolumeAttachment, VirtualMachine } from "../../sdk";
import { destroy, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;
const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;

registerJobEffects(stack.emulator.ctx, {
  "vm.delete": {
    complete: (ctx, job) => void delete ctx.state.vms[job.targetId],
    fail: (ctx, job) => void delete ctx.state.vms[job.targetId],
  },
  "volume.attach": {
    complete: (ctx, job) => void (ctx.state.volumes[job.targetId]!.status = "In-use"),
    fail: (ctx, job) => void (ctx.state.volumes[job.targetId]!.status = "In-use"),
  },
  "gpu.delete": {
    complete: (ctx, job) => void delete ctx.state.gpuVms[job.targetId],
    fail: (ctx, job) => void delete ctx.state.gpuVms[job.targetId],
  },
});

it("a failed delete job whose machine is gone all the same is done: read first, not sent again", async () => {
  const options = stack.options();
  const machines = () => {
    const vm = new VirtualMachine("vm", { name: "dg-vm", datacenterId: fra.id, imageId: 1, configurationId: 1 });
    const gpu = new GpuVirtualMachine("gpu", { name: "dg-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 });
    return { vmId: vm.id, gpuId: gpu.id };
  };
  const { vmId, gpuId } = (await up(machines, options)).outputs as { vmId: string; gpuId: string };
  await stack.faults(
    "job=vm.delete,fail=Injected VM delete failure,count=1;job=gpu.delete,fail=Injected GPU failure,count=1",
  );
  const mark = stack.mark();
  const destroyed = await destroy(options);
  await stack.faults("");
  expect(destroyed.state.resources.filter((r) => r.name === "vm" || r.name === "gpu")).toEqual([]);
  await expect(stack.api.getVm({ params: { id: vmId } })).rejects.toMatchObject({ status: 404 });
  await expect(stack.api.getGpuVm({ params: { id: gpuId } })).rejects.toMatchObject({ status: 404 });
  const sent = (await stack.requests(mark)).filter((r) => r.route !== null);
  // One delete each; after its failed job, one read that answered 404.
  expect(
    sent
      .filter((r) => r.route === "deleteVm" || r.route === "deleteGpuVm")
      .map((r) => r.route)
      .sort(),
  ).toEqual(["deleteGpuVm", "deleteVm"]);
  expect(sent.filter((r) => r.route === "getVm" && r.path.includes(vmId)).map((r) => r.status)).toContain(404);
  expect(sent.filter((r) => r.route === "getGpuVm" && r.path.includes(gpuId)).map((r) => r.status)).toContain(404);
  expect(destroyed.hostLog).toMatch(
    new RegExp(
      `Deleting VM ${vmId} failed: Injected VM delete failure \\(job [^)]*\\); yet the VM ${vmId} no longer exists: it is deleted`,
    ),
  );
  expect(destroyed.hostLog).toMatch(
    new RegExp(
      `Deleting GPU VM ${gpuId} failed: Injected GPU failure \\(job [^)]*\\); yet the GPU VM ${gpuId} no longer exists`,
    ),
  );
  expect(destroyed.hostLog).not.toContain("the delete is sent once more");
});

it("a failed attach job whose volume is attached to that VM all the same is done: read first, not sent again", async () => {
  const options = stack.options();
  const attached = () => {
    const vm = new VirtualMachine("vm", { name: "ag-vm", datacenterId: fra.id, imageId: 1, configurationId: 1 });
    const volume = new Volume("vol", { name: "ag-vol", datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 });
    new VolumeAttachment("att", { volumeId: volume.id, virtualMachineId: vm.id });
    return { vmId: vm.id, volumeId: volume.id };
  };
  await stack.faults("job=volume.attach,fail=Injected attach failure,count=1");
  const mark = stack.mark();
  const created = await up(attached, options);
  await stack.faults("");
  const { vmId, volumeId } = created.outputs as { vmId: string; volumeId: string };
  expect(await stack.api.getVolume({ params: { id: volumeId } })).toMatchObject({
    status: "In-use",
    virtualMachineId: vmId,
  });
  const attaches = (await stack.requests(mark)).filter((r) => r.route === "attachVolume");
  expect(attaches.map((r) => r.status)).toEqual([202]);
  expect(created.hostLog).toMatch(
    /failed: Injected attach failure \(job [^)]*\); yet the volume is attached to it: done/,
  );
  expect(created.hostLog).not.toContain("the attach is sent once more");
  await destroy(options);
});
