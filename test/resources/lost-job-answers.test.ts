/**
 * Regression: an attach, a volume resize or a VM resize whose answer was lost (the job started, the 503 came after)
 * was sent again by the client, refused (the volume was Attaching, the size no longer larger), and failed the `up`.
 * Such a PUT is no longer repeated: the provider waits for the resource to settle and reads whether it took effect.
 */
import { expect, it } from "vitest";
import { Volume, VolumeAttachment, VirtualMachine } from "../../sdk";
import { destroy, up } from "../harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;

function program(size: { sizeGb: number; configurationId: number }, prefix = "lj") {
  return () => {
    const vm = new VirtualMachine("vm", {
      name: `${prefix}-vm`,
      datacenterId: fra.id,
      imageId: 1,
      configurationId: size.configurationId,
    });
    const volume = new Volume("vol", {
      name: `${prefix}-vol`,
      datacenterId: fra.id,
      volumeTypeId: 1,
      sizeGb: size.sizeGb,
    });
    new VolumeAttachment("att", { volumeId: volume.id, virtualMachineId: vm.id });
    return { vmId: vm.id, volumeId: volume.id };
  };
}

it("an attach, a volume resize and a VM resize whose answers were lost complete in the same up, each sent once", async () => {
  const options = stack.options();
  await stack.faults("attachVolume,status=503,after,count=1");
  let mark = stack.mark();
  const created = await up(program({ sizeGb: 10, configurationId: 1 }), options);
  const { vmId, volumeId } = created.outputs as { vmId: string; volumeId: string };
  expect(await stack.api.getVolume({ params: { id: volumeId } })).toMatchObject({
    status: "In-use",
    virtualMachineId: vmId,
  });
  const attaches = (await stack.requests(mark)).filter((r) => r.route === "attachVolume");
  expect(attaches.map((r) => r.status)).toEqual([503]);

  await stack.faults("resizeVolume,status=503,after,count=1;resizeVm,status=503,after,count=1");
  mark = stack.mark();
  const grown = await up(program({ sizeGb: 20, configurationId: 2 }), options);
  expect(grown.summary.update).toBe(2);
  expect((await stack.api.getVolume({ params: { id: volumeId } })).sizeGb).toBe(20);
  expect((await stack.api.getVm({ params: { id: vmId } })).virtualMachine.configurationId).toBe(2);
  const resizes = (await stack.requests(mark)).filter((r) => r.route === "resizeVolume" || r.route === "resizeVm");
  expect(resizes.map((r) => `${r.route} ${r.status}`).sort()).toEqual(["resizeVm 503", "resizeVolume 503"]);
  await stack.faults("");
});

it("an attach answered 5xx that attached nothing is sent once more in the same up (it failed the up before)", async () => {
  const options = stack.options();
  await stack.faults("attachVolume,status=503,count=1");
  const mark = stack.mark();
  const created = await up(program({ sizeGb: 10, configurationId: 1 }, "la"), options);
  await stack.faults("");
  const { vmId, volumeId } = created.outputs as { vmId: string; volumeId: string };
  expect(await stack.api.getVolume({ params: { id: volumeId } })).toMatchObject({ virtualMachineId: vmId });
  const attaches = (await stack.requests(mark)).filter((r) => r.route === "attachVolume");
  expect(attaches.map((r) => r.status)).toEqual([503, 202]);
});

it("a detach job and a volume delete job that failed (each leaves the volume as it was) are sent once more", async () => {
  const options = stack.options();
  const created = await up(program({ sizeGb: 10, configurationId: 1 }, "lf"), options);
  const { volumeId } = created.outputs as { volumeId: string };
  await stack.faults("job=volume.detach,fail=Injected detach failure,count=1;job=volume.delete,fail,count=1");
  const mark = stack.mark();
  await destroy(options);
  await stack.faults("");
  await expect(stack.api.getVolume({ params: { id: volumeId } })).rejects.toMatchObject({ status: 404 });
  const routes = (await stack.requests(mark)).map((r) => r.route);
  expect(routes.filter((r) => r === "detachVolume")).toHaveLength(2);
  expect(routes.filter((r) => r === "deleteVolume" || r === "bulkDeleteVolumes")).toHaveLength(2);
});
