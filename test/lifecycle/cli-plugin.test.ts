/**
 * The lifecycle table (table.ts) through the real CLI with the provider plugin's resources (`cloudinfra:index:<Kind>`),
 * the plugin found on PATH as the engine finds an installed one.
 */
import { cliWorld, describeCli } from "../e2e/helpers";
import { useLauncher } from "../plugin/launcher";
import { cliSdkStack } from "./hosts";
import { describeLifecycle, lifecycleFixtures } from "./run";
import { lifecycleTable } from "./table";

useLauncher();
const world = await cliWorld();
const table = lifecycleTable(await lifecycleFixtures(world));

describeCli("the lifecycle table through the real CLI (provider plugin)", () => {
  describeLifecycle(world, table, { timeout: 180_000, open: () => cliSdkStack(world, "plugin") });
});
