/**
 * A resource recorded in a failed state is never a dead end, for every kind: its create job fails, a `refresh`
 * (which clears the initialisation errors the engine recorded) runs, and the next `up` still repairs or replaces it,
 * as the API holds afterwards. Regression of issue 9: a Network whose create job failed stayed in status Error for
 * good, and every VM placed on it failed on every `up` with `network ... is Error, not Active`. A failed create job is
 * answered once by deleting what it left and creating again (failed-create-resend.test.ts): here it fails twice.
 */
import { describe, expect, it } from "vitest";
import { GpuVirtualMachine, Network, ResourceGroup, VirtualMachine, Volume } from "../../sdk";
import { destroy, refresh, up, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator({ jobDurationMs: 100 });
const [fra] = stack.datacenters;
const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;

/** The recorded resource of this name: its id and initialisation errors. */
const recorded = (run: RunResult, name: string) => run.state.resources.find((r) => r.name === name);

describe("a resource recorded in a failed state is repaired or replaced by the next up, even after a refresh", () => {
  it("Network whose create job failed stayed Error for good and failed every VM on it: replaced (deleted first, same name), the VM then created", async () => {
    const options = stack.options();
    const program = () => {
      const net = new Network("net", { name: "fs-net", datacenterId: fra.id, networkType: "standard" });
      const vm = new VirtualMachine("vm", {
        name: "fs-vm",
        datacenterId: fra.id,
        imageId: 1,
        configurationId: 1,
        networkInterfaces: [{ networkId: net.id }],
      });
      return { netId: net.id, vmId: vm.id };
    };
    await stack.faults("job=network.create,fail=Provider quota exceeded,count=2");
    const failed = await up(program, { ...options, throwOnError: false });
    await stack.faults("");
    const failedId = recorded(failed, "net")!.id!;
    expect((await stack.api.getNetwork({ params: { id: failedId } })).status).toBe("Error");
    // The refresh clears the recorded errors; the status Error in the outputs remains the record of the failure.
    await refresh(options);

    const repaired = await up(program, options);
    expect(repaired.step("net").op).toBe("replace");
    expect(repaired.step("net").diff?.deleteBeforeReplace).toBe(true);
    const netId = repaired.outputs.netId as string;
    expect(netId).not.toBe(failedId);
    await expect(stack.api.getNetwork({ params: { id: failedId } })).rejects.toMatchObject({ status: 404 });
    expect(await stack.api.getNetwork({ params: { id: netId } })).toMatchObject({ name: "fs-net", status: "Active" });
    const vm = await stack.api.getVm({ params: { id: repaired.outputs.vmId as string } });
    expect(vm.status).toBe("Running");
    expect(vm.virtualMachine.networkInterfaces?.map((n) => n.networkId)).toEqual([netId]);
    expect((await up(program, options)).step("net").op).toBe("same");
    await destroy(options);
  });

  it("Volume whose create job failed: replaced after a refresh, deleted first (same name)", async () => {
    const options = stack.options();
    const program = () => ({
      id: new Volume("vol", { name: "fs-vol", datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 }).id,
    });
    await stack.faults("job=volume.create,fail=Storage backend down,count=2");
    const failed = await up(program, { ...options, throwOnError: false });
    await stack.faults("");
    const failedId = recorded(failed, "vol")!.id!;
    await refresh(options);
    const repaired = await up(program, options);
    expect(repaired.step("vol").op).toBe("replace");
    expect(repaired.step("vol").diff?.deleteBeforeReplace).toBe(true);
    await expect(stack.api.getVolume({ params: { id: failedId } })).rejects.toMatchObject({ status: 404 });
    expect((await stack.api.getVolume({ params: { id: repaired.outputs.id as string } })).status).toBe("Available");
    await destroy(options);
  });

  it("VirtualMachine whose create job failed: replaced after a refresh", async () => {
    const options = stack.options();
    const program = () => ({
      id: new VirtualMachine("vm", { name: "fs-vm2", datacenterId: fra.id, imageId: 1, configurationId: 1 }).id,
    });
    await stack.faults("job=vm.create,fail=Quota exceeded,count=2");
    const failed = await up(program, { ...options, throwOnError: false });
    await stack.faults("");
    const failedId = recorded(failed, "vm")!.id!;
    await refresh(options);
    const repaired = await up(program, options);
    expect(repaired.step("vm").op).toBe("replace");
    await expect(stack.api.getVm({ params: { id: failedId } })).rejects.toMatchObject({ status: 404 });
    expect((await stack.api.getVm({ params: { id: repaired.outputs.id as string } })).status).toBe("Running");
    await destroy(options);
  });

  it("GpuVirtualMachine whose create job failed: replaced after a refresh", async () => {
    const options = stack.options();
    const program = () => ({
      id: new GpuVirtualMachine("gpu", { name: "fs-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 }).id,
    });
    await stack.faults("job=gpu.create,fail=No GPU capacity left,count=2");
    const failed = await up(program, { ...options, throwOnError: false });
    await stack.faults("");
    const failedId = recorded(failed, "gpu")!.id!;
    await refresh(options);
    const repaired = await up(program, options);
    expect(repaired.step("gpu").op).toBe("replace");
    await expect(stack.api.getGpuVm({ params: { id: failedId } })).rejects.toMatchObject({ status: 404 });
    expect((await stack.api.getGpuVm({ params: { id: repaired.outputs.id as string } })).status).toBe("Running");
    await destroy(options);
  });

  it("ResourceGroup whose members could not be set: finished in place after a refresh", async () => {
    const options = stack.options();
    const ghost = "00000000-0000-4000-8000-000000000000";
    const failed = await up(() => ({ id: new ResourceGroup("rg", { name: "fs-rg", members: [ghost] }).id }), {
      ...options,
      throwOnError: false,
    });
    const failedId = recorded(failed, "rg")!.id!;
    expect(recorded(failed, "rg")!.initErrors?.join(" ")).toContain("could not be set");
    await refresh(options);
    const { id: member } = await stack.api.createUser({ body: { email: "fs-member@example.com", action: "invite" } });
    const repaired = await up(
      () => ({ id: new ResourceGroup("rg", { name: "fs-rg", members: [member] }).id }),
      options,
    );
    expect(repaired.step("rg").op).toBe("update");
    expect(repaired.outputs.id).toBe(failedId);
    const team = await stack.api.getTeam({ params: { id: Number(failedId) } });
    expect(team.members.map((m) => m.id)).toEqual([member]);
    await destroy(options);
    await stack.api.deleteUser({ params: { id: member } });
  });
});
