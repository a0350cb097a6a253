import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

/** The emulator's fra-1 data center (its catalog is fixed); on the real API, set `datacenterId`. */
const FRA_1 = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";

/** The stack outputs of the quickstart. */
export interface QuickstartOutputs {
  /** The network (UUID). */
  networkId: pulumi.Output<string>;
  /** The network's gateway address. */
  gateway: pulumi.Output<string>;
  /** The virtual machine (UUID). */
  vmId: pulumi.Output<string>;
  /** The VM's status as the API reports it (Running once created). */
  vmStatus: pulumi.Output<string>;
  /** The VM's size as the API reports it. */
  vmSize: pulumi.Output<{ cpu: number; ram: number; disk: number }>;
  /** The VM's address on the network. */
  privateIp: pulumi.Output<string | null>;
  /** The volume (UUID). */
  volumeId: pulumi.Output<string>;
  /** The volume's size in GB. */
  volumeSizeGb: pulumi.Output<number>;
  /** The attachment (`<volumeId>:<virtualMachineId>`). */
  attachmentId: pulumi.Output<string>;
}

/**
 * The quickstart: a private network, a virtual machine on it, and a block storage volume attached to the VM.
 *
 * Stack config (all optional; the defaults match the emulator's catalog): `name` (prefix of every name, default
 * `quickstart`), `datacenterId` (default fra-1), `imageId` (default 1, ubuntu-24.04), `configurationId` (default 1,
 * 2 vCPU / 4 GB), `volumeTypeId` (default 1, ssd), `volumeSizeGb` (default 20), `teamId` (a resource group for the
 * VM and the volume, default none).
 */
export function quickstart(): QuickstartOutputs {
  const config = new pulumi.Config();
  const name = config.get("name") ?? "quickstart";
  const datacenterId = config.get("datacenterId") ?? FRA_1;
  const teamId = config.getNumber("teamId");

  const network = new cloudinfra.Network("network", {
    name: `${name}-net`,
    datacenterId,
    networkType: "standard",
    description: "quickstart network, managed by Pulumi",
    cidrBlock: "10.20.0.0/24",
  });

  const vm = new cloudinfra.VirtualMachine("vm", {
    name: `${name}-vm`,
    datacenterId,
    imageId: config.getNumber("imageId") ?? 1,
    configurationId: config.getNumber("configurationId") ?? 1,
    teamId,
    networkInterfaces: [{ networkId: network.id, primary: true }],
  });

  const volume = new cloudinfra.Volume("data", {
    name: `${name}-data`,
    datacenterId,
    volumeTypeId: config.getNumber("volumeTypeId") ?? 1,
    sizeGb: config.getNumber("volumeSizeGb") ?? 20,
    teamId,
  });

  const attachment = new cloudinfra.VolumeAttachment("data-on-vm", {
    volumeId: volume.id,
    virtualMachineId: vm.id,
  });

  return {
    networkId: network.id,
    gateway: network.gateway,
    vmId: vm.id,
    vmStatus: vm.status,
    vmSize: pulumi.all([vm.cpu, vm.ram, vm.disk]).apply(([cpu, ram, disk]) => ({ cpu, ram, disk })),
    privateIp: vm.privateIp,
    volumeId: volume.id,
    volumeSizeGb: volume.sizeGb,
    attachmentId: attachment.id,
  };
}
