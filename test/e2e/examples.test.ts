/**
 * Every example through the real CLI against the emulator: up, preview with no changes, refresh with no changes,
 * destroy, and the emulator holds nothing of the stack afterwards.
 */
import type { PulumiFn } from "@pulumi/pulumi/automation";
import { afterAll, expect, it } from "vitest";
import { drift } from "../../examples/drift/program";
import { gpuTraining } from "../../examples/gpu-training/program";
import { quickstart } from "../../examples/quickstart/program";
import { teamOnboarding } from "../../examples/team-onboarding/program";
import { closeClients } from "../../provider/resources/framework";
import { inventory } from "../examples/helpers";
import { cliWorld, describeCli, stateResources, type CliWorld } from "./helpers";

const world = await cliWorld();
// gpu-training's inventory lookup runs in this process (the program runs inline), with clients of its own
afterAll(() => closeClients());

describeCli("every example through the real CLI", () => {
  it.each<[string, PulumiFn, (w: CliWorld) => Record<string, string | { secret: string }>]>([
    ["quickstart", async () => quickstart(), (w) => w.config],
    ["gpu-training", async () => gpuTraining(), (w) => w.config],
    ["drift", async () => drift(), (w) => w.config],
    [
      "team-onboarding",
      async () => teamOnboarding(),
      (w) => {
        const admin = w.emulator.bootstrap.users.admin;
        return {
          "cloudinfra:baseUrl": w.emulator.baseUrl,
          "cloudinfra:email": admin.email,
          "cloudinfra:password": { secret: admin.password },
          "cloudinfra:totpSecret": { secret: admin.totpSecret },
          "cloudinfra:pollIntervalMs": "20",
        };
      },
    ],
  ])(
    "%s: up, preview and refresh with no changes, destroy leaves nothing in the API",
    async (name, program, config) => {
      const before = await inventory(world);
      const stack = await world.stack(name, program, config(world));

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
    },
  );
});
