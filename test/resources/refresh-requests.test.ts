/**
 * Requests a stack costs. Regression of issue 9: refresh read every resource by id (N requests for N resources), a
 * `GET .../volume-sizes` went before every volume create and a `GET` before every volume delete.
 */
import { describe, expect, it } from "vitest";
import { Network, Volume } from "../../sdk";
import { destroy, refresh, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;

const program = () => {
  const ids: Record<string, unknown> = {};
  for (let i = 0; i < 30; i++) {
    ids[`n${i}`] = new Network(`n${i}`, { name: `rr-net-${i}`, datacenterId: fra.id, networkType: "standard" }).id;
  }
  for (let i = 0; i < 20; i++) {
    ids[`v${i}`] = new Volume(`v${i}`, { name: `rr-vol-${i}`, datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 }).id;
  }
  return ids;
};

describe("requests of a stack of 30 networks and 20 volumes", () => {
  it("refresh read each resource by id: it reads them through the list endpoints, and still sees drift and deletion", async () => {
    const options = stack.options();
    const created = await up(program, options);
    const routes = async (since: number) => (await stack.requests(since)).map((r) => r.route);

    const since = stack.mark();
    const quiet = await refresh(options);
    expect(quiet.steps.filter((s) => s.refresh !== undefined && s.refresh !== "same")).toEqual([]);
    const sent = await routes(since);
    expect(sent.filter((r) => r === "getNetwork" || r === "getVolume")).toEqual([]);
    expect(sent.filter((r) => r === "listNetworks").length).toBeLessThanOrEqual(3);
    expect(sent.filter((r) => r === "listVolumes").length).toBeLessThanOrEqual(3);
    expect(sent.length).toBeLessThanOrEqual(0.1 * 50);

    // Drift and deletion behind the stack's back still show, read from the lists.
    const edited = created.outputs.n3 as string;
    await stack.api.updateNetwork({ params: { id: edited }, body: { description: "by hand" } });
    const deleted = created.outputs.v5 as string;
    await stack.api.jobs.wait((await stack.api.deleteVolume({ params: { id: deleted } })).jobId);
    const drifted = await refresh(options);
    expect(drifted.step("n3").refresh).toBe("changed");
    expect(drifted.step("n3").outputs?.description).toBe("by hand");
    expect(drifted.step("v5").refresh).toBe("gone");
    expect(drifted.steps.filter((s) => s.refresh === "changed" || s.refresh === "gone")).toHaveLength(2);

    await destroy(options);
    expect(
      (await stack.api.listNetworks({ query: { search: "rr-", limit: 100 } })).data.filter((n) =>
        n.name.startsWith("rr-"),
      ),
    ).toEqual([]);
  });
});
