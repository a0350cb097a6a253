import { CloudinfraGuard } from "@cloudinfra/pulumi/policy";

// Every policy of the pack, advisory unless said otherwise. Each setting is a level, or the level and the policy's
// config; a stack can still change levels and config with `--policy-pack-config` (see policy-config.json).
new CloudinfraGuard({
  all: "advisory",
  // Blocking: GPU boxes above 4 GPUs and VMs above 8 vCPU / 32 GB RAM / 200 GB disk (the emulator's `l` size).
  maxGpuCount: { enforcementLevel: "mandatory", max: 4 },
  maxVmSize: { enforcementLevel: "mandatory", maxCpu: 8, maxRam: 32, maxDisk: 200 },
  maxReportedVmSize: { enforcementLevel: "mandatory", maxCpu: 8, maxRam: 32, maxDisk: 200 },
  // Fixed instead of reported: a key asking for more than 90 days gets 90.
  maxApiKeyLifetime: { enforcementLevel: "remediate", maxDays: 90 },
  // Reported only: no public IPs except on a VM named `bastion`; volumes up to 500 GB; at most 10 VMs per stack.
  noPublicIp: { allowedNames: ["bastion"] },
  maxVolumeSize: { maxSizeGb: 500 },
  maxInstances: { maxVirtualMachines: 10, maxGpuVirtualMachines: 2 },
});
