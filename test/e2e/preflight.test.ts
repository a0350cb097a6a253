/**
 * Preview predicts what `up` would be refused (provider/resources/preflight.ts), through the real CLI against the
 * emulator, with both SDKs driven by one scenario list (preflight-scenarios.ts): one stack per SDK, and for each check
 * in turn a preview that fails with the message (naming the property, what the API holds and the fix; a warning for
 * the stack's key Expiring) while the emulator's request log shows no write, then the same plan with the cause
 * removed, which previews and ups cleanly, and what the API then holds.
 */
import { CommandError, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { cliWorld, describeCli } from "./helpers";
import { basePlan, programOf, scenarios, type ScenarioRun, type Sdk } from "./preflight-scenarios";
import { useLauncher } from "../plugin/launcher";
import { rememberedSessionToken } from "../helpers/session-token";

useLauncher();
const world = await cliWorld({ jobDurationMs: 50 });
const { admin, member } = world.emulator.bootstrap.users;

/** The writes (anything but GET) the emulator received since `mark`. */
const writesSince = async (mark: number) =>
  (await world.requests(mark)).filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);

/** A session token of `user` (the test's own sign-in: stacks never sign in here), and a client of that session. */
async function signedIn(user: typeof admin) {
  const token = await rememberedSessionToken(world.emulator, user);
  return { token, client: new CloudClient({ baseUrl: world.emulator.baseUrl, auth: { sessionToken: token } }) };
}
const sessions = { admin: await signedIn(admin), member: await signedIn(member) };

afterAll(() => Promise.all([sessions.admin.client.close(), sessions.member.client.close()]));

/** A preview: the CLI's whole output, whether it failed, and the writes it caused. */
async function preview(stack: Stack): Promise<{ failed: boolean; text: string; writes: string[] }> {
  const mark = world.mark();
  const result = await stack.preview({ color: "never" }).then(
    (r) => ({ failed: false, text: `${r.stdout}\n${r.stderr}` }),
    (error: unknown) => {
      expect(error).toBeInstanceOf(CommandError);
      return { failed: true, text: String(error) };
    },
  );
  return { ...result, writes: await writesSince(mark) };
}

async function runScenarios(sdk: Sdk): Promise<string[]> {
  const p = `pf${sdk[0]}`;
  const plan = basePlan(world, p);
  const stack = await world.stack(
    "quickstart",
    programOf(sdk, () => plan),
    {
      ...world.config,
      "cloudinfra:sessionToken": { secret: sessions.admin.token },
    },
  );
  const run: ScenarioRun = { world, stack, plan, p, sessions };
  const done: string[] = [];
  const times: string[] = [];
  for (const scenario of scenarios) {
    const started = performance.now();
    const lap = () => ((performance.now() - started) / 1000).toFixed(1);
    const step = await scenario.cause(run);
    const setUp = lap();
    const caused = await preview(stack);
    expect(caused.failed, `${sdk}, ${scenario.check}: ${caused.text}`).toBe(!step.warns);
    for (const text of step.says) expect(caused.text, `${sdk}, ${scenario.check}`).toContain(text);
    expect(caused.writes, `${sdk}, ${scenario.check}: writes at preview`).toEqual([]);

    const failedAt = lap();
    await step.fix();
    const fixed = await preview(stack);
    expect(fixed.failed, `${sdk}, ${scenario.check} fixed: ${fixed.text}`).toBe(false);
    expect(fixed.text).not.toContain(step.says[0]);
    expect(fixed.writes).toEqual([]);
    const previewedAt = lap();
    const mark = world.mark();
    const up = await stack.up({ color: "never" });
    times.push(
      `${scenario.check}: set-up ${setUp}s, failed preview ${failedAt}s, preview ${previewedAt}s, up ${lap()}s`,
    );
    const outputs = Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value as string]));
    await step.holds(outputs, mark);
    done.push(scenario.check);
  }
  if (process.env.PREFLIGHT_TIMES) console.log(`${sdk}:\n${times.join("\n")}`);
  return done;
}

describeCli("preview predicts what up would refuse: one scenario per check", () => {
  // Eleven steps of three CLI runs each: longer than the suites' default timeout on a busy machine.
  it.each(["dynamic", "plugin"] as const)("%s SDK", { timeout: 480_000 }, async (sdk) => {
    expect(await runScenarios(sdk)).toEqual(scenarios.map((s) => s.check));
    // The member's role is back (the api-keys scenarios take it away for a while).
    expect((await world.api.userRoles({ params: { userId: member.id } })).map((r) => r.name)).toEqual(["tenant-user"]);
  });
});
