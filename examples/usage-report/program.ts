import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

/** The stack outputs of the usage report. */
export interface UsageReportOutputs {
  /** The month reported (`YYYY-MM`): last month, unless the `month` config says otherwise. */
  month: string;
  /** The entity's usage of that month, as the API reports it (summary, by VM size category, by region). */
  usage: cloudinfra.GetEntityUsageResult;
  /** This month's VM metrics by VM size category (tiers, regions, data centers, counts and trends). */
  vmMetricsByCategory: pulumi.Output<cloudinfra.GetVirtualMachineMetricsResult["categories"]>;
  /** The VMs with an interface on the network, in the API's order. */
  networkVms: pulumi.Output<cloudinfra.GetNetworkVirtualMachinesResult["virtualMachines"]>;
  /** The VMs the volume can be attached to (its data center's), with their current and maximum volume counts. */
  attachableVms: pulumi.Output<cloudinfra.GetAttachableVirtualMachinesResult["virtualMachines"]>;
  /** The entity's API keys: name and status only (never a secret), by name. */
  apiKeys: pulumi.Output<{ name: string; status: string }[]>;
}

/**
 * A read-only report of the entity: it creates nothing, so `pulumi up` only reads and exports, and every run (a
 * schedule in CI) reports the API as it is then.
 *
 * Stack config: `networkName` and `volumeName` (required: the network and the volume to report on, by exact name),
 * `month` (optional, `YYYY-MM`: the month whose usage to export; default last month).
 */
export async function usageReport(): Promise<UsageReportOutputs> {
  const config = new pulumi.Config();
  const networkName = config.require("networkName");
  const volumeName = config.require("volumeName");

  // The months with usage to read, most recent (the current one) first: last month is the second.
  const { months } = await cloudinfra.getUsageMonths();
  const month = config.get("month") ?? months[1];
  if (month === undefined) {
    throw new Error(`the API has no usage of last month to read (months: ${months.join(", ")}): set \`month\``);
  }

  const metrics = cloudinfra.getVirtualMachineMetricsOutput({});
  const keys = cloudinfra.getApiKeysOutput({});
  return {
    month,
    usage: await cloudinfra.getEntityUsage({ month }),
    vmMetricsByCategory: metrics.categories,
    networkVms: cloudinfra.getNetworkVirtualMachinesOutput({ name: networkName }).virtualMachines,
    attachableVms: cloudinfra.getAttachableVirtualMachinesOutput({ name: volumeName }).virtualMachines,
    apiKeys: keys.apiKeys.apply((list) => list.map((k) => ({ name: k.name, status: k.status }))),
  };
}
