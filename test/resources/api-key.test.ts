import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ApiError, CloudClient } from "../../provider/client";
import { apiKey, create, sessionSettings, type ApiKeyInputs } from "../../provider/resources/api-key";
import { closeClients, configuration, handlerContext, UNKNOWN } from "../../provider/resources";
import { ApiKey, type ApiKeyArgs } from "../../sdk";
import { destroy, preview, refresh, up, type RunOptions, type RunResult } from "../../tools/harness";
import { stackOnEmulator, statusWith, type Stack } from "./helpers";

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

// The lifecycle (create, no-op, rotated and suspended in place, replace, drift, bad inputs, deleted behind the stack,
// failed suspension, destroy) is in the table, test/lifecycle/table.ts, played on every host; here what is particular
// to API keys: secrecy, roles and expiry, sessions, lost answers.
describe("ApiKey", () => {
  it("creates a key with a role, expiry and metadata, suspended, replaces it when they change, resumes it in place keeping its secret; no secret in the state, errors or log", async () => {
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
    expectNoSecretIn(options, created);

    const change = { roleId: "tenant-user" as const, expiresInDays: 60, metadata: { owner: "cd" } };
    const replaced = await up(program({ ...args, ...change }), options);
    expect(replaced.step("key").op).toBe("replace");
    expect(replaced.step("key").diff?.replaces.sort()).toEqual(["expiresInDays", "metadata", "roleId"]);
    expect(await keyById(stack, id)).toBeUndefined();
    const newId = replaced.outputs.id as string;
    const next = await keyById(stack, newId);
    expect(next).toMatchObject({ roleId: "tenant-user", metadata: { owner: "cd" }, enabled: false });
    expect(Date.parse(next!.expiresAt) - Date.parse(next!.createdAt)).toBe(60 * 24 * 3600_000);
    const secret = keyOf(replaced);
    expectNoSecretIn(options, replaced);

    // resumed in place (enabled left out): the same key and secret, now working
    const resumed = await up(program({ ...args, ...change, enabled: undefined }), options);
    expect(resumed.step("key").op).toBe("update");
    expect(resumed.outputs.id).toBe(newId);
    expect(keyOf(resumed)).toBe(secret);
    expect(await keyById(stack, newId)).toMatchObject({ enabled: true, status: "Active" });
    expect(await statusWith(stack, secret)).toBe(200);
    expectNoSecretIn(options, resumed);

    expectNoSecretIn(options, await destroy(options));
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

  it("roleId is checked against the roles the API offers the signed-in user, read once per run: a tenant-user may not give tenant-admin", async () => {
    const member = stack.emulator.bootstrap.users.member;
    const probe = new CloudClient({
      baseUrl: stack.emulator.baseUrl,
      auth: { email: member.email, password: member.password, totpSecret: member.totpSecret },
    });
    const offered = (await probe.apiKeyRoleOptions()).map((o) => o.id);
    // The member's session, given as a session token: check reads the options with it (check never signs in itself:
    // that would spend the TOTP code the `up` after a preview needs).
    const sessionToken = (await probe.auth.headers()).headers.authorization!.replace(/^Bearer /, "");
    await probe.close();
    const memberConfig = {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:sessionToken": { secret: sessionToken },
      "cloudinfra:pollIntervalMs": "20",
    };
    const options = stack.options({ config: memberConfig });
    // The spec's role names accept it; the API does not offer it to this user.
    expect(offered).not.toContain("tenant-admin");
    expect(offered.length).toBeGreaterThan(0);

    const since = stack.mark();
    const twoKeys = (roleId: string) => () => {
      const a = new ApiKey("a", { name: "ro-a", roleId });
      const b = new ApiKey("b", { name: "ro-b", roleId });
      return { a: a.id, b: b.id };
    };
    const refused = await up(twoKeys("tenant-admin"), { ...options, throwOnError: false });
    const message = refused.errors.map((e) => e.message).join("\n");
    expect(message).toContain(
      `must be a role the API offers the signed-in user for new keys: ${offered.map((id) => `\`${id}\``).join(", ")}`,
    );
    const routes = (await stack.requests(since)).map((r) => r.route);
    expect(routes.filter((r) => r === "apiKeyRoleOptions")).toHaveLength(1); // two keys, one read
    expect(routes.filter((r) => r === "createApiKey")).toEqual([]);
    expect(await keysNamed(stack, "ro-")).toEqual([]);

    // A role it offers: both keys made with it.
    const made = await up(twoKeys(offered[0]!), options);
    for (const name of ["a", "b"]) {
      const held = await keyById(stack, made.outputs[name] as string);
      expect(held?.roleId).toBe(offered[0]);
    }
    await destroy(options);
    expect(await keysNamed(stack, "ro-")).toEqual([]);
  });

  it("roleId without a context to read the API's options: checked against the roles the spec names", async () => {
    const checked = await apiKey.check({}, { name: "st-key", roleId: "auditor" });
    expect(checked.failures).toEqual([
      {
        property: "roleId",
        reason:
          "must be one of `tenant-admin`, `tenant-user`, `vm-operator`, or left out (the key then has its creator's permissions)",
      },
    ]);
    expect((await apiKey.check({}, { name: "st-key", roleId: "vm-operator" })).failures).toEqual([]);
    expect((await apiKey.check({}, { name: "st-key", roleId: UNKNOWN })).failures).toEqual([]);
  });

  it("10. a create answered 5xx that made nothing is sent again (up to cloudinfra:maxRetries times); answered 5xx on every send, a clear error, nothing recorded or left behind", async () => {
    // API keys are created without a job, so there is no job to fail: the failures that matter are the request's.
    const options = sessionOptions();
    await stack.faults("createApiKey,status=503,count=4");
    const failed = await up(program({ name: "rf-key" }), { ...options, throwOnError: false });
    await stack.faults("");
    const message = failed.errors.map((e) => e.message).join("\n");
    expect(message).toContain('Creating API key "rf-key" got no answer');
    expect(message).toContain("sent 4 times, and no new key of that name exists: nothing was created");
    expect(failed.state.resources.filter((r) => r.name === "key")).toEqual([]);
    expect(await keysNamed(stack, "rf-")).toEqual([]);

    // Was: a 503 before anything was made failed the up ("the next `pulumi up` creates it").
    await stack.faults("createApiKey,status=503,count=1");
    const resent = await up(program({ name: "rs-key" }), options);
    await stack.faults("");
    expect(resent.summary.create).toBeGreaterThanOrEqual(1);
    expect(await keysNamed(stack, "rs-")).toHaveLength(1);
  });

  it("10. a key finished after a failed suspension keeps its secret out of the state, the errors and the log", async () => {
    // the failure and its repair are in the lifecycle table's failed sequence; here the secret on that path
    const options = sessionOptions();
    await stack.faults("setApiKeyStatus,status=409,message=Key is busy,count=1");
    const failed = await up(program({ name: "pf-key", enabled: false }), { ...options, throwOnError: false });
    await stack.faults("");
    expect(failed.errors.map((e) => e.message).join("\n")).toContain("Key is busy");
    expectNoSecretIn(options, failed);
    const finished = await up(program({ name: "pf-key", enabled: false }), options);
    expect(finished.step("key").op).toBe("update");
    keyOf(finished);
    expectNoSecretIn(options, finished);
    expectNoSecretIn(options, await destroy(options));
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
