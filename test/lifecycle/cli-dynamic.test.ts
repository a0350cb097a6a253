/** The lifecycle table (table.ts) through the real CLI with the dynamic SDK's resources (sdk/). */
import { cliWorld, describeCli } from "../e2e/helpers";
import { cliSdkStack } from "./hosts";
import { describeLifecycle, lifecycleFixtures } from "./run";
import { lifecycleTable } from "./table";

const world = await cliWorld();
const table = lifecycleTable(await lifecycleFixtures(world));

describeCli("the lifecycle table through the real CLI (dynamic SDK)", () => {
  describeLifecycle(world, table, { timeout: 180_000, open: () => cliSdkStack(world, "dynamic") });
});
