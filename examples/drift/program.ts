import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

/** The emulator's fra-1 data center (its catalog is fixed); on the real API, set `datacenterId`. */
const FRA_1 = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";

/** The stack outputs of the drift example: the properties worth changing by hand. */
export interface DriftOutputs {
  /** The network (UUID). */
  networkId: pulumi.Output<string>;
  /** The network's description as last read (`pulumi refresh` shows a change made by hand). */
  networkDescription: pulumi.Output<string | undefined>;
  /** The VM (UUID). */
  vmId: pulumi.Output<string>;
  /** The VM's name as last read. */
  vmName: pulumi.Output<string>;
  /** The VM's power state as last read: `running`, or `stopped` after someone stopped it. */
  vmPowerState: pulumi.Output<"running" | "stopped" | null>;
}

/**
 * Drift: a network and a VM on it whose description, name and power state the program declares. Change them outside
 * Pulumi (the API, a console), then `pulumi refresh` reads the change into the stack and the next `pulumi up` puts
 * back what the program declares.
 *
 * Stack config (all optional): `name` (prefix of the names, default `drift`), `datacenterId` (default the emulator's
 * fra-1), `imageId` (default 1), `configurationId` (default 1).
 */
export function drift(): DriftOutputs {
  const config = new pulumi.Config();
  const name = config.get("name") ?? "drift";
  const datacenterId = config.get("datacenterId") ?? FRA_1;

  const network = new cloudinfra.Network("network", {
    name: `${name}-net`,
    datacenterId,
    networkType: "standard",
    description: "managed by Pulumi",
  });

  const vm = new cloudinfra.VirtualMachine("vm", {
    name: `${name}-vm`,
    datacenterId,
    imageId: config.getNumber("imageId") ?? 1,
    configurationId: config.getNumber("configurationId") ?? 1,
    powerState: "running",
    networkInterfaces: [{ networkId: network.id, primary: true }],
  });

  return {
    networkId: network.id,
    networkDescription: network.description,
    vmId: vm.id,
    vmName: vm.name,
    vmPowerState: vm.powerState,
  };
}
