/**
 * Requests a refresh of VMs costs. Regression: refresh read every VM by id (and its list item again for its
 * addresses): N requests or more for N VMs. Now through the VM list pages, a detail only for a VM whose list item shows
 * a change since its outputs were read; drift and deletion behind the stack's back still show.
 */
import { describe, expect, it } from "vitest";
import { Network, VirtualMachine } from "../../sdk";
import { destroy, refresh, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;

const program = () => {
  const net = new Network("net", { name: "vr-net", datacenterId: fra.id, networkType: "standard" });
  const ids: Record<string, unknown> = {};
  for (let i = 0; i < 12; i++) {
    ids[`vm${i}`] = new VirtualMachine(`vm${i}`, {
      name: `vr-vm-${i}`,
      datacenterId: fra.id,
      imageId: 1,
      configurationId: 1,
      networkInterfaces: [{ networkId: net.id }],
    }).id;
  }
  return ids;
};

describe("refresh of 12 VMs", () => {
  it("read each VM by id and its list item again: it reads the list pages, and still sees drift and deletion", async () => {
    const options = stack.options();
    const created = await up(program, options);
    const since = stack.mark();
    const quiet = await refresh(options);
    expect(quiet.steps.filter((s) => s.refresh !== undefined && s.refresh !== "same")).toEqual([]);
    const sent = (await stack.requests(since)).map((r) => r.route);
    expect(sent.filter((r) => r === "getVm" || r === "getVmSshKey")).toEqual([]);
    expect(sent.filter((r) => r === "listVms").length).toBeLessThanOrEqual(3);
    expect(sent.length).toBeLessThanOrEqual(0.3 * 13);

    const renamed = created.outputs.vm2 as string;
    await stack.api.updateVm({ params: { id: renamed }, body: { name: "vr-renamed" } });
    const stopped = created.outputs.vm4 as string;
    await stack.api.stopVm({ params: { id: stopped } });
    const deleted = created.outputs.vm7 as string;
    await stack.api.jobs.wait((await stack.api.deleteVm({ params: { id: deleted } })).jobId);
    const since2 = stack.mark();
    const drifted = await refresh(options);
    expect(drifted.step("vm2").refresh).toBe("changed");
    expect(drifted.step("vm2").outputs?.name).toBe("vr-renamed");
    expect(drifted.step("vm4").refresh).toBe("changed");
    expect(drifted.step("vm4").outputs?.powerState).toBe("stopped");
    expect(drifted.step("vm7").refresh).toBe("gone");
    expect(drifted.steps.filter((s) => s.refresh === "changed" || s.refresh === "gone")).toHaveLength(3);
    // The detail only of what changed (the renamed and the stopped VM, when stopping moves updatedAt), the deleted
    // one read by id (a 404: absence from the list alone is not deletion).
    const sent2 = await stack.requests(since2);
    expect(sent2.filter((r) => r.route === "getVm").length).toBeLessThanOrEqual(3);

    await destroy(options);
  }, 120_000);
});
