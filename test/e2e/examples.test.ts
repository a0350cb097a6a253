/**
 * Every example through the real CLI against the emulator: up, preview with no changes, refresh with no changes,
 * destroy, and the emulator holds nothing of the stack afterwards.
 */
import { expect, it } from "vitest";
import type { PlainConfig } from "../../tools/pulumi-cli";
import { inventory } from "../examples/helpers";
import { cliWorld, describeCli, stateResources, type CliWorld } from "./helpers";

const world = await cliWorld();

// `pulumi up` in a copy of each example's directory: the CLI runs its index.ts through the language host.
describeCli("every example through the real CLI", () => {
  it.each<[string, (w: CliWorld) => PlainConfig]>([
    ["quickstart", (w) => w.config],
    ["gpu-training", (w) => w.config],
    ["drift", (w) => w.config],
    // team-onboarding signs in (an ApiKey needs a two-factor session): no API key in its config
    ["team-onboarding", (w) => w.signIn],
  ])("%s: up, preview and refresh with no changes, destroy leaves nothing in the API", async (name, config) => {
    const before = await inventory(world);
    const stack = await world.stack(name, undefined, config(world));

    const created = await stack.up({ color: "never" });
    expect(created.summary.result).toBe("succeeded");
    expect(Object.keys(created.summary.resourceChanges ?? {})).toEqual(["create"]);
    const resources = await stateResources(stack);
    expect(resources.length).toBeGreaterThan(0);
    expect(created.summary.resourceChanges?.create).toBe(resources.length + 1); // and the stack
    // every resource the state records exists in the API
    const holding = await inventory(world);
    const added = Object.values(holding).flat().length - Object.values(before).flat().length;
    expect(added).toBeGreaterThan(0);

    const planned = await stack.preview({ color: "never", expectNoChanges: true });
    expect(Object.keys(planned.changeSummary)).toEqual(["same"]);

    const refreshed = await stack.refresh({ color: "never", expectNoChanges: true });
    expect(refreshed.summary.result).toBe("succeeded");
    expect(await inventory(world)).toEqual(holding);

    const destroyed = await stack.destroy({ color: "never" });
    expect(Object.keys(destroyed.summary.resourceChanges ?? {})).toEqual(["delete"]);
    expect(await stateResources(stack)).toEqual([]);
    expect(await inventory(world)).toEqual(before);
  });
});
