/**
 * ApiKey `renewBeforeDays`: a key that close to its expiry is replaced by `up` (create before delete), preview says why
 * and writes nothing; compared with the API's clock (its `Date` header, which follows the emulator's movable clock).
 */
import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { apiKey } from "../../provider/resources/api-key";
import { UNKNOWN } from "../../provider/resources";
import { ApiKey, type ApiKeyArgs } from "../../sdk";
import { destroy, preview, refresh, up, type RunOptions, type RunResult } from "../../tools/harness";
import { advanceClock, rememberedSessionToken } from "../helpers/session-token";
import { stackOnEmulator, statusWith } from "./helpers";

const DAY_MS = 24 * 3600_000;
const stack = await stackOnEmulator();
const admin = stack.emulator.bootstrap.users.admin;

function program(args: ApiKeyArgs) {
  return () => {
    const key = new ApiKey("key", args);
    return { id: key.id, expiresAt: key.expiresAt };
  };
}

const keysNamed = async (prefix: string) =>
  (await stack.api.listApiKeys({ query: { search: prefix, limit: 100 } })).data.filter((k) =>
    k.name.startsWith(prefix),
  );

/** The `Date` header of an answer of the API, as epoch ms. */
async function apiDate(): Promise<number> {
  const response = await fetch(`${stack.emulator.baseUrl}/auth/check`, { headers: { "x-api-key": admin.apiKey } });
  expect(response.status).toBe(200);
  return Date.parse(response.headers.get("date")!);
}

describe("ApiKey renewBeforeDays", () => {
  it("check refuses a value that is not a whole number of days ≥ 1, or not less than the key's lifetime, naming the field and the fix, before any request", async () => {
    const reasons = async (news: Record<string, unknown>) =>
      (await apiKey.check({}, { name: "k", ...news })).failures.map((f) => `${f.property}: ${f.reason}`);
    for (const bad of [0, -3, 1.5, "7", 3650]) {
      expect(await reasons({ renewBeforeDays: bad })).toEqual([
        "renewBeforeDays: must be a whole number of days, from 1 to 3649, less than expiresInDays",
      ]);
    }
    expect(await reasons({ renewBeforeDays: 90 })).toEqual([
      "renewBeforeDays: must be less than the key's lifetime: 90 days before expiry is not less than the API's " +
        "default lifetime of 90 days (expiresInDays left out), so every `up` would replace the key. Use at most 89, " +
        "or a longer expiresInDays (more than 90)",
    ]);
    expect(await reasons({ renewBeforeDays: 30, expiresInDays: 30 })).toEqual([
      "renewBeforeDays: must be less than the key's lifetime: 30 days before expiry is not less than expiresInDays " +
        "(30), so every `up` would replace the key. Use at most 29, or a longer expiresInDays (more than 30)",
    ]);
    expect(await reasons({ renewBeforeDays: 89 })).toEqual([]);
    expect(await reasons({ renewBeforeDays: 29, expiresInDays: 30 })).toEqual([]);
    // unknown at preview: checked when known
    expect(await reasons({ renewBeforeDays: 30, expiresInDays: UNKNOWN })).toEqual([]);
    expect(await reasons({ renewBeforeDays: UNKNOWN, expiresInDays: 30 })).toEqual([]);

    // Through a run: refused at check, nothing sent (not even the credentials check or the clock read).
    const since = stack.mark();
    const signIn = {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:email": { secret: admin.email },
      "cloudinfra:password": { secret: admin.password },
      "cloudinfra:totpSecret": { secret: admin.totpSecret },
    };
    const refused = await preview(program({ name: "rb-bad", expiresInDays: 10, renewBeforeDays: 10 }), {
      ...stack.options({ config: signIn }),
      throwOnError: false,
    });
    expect(refused.errors.map((e) => e.message).join("\n")).toContain(
      "renewBeforeDays: must be less than the key's lifetime: 10 days before expiry is not less than expiresInDays (10)",
    );
    expect(await stack.requests(since)).toEqual([]);
  });

  it("diff: within renewBeforeDays of the state's expiresAt (or past it), a replacement, created before the old key is deleted, with the reason; outside it, or without renewBeforeDays, none", () => {
    const state = (daysLeft: number) => ({
      name: "k",
      enabled: true,
      key: "svc_abcdefgh",
      start: "svc_abcd",
      status: "Active",
      renewBeforeDays: 10,
      expiresAt: new Date(Date.now() + daysLeft * DAY_MS).toISOString(),
    });
    const diff = (olds: Record<string, unknown>, news: Record<string, unknown> = { renewBeforeDays: 10 }) =>
      apiKey.diff("id", olds, { name: "k", enabled: true, ...news });

    const outside = state(10.01);
    expect(diff(outside)).toEqual({
      changes: false,
      replaces: [],
      stables: expect.any(Array),
      deleteBeforeReplace: false,
    });
    const inside = state(9.99);
    const renewed = diff(inside);
    expect(renewed).toMatchObject({ changes: true, replaces: ["expiresAt"], deleteBeforeReplace: false });
    expect(renewed.warnings).toHaveLength(1);
    const [warning] = renewed.warnings!;
    expect(warning).toContain(`API key "k" expires on ${inside.expiresAt}, within renewBeforeDays 10 (now is `);
    expect(warning).toContain(
      "by this machine's clock): `pulumi up` replaces it with a new key of the same inputs, created before this one is deleted",
    );
    expect(Math.abs(Date.parse(/now is (\S+)/.exec(warning!)![1]!) - Date.now())).toBeLessThan(5000);
    expect(warning).not.toContain("svc_");
    const past = state(-1);
    const expired = diff(past);
    expect(expired.replaces).toEqual(["expiresAt"]);
    expect(expired.warnings![0]).toContain(`API key "k" expired on ${past.expiresAt}, within renewBeforeDays 10`);
    // A wider window in the program counts at once (the state's value is not what decides).
    expect(diff(outside, { renewBeforeDays: 11 })).toMatchObject({ changes: true, replaces: ["expiresAt"] });
    // Without renewBeforeDays, or unknown, no renewal; removing it is an in-place change of the record.
    expect(diff(inside, {})).toMatchObject({ changes: true, replaces: [] });
    expect(diff(inside, {}).warnings).toBeUndefined();
    expect(diff(inside, { renewBeforeDays: UNKNOWN })).toMatchObject({ changes: true, replaces: [] });
    // A change of another replacing input still replaces, and the renewal is said too.
    expect(diff(inside, { renewBeforeDays: 10, name: "other" }).replaces).toEqual(["name", "expiresAt"]);
  });

  it("up replaces a key near its expiry by the API's clock (moved by days): preview shows why and writes nothing, the new key is created before the old is deleted, the API holds only the new one; then nothing to change", async () => {
    // Days of emulator time: a remembered session creates the keys (sign-in codes follow the emulator's clock); the
    // admin's API key (valid a year) serves the rest, and tells the API's clock.
    const sessionToken = await rememberedSessionToken(stack.emulator, admin);
    const options: RunOptions = stack.options({
      config: {
        ...stack.options().config,
        "cloudinfra:sessionToken": { secret: sessionToken },
      },
    });
    const secrets = [admin.apiKey, sessionToken];
    const expectNoSecretIn = (result: RunResult) => {
      for (const secret of secrets) {
        expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain(secret);
        expect(result.hostLog).not.toContain(secret);
        expect(JSON.stringify(result.errors)).not.toContain(secret);
      }
    };
    const args: ApiKeyArgs = { name: "rb-key", expiresInDays: 30, renewBeforeDays: 10 };

    const created = await up(program(args), options);
    const oldId = created.outputs.id as string;
    const oldExpiry = created.outputs.expiresAt as string;
    const oldKey = created.step("key").outputs.key as string;
    secrets.push(oldKey);
    expect((await preview(program(args), options)).step("key").op).toBe("same");

    // The API's Date header follows its own clock, moved forward by the admin route.
    expect(Math.abs((await apiDate()) - Date.now())).toBeLessThan(2000);
    await advanceClock(stack.emulator, 21);
    expect(Math.abs((await apiDate()) - (Date.now() + 21 * DAY_MS))).toBeLessThan(2000);

    // 9 days left by the API's clock (this machine's still says 30): the state is as the create left it (no refresh).
    let since = stack.mark();
    const planned = await preview(program(args), options);
    expect(planned.step("key").op).toBe("replace");
    expect(planned.step("key").diff?.replaces).toEqual(["expiresAt"]);
    expect(planned.hostLog).toContain(`API key "rb-key" expires on ${oldExpiry}, within renewBeforeDays 10 (now is `);
    expect(planned.hostLog).toContain("by the API's clock): `pulumi up` replaces it with a new key");
    const apiNow = Date.parse(/now is (\S+) by the API's clock/.exec(planned.hostLog)![1]!);
    expect(Math.abs(apiNow - (Date.now() + 21 * DAY_MS))).toBeLessThan(5000);
    const previewRequests = await stack.requests(since);
    expect(previewRequests.filter((r) => r.method !== "GET")).toEqual([]);
    expect(previewRequests.filter((r) => r.route === "check").length).toBeGreaterThanOrEqual(1);
    expectNoSecretIn(planned);

    // After a refresh the state holds what the API does (Expiring, the same expiry): still renewed.
    const refreshed = await refresh(options);
    expect(refreshed.step("key").outputs).toMatchObject({ status: "Expiring", expiresAt: oldExpiry });

    since = stack.mark();
    const renewed = await up(program(args), options);
    expect(renewed.step("key").op).toBe("replace");
    const writes = (await stack.requests(since)).filter((r) => r.method !== "GET").map((r) => r.route);
    expect(writes).toEqual(["createApiKey", "deleteOwnApiKey"]);
    const newId = renewed.outputs.id as string;
    expect(newId).not.toBe(oldId);
    const held = await keysNamed("rb-key");
    expect(held.map((k) => k.id)).toEqual([newId]);
    expect(Date.parse(held[0]!.expiresAt)).toBe(Date.parse(held[0]!.createdAt) + 30 * DAY_MS);
    expect(Date.parse(held[0]!.expiresAt) - Date.parse(oldExpiry)).toBeGreaterThan(20 * DAY_MS);
    expect(renewed.outputs.expiresAt).toBe(held[0]!.expiresAt);
    const newKey = renewed.step("key").outputs.key as string;
    secrets.push(newKey);
    expect(renewed.step("key").secretOutputs).toContain("key");
    expect(newKey).not.toBe(oldKey);
    expect(await statusWith(stack, newKey)).toBe(200);
    expect(await statusWith(stack, oldKey)).toBe(401);
    expectNoSecretIn(renewed);

    const after = await preview(program(args), options);
    expect(after.step("key").op).toBe("same");
    expect(after.hostLog).not.toContain("renewBeforeDays");

    await destroy(options);
    expect(await keysNamed("rb-")).toEqual([]);
  });
});
