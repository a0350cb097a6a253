/**
 * A create job that fails is answered once: the provider warns, deletes what the failed job left and sends the create
 * again, so that a transient failure in the cloud costs no extra `up`. Twice, the failure is recorded as before (the
 * resource with its id, replaced by the next up: failed-state.test.ts).
 */
import { expect, it } from "vitest";
import { GpuVirtualMachine, Network, VirtualMachine, Volume } from "../../sdk";
import { destroy, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator({ jobDurationMs: 100 });
const [fra] = stack.datacenters;
const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;

/** The ids a warning names as left by a failed create job. */
const leftBehind = (log: string) => [...log.matchAll(/deleting what it left \(([0-9a-f-]{36})\)/g)].map((m) => m[1]!);

it("a network and a volume whose create job failed once are deleted and created again in the same up", async () => {
  const options = stack.options();
  const program = () => ({
    netId: new Network("net", { name: "fc-net", datacenterId: fra.id, networkType: "standard" }).id,
    volId: new Volume("vol", { name: "fc-vol", datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 }).id,
  });
  await stack.faults(
    "job=network.create,fail=No capacity in the zone,count=1;job=volume.create,fail=Storage backend down,count=1",
  );
  const mark = stack.mark();
  const created = await up(program, options);
  await stack.faults("");
  const { netId, volId } = created.outputs as { netId: string; volId: string };

  // What the API holds: one network and one volume of each name, ready; what the failed jobs left is gone.
  const networks = (await stack.api.listNetworks({ query: { search: "fc-net" } })).data;
  expect(networks.map((n) => [n.id, n.status])).toEqual([[netId, "Active"]]);
  const volumes = (await stack.api.listVolumes({ query: { search: "fc-vol" } })).data;
  expect(volumes.map((v) => [v.id, v.status])).toEqual([[volId, "Available"]]);
  const left = leftBehind(created.hostLog);
  expect(left).toHaveLength(2);
  expect(left).not.toContain(netId);
  expect(left).not.toContain(volId);
  for (const id of left) {
    expect(await stack.api.getNetwork({ params: { id } }).catch((e: { status?: number }) => e.status)).toBe(404);
    expect(await stack.api.getVolume({ params: { id } }).catch((e: { status?: number }) => e.status)).toBe(404);
  }
  // The warnings name the job's reason and what is done about it.
  expect(created.hostLog).toMatch(
    /Creating network named "fc-net" failed: No capacity in the zone \(job [^)]*\); deleting/,
  );
  expect(created.hostLog).toMatch(
    /Creating volume named "fc-vol" failed: Storage backend down \(job [^)]*\); deleting/,
  );
  const routes = (await stack.requests(mark)).map((r) => r.route);
  expect(routes.filter((r) => r === "createNetwork")).toHaveLength(2);
  expect(routes.filter((r) => r === "createVolume")).toHaveLength(2);
  expect(created.state.resources.flatMap((r) => r.initErrors ?? [])).toEqual([]);
  const again = await up(program, options);
  expect([again.step("net").op, again.step("vol").op]).toEqual(["same", "same"]);
  await destroy(options);
});

it("a create job that fails twice is recorded with what the second left; the first is deleted", async () => {
  const options = stack.options();
  const program = () => ({
    netId: new Network("net", { name: "fc2-net", datacenterId: fra.id, networkType: "standard" }).id,
  });
  await stack.faults("job=network.create,fail=No capacity in the zone,count=2");
  const failed = await up(program, { ...options, throwOnError: false });
  await stack.faults("");
  expect(failed.errors.map((e) => e.message).join("\n")).toContain(
    'Creating network named "fc2-net" failed: No capacity in the zone (job ',
  );
  const [first] = leftBehind(failed.hostLog);
  const recorded = failed.state.resources.find((r) => r.name === "net")!;
  expect(recorded.id).not.toBe(first);
  expect(await stack.api.getNetwork({ params: { id: first! } }).catch((e: { status?: number }) => e.status)).toBe(404);
  const networks = (await stack.api.listNetworks({ query: { search: "fc2-net" } })).data;
  expect(networks.map((n) => [n.id, n.status])).toEqual([[recorded.id, "Error"]]);
  await destroy(options);
});

it("a VM and a GPU VM whose create job failed once: the machine left in status Error is deleted, one created", async () => {
  const options = stack.options();
  const program = () => ({
    vmId: new VirtualMachine("vm", { name: "fc-vm", datacenterId: fra.id, imageId: 1, configurationId: 1 }).id,
    gpuId: new GpuVirtualMachine("gpu", { name: "fc-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 }).id,
  });
  await stack.faults("job=vm.create,fail=Host lost,count=1;job=gpu.create,fail=No GPU capacity left,count=1");
  const mark = stack.mark();
  const created = await up(program, options);
  await stack.faults("");
  const { vmId, gpuId } = created.outputs as { vmId: string; gpuId: string };
  const vms = (await stack.api.listVms({ query: { search: "fc-vm" } })).data;
  expect(vms.map((v) => [v.id, v.status])).toEqual([[vmId, "Running"]]);
  const gpus = (await stack.api.listGpuVms({ query: { search: "fc-gpu" } })).data;
  expect(gpus.map((g) => [g.id, g.status])).toEqual([[gpuId, "Running"]]);
  const left = leftBehind(created.hostLog);
  expect(left).toHaveLength(2);
  for (const id of left) {
    expect(await stack.api.getVm({ params: { id } }).catch((e: { status?: number }) => e.status)).toBe(404);
    expect(await stack.api.getGpuVm({ params: { id } }).catch((e: { status?: number }) => e.status)).toBe(404);
  }
  expect(created.hostLog).toMatch(/Creating VM "fc-vm" failed: Host lost \(job [^)]*\); deleting/);
  expect(created.hostLog).toMatch(/Creating GPU VM "fc-gpu" failed: No GPU capacity left \(job [^)]*\); deleting/);
  const routes = (await stack.requests(mark)).map((r) => r.route);
  expect(routes.filter((r) => r === "createVm")).toHaveLength(2);
  expect(routes.filter((r) => r === "createGpuVm")).toHaveLength(2);
  await destroy(options);
});

it("a create whose answer was lost and whose job failed (found by name, in status Error) is resent the same way", async () => {
  const options = stack.options();
  const program = () => ({
    volId: new Volume("vol", { name: "fl-vol", datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 }).id,
    vmId: new VirtualMachine("vm", { name: "fl-vm", datacenterId: fra.id, imageId: 1, configurationId: 1 }).id,
    netId: new Network("net", { name: "fl-net", datacenterId: fra.id, networkType: "standard" }).id,
  });
  await stack.faults(
    "createVolume,status=503,after,count=1;createVm,status=503,after,count=1;createNetwork,status=503,after,count=1;" +
      "job=volume.create,fail,count=1;job=vm.create,fail,count=1;job=network.create,fail,count=1",
  );
  const created = await up(program, options);
  await stack.faults("");
  const { volId, vmId } = created.outputs as { volId: string; vmId: string };
  const volumes = (await stack.api.listVolumes({ query: { search: "fl-vol" } })).data;
  expect(volumes.map((v) => [v.id, v.status])).toEqual([[volId, "Available"]]);
  const vms = (await stack.api.listVms({ query: { search: "fl-vm" } })).data;
  expect(vms.map((v) => [v.id, v.status])).toEqual([[vmId, "Running"]]);
  const networks = (await stack.api.listNetworks({ query: { search: "fl-net" } })).data;
  expect(networks.map((n) => [n.id, n.status])).toEqual([[created.outputs.netId, "Active"]]);
  expect(leftBehind(created.hostLog)).toHaveLength(3);
  await destroy(options);
});
