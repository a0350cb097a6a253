import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ApiError, CloudClient } from "../../provider/client";
import { apiKey, create, sessionSettings, type ApiKeyInputs } from "../../provider/resources/api-key";
import { closeClients, configuration, handlerContext, UNKNOWN } from "../../provider/resources";
import { ApiKey, type ApiKeyArgs } from "../../sdk";
import { destroy, preview, refresh, up, type RunOptions, type RunResult } from "../harness";
import { stackOnEmulator, type Stack } from "./helpers";

const stack = await stackOnEmulator();
const admin = stack.emulator.bootstrap.users.admin;

/** Stack config with the admin's sign-in credentials (2FA by TOTP) and no API key. */
function sessionConfig(target: Stack) {
  const user = target.emulator.bootstrap.users.admin;
  return {
    "cloudinfra:baseUrl": target.emulator.baseUrl,
    "cloudinfra:email": { secret: user.email },
    "cloudinfra:password": { secret: user.password },
    "cloudinfra:totpSecret": { secret: user.totpSecret },
    "cloudinfra:pollIntervalMs": "20",
  };
}
const sessionOptions = (target: Stack = stack): RunOptions => target.options({ config: sessionConfig(target) });

const keysNamed = async (target: Stack, prefix: string) =>
  (await target.api.listApiKeys({ query: { search: prefix, limit: 100 } })).data.filter((k) =>
    k.name.startsWith(prefix),
  );
const keyById = async (target: Stack, id: string) =>
  (await target.api.listApiKeys({ query: { limit: 100 } })).data.find((k) => k.id === id);

/** Calls the API with `secret` as the API key: resolves to the HTTP status (200 when the key works). */
async function statusWith(target: Stack, secret: string): Promise<number> {
  const probe = new CloudClient({ baseUrl: target.emulator.baseUrl, auth: { apiKey: secret }, retry: { retries: 0 } });
  try {
    await probe.check();
    return 200;
  } catch (error) {
    if (error instanceof ApiError) return error.status;
    throw error;
  } finally {
    await probe.close();
  }
}

/** Every secret seen so far must stay out of the state file, the errors and the host's log. */
const secretsSeen = new Set<string>([admin.password, admin.totpSecret, admin.apiKey]);
function expectNoSecretIn(options: RunOptions, result?: RunResult): void {
  const texts = [fs.readFileSync(options.stateFile, "utf8")];
  if (result) texts.push(result.hostLog, JSON.stringify(result.errors));
  for (const secret of secretsSeen) for (const text of texts) expect(text).not.toContain(secret);
}
function keyOf(result: RunResult): string {
  const step = result.step("key");
  expect(step.secretOutputs).toContain("key");
  const key = step.outputs.key as string;
  expect(key).toMatch(/^svc_/);
  secretsSeen.add(key);
  return key;
}

function program(args: ApiKeyArgs) {
  return () => {
    const key = new ApiKey("key", args);
    return { id: key.id, status: key.status };
  };
}

describe("ApiKey lifecycle", () => {
  it("creates, stays unchanged, rotates and suspends in place, replaces, survives drift and deletion, and is destroyed", async () => {
    const options = sessionOptions();
    const base: ApiKeyArgs = { name: "lc-key" };

    // 1. create with minimal inputs: the API holds an active key of the admin, and the secret works
    const created = await up(program(base), options);
    expect(created.step("key").op).toBe("create");
    const id = created.outputs.id as string;
    const key1 = keyOf(created);
    expect(await keyById(stack, id)).toMatchObject({
      name: "lc-key",
      status: "Active",
      enabled: true,
      userId: admin.id,
      start: key1.slice(0, 8),
    });
    expect(await statusWith(stack, key1)).toBe(200);
    expectNoSecretIn(options, created);

    // 2. a second up: no changes, the secret kept; 3. refresh without drift: no changes
    const again = await up(program(base), options);
    expect(again.step("key").op).toBe("same");
    expect(keyOf(again)).toBe(key1);
    expect((await refresh(options)).step("key").refresh).toBe("same");

    // 4. in place: a new rotation value rotates (same id, new secret, the old one dead), enabled: false suspends
    const changed = await up(program({ ...base, rotation: "2025-01", enabled: false }), options);
    expect(changed.step("key").op).toBe("update");
    expect(changed.outputs).toMatchObject({ id, status: "Suspended" });
    const key2 = keyOf(changed);
    expect(key2).not.toBe(key1);
    expect(await keyById(stack, id)).toMatchObject({ enabled: false, status: "Suspended", start: key2.slice(0, 8) });
    expect(await statusWith(stack, key1)).toBe(401);
    expect(await statusWith(stack, key2)).toBe(401);
    expectNoSecretIn(options, changed);

    const resumed = await up(program({ ...base, rotation: "2025-01" }), options);
    expect(resumed.step("key").op).toBe("update");
    expect(keyOf(resumed)).toBe(key2);
    expect(await keyById(stack, id)).toMatchObject({ enabled: true, status: "Active" });
    expect(await statusWith(stack, key2)).toBe(200);

    // 6. drift behind the stack's back: a suspension, and a rotation (our secret is dead). Refresh shows both; up
    // resumes the key and rotates it again, so the stack holds a working secret nobody else has.
    await stack.api.setApiKeyStatus({ params: { keyId: id }, body: { enabled: false } });
    const foreign = await stack.api.rotateApiKey({ params: { keyId: id } });
    secretsSeen.add(foreign.key);
    const drifted = await refresh(options);
    expect(drifted.step("key").refresh).toBe("changed");
    expect(drifted.step("key").outputs).toMatchObject({ enabled: false, status: "Suspended" });
    expect(keyOf(drifted)).toBe(key2);
    const repaired = await up(program({ ...base, rotation: "2025-01" }), options);
    expect(repaired.step("key").op).toBe("update");
    const key3 = keyOf(repaired);
    expect([key2, foreign.key]).not.toContain(key3);
    expect(await keyById(stack, id)).toMatchObject({ enabled: true, status: "Active", start: key3.slice(0, 8) });
    expect(await statusWith(stack, key3)).toBe(200);
    expect(await statusWith(stack, foreign.key)).toBe(401);

    // 5. replacement (name): a new key with a new id and secret; the old key is gone from the API
    const renamed = await up(program({ ...base, name: "lc-key-b", rotation: "2025-01" }), options);
    expect(renamed.step("key").op).toBe("replace");
    expect(renamed.step("key").diff?.replaces).toEqual(["name"]);
    const newId = renamed.outputs.id as string;
    expect(newId).not.toBe(id);
    expect(await keyById(stack, id)).toBeUndefined();
    expect((await keyById(stack, newId))?.name).toBe("lc-key-b");
    const key4 = keyOf(renamed);
    expect(await statusWith(stack, key4)).toBe(200);
    expect(await statusWith(stack, key3)).toBe(401);

    // 7. deleted behind the stack's back: refresh drops it, up creates a new key
    await stack.api.deleteApiKey({ params: { keyId: newId } });
    expect((await refresh(options)).step("key").refresh).toBe("gone");
    const recreated = await up(program({ ...base, name: "lc-key-b", rotation: "2025-01" }), options);
    expect(recreated.step("key").op).toBe("create");
    expect(recreated.outputs.id).not.toBe(newId);
    expect(await statusWith(stack, keyOf(recreated))).toBe(200);
    expectNoSecretIn(options, recreated);

    // 8. destroy leaves nothing of the stack
    expectNoSecretIn(options, await destroy(options));
    expect(await keysNamed(stack, "lc-")).toEqual([]);
  });

  it("creates a key with a role, expiry and metadata, suspended, and replaces it when they change", async () => {
    const options = sessionOptions();
    const args: ApiKeyArgs = {
      name: "rp-key",
      roleId: "vm-operator",
      expiresInDays: 45,
      metadata: { owner: "ci" },
      enabled: false,
    };
    const created = await up(program(args), options);
    const id = created.outputs.id as string;
    const live = await keyById(stack, id);
    expect(live).toMatchObject({ roleId: "vm-operator", metadata: { owner: "ci" }, enabled: false });
    expect(Date.parse(live!.expiresAt) - Date.parse(live!.createdAt)).toBe(45 * 24 * 3600_000);
    expect(await statusWith(stack, keyOf(created))).toBe(401);

    const change = { roleId: "tenant-user" as const, expiresInDays: 60, metadata: { owner: "cd" } };
    const replaced = await up(program({ ...args, ...change }), options);
    expect(replaced.step("key").op).toBe("replace");
    expect(replaced.step("key").diff?.replaces.sort()).toEqual(["expiresInDays", "metadata", "roleId"]);
    expect(await keyById(stack, id)).toBeUndefined();
    const next = await keyById(stack, replaced.outputs.id as string);
    expect(next).toMatchObject({ roleId: "tenant-user", metadata: { owner: "cd" }, enabled: false });
    expect(Date.parse(next!.expiresAt) - Date.parse(next!.createdAt)).toBe(60 * 24 * 3600_000);
    await destroy(options);
    expect(await keysNamed(stack, "rp-")).toEqual([]);
  });

  it("diff: each of name, roleId, expiresInDays, metadata replaces; enabled and rotation are in place", () => {
    const olds = { name: "k", enabled: true, key: "svc_abcdefgh", start: "svc_abcd", status: "Active" };
    const diff = (news: Record<string, unknown>, from: Record<string, unknown> = olds) =>
      apiKey.diff("id", from, { name: "k", enabled: true, ...news });
    expect(diff({}).changes).toBe(false);
    for (const [property, value] of [
      ["name", "other"],
      ["roleId", "tenant-user"],
      ["expiresInDays", 30],
      ["metadata", { a: 1 }],
    ] as const) {
      expect(diff({ [property]: value })).toMatchObject({ changes: true, replaces: [property] });
    }
    expect(diff({ enabled: false })).toMatchObject({ changes: true, replaces: [] });
    expect(diff({ rotation: 1 })).toMatchObject({ changes: true, replaces: [] });
    expect(diff({ rotation: 1 }, { ...olds, rotation: 1 }).changes).toBe(false);
    // removing the trigger does not rotate; an unknown value (preview) counts as a change
    expect(diff({}, { ...olds, rotation: 1 }).changes).toBe(false);
    expect(diff({ rotation: UNKNOWN })).toMatchObject({ changes: true, replaces: [] });
    // a secret we do not hold (lost, or rotated elsewhere) is a change: the update rotates
    expect(diff({}, { ...olds, key: undefined }).changes).toBe(true);
    expect(diff({}, { ...olds, start: "svc_zzzz" }).changes).toBe(true);
  });

  it("preview changes nothing", async () => {
    const options = sessionOptions();
    const since = stack.mark();
    const planned = await preview(program({ name: "pv-key" }), options);
    expect(planned.step("key").op).toBe("create");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);
    expect(await keysNamed(stack, "pv-")).toEqual([]);
  });

  it("says a two-factor session is needed when only an API key is configured, before sending anything", async () => {
    const options = stack.options();
    const since = stack.mark();
    const failed = await up(program({ name: "ak-key" }), { ...options, throwOnError: false });
    const message = failed.errors.map((e) => e.message).join("\n");
    expect(message).toContain("needs a signed-in session with two-factor authentication");
    for (const option of ["cloudinfra:email", "cloudinfra:password", "cloudinfra:totpSecret", "CLOUDINFRA_EMAIL"]) {
      expect(message).toContain(option);
    }
    expect(message).toContain("cloudinfra:sessionToken");
    expect(await stack.requests(since)).toEqual([]);
    expect(failed.state.resources.filter((r) => r.name === "key")).toEqual([]);
    expectNoSecretIn(options, failed);
  });

  it("10. a create answered 5xx that made nothing is sent once more; answered 5xx twice, a clear error, nothing recorded or left behind", async () => {
    // API keys are created without a job, so there is no job to fail: the failures that matter are the request's.
    const options = sessionOptions();
    await stack.faults("createApiKey,status=503,count=2");
    const failed = await up(program({ name: "rf-key" }), { ...options, throwOnError: false });
    await stack.faults("");
    const message = failed.errors.map((e) => e.message).join("\n");
    expect(message).toContain('Creating API key "rf-key" got no answer');
    expect(message).toContain("sent twice, and no new key of that name exists: nothing was created");
    expect(failed.state.resources.filter((r) => r.name === "key")).toEqual([]);
    expect(await keysNamed(stack, "rf-")).toEqual([]);

    // Was: a 503 before anything was made failed the up ("the next `pulumi up` creates it").
    await stack.faults("createApiKey,status=503,count=1");
    const resent = await up(program({ name: "rs-key" }), options);
    await stack.faults("");
    expect(resent.summary.create).toBeGreaterThanOrEqual(1);
    expect(await keysNamed(stack, "rs-")).toHaveLength(1);
  });

  it("10. a key created but not suspended is recorded without its secret, and the next up finishes it", async () => {
    const options = sessionOptions();
    await stack.faults("setApiKeyStatus,status=409,message=Key is busy,count=1");
    const failed = await up(program({ name: "pf-key", enabled: false }), { ...options, throwOnError: false });
    await stack.faults("");
    expect(failed.errors.map((e) => e.message).join("\n")).toContain("Key is busy");
    const partial = failed.state.resources.find((r) => r.name === "key");
    expect(partial?.id).toBeTruthy();
    expect(partial?.initErrors?.join(" ")).toContain("could not be suspended");
    expect(partial?.outputs.key).toBeUndefined();
    expect(await keyById(stack, partial!.id!)).toMatchObject({ name: "pf-key", enabled: true });

    const finished = await up(program({ name: "pf-key", enabled: false }), options);
    expect(finished.step("key").op).toBe("update");
    expect(finished.outputs.id).toBe(partial!.id);
    const key = keyOf(finished);
    expect(await keyById(stack, partial!.id!)).toMatchObject({ enabled: false, start: key.slice(0, 8) });
    expectNoSecretIn(options, finished);
    await destroy(options);
    expect(await keysNamed(stack, "pf-")).toEqual([]);
  });

  it("takes over the key of a create whose answer was lost, by rotating it (provider module in process)", async () => {
    const config: Record<string, string> = {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:email": admin.email,
      "cloudinfra:password": admin.password,
      "cloudinfra:totpSecret": admin.totpSecret,
      "cloudinfra:pollIntervalMs": "20",
    };
    const ctx = handlerContext({ configuration: configuration((name) => config[name]) });
    const api = ctx.clientFor(sessionSettings(ctx.configuration, ctx.settings));
    const send = api.createApiKey.bind(api);
    let lost = "";
    api.createApiKey = (async (args: Parameters<typeof send>[0]) => {
      lost = (await send(args)).key;
      throw new ApiError({
        status: 502,
        code: "BAD_GATEWAY",
        message: "upstream connection reset",
        method: "POST",
        path: "/auth/api-keys/me",
        route: "createApiKey",
        mayHaveSucceeded: true,
      });
    }) as typeof api.createApiKey;

    const inputs: ApiKeyInputs = { name: "lost-key", enabled: true };
    const { id, outs } = await create(ctx, inputs).finally(closeClients);
    expect((await keysNamed(stack, "lost-")).map((k) => k.id)).toEqual([id]);
    expect(lost).toMatch(/^svc_/);
    expect(outs.key).not.toBe(lost);
    expect(await statusWith(stack, outs.key as string)).toBe(200);
    expect(await statusWith(stack, lost)).toBe(401);
    await stack.api.deleteApiKey({ params: { keyId: id } });
  });
});

describe("ApiKey status over time", async () => {
  // Its own emulator: its clock only moves forward. Sign-in codes follow the emulator's clock, so once it has moved
  // the reads go through the admin's API key (valid for a year), configured beside the sign-in credentials, which
  // only the create uses.
  const clocked = await stackOnEmulator();
  const advance = async (days: number) => {
    const response = await fetch(`${clocked.emulator.baseUrl.replace(/\/v1$/, "")}/__admin/clock`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ advanceMs: days * 24 * 3600_000 }),
    });
    expect(response.ok).toBe(true);
  };

  it("refresh shows Expiring within 30 days of expiry, then Expired; destroy still removes it", async () => {
    const options = clocked.options({
      config: {
        ...sessionConfig(clocked),
        "cloudinfra:apiKey": { secret: clocked.emulator.bootstrap.users.admin.apiKey },
      },
    });
    const since = clocked.mark();
    const created = await up(program({ name: "tm-key", expiresInDays: 40 }), options);
    const id = created.outputs.id as string;
    const key = keyOf(created);
    expect(created.outputs.status).toBe("Active");
    const log = await clocked.requests(since);
    expect(log.filter((r) => r.route === "verifyTotp" && r.status === 200)).toHaveLength(1);
    expect(log.filter((r) => r.route === "createApiKey" && r.status === 201)).toHaveLength(1);

    await advance(11);
    const refreshedSince = clocked.mark();
    const expiring = await refresh(options);
    expect(expiring.step("key").refresh).toBe("changed");
    expect(expiring.step("key").outputs.status).toBe("Expiring");
    expect((await clocked.requests(refreshedSince)).filter((r) => r.route === "signIn")).toEqual([]);
    expect((await keyById(clocked, id))?.status).toBe("Expiring");
    expect(await statusWith(clocked, key)).toBe(200);

    await advance(30);
    const expired = await refresh(options);
    expect(expired.step("key").outputs.status).toBe("Expired");
    expect((await keyById(clocked, id))?.status).toBe("Expired");
    expect(await statusWith(clocked, key)).toBe(401);
    expect(keyOf(expired)).toBe(key);
    expectNoSecretIn(options, expired);

    await destroy(options);
    expect(await keysNamed(clocked, "tm-")).toEqual([]);
  });
});
