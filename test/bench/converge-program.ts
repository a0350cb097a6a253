/**
 * The converge run's program (test/bench/converge.ts): 31 resources of every kind with either SDK. Each `up` runs it
 * as users do, from a project on disk through the CLI's Node.js language host (a fresh process per run), not as an
 * Automation API inline program: the inline server reports a program that throws a gRPC UNAVAILABLE or CANCELLED
 * error as having run to its end, and the engine then deletes every resource the program did not register.
 */
import { type EveryKindFixtures, type Family, register } from "../e2e/every-kind";

/** How many resources of each kind the program holds (31 in all). */
export const COPIES = { net: 4, vm: 4, gpu: 3, vol: 4, att: 4, group: 4, user: 4, key: 4 };

/** Registers the resources; the stack's outputs are the prefix of their names. */
export function convergeProgram(family: Family, prefix: string, f: EveryKindFixtures): Record<string, unknown> {
  const make = register(family);
  const small = f.configurations[0]!;
  const nets = Array.from({ length: COPIES.net }, (_, i) =>
    make("Network", `net-${i}`, {
      name: `${prefix}-net-${i}`,
      datacenterId: f.datacenterId,
      networkType: "standard",
    }),
  );
  const vms = Array.from({ length: COPIES.vm }, (_, i) =>
    make("VirtualMachine", `vm-${i}`, {
      name: `${prefix}-vm-${i}`,
      datacenterId: f.datacenterId,
      imageId: 1,
      configurationId: small.id,
      networkInterfaces: [{ networkId: nets[i % nets.length]!.id }],
    }),
  );
  for (let i = 0; i < COPIES.gpu; i++) {
    make("GpuVirtualMachine", `gpu-${i}`, { name: `${prefix}-gpu-${i}`, ...f.gpuOffer, gpuCount: 1 });
  }
  const vols = Array.from({ length: COPIES.vol }, (_, i) =>
    make("Volume", `vol-${i}`, {
      name: `${prefix}-vol-${i}`,
      datacenterId: f.datacenterId,
      volumeTypeId: f.volumeTypeId,
      sizeGb: 10,
    }),
  );
  for (let i = 0; i < COPIES.att; i++) {
    make("VolumeAttachment", `att-${i}`, { volumeId: vols[i]!.id, virtualMachineId: vms[i]!.id });
  }
  for (let i = 0; i < COPIES.group; i++) make("ResourceGroup", `group-${i}`, { name: `${prefix}-group-${i}` });
  for (let i = 0; i < COPIES.user; i++) make("User", `user-${i}`, { email: `${prefix}-user-${i}@example.com` });
  for (let i = 0; i < COPIES.key; i++) make("ApiKey", `key-${i}`, { name: `${prefix}-key-${i}`, expiresInDays: 60 });
  return { prefix };
}
