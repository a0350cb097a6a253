import { expect, it } from "vitest";
import { drift } from "../../examples/drift/program";
import { destroy, refresh, up } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";
import { inventory } from "./helpers";

const stack = await stackOnEmulator();

async function vmStatus(id: string, wanted: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await stack.api.getVm({ params: { id } })).status === wanted) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`VM ${id} never reached ${wanted}`);
}

it("drift: refresh catches changes made outside Pulumi, up repairs them, destroy removes everything", async () => {
  const before = await inventory(stack);
  const options = stack.options({ project: "drift" });

  const created = await up(drift, options);
  const { networkId, vmId } = created.outputs as { networkId: string; vmId: string };
  expect(created.outputs).toMatchObject({
    networkDescription: "managed by Pulumi",
    vmName: "drift-vm",
    vmPowerState: "running",
  });
  expect((await refresh(options)).steps.filter((s) => s.refresh !== "same")).toEqual([]);

  // someone changes things by hand, through the API
  await stack.api.updateNetwork({ params: { id: networkId }, body: { description: "changed by hand" } });
  await stack.api.updateVm({ params: { id: vmId }, body: { name: "renamed-by-hand" } });
  await stack.api.stopVm({ params: { id: vmId } });
  await vmStatus(vmId, "Stopped");

  // refresh reads the changes into the stack
  const refreshed = await refresh(options);
  expect(refreshed.step("network").refresh).toBe("changed");
  expect(refreshed.step("network").outputs?.description).toBe("changed by hand");
  expect(refreshed.step("vm").refresh).toBe("changed");
  expect(refreshed.step("vm").outputs).toMatchObject({ name: "renamed-by-hand", powerState: "stopped" });

  // up puts back what the program declares, in place
  const repaired = await up(drift, options);
  expect(repaired.step("network").op).toBe("update");
  expect(repaired.step("vm").op).toBe("update");
  expect(repaired.outputs).toMatchObject({
    networkId,
    vmId,
    networkDescription: "managed by Pulumi",
    vmName: "drift-vm",
    vmPowerState: "running",
  });
  expect((await stack.api.getNetwork({ params: { id: networkId } })).description).toBe("managed by Pulumi");
  const vm = await stack.api.getVm({ params: { id: vmId } });
  expect(vm.status).toBe("Running");
  expect(vm.virtualMachine.name).toBe("drift-vm");
  expect((await refresh(options)).steps.filter((s) => s.refresh !== "same")).toEqual([]);

  await destroy(options);
  expect(await inventory(stack)).toEqual(before);
});
