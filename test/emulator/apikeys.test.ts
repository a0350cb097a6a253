import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { hashSecret, rolePermissions, TWO_FACTOR_COOKIE } from "../../emulator/http";
import { hashPassword, newTotpSecret, totpFor } from "../../emulator/secrets";
import type { ApiKey, RoleName } from "../../provider/api";
import { type TestEmulator, testEmulator } from "../helpers/emulator";

let emu: TestEmulator;
beforeAll(async () => {
  emu = await testEmulator();
});
const DAY = 24 * 3600_000;

type Who = "admin" | "member" | "outsider";
type KeyWithSecret = ApiKey & { key: string };

let userCount = 0;
/** A fresh user of the main entity (tests that delete owners or grant platform admin use their own). */
function makeUser(roles: RoleName[] = ["tenant-user"]): {
  id: string;
  email: string;
  password: string;
  totpSecret: string;
} {
  const id = randomUUID();
  const email = `keys${++userCount}@acme.example`;
  const password = `Strong-Pass${userCount}!word`;
  const totpSecret = newTotpSecret();
  const now = emu.ctx.now();
  emu.ctx.state.users[id] = {
    id,
    entityId: emu.bootstrap.entityId,
    email,
    firstName: null,
    lastName: null,
    passwordHash: hashPassword(password),
    roles,
    inviteStatus: "activated",
    invitedAt: null,
    totpSecret,
    twoFactorSetupAt: now,
    backupCodeHashes: [],
    platformAdmin: false,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  return { id, email, password, totpSecret };
}

/** Signs in through the whole 2FA flow and returns the bearer session token. */
async function session(who: Who | { email: string; password: string; totpSecret: string }): Promise<string> {
  const user = typeof who === "string" ? emu.bootstrap.users[who] : who;
  const started = await emu.call("POST", "/auth/sign-in/email", {
    as: null,
    body: { email: user.email, password: user.password },
  });
  expect(started.body.error).toBe("TWO_FACTOR_REQUIRED");
  const setCookie = started.headers["set-cookie"];
  const line = (Array.isArray(setCookie) ? setCookie : [setCookie]).find((c) => c?.startsWith(TWO_FACTOR_COOKIE))!;
  const done = await emu.call<{ token: string }>("POST", "/auth/two-factor/verify-totp", {
    as: null,
    headers: { cookie: line.split(";")[0] },
    body: { code: totpFor(user.totpSecret).generate({ timestamp: emu.ctx.now() }) },
  });
  expect(done.status).toBe(200);
  return done.body.data!.token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function createKey(token: string, body: Record<string, unknown>) {
  return emu.call<KeyWithSecret>("POST", "/auth/api-keys/me", { as: null, headers: bearer(token), body });
}

async function createdKey(token: string, body: Record<string, unknown>): Promise<KeyWithSecret> {
  const res = await createKey(token, body);
  expect(res.status).toBe(201);
  return res.body.data!;
}

/** Calls with a raw key secret in X-API-Key. */
const withKey = (key: string) => ({ as: null, headers: { "x-api-key": key } }) as const;

async function listAll(as: Who, query = "limit=100") {
  return emu.call<ApiKey[]>("GET", `/auth/api-keys?${query}`, { as });
}

describe("creating keys", () => {
  it("creates a key from a 2FA session: svc_ prefix, 32 characters, only the hash stored", async () => {
    const token = await session("admin");
    const before = emu.ctx.now();
    const res = await createKey(token, { name: "ci pipeline", metadata: { team: "platform" } });
    expect(res.status).toBe(201);
    const created = res.body.data!;
    expect(created.key).toMatch(/^svc_[A-Za-z0-9]{28}$/);
    expect(created.key).toHaveLength(32);
    expect(created.start).toBe(created.key.slice(0, created.start.length));
    expect(created.start.startsWith("svc_")).toBe(true);
    expect(created).toMatchObject({
      name: "ci pipeline",
      status: "Active",
      enabled: true,
      roleId: null,
      userId: emu.bootstrap.users.admin.id,
      metadata: { team: "platform" },
      lastUsedAt: null,
    });
    const expiresIn = Date.parse(created.expiresAt) - before;
    expect(expiresIn).toBeGreaterThanOrEqual(90 * DAY - 1000);
    expect(expiresIn).toBeLessThanOrEqual(90 * DAY + 1000);

    const stored = emu.ctx.state.apiKeys[created.id];
    expect(stored.secretHash).toBe(hashSecret(created.key));
    expect(stored.entityId).toBe(emu.bootstrap.entityId);
    expect(JSON.stringify(emu.ctx.state.apiKeys)).not.toContain(created.key);

    for (const headers of [{ "x-api-key": created.key }, bearer(created.key)]) {
      const check = await emu.call("GET", "/auth/check", { as: null, headers });
      expect(check.status).toBe(200);
      expect(check.body.data).toMatchObject({ user: { id: emu.bootstrap.users.admin.id } });
    }
    expect(emu.ctx.state.apiKeys[created.id].lastUsedAt).not.toBeNull();

    const listed = (await listAll("admin")).body.data!.find((k) => k.id === created.id)!;
    expect(listed).not.toHaveProperty("key");
    expect(listed.start).toBe(created.start);
  });

  it("refuses API key callers (403) and anonymous callers (401)", async () => {
    const viaKey = await emu.call("POST", "/auth/api-keys/me", { as: "admin", body: { name: "from a key" } });
    expect(viaKey.status).toBe(403);
    expect(viaKey.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    const anonymous = await emu.call("POST", "/auth/api-keys/me", { as: null, body: { name: "nobody" } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toBe("NOT_AUTHENTICATED");
    expect(Object.values(emu.ctx.state.apiKeys).some((k) => k.name === "from a key" || k.name === "nobody")).toBe(
      false,
    );
  });

  it("validates the body strictly", async () => {
    const token = await session("admin");
    for (const body of [
      {},
      { name: "" },
      { name: "x", roleId: "root" },
      { name: "x", expiresInDays: 0 },
      { name: "x", expiresInDays: 1.5 },
      { name: "x", extra: true },
    ]) {
      const res = await createKey(token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error).toBe("INVALID_REQUEST");
    }
  });

  it("never lets a key exceed its creator: member cannot create tenant-admin or vm-operator keys", async () => {
    const token = await session("member");
    for (const roleId of ["tenant-admin", "vm-operator"]) {
      const res = await createKey(token, { name: `member ${roleId}`, roleId });
      expect(res.status).toBe(403);
      expect(res.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    }
    expect(Object.values(emu.ctx.state.apiKeys).filter((k) => k.name.startsWith("member "))).toHaveLength(0);
    const own = await createdKey(token, { name: "member tenant-user", roleId: "tenant-user" });
    expect(own.roleId).toBe("tenant-user");

    const options = await emu.call<{ id: string }[]>("GET", "/auth/api-keys/options/roles", {
      as: null,
      headers: bearer(token),
    });
    expect(options.body.data!.map((o) => o.id)).toEqual(["tenant-user"]);
    const adminOptions = await emu.call<{ id: string }[]>("GET", "/auth/api-keys/options/roles", {
      as: null,
      headers: bearer(await session("admin")),
    });
    expect(adminOptions.body.data!.map((o) => o.id).sort()).toEqual(["tenant-admin", "tenant-user", "vm-operator"]);
  });

  it("limits a key to its role: a vm-operator key cannot create a network", async () => {
    const key = (await createdKey(await session("admin"), { name: "operator", roleId: "vm-operator" })).key;
    const check = await emu.call<{ user: { roles: string[]; permissions: string[] } }>(
      "GET",
      "/auth/check",
      withKey(key),
    );
    expect(check.body.data!.user.roles).toEqual(["vm-operator"]);
    expect(check.body.data!.user.permissions.sort()).toEqual([...rolePermissions["vm-operator"]].sort());
    const networksBefore = Object.keys(emu.ctx.state.networks).length;
    const res = await emu.call("POST", "/resource/networks", {
      ...withKey(key),
      body: { name: "operator-net", datacenterId: emu.bootstrap.fixtures.datacenters[0].id, networkType: "standard" },
    });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    expect(Object.keys(emu.ctx.state.networks)).toHaveLength(networksBefore);
    const manage = await emu.call("DELETE", `/auth/api-keys/${randomUUID()}`, withKey(key));
    expect(manage.status).toBe(403);
  });

  it("offers the expiration options", async () => {
    const res = await emu.call<{ days: number; label: string }[]>("GET", "/auth/api-keys/options/expiration", {
      as: null,
      headers: bearer(await session("member")),
    });
    expect(res.status).toBe(200);
    expect(res.body.data!.map((o) => o.days)).toEqual([7, 30, 90, 180, 365]);
    const viaKey = await emu.call("GET", "/auth/api-keys/options/expiration", { as: "member" });
    expect(viaKey.status).toBe(403);
  });
});

describe("listing keys", () => {
  it("shows every entity key to managers and only their own to others, never other entities' keys", async () => {
    const adminList = (await listAll("admin")).body.data!;
    const memberList = (await listAll("member")).body.data!;
    const outsiderList = (await listAll("outsider")).body.data!;
    const { admin, member, outsider } = emu.bootstrap.users;
    expect(adminList.some((k) => k.userId === member.id)).toBe(true);
    expect(adminList.some((k) => k.userId === admin.id)).toBe(true);
    expect(adminList.some((k) => k.userId === outsider.id)).toBe(false);
    expect(memberList.length).toBeGreaterThan(0);
    expect(memberList.every((k) => k.userId === member.id)).toBe(true);
    expect(outsiderList.every((k) => k.userId === outsider.id)).toBe(true);
  });

  it("paginates with search and sort (default createdAt:desc)", async () => {
    const token = await session("admin");
    for (const name of ["page-b", "page-a", "page-c"]) {
      await createdKey(token, { name });
      emu.advance(1000);
    }
    const searched = await listAll("admin", "search=PAGE-&sort=name:asc");
    expect(searched.body.data!.map((k) => k.name)).toEqual(["page-a", "page-b", "page-c"]);
    expect(searched.body.meta).toMatchObject({ total: 3, page: 1, totalPages: 1 });
    const defaultOrder = await listAll("admin", "search=page-");
    expect(defaultOrder.body.data!.map((k) => k.name)).toEqual(["page-c", "page-a", "page-b"]);
    const paged = await listAll("admin", "search=page-&sort=name:desc&limit=2&page=2");
    expect(paged.body.data!.map((k) => k.name)).toEqual(["page-a"]);
    expect(paged.body.meta).toMatchObject({ pageSize: 2, hasNextPage: false, hasPreviousPage: true });
    const bySort = await listAll("admin", "sort=secretHash:asc");
    expect(bySort.status).toBe(400);
    expect((await listAll("admin", "sort=name")).status).toBe(400);
  });
});

describe("key lifecycle", () => {
  it("moves Active → Expiring → Expired with time; an expired key answers 401 API_KEY_EXPIRED", async () => {
    const key = await createdKey(await session("admin"), { name: "short-lived", expiresInDays: 32 });
    const statusOf = async () => (await listAll("admin")).body.data!.find((k) => k.id === key.id)!.status;
    expect(await statusOf()).toBe("Active");
    emu.advance(3 * DAY);
    expect(await statusOf()).toBe("Expiring");
    expect((await emu.call("GET", "/auth/check", withKey(key.key))).status).toBe(200);
    emu.advance(30 * DAY);
    expect(await statusOf()).toBe("Expired");
    const res = await emu.call("GET", "/auth/check", withKey(key.key));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("API_KEY_EXPIRED");
  });

  it("suspends (401 API_KEY_INVALID) and resumes a key", async () => {
    const key = await createdKey(await session("member"), { name: "pausable" });
    const suspended = await emu.call<ApiKey>("PATCH", `/auth/api-keys/${key.id}/status`, {
      as: "member",
      body: { enabled: false },
    });
    expect(suspended.status).toBe(200);
    expect(suspended.body.data).toMatchObject({ status: "Suspended", enabled: false });
    expect(emu.ctx.state.apiKeys[key.id].enabled).toBe(false);
    const refused = await emu.call("GET", "/auth/check", withKey(key.key));
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe("API_KEY_INVALID");

    const resumed = await emu.call<ApiKey>("PATCH", `/auth/api-keys/${key.id}/status`, {
      as: "admin",
      body: { enabled: true },
    });
    expect(resumed.body.data).toMatchObject({ status: "Active", enabled: true });
    expect((await emu.call("GET", "/auth/check", withKey(key.key))).status).toBe(200);
    const events = emu.ctx.state.audit.filter((a) => a.detail?.includes(key.id)).map((a) => a.event);
    expect(events).toEqual(expect.arrayContaining(["api-key.created", "api-key.suspended", "api-key.resumed"]));
  });

  it("rotates: the old secret stops at once, the new one works, expiry unchanged", async () => {
    const key = await createdKey(await session("member"), { name: "rotating" });
    const res = await emu.call<KeyWithSecret>("POST", `/auth/api-keys/${key.id}/rotate`, withKey(key.key));
    expect(res.status).toBe(200);
    const rotated = res.body.data!;
    expect(rotated.id).toBe(key.id);
    expect(rotated.key).not.toBe(key.key);
    expect(rotated.key).toMatch(/^svc_[A-Za-z0-9]{28}$/);
    expect(rotated.start).toBe(rotated.key.slice(0, rotated.start.length));
    expect(rotated.expiresAt).toBe(key.expiresAt);
    expect(emu.ctx.state.apiKeys[key.id].secretHash).toBe(hashSecret(rotated.key));
    const old = await emu.call("GET", "/auth/check", withKey(key.key));
    expect(old.status).toBe(401);
    expect(old.body.error).toBe("API_KEY_INVALID");
    expect((await emu.call("GET", "/auth/check", withKey(rotated.key))).status).toBe(200);
    // A manager may rotate any key of the entity.
    const byAdmin = await emu.call<KeyWithSecret>("POST", `/auth/api-keys/${key.id}/rotate`, { as: "admin" });
    expect(byAdmin.status).toBe(200);
    expect((await emu.call("GET", "/auth/check", withKey(rotated.key))).status).toBe(401);
  });

  it("hides keys from callers who may not act on them (404)", async () => {
    const adminKey = emu.ctx.state.apiKeys[(await createdKey(await session("admin"), { name: "admin only" })).id];
    for (const [as, method, path, body] of [
      ["outsider", "POST", `/auth/api-keys/${adminKey.id}/rotate`, undefined],
      ["outsider", "PATCH", `/auth/api-keys/${adminKey.id}/status`, { enabled: false }],
      ["outsider", "DELETE", `/auth/api-keys/${adminKey.id}`, undefined],
      ["outsider", "DELETE", `/auth/api-keys/me/${adminKey.id}`, undefined],
      ["member", "POST", `/auth/api-keys/${adminKey.id}/rotate`, undefined],
      ["member", "PATCH", `/auth/api-keys/${adminKey.id}/status`, { enabled: false }],
      ["member", "DELETE", `/auth/api-keys/me/${adminKey.id}`, undefined],
    ] as const) {
      const res = await emu.call(method, path, { as, body });
      expect(res.status, `${as} ${method} ${path}`).toBe(404);
      expect(res.body.error).toBe("NOT_FOUND");
    }
    expect((await listAll("outsider")).body.data!.some((k) => k.id === adminKey.id)).toBe(false);
    const stored = emu.ctx.state.apiKeys[adminKey.id];
    expect(stored).toMatchObject({ enabled: true, secretHash: adminKey.secretHash });
    const memberDelete = await emu.call("DELETE", `/auth/api-keys/${adminKey.id}`, { as: "member" });
    expect(memberDelete.status).toBe(403);
    expect(emu.ctx.state.apiKeys[adminKey.id]).toBeDefined();
  });

  it("deletes own keys, and any entity key with api-keys:manage", async () => {
    const own = await createdKey(await session("member"), { name: "to delete" });
    const res = await emu.call("DELETE", `/auth/api-keys/me/${own.id}`, { as: "member" });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ affected: 1 });
    expect(emu.ctx.state.apiKeys[own.id]).toBeUndefined();
    const gone = await emu.call("GET", "/auth/check", withKey(own.key));
    expect(gone.body.error).toBe("API_KEY_INVALID");
    expect((await emu.call("DELETE", `/auth/api-keys/me/${own.id}`, { as: "member" })).status).toBe(404);

    const another = await createdKey(await session("member"), { name: "admin deletes" });
    const byAdmin = await emu.call("DELETE", `/auth/api-keys/${another.id}`, { as: "admin" });
    expect(byAdmin.status).toBe(200);
    expect(emu.ctx.state.apiKeys[another.id]).toBeUndefined();
    expect(emu.ctx.state.audit.filter((a) => a.event === "api-key.deleted").length).toBeGreaterThanOrEqual(2);
  });

  it("refuses the key of a deleted owner with 401 API_KEY_INVALID", async () => {
    const owner = makeUser();
    const key = await createdKey(await session(owner), { name: "orphan" });
    expect((await emu.call("GET", "/auth/check", withKey(key.key))).status).toBe(200);
    emu.ctx.state.users[owner.id].deletedAt = emu.ctx.now();
    const res = await emu.call("GET", "/auth/check", withKey(key.key));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("API_KEY_INVALID");
    expect((await listAll("admin")).body.data!.some((k) => k.id === key.id)).toBe(false);
  });

  it("answers an unknown key with 401 API_KEY_INVALID", async () => {
    const res = await emu.call("GET", "/auth/api-keys", withKey("svc_" + "x".repeat(28)));
    expect(res.status).toBe(401);
    expect(res.body.error).toBe("API_KEY_INVALID");
  });

  it("lets only platform administrators override a key's rate limit", async () => {
    const key = await createdKey(await session("member"), { name: "limited" });
    const body = { requestsPerWindow: 500, windowSeconds: 60 };
    const byAdmin = await emu.call("PUT", `/auth/api-keys/${key.id}/rate-limit`, { as: "admin", body });
    expect(byAdmin.status).toBe(403);
    expect(byAdmin.body.error).toBe("INSUFFICIENT_PERMISSIONS");
    const byMember = await emu.call("PUT", `/auth/api-keys/${key.id}/rate-limit`, { as: "member", body });
    expect(byMember.status).toBe(403);
    expect(emu.ctx.state.apiKeys[key.id].rateLimit).toBeNull();

    const platform = makeUser(["tenant-admin"]);
    emu.ctx.state.users[platform.id].platformAdmin = true;
    const token = await session(platform);
    const ok = await emu.call("PUT", `/auth/api-keys/${key.id}/rate-limit`, { as: null, headers: bearer(token), body });
    expect(ok.status).toBe(200);
    expect(emu.ctx.state.apiKeys[key.id].rateLimit).toEqual(body);
    const invalid = await emu.call("PUT", `/auth/api-keys/${key.id}/rate-limit`, {
      as: null,
      headers: bearer(token),
      body: { requestsPerWindow: 0, windowSeconds: 60 },
    });
    expect(invalid.status).toBe(400);
  });

  it("never writes a key secret to the audit log", async () => {
    const token = await session("admin");
    const created = await createdKey(token, { name: "audited" });
    const rotated = (
      await emu.call<KeyWithSecret>("POST", `/auth/api-keys/${created.id}/rotate`, { as: null, headers: bearer(token) })
    ).body.data!;
    const entries = emu.ctx.state.audit.filter((a) => a.detail?.includes(created.id));
    expect(entries.map((e) => e.event)).toEqual(["api-key.created", "api-key.rotated"]);
    const log = JSON.stringify(emu.ctx.state.audit);
    for (const secret of [
      created.key,
      rotated.key,
      token,
      ...Object.values(emu.bootstrap.users).map((u) => u.apiKey),
    ]) {
      expect(log).not.toContain(secret);
    }
  });
});
