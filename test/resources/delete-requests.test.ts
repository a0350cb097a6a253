/**
 * Requests a destroy costs: the deletes the engine sends together go to the bulk delete endpoints (`ids` 1-50), and
 * what a bulk request does not delete (refused, or a batch of one) still goes the single way with its own message.
 */
import { describe, expect, it } from "vitest";
import { Network, Volume } from "../../sdk";
import { destroy, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;

const program = (prefix: string, networks: number, volumes: number) => () => {
  const ids: Record<string, unknown> = {};
  for (let i = 0; i < networks; i++) {
    const name = `${prefix}-net-${i}`;
    ids[`n${i}`] = new Network(`n${i}`, { name, datacenterId: fra.id, networkType: "standard" }).id;
  }
  for (let i = 0; i < volumes; i++) {
    const name = `${prefix}-vol-${i}`;
    ids[`v${i}`] = new Volume(`v${i}`, { name, datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 }).id;
  }
  return ids;
};

const held = async (prefix: string) => ({
  networks: (await stack.api.listNetworks({ query: { search: prefix, limit: 100 } })).data,
  volumes: (await stack.api.listVolumes({ query: { search: prefix, limit: 100 } })).data,
});

describe("destroy of 30 networks and 20 volumes", () => {
  it("deleted each resource with a request of its own: deletes sent together go in bulk requests", async () => {
    const options = stack.options();
    await up(program("dr", 30, 20), options);
    const since = stack.mark();
    await destroy(options);
    const sent = (await stack.requests(since)).map((r) => r.route);
    const count = (route: string) => sent.filter((r) => r === route).length;
    expect(await held("dr-")).toEqual({ networks: [], volumes: [] });
    const deletes =
      count("bulkDeleteNetworks") + count("deleteNetwork") + count("bulkDeleteVolumes") + count("deleteVolume");
    expect(count("bulkDeleteNetworks")).toBeGreaterThan(0);
    expect(count("bulkDeleteVolumes")).toBeGreaterThan(0);
    // 50 deletes before; the harness runs them all at once: a handful of bulk requests.
    expect(deletes).toBeLessThanOrEqual(10);
    expect(sent.length).toBeLessThanOrEqual(0.3 * 50);
  });

  it("a volume the bulk request refuses (attached behind the stack's back) still fails with its own message", async () => {
    const options = stack.options();
    const created = await up(program("dref", 0, 3), options);
    const vm = (
      await stack.api.createVm({
        body: { name: "holder", datacenterId: fra.id, imageId: 1, configurationId: 1, numberOfInstances: 1 },
      })
    )[0];
    const vmId = (await stack.api.jobs.wait(vm.id)).resourceId!;
    const attached = created.outputs.v1 as string;
    await stack.api.jobs.wait(
      (await stack.api.attachVolume({ params: { id: attached }, body: { virtualMachineId: vmId } })).jobId,
    );
    const since = stack.mark();
    const result = await destroy({
      ...options,
      throwOnError: false,
      config: { ...options.config, "cloudinfra:jobTimeoutMs": "3000" },
    });
    const sent = (await stack.requests(since)).map((r) => r.route);
    expect(sent.filter((r) => r === "bulkDeleteVolumes")).toHaveLength(1);
    // The refused one went the single way, which explains it.
    expect(sent).toContain("deleteVolume");
    expect(result.errors.map((e) => e.message).join("\n")).toContain("still attached to virtual machine holder");
    const left = (await held("dref-")).volumes.map((v) => v.id);
    expect(left).toEqual([attached]);
  }, 120_000);
});
