/**
 * The lifecycle table (table.ts) as Pulumi YAML programs, run by Pulumi's own YAML language host through the real
 * CLI: the host knows the provider by its schema alone, so a wrong type, an `Any` or a bad default shows here.
 */
import { cliWorld } from "../e2e/helpers";
import { describeYaml, root } from "../e2e/yaml-host";
import { cliYamlStack } from "./hosts";
import { describeLifecycle, lifecycleFixtures } from "./run";
import { lifecycleTable } from "./table";

// Only the project's plugin entry may serve cloudinfra.
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
const world = await cliWorld();
const table = lifecycleTable(await lifecycleFixtures(world));

describeYaml("the lifecycle table as Pulumi YAML (real CLI, plugin by its schema)", () => {
  describeLifecycle(world, table, { timeout: 180_000, schemaOnly: true, open: () => cliYamlStack(world, root) });
});
