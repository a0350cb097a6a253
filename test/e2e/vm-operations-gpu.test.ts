/**
 * GpuVirtualMachine operations through the real CLI (dynamic SDK): a changed `resetTrigger` sends one POST reset and
 * keeps the GPU VM; `shutdownBeforeDelete` stops it before the DELETE on destroy. The emulator's request log is the
 * evidence.
 */
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { cliWorld, describeCli } from "./helpers";

const world = await cliWorld();
/** A GPU combination the emulator offers now. */
const gpuOffer = (await world.api.gpuInventory({ query: {} })).flatMap((s) =>
  s.availability.flatMap((a) =>
    ([1, 2, 4, 8] as const)
      .filter((n) => a.gpuCounts[n].available)
      .map((n) => ({ seriesId: s.seriesId, datacenterId: a.datacenterId, gpuCount: n })),
  ),
)[0]!;

/** The writes about one GPU VM since `mark`, as `METHOD suffix` (the path after its id, e.g. `/reset`). */
async function writesAbout(id: string, mark: number): Promise<string[]> {
  const prefix = `/v1/resource/gpu/${id}`;
  return (await world.requests(mark))
    .filter((r) => r.method !== "GET" && r.path.split("?")[0]!.startsWith(prefix))
    .map((r) => `${r.method} ${r.path.split("?")[0]!.slice(prefix.length) || "/"}`);
}

describeCli("GpuVirtualMachine operations: resetTrigger and shutdownBeforeDelete (real CLI)", () => {
  it("resets in place once when the trigger changes, and stops before the delete", async () => {
    let resetTrigger = "1";
    const stack = await world.stack("quickstart", async () => ({
      id: new cloudinfra.GpuVirtualMachine("gpu", {
        name: "ops-gpu",
        ...gpuOffer,
        shutdownBeforeDelete: true,
        resetTrigger,
      }).id,
    }));
    let mark = world.mark();
    const id = (await stack.up({ color: "never" })).outputs.id!.value as string;
    expect(await writesAbout(id, mark)).not.toContain("POST /reset");

    resetTrigger = "2";
    mark = world.mark();
    const reset = await stack.up({ color: "never" });
    expect(reset.outputs.id!.value).toBe(id);
    expect(await writesAbout(id, mark)).toEqual(["POST /reset"]);
    await stack.preview({ color: "never", expectNoChanges: true });

    mark = world.mark();
    await stack.destroy({ color: "never" });
    expect(await writesAbout(id, mark)).toEqual(["POST /stop", "DELETE /"]);
  });
});
