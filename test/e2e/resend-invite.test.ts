/**
 * Re-sending an expired invitation through the real CLI, both SDKs: a user invited by the stack, its invitation
 * expired (the emulator's clock moved eight days on), shows `expired` on refresh; bumping `resendInviteTrigger`
 * sends exactly one `POST /users/{id}/resend-invite` (no delete, no create: the same user), and the next refresh
 * shows it `pending`, as the API holds it. The emulator's request log is the evidence.
 */
import * as plugin from "@cloudinfra/pulumi/plugin";
import type { Stack } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import * as dynamic from "../../sdk";
import { cliWorld, describeCli } from "./helpers";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();

const sdks = {
  dynamic: (trigger: string) =>
    new dynamic.User("user", { email: "rs-dynamic@example.com", resendInviteTrigger: trigger }),
  plugin: (trigger: string) =>
    new plugin.User("user", { email: "rs-plugin@example.com", resendInviteTrigger: trigger }),
};
type Sdk = keyof typeof sdks;

/** The user's invite status as the stack's state holds it (refresh updates the state, not the stack's outputs). */
async function recordedStatus(stack: Stack): Promise<unknown> {
  const deployment = (await stack.exportStack()).deployment as {
    resources?: { urn: string; outputs?: Record<string, unknown> }[];
  };
  return deployment.resources?.find((r) => r.urn.endsWith("::user"))?.outputs?.inviteStatus;
}

describeCli("resendInviteTrigger (real CLI)", () => {
  it("an expired invitation: refresh shows it, the bumped trigger re-sends it in place, the next refresh shows it pending", async () => {
    const sdkNames = Object.keys(sdks) as Sdk[];
    const trigger: Record<Sdk, string> = { dynamic: "1", plugin: "1" };
    const stacks = await Promise.all(
      sdkNames.map((sdk) => world.stack("quickstart", async () => ({ id: sdks[sdk](trigger[sdk]).id }))),
    );
    const ids = await Promise.all(
      stacks.map(async (s) => (await s.up({ color: "never" })).outputs.id!.value as string),
    );
    for (const id of ids) expect((await world.api.getUser({ params: { id } })).inviteStatus).toBe("pending");

    // Eight days on (invitations last seven), the API reports the invitations expired, and so does refresh.
    world.emulator.ctx.clockOffsetMs += 8 * 24 * 3600_000;
    for (const id of ids) expect((await world.api.getUser({ params: { id } })).inviteStatus).toBe("expired");
    for (const stack of stacks) {
      await stack.refresh({ color: "never" });
      expect(await recordedStatus(stack)).toBe("expired");
    }

    // Bumped: one update each, the same user, exactly one resend of it and nothing else written.
    for (const sdk of sdkNames) trigger[sdk] = "2";
    const mark = world.mark();
    const ups = await Promise.all(stacks.map((s) => s.up({ color: "never" })));
    const written = (await world.requests(mark)).filter((r) => r.method !== "GET");
    expect(written.map((r) => `${r.method} ${r.path.split("?")[0]}`).sort()).toEqual(
      ids.map((id) => `POST /v1/users/${id}/resend-invite`).sort(),
    );
    ups.forEach((up, i) => {
      expect(up.summary.resourceChanges).toMatchObject({ update: 1 });
      expect(up.outputs.id!.value).toBe(ids[i]);
    });

    // The API holds the new invitation, and the next refresh shows it; then nothing is left to do.
    for (const [i, stack] of stacks.entries()) {
      expect((await world.api.getUser({ params: { id: ids[i]! } })).inviteStatus).toBe("pending");
      await stack.refresh({ color: "never" });
      expect(await recordedStatus(stack)).toBe("pending");
      await stack.preview({ color: "never", expectNoChanges: true });
    }
    for (const stack of stacks) await stack.destroy({ color: "never" });
    expect((await world.namesInApi("rs-")).users).toEqual([]);
  });
});
