/**
 * Lost answers through the real CLI with the plugin resources (see lost-answers.ts): every kind created, changed
 * and destroyed while the emulator carries requests out and loses their answers: 0 duplicates, 0 leaks, the next up
 * converges. Two passes: every mutating route's first answer lost, then a fifth of them at random (emulator seed 2).
 */
import { expect, it } from "vitest";
import { cliWorld, describeCli } from "./helpers";
import { everyRouteOnce, lostAnswersWorld, lostOnce, randomLosses } from "./lost-answers";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld({ seed: 2 });
const scenario = await lostAnswersWorld(world, "plugin");

describeCli("lost answers, every kind, plugin resources", () => {
  it("every mutating route's first answer lost: the next up converges, no duplicate, no leak", async () => {
    const report = await scenario.pass("la-plg-once", everyRouteOnce, { change: true });
    console.log("lost answers (plugin, every route once):", JSON.stringify(report, null, 1));
    // Every kind's create lost its answer, and so did attach, resizes and deletes.
    expect(report.fired).toEqual(expect.arrayContaining(lostOnce));
    // The first VM create was answered 503 without effect: sent once more, that answer lost too; one VM made.
    expect(report.vmCreates).toEqual([503, expect.toBeOneOf([503, 0])]);
    expect(report.vmsAfterFirstUp).toBe(1);
  });

  it("a fifth of mutating answers lost at random: the next up converges, no duplicate, no leak", async () => {
    const report = await scenario.pass("la-plg-rand", randomLosses, { change: false });
    console.log("lost answers (plugin, random):", JSON.stringify(report, null, 1));
    expect(report.fired.length).toBeGreaterThan(0);
  });

  it(
    "a replacement's delete that fails under --continue-on-error: the up never ends (engine), the next up repairs",
    {
      timeout: 300_000,
    },
    () => scenario.failedDeleteBeforeReplace("la-plg-dbr"),
  );
});
