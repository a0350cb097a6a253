/**
 * Regression: an attach, a volume resize or a VM resize whose answer was lost (the job started, the 503 came after)
 * was sent again by the client, refused (the volume was Attaching, the size no longer larger), and failed the `up`.
 * Such a PUT is no longer repeated: the provider waits for the resource to settle and reads whether it took effect.
 * What took no effect (a 5xx before the handler, a job that failed and left the resource as it was) is sent once more;
 * twice, a clear error.
 */
import { expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { ApiKey, GpuVirtualMachine, Volume, VolumeAttachment, VirtualMachine } from "../../sdk";
import { destroy, up, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;
const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;

/** How many requests of each route arrived after `mark`, with their statuses: `route status` sorted. */
const sentSince = async (mark: number, ...routes: string[]) =>
  (await stack.requests(mark))
    .filter((r) => r.route !== null && routes.includes(r.route))
    .map((r) => `${r.route} ${r.status}`)
    .sort();
const errorsOf = (run: RunResult) => run.errors.map((e) => e.message).join("\n");

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

it("a VM delete job and a GPU VM delete job that failed (each leaves the machine as it was) are sent once more", async () => {
  const options = stack.options();
  const machines = () => {
    const vm = new VirtualMachine("vm", { name: "dj-vm", datacenterId: fra.id, imageId: 1, configurationId: 1 });
    const gpu = new GpuVirtualMachine("gpu", { name: "dj-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 });
    return { vmId: vm.id, gpuId: gpu.id };
  };
  const { vmId, gpuId } = (await up(machines, options)).outputs as { vmId: string; gpuId: string };
  await stack.faults(
    "job=vm.delete,fail=Injected VM delete failure,count=1;job=gpu.delete,fail=Injected GPU failure,count=1",
  );
  const mark = stack.mark();
  const destroyed = await destroy(options);
  await stack.faults("");
  await expect(stack.api.getVm({ params: { id: vmId } })).rejects.toMatchObject({ status: 404 });
  await expect(stack.api.getGpuVm({ params: { id: gpuId } })).rejects.toMatchObject({ status: 404 });
  expect(await sentSince(mark, "deleteVm", "deleteGpuVm")).toEqual([
    "deleteGpuVm 202",
    "deleteGpuVm 202",
    "deleteVm 202",
    "deleteVm 202",
  ]);
  expect(destroyed.hostLog).toMatch(
    new RegExp(`Deleting VM ${vmId} failed: Injected VM delete failure \\(job [^)]*\\); the delete is sent once more`),
  );
  expect(destroyed.hostLog).toMatch(
    new RegExp(`Deleting GPU VM ${gpuId} failed: Injected GPU failure \\(job [^)]*\\); the delete is sent once more`),
  );

  // Failing twice: the clear error, as before; the machines are as they were, and the next destroy deletes them.
  const again = stack.options();
  const kept = (await up(machines, again)).outputs as { vmId: string; gpuId: string };
  await stack.faults(
    "job=vm.delete,fail=Injected VM delete failure,count=2;job=gpu.delete,fail=Injected GPU failure,count=2",
  );
  const twice = stack.mark();
  const failed = await destroy({ ...again, throwOnError: false });
  await stack.faults("");
  expect(errorsOf(failed)).toContain(`Deleting VM ${kept.vmId} failed: Injected VM delete failure (job `);
  expect(errorsOf(failed)).toContain(`Deleting GPU VM ${kept.gpuId} failed: Injected GPU failure (job `);
  expect(await sentSince(twice, "deleteVm", "deleteGpuVm")).toHaveLength(4);
  expect((await stack.api.getVm({ params: { id: kept.vmId } })).status).toBe("Running");
  expect((await stack.api.getGpuVm({ params: { id: kept.gpuId } })).status).toBe("Running");
  await destroy(again);
  await expect(stack.api.getVm({ params: { id: kept.vmId } })).rejects.toMatchObject({ status: 404 });
});

it("an attach job that failed (the volume is left Available) is sent once more; failing twice, the clear error", async () => {
  const options = stack.options();
  await stack.faults("job=volume.attach,fail=Injected attach failure,count=1");
  let mark = stack.mark();
  const created = await up(program({ sizeGb: 10, configurationId: 1 }, "aj"), options);
  await stack.faults("");
  const { vmId, volumeId } = created.outputs as { vmId: string; volumeId: string };
  expect(await stack.api.getVolume({ params: { id: volumeId } })).toMatchObject({
    status: "In-use",
    virtualMachineId: vmId,
  });
  expect(await sentSince(mark, "attachVolume")).toEqual(["attachVolume 202", "attachVolume 202"]);
  expect(created.hostLog).toMatch(
    /Attaching volume "aj-vol" to virtual machine \S+ failed: Injected attach failure \(job [^)]*\); the attach is sent once more/,
  );

  const twice = stack.options();
  await stack.faults("job=volume.attach,fail=Injected attach failure,count=2");
  mark = stack.mark();
  const failed = await up(program({ sizeGb: 10, configurationId: 1 }, "ak"), { ...twice, throwOnError: false });
  await stack.faults("");
  expect(errorsOf(failed)).toContain('Attaching volume "ak-vol" to virtual machine');
  expect(errorsOf(failed)).toContain("failed: Injected attach failure (job ");
  expect(await sentSince(mark, "attachVolume")).toEqual(["attachVolume 202", "attachVolume 202"]);
  const volume = failed.state.resources.find((r) => r.name === "vol")!;
  expect(await stack.api.getVolume({ params: { id: volume.id! } })).toMatchObject({
    status: "Available",
    virtualMachineId: null,
  });
  await up(program({ sizeGb: 10, configurationId: 1 }, "ak"), twice);
  expect((await stack.api.getVolume({ params: { id: volume.id! } })).status).toBe("In-use");
});

it("a volume resize and a VM resize answered 5xx that resized nothing are sent once more; twice, the clear error", async () => {
  const options = stack.options();
  const created = await up(program({ sizeGb: 10, configurationId: 1 }, "lr"), options);
  const { vmId, volumeId } = created.outputs as { vmId: string; volumeId: string };
  await stack.faults("resizeVolume,status=503,count=1;resizeVm,drop,count=1");
  let mark = stack.mark();
  const grown = await up(program({ sizeGb: 20, configurationId: 2 }, "lr"), options);
  await stack.faults("");
  expect(grown.summary.update).toBe(2);
  expect((await stack.api.getVolume({ params: { id: volumeId } })).sizeGb).toBe(20);
  expect((await stack.api.getVm({ params: { id: vmId } })).virtualMachine.configurationId).toBe(2);
  // A connection closed before the handler is logged with status 0 or not at all; the one resend is answered 202.
  const sent = await sentSince(mark, "resizeVolume", "resizeVm");
  expect(sent.filter((r) => r.endsWith(" 202"))).toEqual(["resizeVm 202", "resizeVolume 202"]);
  expect(sent).toContain("resizeVolume 503");
  expect(grown.hostLog).toContain("the resize got no answer");
  expect(grown.hostLog).toContain("the volume is still 10 GB: sending it again");
  expect(grown.hostLog).toContain("the VM still has configuration 1: sending it again");

  // Carried out, its answer lost, and its job failed: nothing resized, so sent once more.
  await stack.faults("resizeVolume,status=503,after,count=1;job=volume.resize,fail,count=1");
  mark = stack.mark();
  await up(program({ sizeGb: 50, configurationId: 2 }, "lr"), options);
  await stack.faults("");
  expect((await stack.api.getVolume({ params: { id: volumeId } })).sizeGb).toBe(50);
  expect(await sentSince(mark, "resizeVolume")).toEqual(["resizeVolume 202", "resizeVolume 503"]);

  // Twice without an answer and nothing resized: the clear error, the old sizes.
  await stack.faults("resizeVolume,status=503,count=2;resizeVm,status=503,count=2");
  mark = stack.mark();
  const failed = await up(program({ sizeGb: 100, configurationId: 3 }, "lr"), { ...options, throwOnError: false });
  await stack.faults("");
  expect(errorsOf(failed)).toContain('Resizing volume "lr-vol" to 100 GB got no answer twice (');
  expect(errorsOf(failed)).toContain("and the volume is still 50 GB: nothing was resized");
  expect(errorsOf(failed)).toContain('Resizing VM "lr-vm" to configuration 3 got no answer twice');
  expect(errorsOf(failed)).toContain("still has configuration 2: nothing was resized");
  expect(await sentSince(mark, "resizeVolume", "resizeVm")).toEqual([
    "resizeVm 503",
    "resizeVm 503",
    "resizeVolume 503",
    "resizeVolume 503",
  ]);
  expect((await stack.api.getVolume({ params: { id: volumeId } })).sizeGb).toBe(50);
  expect((await stack.api.getVm({ params: { id: vmId } })).virtualMachine.configurationId).toBe(2);
});

it("an ApiKey create and its rotation whose answers were lost: the rotation is sent once more, the secret works", async () => {
  const user = stack.emulator.bootstrap.users.admin;
  const options = stack.options({
    config: {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:email": { secret: user.email },
      "cloudinfra:password": { secret: user.password },
      "cloudinfra:totpSecret": { secret: user.totpSecret },
      "cloudinfra:pollIntervalMs": "20",
    },
  });
  const keyProgram =
    (name = "lk-key", rotation?: string) =>
    () => {
      const key = new ApiKey("key", { name, rotation });
      return { id: key.id, key: key.key };
    };
  /** The secret recorded works: it signs in. */
  const signsIn = async (secret: string) => {
    const probe = new CloudClient({ baseUrl: stack.emulator.baseUrl, auth: { apiKey: secret }, retry: { retries: 0 } });
    await probe.check().finally(() => probe.close());
  };
  await stack.faults("createApiKey,status=503,after,count=1;rotateApiKey,drop,after,count=1");
  const mark = stack.mark();
  const created = await up(keyProgram(), options);
  await stack.faults("");
  const keys = (await stack.api.listApiKeys({ query: { search: "lk-key", limit: 100 } })).data;
  expect(keys.map((k) => k.id)).toEqual([created.outputs.id]);
  const secret = created.step("key").outputs.key as string;
  expect(keys[0]!.start).toBe(secret.slice(0, keys[0]!.start.length));
  await signsIn(secret);
  const sent = (await stack.requests(mark)).filter((r) => r.route === "createApiKey" || r.route === "rotateApiKey");
  expect(sent.map((r) => r.route)).toEqual(["createApiKey", "rotateApiKey", "rotateApiKey"]);
  expect(sent.at(-1)!.status).toBe(200);
  expect(created.hostLog).toContain(`rotating key ${created.outputs.id} got no answer`);
  // The key shows a new start: the rotation took effect, its secret lost with the answer; one more rotation.
  expect(created.hostLog).toContain("so the rotation took effect, but its new secret was only in the lost answer");
  expect(created.hostLog).not.toContain(secret);

  // A rotation asked for by the program (update), its answer lost: sent once more; the new secret works.
  await stack.faults("rotateApiKey,status=503,after,count=1");
  let since = stack.mark();
  const rotated = await up(keyProgram("lk-key", "1"), options);
  await stack.faults("");
  expect(rotated.step("key").op).toBe("update");
  const newSecret = rotated.step("key").outputs.key as string;
  expect(newSecret).not.toBe(secret);
  await signsIn(newSecret);
  expect((await stack.requests(since)).filter((r) => r.route === "rotateApiKey").map((r) => r.status)).toEqual([
    503, 200,
  ]);

  // The rotation's answer lost twice: the key is recorded without a secret (never orphaned), the next up rotates it.
  const twice = stack.options({ config: options.config });
  await stack.faults("createApiKey,status=503,after,count=1;rotateApiKey,status=503,after,count=2");
  since = stack.mark();
  const failed = await up(keyProgram("lt-key"), { ...twice, throwOnError: false });
  await stack.faults("");
  expect(errorsOf(failed)).toContain("its answer was lost and rotating it to learn a secret failed");
  const partial = failed.state.resources.find((r) => r.name === "key")!;
  expect(partial.id).toBeTruthy();
  expect(partial.outputs.key).toBeUndefined();
  expect((await stack.requests(since)).filter((r) => r.route === "rotateApiKey").map((r) => r.status)).toEqual([
    503, 503,
  ]);
  const finished = await up(keyProgram("lt-key"), twice);
  expect(finished.outputs.id).toBe(partial.id);
  await signsIn(finished.step("key").outputs.key as string);
  const left = (await stack.api.listApiKeys({ query: { search: "lt-key", limit: 100 } })).data;
  expect(left.map((k) => k.id)).toEqual([partial.id]);
  await destroy(options);
  await destroy(twice);
});
