/**
 * The lifecycle table (table.ts) on the provider plugin's gRPC server in this process, driven by a small engine of our
 * own (hosts.ts `rpcStack`) over the driver of test/plugin: fast, and without the CLI.
 */
import { afterAll, beforeAll, describe } from "vitest";
import { closeClients } from "../../provider/resources";
import { cliWorld } from "../e2e/helpers";
import { startDriver, type Driver } from "../plugin/driver";
import { lifecycleConfig, pluginSettings, rpcStack } from "./hosts";
import { describeLifecycle, lifecycleFixtures } from "./run";
import { lifecycleTable } from "./table";

const world = await cliWorld();
const table = lifecycleTable(await lifecycleFixtures(world));

let driver: Driver;
beforeAll(async () => {
  driver = await startDriver();
  await driver.configure(pluginSettings(lifecycleConfig(world)));
});
afterAll(async () => {
  driver.close();
  await closeClients();
});

describe("the lifecycle table on the plugin through the gRPC driver", () => {
  describeLifecycle(world, table, { timeout: 120_000, open: async () => rpcStack(driver) });
});
