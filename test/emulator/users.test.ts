import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Role, User } from "../../provider/api";
import type { z } from "zod";
import { hashSecret, rolePermissions } from "../../emulator/http";
import type { EmulatorContext } from "../../emulator/context";
import type { Bootstrap } from "../../emulator/state";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
let bootstrap: Bootstrap;
let ctx: EmulatorContext;
beforeAll(async () => {
  emu = await testEmulator();
  ({ bootstrap, ctx } = emu);
});
afterAll(() => emu.app.close());
const strongPassword = "Str0ng-Passw0rd!";
let counter = 0;
const freshEmail = (tag: string) => `${tag}-${++counter}@acme.example`;

async function invite(extra: Record<string, unknown> = {}, entityId?: string): Promise<User> {
  const q = entityId ? `?entityId=${entityId}` : "";
  const res = await emu.call<User>("POST", `/users${q}`, { body: { email: freshEmail("invitee"), ...extra } });
  expect(res.status).toBe(201);
  return res.body.data!;
}

async function createTeam(name: string, entityId?: string): Promise<number> {
  const q = entityId ? `?entityId=${entityId}` : "";
  const res = await emu.call<{ teamId: number }>("POST", `/teams${q}`, { body: { name } });
  expect(res.status).toBe(201);
  return res.body.data!.teamId;
}

const listIds = async (query: string, as: "admin" | "member" | "outsider" = "admin") => {
  const res = await emu.call<User[]>("GET", `/users?limit=100&${query}`, { as });
  expect(res.status).toBe(200);
  return res.body.data!.map((u) => u.id);
};

const outsiderEntityId = () => ctx.state.users[bootstrap.users.outsider.id].entityId;

describe("GET /users/me", () => {
  it("returns the caller's own profile to any role", async () => {
    const res = await emu.call<User>("GET", "/users/me", { as: "member" });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      id: bootstrap.users.member.id,
      email: bootstrap.users.member.email,
      name: "Max Seed",
      roles: ["tenant-user"],
      inviteStatus: "activated",
      deletedAt: null,
    });
  });
});

describe("POST /users", () => {
  it("invites by default: pending, no password, an invite mail whose token sets the first password", async () => {
    const email = freshEmail("Invited");
    const res = await emu.call<User>("POST", "/users", { body: { email, firstName: "Ivy", lastName: "Vite" } });
    expect(res.status).toBe(201);
    const user = res.body.data!;
    expect(user).toMatchObject({
      email: email.toLowerCase(),
      name: "Ivy Vite",
      inviteStatus: "pending",
      roles: ["tenant-user"],
      entityId: bootstrap.entityId,
      teamIds: [],
    });
    const rec = ctx.state.users[user.id];
    expect(rec.passwordHash).toBeNull();
    expect(rec.totpSecret).toBeNull();
    const mail = ctx.state.outbox.filter((m) => m.to === email.toLowerCase() && m.kind === "invite");
    expect(mail).toHaveLength(1);
    expect(ctx.state.resetTokens[hashSecret(mail[0].secret)]?.userId).toBe(user.id);
  });

  it("registers with a password: activated at once, no mail", async () => {
    const email = freshEmail("registered");
    const res = await emu.call<User>("POST", "/users", {
      body: { email, action: "register", password: strongPassword, roleNames: ["vm-operator"] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ inviteStatus: "activated", roles: ["vm-operator"], name: email });
    expect(ctx.state.users[res.body.data!.id].passwordHash).not.toBeNull();
    expect(ctx.state.outbox.some((m) => m.to === email)).toBe(false);
  });

  it.each([
    ["too short", "Sh0rt!a"],
    ["no upper case", "no-upper-case-1!"],
    ["no digit", "No-Digits-Here!!"],
    ["no special character", "NoSpecial12345"],
    ["too long", `Aa1!${"x".repeat(50)}`],
  ])("refuses a register password that is %s with 400", async (_why, password) => {
    const email = freshEmail("weak");
    const res = await emu.call("POST", "/users", { body: { email, action: "register", password } });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("INVALID_REQUEST");
    expect(Object.values(ctx.state.users).some((u) => u.email === email)).toBe(false);
  });

  it("refuses a password on an invite and a register without password", async () => {
    const a = await emu.call("POST", "/users", { body: { email: freshEmail("x"), password: strongPassword } });
    const b = await emu.call("POST", "/users", { body: { email: freshEmail("x"), action: "register" } });
    expect([a.status, b.status]).toEqual([400, 400]);
  });

  it("answers 409 for an email already in use, ignoring case", async () => {
    const res = await emu.call("POST", "/users", { body: { email: bootstrap.users.member.email.toUpperCase() } });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("CONFLICT");
  });

  it("refuses a tenant-user (403) and an unauthenticated caller (401)", async () => {
    const email = freshEmail("nope");
    expect((await emu.call("POST", "/users", { as: "member", body: { email } })).status).toBe(403);
    expect((await emu.call("POST", "/users", { as: null, body: { email } })).status).toBe(401);
    expect(Object.values(ctx.state.users).some((u) => u.email === email)).toBe(false);
  });

  it("registers into a child entity named by entityId, and refuses another tenant's entity", async () => {
    const child = await emu.call<User>("POST", "/users", {
      body: {
        email: freshEmail("child"),
        action: "register",
        password: strongPassword,
        entityId: bootstrap.childEntityId,
      },
    });
    expect(child.status).toBe(201);
    expect(ctx.state.users[child.body.data!.id].entityId).toBe(bootstrap.childEntityId);
    const foreign = await emu.call("POST", "/users", {
      body: {
        email: freshEmail("foreign"),
        action: "register",
        password: strongPassword,
        entityId: outsiderEntityId(),
      },
    });
    expect(foreign.status).toBe(403);
  });

  it("places the user in the given groups and refuses groups of another entity with 400", async () => {
    const teamId = await createTeam("create-user-team");
    const user = await invite({ teamIds: [teamId] });
    expect(user.teamIds).toEqual([teamId]);
    expect(ctx.state.teams[String(teamId)].memberIds).toContain(user.id);
    const otherTeam = await createTeam("other-tenant-team", bootstrap.childEntityId);
    const res = await emu.call("POST", "/users", { body: { email: freshEmail("t"), teamIds: [otherTeam, 9999] } });
    expect(res.status).toBe(400);
    expect(res.body.message).toContain("9999");
  });

  it("refuses to grant a role carrying permissions the caller lacks (403)", async () => {
    const saved = rolePermissions["tenant-user"];
    // A tenant-user allowed to manage users, but still without the VM permissions of vm-operator.
    rolePermissions["tenant-user"] = [...saved, "user:write"];
    try {
      const email = freshEmail("escalate");
      const res = await emu.call("POST", "/users", { as: "member", body: { email, roleNames: ["vm-operator"] } });
      expect(res.status).toBe(403);
      const ok = await emu.call("POST", "/users", { as: "member", body: { email, roleNames: ["tenant-user"] } });
      expect(ok.status).toBe(201);
    } finally {
      rolePermissions["tenant-user"] = saved;
    }
  });
});

describe("GET/PUT /users/:id", () => {
  it("reads and updates a user; the new values are stored", async () => {
    const user = await invite();
    const newEmail = freshEmail("renamed");
    const put = await emu.call<User>("PUT", `/users/${user.id}`, {
      body: { firstName: "Rena", lastName: "Med", email: newEmail },
    });
    expect(put.status).toBe(200);
    const got = await emu.call<User>("GET", `/users/${user.id}`);
    expect(got.body.data).toMatchObject({ firstName: "Rena", lastName: "Med", email: newEmail, name: "Rena Med" });
    expect(ctx.state.users[user.id].email).toBe(newEmail);
  });

  it("answers 409 when the new email is taken and keeps the old one", async () => {
    const user = await invite();
    const res = await emu.call("PUT", `/users/${user.id}`, { body: { email: bootstrap.users.admin.email } });
    expect(res.status).toBe(409);
    expect(ctx.state.users[user.id].email).toBe(user.email);
  });

  it("hides main-entity users from the outsider (404) and refuses unknown fields (400)", async () => {
    const res = await emu.call("GET", `/users/${bootstrap.users.member.id}`, { as: "outsider" });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("NOT_FOUND");
    const bad = await emu.call("PUT", `/users/${bootstrap.users.member.id}`, { body: { nickname: "x" } });
    expect(bad.status).toBe(400);
  });

  it("reaches child-entity users only with entityId; the outsider's entity is refused (403)", async () => {
    const child = await invite({}, bootstrap.childEntityId);
    expect((await emu.call("GET", `/users/${child.id}`)).status).toBe(404);
    expect((await emu.call("GET", `/users/${child.id}?entityId=${bootstrap.childEntityId}`)).status).toBe(200);
    expect((await emu.call("GET", `/users/${child.id}?entityId=${outsiderEntityId()}`)).status).toBe(403);
  });
});

describe("DELETE /users/:id", () => {
  it("soft-deletes: 204, record kept with deletedAt, sessions and memberships gone, key stops working", async () => {
    const teamId = await createTeam("delete-user-team");
    const user = await invite({ teamIds: [teamId] });
    ctx.state.sessions["fake-session-hash"] = {
      tokenHash: "fake-session-hash",
      userId: user.id,
      createdAt: ctx.now(),
      lastSeenAt: ctx.now(),
      rememberMe: false,
    };
    const res = await emu.call("DELETE", `/users/${user.id}`);
    expect(res.status).toBe(204);
    expect(res.raw.body).toBe("");
    expect(ctx.state.users[user.id].deletedAt).not.toBeNull();
    expect(ctx.state.sessions["fake-session-hash"]).toBeUndefined();
    expect(ctx.state.teams[String(teamId)].memberIds).not.toContain(user.id);
    expect((await emu.call("GET", `/users/${user.id}`)).status).toBe(404);
    expect((await emu.call("PUT", `/users/${user.id}`, { body: { firstName: "Z" } })).status).toBe(404);
    expect((await emu.call("DELETE", `/users/${user.id}`)).status).toBe(404);
  });

  it("lists deleted users only with deletedFilter include or only", async () => {
    const user = await invite();
    await emu.call("DELETE", `/users/${user.id}`);
    expect(await listIds("")).not.toContain(user.id);
    expect(await listIds("deletedFilter=exclude")).not.toContain(user.id);
    expect(await listIds("deletedFilter=include")).toContain(user.id);
    const only = await emu.call<User[]>("GET", "/users?limit=100&deletedFilter=only");
    expect(only.body.data!.map((u) => u.id)).toContain(user.id);
    expect(only.body.data!.every((u) => u.deletedAt !== null)).toBe(true);
  });

  it("a deleted user's API key no longer authenticates and the email becomes free again", async () => {
    const res = await emu.call<User>("POST", "/users", {
      body: { email: freshEmail("keyed"), action: "register", password: strongPassword, roleNames: ["tenant-admin"] },
    });
    const user = res.body.data!;
    const keyId = "deleted-owner-key";
    ctx.state.apiKeys[keyId] = {
      ...Object.values(ctx.state.apiKeys)[0],
      id: keyId,
      userId: user.id,
      secretHash: hashSecret("svc_deletedOwnerKey000000000000"),
    };
    const headers = { "x-api-key": "svc_deletedOwnerKey000000000000" };
    expect((await emu.call("GET", "/users/me", { as: null, headers })).status).toBe(200);
    await emu.call("DELETE", `/users/${user.id}`);
    const after = await emu.call("GET", "/users/me", { as: null, headers });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe("API_KEY_INVALID");
    expect((await emu.call("POST", "/users", { body: { email: user.email } })).status).toBe(201);
  });

  it("refuses to delete yourself with 409", async () => {
    const res = await emu.call("DELETE", `/users/${bootstrap.users.admin.id}`);
    expect(res.status).toBe(409);
    expect(ctx.state.users[bootstrap.users.admin.id].deletedAt).toBeNull();
  });
});

describe("invitations", () => {
  it("a pending invitation reads as expired after 7 days; resend makes it pending again with a new mail", async () => {
    const user = await invite();
    emu.advance(7 * 24 * 3600_000 + 60_000);
    const expired = await emu.call<User>("GET", `/users/${user.id}`);
    expect(expired.body.data!.inviteStatus).toBe("expired");
    expect(await listIds("inviteStatus=expired")).toContain(user.id);
    expect(await listIds("inviteStatus=pending")).not.toContain(user.id);
    const mailsBefore = ctx.state.outbox.filter((m) => m.to === user.email).length;
    const res = await emu.call<{ id: string; inviteStatus: string; invitedAt: string }>(
      "POST",
      `/users/${user.id}/resend-invite`,
    );
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: user.id, inviteStatus: "pending" });
    expect(Date.parse(res.body.data!.invitedAt)).toBe(ctx.state.users[user.id].invitedAt);
    expect(ctx.state.outbox.filter((m) => m.to === user.email)).toHaveLength(mailsBefore + 1);
    expect((await emu.call<User>("GET", `/users/${user.id}`)).body.data!.inviteStatus).toBe("pending");
  });

  it("refuses to resend to an activated user (409)", async () => {
    const res = await emu.call("POST", `/users/${bootstrap.users.member.id}/resend-invite`);
    expect(res.status).toBe(409);
  });

  it("bulk resend reports one result per id", async () => {
    const pending = await invite();
    const missing = "00000000-0000-4000-8000-000000000000";
    const res = await emu.call<{ id: string; success: boolean; error: string | null }[]>(
      "POST",
      "/users/bulk/resend-invite",
      { body: { ids: [pending.id, bootstrap.users.member.id, missing] } },
    );
    expect(res.status).toBe(200);
    expect(res.body.data!.map((r) => [r.id, r.success])).toEqual([
      [pending.id, true],
      [bootstrap.users.member.id, false],
      [missing, false],
    ]);
  });
});

describe("GET /users filters", () => {
  it("filters by team, no team, role, no role, excluded team, invite status and search", async () => {
    const teamId = await createTeam("filter-team");
    const inTeam = await invite({ teamIds: [teamId], roleNames: ["vm-operator"], firstName: "Zebulon" });
    const noRole = await invite({ roleNames: [] });
    expect(await listIds(`teamId=${teamId}`)).toEqual([inTeam.id]);
    const unassigned = await listIds("teamId=0");
    expect(unassigned).toContain(noRole.id);
    expect(unassigned).not.toContain(inTeam.id);
    expect(await listIds("noTeam=true")).toEqual(unassigned);
    expect(await listIds("roleId=vm-operator")).toContain(inTeam.id);
    expect(await listIds("roleId=vm-operator")).not.toContain(noRole.id);
    expect(await listIds("roleId=0")).toEqual([noRole.id]);
    expect(await listIds("noRole=true")).toEqual([noRole.id]);
    expect(await listIds(`filter[excludeTeamId]=${teamId}`)).not.toContain(inTeam.id);
    expect(await listIds("search=zebul")).toEqual([inTeam.id]);
    expect(await listIds("inviteStatus=activated&inviteStatus=pending")).toEqual(
      expect.arrayContaining([inTeam.id, bootstrap.users.admin.id]),
    );
    expect((await emu.call("GET", "/users?roleId=superuser")).status).toBe(400);
  });

  it("sorts by createdAt desc by default and by email on request", async () => {
    const first = await invite();
    emu.advance(1000);
    const second = await invite();
    const ids = await listIds("");
    expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
    const byEmail = await emu.call<User[]>("GET", "/users?limit=100&sort=email:asc");
    const emails = byEmail.body.data!.map((u) => u.email);
    expect(emails).toEqual([...emails].sort());
    expect((await emu.call("GET", "/users?sort=email")).status).toBe(400);
  });

  it("paginates with meta", async () => {
    const res = await emu.call<User[]>("GET", "/users?limit=2&page=2");
    expect(res.body.data).toHaveLength(2);
    expect(res.body.meta).toMatchObject({ page: 2, pageSize: 2, hasPreviousPage: true });
  });

  it("lists a child entity with filter[entityId]; refuses the outsider's entity (403); hides others' users", async () => {
    const child = await invite({}, bootstrap.childEntityId);
    expect(await listIds(`filter[entityId]=${bootstrap.childEntityId}`)).toContain(child.id);
    expect(await listIds("")).not.toContain(child.id);
    const res = await emu.call("GET", `/users?filter[entityId]=${outsiderEntityId()}`);
    expect(res.status).toBe(403);
    const outsiders = await listIds("", "outsider");
    expect(outsiders).toEqual([bootstrap.users.outsider.id]);
  });
});

describe("roles", () => {
  it("adds a role (idempotently), lists it with permissions, removes it (204) and 404s on a role not held", async () => {
    const user = await invite();
    const add = await emu.call<z.infer<typeof Role>[]>("POST", `/users/${user.id}/roles`, {
      body: { roleName: "vm-operator" },
    });
    expect(add.status).toBe(200);
    await emu.call("POST", `/users/${user.id}/roles`, { body: { roleName: "vm-operator" } });
    expect(ctx.state.users[user.id].roles).toEqual(["tenant-user", "vm-operator"]);
    const roles = await emu.call<z.infer<typeof Role>[]>("GET", `/users/${user.id}/roles`, { as: "member" });
    expect(roles.body.data!.find((r) => r.name === "vm-operator")?.permissions).toContain("vm:operate");
    expect((await emu.call("DELETE", `/users/${user.id}/roles/vm-operator`)).status).toBe(204);
    expect(ctx.state.users[user.id].roles).toEqual(["tenant-user"]);
    expect((await emu.call("DELETE", `/users/${user.id}/roles/vm-operator`)).status).toBe(404);
    expect((await emu.call("POST", `/users/${user.id}/roles`, { body: { roleName: "root" } })).status).toBe(400);
  });

  it("bulk assign-roles creates every combination and counts only new ones", async () => {
    const a = await invite();
    const b = await invite({ roleNames: ["vm-operator"] });
    const res = await emu.call<{ affected: number }>("POST", "/users/bulk/assign-roles", {
      body: { userIds: [a.id, b.id], roleNames: ["vm-operator", "tenant-user"] },
    });
    expect(res.body.data).toEqual({ affected: 2 });
    expect(ctx.state.users[a.id].roles.sort()).toEqual(["tenant-user", "vm-operator"]);
    expect(ctx.state.users[b.id].roles.sort()).toEqual(["tenant-user", "vm-operator"]);
  });
});

describe("bulk and user groups", () => {
  it("bulk delete soft-deletes each id and reports failures per id", async () => {
    const a = await invite();
    const res = await emu.call<{ id: string; success: boolean }[]>("POST", "/users/bulk/delete", {
      body: { ids: [a.id, bootstrap.users.admin.id] },
    });
    expect(res.body.data!.map((r) => r.success)).toEqual([true, false]);
    expect(ctx.state.users[a.id].deletedAt).not.toBeNull();
    expect(ctx.state.users[bootstrap.users.admin.id].deletedAt).toBeNull();
  });

  it("bulk assign-teams adds memberships and /users/:id/teams pages them", async () => {
    const t1 = await createTeam("bulk-a");
    const t2 = await createTeam("bulk-b");
    const user = await invite();
    const res = await emu.call<{ affected: number }>("POST", "/users/bulk/assign-teams", {
      body: { userIds: [user.id], teamIds: [t1, t2] },
    });
    expect(res.body.data).toEqual({ affected: 2 });
    const again = await emu.call<{ affected: number }>("POST", "/users/bulk/assign-teams", {
      body: { userIds: [user.id], teamIds: [t1, t2] },
    });
    expect(again.body.data).toEqual({ affected: 0 });
    const teams = await emu.call<{ id: number; name: string }[]>("GET", `/users/${user.id}/teams?limit=1`);
    expect(teams.body.data!.map((t) => t.name)).toEqual(["bulk-a"]);
    expect(teams.body.meta).toMatchObject({ total: 2, totalPages: 2 });
    const bad = await emu.call("POST", "/users/bulk/assign-teams", { body: { userIds: [user.id], teamIds: [424242] } });
    expect(bad.status).toBe(400);
  });
});
