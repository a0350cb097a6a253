/**
 * Interruption through the real CLI: SIGINT during an `up` that creates many resources, then `refresh` and `up`
 * converge with no duplicate and no orphan in the API.
 */
import { CommandError } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { cliWorld, describeCli, stateResources } from "./helpers";

// jobs slow enough that an up of many networks is still running when it is interrupted
const world = await cliWorld({ jobDurationMs: 1500 });
const [fra] = world.datacenters;
const COUNT = 16;

async function program() {
  const networks = Array.from(
    { length: COUNT },
    (_, i) => new cloudinfra.Network(`net-${i}`, { name: `int-${i}`, datacenterId: fra.id, networkType: "standard" }),
  );
  return { ids: networks.map((n) => n.id) };
}

/** The networks the API holds with the test's prefix: id by name, and the names held more than once. */
async function inApi(): Promise<{ byName: Map<string, string>; duplicates: string[] }> {
  const { data } = await world.api.listNetworks({ query: { search: "int-", limit: 100 } });
  const byName = new Map<string, string>();
  const duplicates: string[] = [];
  for (const network of data) {
    if (byName.has(network.name)) duplicates.push(network.name);
    byName.set(network.name, network.id);
  }
  return { byName, duplicates };
}

describeCli("interruption through the real CLI", () => {
  it("SIGINT during an up of many networks, then refresh and up: every network once, all in the stack", async () => {
    const stack = await world.stack("quickstart", program);
    const abort = new AbortController();
    let created = 0;
    const interrupted = await stack
      .up({
        color: "never",
        parallel: 4,
        signal: abort.signal,
        onEvent: (event) => {
          const meta = event.resOutputsEvent?.metadata;
          if (meta?.type.startsWith("pulumi-nodejs:dynamic/") && meta.op === "create" && ++created === 2) {
            abort.abort(); // the CLI receives SIGINT, as from Ctrl-C in a terminal or a CI job being cancelled
          }
        },
      })
      .catch((e: unknown) => e);
    expect(interrupted).toBeInstanceOf(CommandError);
    const afterInterrupt = await inApi();
    expect(afterInterrupt.byName.size).toBeGreaterThanOrEqual(2);
    expect(afterInterrupt.byName.size).toBeLessThan(COUNT);

    await stack.refresh({ color: "never" });
    const converged = await stack.up({ color: "never" });
    expect(converged.summary.result).toBe("succeeded");

    const { byName, duplicates } = await inApi();
    expect(duplicates).toEqual([]);
    expect(byName.size).toBe(COUNT);
    const inState = new Map((await stateResources(stack)).map((r) => [r.outputs?.name as string, r.id]));
    expect(inState).toEqual(byName);
    await stack.preview({ color: "never", expectNoChanges: true });

    await stack.destroy({ color: "never" });
    expect((await inApi()).byName.size).toBe(0);
  });
});
