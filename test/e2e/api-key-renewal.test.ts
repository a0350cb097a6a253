/**
 * ApiKey `renewBeforeDays` through the real CLI, both SDKs (dynamic and plugin) side by side on one emulator: a key
 * `up` made, the emulator's clock moved near its expiry; `preview` shows the replacement and why, and writes nothing;
 * `up` replaces it (the new key before the old is deleted); the API holds one key of that name with a later expiry;
 * the stack's secret output is the new key, which authenticates; the next preview shows no changes.
 */
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { advanceClock, rememberedSessionToken } from "../helpers/session-token";
import { cliWorld, describeCli } from "./helpers";
import { resource, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const admin = world.emulator.bootstrap.users.admin;
const DAY_MS = 24 * 3600_000;

const args = (name: string) => ({ name, expiresInDays: 30, renewBeforeDays: 10 });
const sdks = {
  dynamic: async () => {
    const key = new cloudinfra.ApiKey("key", args("rbe-dynamic"));
    return { id: key.id, key: key.key, expiresAt: key.expiresAt };
  },
  plugin: async () => {
    const key = resource("ApiKey", "key", args("rbe-plugin"), ["key", "expiresAt"]);
    return { id: key.id, key: key.key, expiresAt: key.expiresAt };
  },
};
type Sdk = keyof typeof sdks;
const sdkNames = Object.keys(sdks) as Sdk[];

const keysNamed = async (name: string) =>
  (await world.api.listApiKeys({ query: { search: name, limit: 100 } })).data.filter((k) => k.name === name);

describeCli("ApiKey renewBeforeDays (real CLI)", () => {
  it("both SDKs: near expiry by the API's clock, preview shows the replacement and why without a write, up renews the key, then no changes", async () => {
    // Days of emulator time: a remembered session creates the keys (sign-in codes follow the emulator's clock); the
    // admin's API key (valid a year) serves the rest, and tells the API's clock.
    const sessionToken = await rememberedSessionToken(world.emulator, admin);
    const config = { ...world.config, "cloudinfra:sessionToken": { secret: sessionToken } };
    const stacks = await Promise.all(sdkNames.map((sdk) => world.stack("quickstart", sdks[sdk], config)));
    const created = await Promise.all(stacks.map((s) => s.up({ color: "never" })));
    const old = created.map((c) => ({
      id: c.outputs.id!.value as string,
      key: c.outputs.key!.value as string,
      expiresAt: c.outputs.expiresAt!.value as string,
    }));
    const secrets = [admin.apiKey, sessionToken, ...old.map((o) => o.key)];

    // 21 days on, 9 days are left of 30: within renewBeforeDays 10 by the API's clock (this machine's says 30).
    await advanceClock(world.emulator, 21);
    const mark = world.mark();
    const previews = await Promise.all(stacks.map((s) => s.preview({ color: "never" })));
    expect((await world.requests(mark)).filter((r) => r.method !== "GET")).toEqual([]);
    sdkNames.forEach((sdk, i) => {
      const text = `${previews[i]!.stdout}\n${previews[i]!.stderr}`;
      expect(previews[i]!.changeSummary, sdk).toMatchObject({ replace: 1 });
      expect(text, sdk).toContain(
        `API key "rbe-${sdk}" expires on ${old[i]!.expiresAt}, within renewBeforeDays 10 (now is `,
      );
      expect(text, sdk).toContain("by the API's clock): `pulumi up` replaces it with a new key");
      for (const secret of secrets) expect(text, sdk).not.toContain(secret);
    });

    const renewed = await Promise.all(stacks.map((s) => s.up({ color: "never" })));
    for (const [i, sdk] of sdkNames.entries()) {
      const up = renewed[i]!;
      expect(up.summary.resourceChanges, sdk).toMatchObject({ replace: 1 });
      const held = await keysNamed(`rbe-${sdk}`);
      expect(
        held.map((k) => k.id),
        sdk,
      ).toEqual([up.outputs.id!.value]);
      expect(held[0]!.id, sdk).not.toBe(old[i]!.id);
      expect(Date.parse(held[0]!.expiresAt) - Date.parse(old[i]!.expiresAt), sdk).toBeGreaterThan(20 * DAY_MS);
      expect(up.outputs.expiresAt!.value, sdk).toBe(held[0]!.expiresAt);
      // The stack output is the new key, a secret, and it authenticates; the old one is gone.
      expect(up.outputs.key!.secret, sdk).toBe(true);
      const key = up.outputs.key!.value as string;
      expect(key, sdk).toMatch(/^svc_/);
      expect(key.startsWith(held[0]!.start), sdk).toBe(true);
      expect(await world.accepted(key), sdk).toBe(true);
      expect(await world.accepted(old[i]!.key), sdk).toBe(false);
      for (const secret of [...secrets, key]) expect(`${up.stdout}\n${up.stderr}`, sdk).not.toContain(secret);
    }

    const after = await Promise.all(stacks.map((s) => s.preview({ color: "never" })));
    sdkNames.forEach((sdk, i) => {
      expect(after[i]!.changeSummary, sdk).toEqual({ same: 2 });
      expect(`${after[i]!.stdout}\n${after[i]!.stderr}`, sdk).not.toContain("renewBeforeDays");
    });

    await Promise.all(stacks.map((s) => s.destroy({ color: "never" })));
    for (const sdk of sdkNames) expect(await keysNamed(`rbe-${sdk}`), sdk).toEqual([]);
  });
});
