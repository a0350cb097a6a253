/**
 * The lifecycle table (table.ts) on the test harness: the dynamic SDK's resources through the real dynamic-provider
 * host, with the harness playing the engine (tools/harness).
 */
import { describe } from "vitest";
import { cliWorld } from "../e2e/helpers";
import { harnessStack, lifecycleConfig } from "./hosts";
import { describeLifecycle, lifecycleFixtures } from "./run";
import { lifecycleTable } from "./table";

const world = await cliWorld();
const table = lifecycleTable(await lifecycleFixtures(world));

describe("the lifecycle table on the test harness (dynamic SDK)", () => {
  describeLifecycle(world, table, {
    timeout: 120_000,
    open: async () => harnessStack(world.options({ config: lifecycleConfig(world) })),
  });
});
