import { expect, it } from "vitest";
import { quickstart } from "../../examples/quickstart/program";
import { destroy, up } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";
import { inventory } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;

it("quickstart: up with the default config creates the network, VM and attached volume; destroy removes them", async () => {
  const before = await inventory(stack);
  const options = stack.options({ project: "quickstart" });

  const created = await up(quickstart, options);
  const out = created.outputs as { networkId: string; vmId: string; volumeId: string; attachmentId: string };
  expect(created.summary.create).toBe(5); // four resources and the stack

  const network = await stack.api.getNetwork({ params: { id: out.networkId } });
  expect(network).toMatchObject({ name: "quickstart-net", networkType: "standard", cidrBlock: "10.20.0.0/24" });
  expect(network.datacenter.id).toBe(fra.id);
  expect(created.outputs.gateway).toBe(network.gateway);

  const vm = await stack.api.getVm({ params: { id: out.vmId } });
  expect(vm.status).toBe("Running");
  expect(vm.virtualMachine).toMatchObject({ name: "quickstart-vm", configurationId: 1, teamId: null });
  expect(vm.virtualMachine.networkInterfaces?.map((n) => n.networkId)).toEqual([out.networkId]);
  expect(created.outputs.privateIp).toBe(vm.virtualMachine.networkInterfaces?.[0].privateIp);
  expect(created.outputs.vmSize).toEqual({
    cpu: vm.virtualMachine.cpu,
    ram: vm.virtualMachine.ram,
    disk: vm.virtualMachine.disk,
  });

  const volume = await stack.api.getVolume({ params: { id: out.volumeId } });
  expect(volume).toMatchObject({ name: "quickstart-data", status: "In-use", sizeGb: 20, virtualMachineId: out.vmId });
  expect(out.attachmentId).toBe(`${out.volumeId}:${out.vmId}`);

  // the example converges: a second up changes nothing
  expect((await up(quickstart, options)).summary).toEqual({ same: 5 });

  await destroy(options);
  expect(await inventory(stack)).toEqual(before);
});

it("quickstart: stack config sets the names, sizes and resource group", async () => {
  const before = await inventory(stack);
  const { teamId } = await stack.api.createTeam({ body: { name: "qs-group" } });
  const options = stack.options({
    project: "quickstart",
    config: {
      ...stack.options().config,
      name: "qs-custom",
      configurationId: "2",
      volumeSizeGb: "50",
      teamId: String(teamId),
    },
  });

  const created = await up(quickstart, options);
  const out = created.outputs as { vmId: string; volumeId: string };
  const vm = (await stack.api.getVm({ params: { id: out.vmId } })).virtualMachine;
  expect(vm).toMatchObject({ name: "qs-custom-vm", configurationId: 2, teamId });
  expect(await stack.api.getVolume({ params: { id: out.volumeId } })).toMatchObject({
    name: "qs-custom-data",
    sizeGb: 50,
    teamId,
  });

  await destroy(options);
  await stack.api.deleteTeam({ params: { id: teamId } });
  expect(await inventory(stack)).toEqual(before);
});
