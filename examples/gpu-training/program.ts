import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

/** The stack outputs of the GPU training box. */
export interface GpuTrainingOutputs {
  /** The GPU VM (UUID). */
  gpuVmId: pulumi.Output<string>;
  /** The box's series, data center and GPU count, as the API reports them. */
  combination: pulumi.Output<{ series: string; datacenter: string; gpuCount: number }>;
  /** Status as the API reports it (Running once created). */
  status: pulumi.Output<string>;
  /** Public IPv4 address, once provisioned. */
  publicIp: pulumi.Output<string | null>;
  /** JupyterLab of the box, once it has its public IP. */
  jupyterLabUrl: pulumi.Output<string | null>;
  /**
   * Private SSH key generated at creation (secret: `pulumi stack output --show-secrets sshPrivateKey`); read because
   * the box sets `exposePrivateKey: true`.
   */
  sshPrivateKey: pulumi.Output<string | undefined>;
}

/**
 * A GPU training box: asks the GPU inventory what can be ordered now and creates a GPU VM with the smallest
 * available combination that fits (at least `gpuCount` GPUs of the series, the preferred data center first). Once
 * created, the box keeps its combination even when the inventory changes.
 *
 * Stack config (all optional): `name` (default `gpu-training`), `gpuSeries` (series code, default `a100`),
 * `gpuCount` (minimum number of GPUs, default 4), `preferredDatacenterId` (a data center UUID to use when it has a
 * fitting combination, default none: any data center), `imageName` (default: the cloud's default image).
 */
export async function gpuTraining(): Promise<GpuTrainingOutputs> {
  const config = new pulumi.Config();
  const name = config.get("name") ?? "gpu-training";
  const series = config.get("gpuSeries") ?? "a100";
  const minimum = config.getNumber("gpuCount", { min: 1, max: 8 }) ?? 4;
  const preferred = config.get("preferredDatacenterId");

  // Read at each `pulumi up` and `pulumi preview`: the inventory changes as other customers order GPUs.
  const { available } = await cloudinfra.getGpuInventory({ code: series });
  const fitting = available
    .filter((c) => c.gpuCount >= minimum)
    .map((c, order) => ({ c, order }))
    .sort(
      (a, b) =>
        Number(b.c.datacenterId === preferred) - Number(a.c.datacenterId === preferred) ||
        a.c.gpuCount - b.c.gpuCount ||
        a.order - b.order,
    );
  if (fitting.length === 0) {
    const now = available.map((c) => `${c.gpuCount}x ${c.seriesCode} in ${c.datacenterName}`).join(", ");
    throw new Error(
      `No ${series} GPU VM with at least ${minimum} GPUs can be ordered now. Available: ${now || "none of that series"}.`,
    );
  }
  const choice = fitting[0].c;

  const box = new cloudinfra.GpuVirtualMachine(
    "box",
    {
      name,
      datacenterId: choice.datacenterId,
      seriesId: choice.seriesId,
      gpuCount: choice.gpuCount,
      imageName: config.get("imageName"),
      // The key is read only on request: this program exports it.
      exposePrivateKey: true,
    },
    // The inventory moves all the time: a later pick must not replace a box that exists (each of these replaces it).
    { ignoreChanges: ["datacenterId", "seriesId", "gpuCount"] },
  );

  return {
    gpuVmId: box.id,
    combination: pulumi
      .all([box.series, box.datacenter, box.gpuCount])
      .apply(([series, datacenter, gpuCount]) => ({ series: series.name, datacenter: datacenter.name, gpuCount })),
    status: box.status,
    publicIp: box.publicIp,
    jupyterLabUrl: box.jupyterLabUrl,
    sshPrivateKey: box.sshPrivateKey,
  };
}
