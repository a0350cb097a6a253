import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

/** The emulator's fra-1 data center (its catalog is fixed); on the real API, set `datacenterId`. */
const FRA_1 = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";

/** The stack outputs of one environment. */
export interface TeamOutputs {
  /** The environment's network (UUID). */
  networkId: pulumi.Output<string>;
  /** The environment's VM (UUID). */
  vmId: pulumi.Output<string>;
  /** The VM's data volume (UUID). */
  volumeId: pulumi.Output<string>;
  /** The private SSH key the cloud generated for the VM: a secret, encrypted in the backend by the stack's secrets provider. */
  sshPrivateKey: pulumi.Output<string | undefined>;
}

/**
 * One environment of the team's project: a network, a VM on it (its generated SSH key read once, as a secret), and a
 * data volume attached to it. Every stack of the project (dev, staging, prod, …) deploys the same program; names are
 * prefixed with `<project>-<stack>`, so stacks never collide in the API.
 *
 * Stack config (all optional; the defaults match the emulator's catalog): `datacenterId` (default fra-1), `imageId`
 * (default 1), `configurationId` (default 1), `volumeSizeGb` (default 20).
 */
export function team(): TeamOutputs {
  const config = new pulumi.Config();
  const prefix = `${pulumi.getProject()}-${pulumi.getStack()}`;
  const datacenterId = config.get("datacenterId") ?? FRA_1;

  const network = new cloudinfra.Network("network", {
    name: `${prefix}-net`,
    datacenterId,
    networkType: "standard",
    description: `${prefix}: managed by Pulumi`,
  });

  const vm = new cloudinfra.VirtualMachine("app", {
    name: `${prefix}-app`,
    datacenterId,
    imageId: config.getNumber("imageId") ?? 1,
    configurationId: config.getNumber("configurationId") ?? 1,
    networkInterfaces: [{ networkId: network.id, primary: true }],
    exposePrivateKey: true,
  });

  const volume = new cloudinfra.Volume("data", {
    name: `${prefix}-data`,
    datacenterId,
    volumeTypeId: 1,
    sizeGb: config.getNumber("volumeSizeGb") ?? 20,
  });

  new cloudinfra.VolumeAttachment("data-on-app", { volumeId: volume.id, virtualMachineId: vm.id });

  return { networkId: network.id, vmId: vm.id, volumeId: volume.id, sshPrivateKey: vm.sshPrivateKey };
}
