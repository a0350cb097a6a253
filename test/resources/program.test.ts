import * as fs from "node:fs";
import { expect, it } from "vitest";
import { ApiKey, Network, ResourceGroup, User, VirtualMachine, Volume, VolumeAttachment } from "../../sdk";
import { destroy, refresh, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

// VM creates take about a second here, so the program's independent resources visibly overlap.
const stack = await stackOnEmulator({ jobDurationMs: 2000 });
const [fra] = stack.datacenters;
const admin = stack.emulator.bootstrap.users.admin;

interface Variant {
  configurationId: number;
  sizeGb: number;
  description: string;
}

/** Network, two VMs on it in a resource group, a volume attached to each, a user in the group and a CI API key. */
function program(v: Variant) {
  return () => {
    const group = new ResourceGroup("team", { name: "mr-team" });
    const net = new Network("net", {
      name: "mr-net",
      datacenterId: fra.id,
      networkType: "standard",
      description: v.description,
    });
    const vms = ["a", "b"].map(
      (n) =>
        new VirtualMachine(`vm-${n}`, {
          name: `mr-vm-${n}`,
          datacenterId: fra.id,
          imageId: 1,
          configurationId: v.configurationId,
          teamId: group.teamId,
          networkInterfaces: [{ networkId: net.id, primary: true }],
        }),
    );
    const volumes = vms.map((vm, i) => {
      const volume = new Volume(`vol-${i}`, {
        name: `mr-vol-${i}`,
        datacenterId: fra.id,
        volumeTypeId: 1,
        sizeGb: v.sizeGb,
      });
      new VolumeAttachment(`att-${i}`, { volumeId: volume.id, virtualMachineId: vm.id });
      return volume;
    });
    const user = new User("dev", { email: "mr-dev@acme.example", roleNames: ["tenant-user"], teamIds: [group.teamId] });
    const key = new ApiKey("ci", { name: "mr-ci", roleId: "vm-operator", expiresInDays: 30 });
    return {
      networkId: net.id,
      groupId: group.teamId,
      vmIds: vms.map((vm) => vm.id),
      volumeIds: volumes.map((vol) => vol.id),
      userId: user.id,
      keyId: key.id,
      ciKey: key.key,
    };
  };
}

const options = stack.options({
  config: {
    "cloudinfra:baseUrl": stack.emulator.baseUrl,
    "cloudinfra:apiKey": { secret: admin.apiKey },
    "cloudinfra:email": admin.email,
    "cloudinfra:password": { secret: admin.password },
    "cloudinfra:totpSecret": { secret: admin.totpSecret },
    "cloudinfra:pollIntervalMs": "20",
  },
});

async function apiKeysNamed(name: string) {
  return (await stack.api.listApiKeys({ query: { search: name } })).data.filter((k) => k.name === name);
}

it("a whole program goes up concurrently, refreshes clean, changes in place, and is destroyed", async () => {
  const first = { configurationId: 1, sizeGb: 10, description: "v1" };

  // up: everything exists in the API as declared
  const created = await up(program(first), options);
  expect(created.summary.create).toBe(11); // ten resources and the stack
  const out = created.outputs as {
    networkId: string;
    groupId: number;
    vmIds: string[];
    volumeIds: string[];
    userId: string;
    keyId: string;
  };
  for (const [i, vmId] of out.vmIds.entries()) {
    const vm = (await stack.api.getVm({ params: { id: vmId } })).virtualMachine;
    expect(vm.teamId).toBe(out.groupId);
    expect(vm.networkInterfaces?.map((n) => n.networkId)).toEqual([out.networkId]);
    const volume = await stack.api.getVolume({ params: { id: out.volumeIds[i] } });
    expect(volume).toMatchObject({ status: "In-use", virtualMachineId: vmId, sizeGb: 10 });
  }
  expect((await stack.api.getNetwork({ params: { id: out.networkId } })).connectedVmCount).toBe(2);
  expect((await stack.api.getUser({ params: { id: out.userId } })).teamIds).toEqual([out.groupId]);
  expect(await apiKeysNamed("mr-ci")).toHaveLength(1);
  expect(created.secretOutputs).toContain("ciKey");
  expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain(String(created.outputs.ciKey));

  // The two VMs were registered concurrently: the second create was sent before the first one's job had ended.
  const vmJobs = Object.values(stack.emulator.ctx.state.jobs).filter((j) => j.operation === "vm.create");
  expect(vmJobs).toHaveLength(2);
  expect(Math.max(...vmJobs.map((j) => j.createdAt))).toBeLessThan(Math.min(...vmJobs.map((j) => j.completedAt!)));

  // second up and refresh: nothing changes
  expect((await up(program(first), options)).summary.same).toBe(11); // ten resources and the stack
  const refreshed = await refresh(options);
  expect(refreshed.steps.filter((s) => s.refresh !== "same").map((s) => s.name)).toEqual([]);

  // in-place changes: VM resize, volume growth, network description; ids kept
  const changed = await up(program({ configurationId: 2, sizeGb: 20, description: "v2" }), options);
  expect(changed.summary.update).toBe(5);
  expect(changed.outputs.vmIds).toEqual(out.vmIds);
  for (const vmId of out.vmIds) {
    expect((await stack.api.getVm({ params: { id: vmId } })).virtualMachine.configurationId).toBe(2);
  }
  for (const volumeId of out.volumeIds)
    expect((await stack.api.getVolume({ params: { id: volumeId } })).sizeGb).toBe(20);
  expect((await stack.api.getNetwork({ params: { id: out.networkId } })).description).toBe("v2");

  // destroy: nothing of the stack is left
  await destroy(options);
  const left = {
    networks: (await stack.api.listNetworks({ query: { search: "mr-" } })).data,
    vms: (await stack.api.listVms({ query: { search: "mr-" } })).data,
    volumes: (await stack.api.listVolumes({ query: { search: "mr-" } })).data,
    teams: (await stack.api.listTeams({ query: { search: "mr-" } })).data,
    users: (await stack.api.listUsers({ query: { search: "mr-dev" } })).data,
    keys: await apiKeysNamed("mr-ci"),
  };
  expect(left).toEqual({ networks: [], vms: [], volumes: [], teams: [], users: [], keys: [] });
});
