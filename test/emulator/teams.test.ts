import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { PageMeta, Team, TeamDetail, User } from "../../provider/api";
import type { EmulatorContext } from "../../emulator/context";
import type { Bootstrap, VmRec } from "../../emulator/state";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
let bootstrap: Bootstrap;
let ctx: EmulatorContext;
beforeAll(async () => {
  emu = await testEmulator();
  ({ bootstrap, ctx } = emu);
});
afterAll(() => emu.app.close());
let counter = 0;

type TeamsMeta = PageMeta & { unassignedUsers: number; unassignedVMs: number };

async function createTeam(name: string, extra: Record<string, unknown> = {}, query = ""): Promise<number> {
  const res = await emu.call<{ teamId: number }>("POST", `/teams${query}`, { body: { name, ...extra } });
  expect(res.status).toBe(201);
  return res.body.data!.teamId;
}

async function inviteUser(entityId?: string): Promise<User> {
  const q = entityId ? `?entityId=${entityId}` : "";
  const res = await emu.call<User>("POST", `/users${q}`, { body: { email: `team-user-${++counter}@acme.example` } });
  expect(res.status).toBe(201);
  return res.body.data!;
}

/** Puts a VM straight into the state (the VM routes belong to another module). */
function seedVm(entityId: string, teamId: number | null): VmRec {
  const now = ctx.now();
  const vm: VmRec = {
    id: randomUUID(),
    entityId,
    name: `vm-${++counter}`,
    status: "Running",
    datacenterId: ctx.state.catalog.datacenters[0].id,
    imageId: 1,
    configurationId: 1,
    teamId,
    publicIp: null,
    nics: [],
    sshKeyIds: [],
    privateKey: "key",
    rescueImageId: null,
    createdAt: now,
    updatedAt: now,
  };
  ctx.state.vms[vm.id] = vm;
  return vm;
}

const getTeam = (id: number, query = "") => emu.call<z.infer<typeof TeamDetail>>("GET", `/teams/${id}${query}`);

describe("POST /teams", () => {
  it("creates a group with integer id and stores it under the caller's entity", async () => {
    const id = await createTeam("platform");
    expect(Number.isInteger(id)).toBe(true);
    expect(ctx.state.teams[String(id)]).toMatchObject({
      name: "platform",
      entityId: bootstrap.entityId,
      memberIds: [],
    });
    const got = await getTeam(id);
    expect(got.status).toBe(200);
    expect(got.body.data).toMatchObject({ id, name: "platform", parentTeamId: null, memberCount: 0, vmCount: 0 });
  });

  it("answers 409 for a name taken in the same entity (any case), but allows it in another entity", async () => {
    await createTeam("Duplicate-Name");
    const res = await emu.call("POST", "/teams", { body: { name: "duplicate-name" } });
    expect(res.status).toBe(409);
    expect(res.body.error).toBe("CONFLICT");
    await createTeam("duplicate-name", {}, `?entityId=${bootstrap.childEntityId}`);
    const outsider = await emu.call("POST", "/teams", { as: "outsider", body: { name: "duplicate-name" } });
    expect(outsider.status).toBe(201);
  });

  it("creates child groups; an unknown or foreign parent is 400", async () => {
    const parent = await createTeam("parent-1");
    const child = await createTeam("child-1", { parentTeamId: parent });
    expect(ctx.state.teams[String(child)].parentTeamId).toBe(parent);
    const foreignParent = await createTeam("foreign-parent", {}, `?entityId=${bootstrap.childEntityId}`);
    expect((await emu.call("POST", "/teams", { body: { name: "x1", parentTeamId: foreignParent } })).status).toBe(400);
    expect((await emu.call("POST", "/teams", { body: { name: "x2", parentTeamId: 99999 } })).status).toBe(400);
  });

  it("is refused to a tenant-user (403)", async () => {
    const res = await emu.call("POST", "/teams", { as: "member", body: { name: "member-team" } });
    expect(res.status).toBe(403);
    expect(Object.values(ctx.state.teams).some((t) => t.name === "member-team")).toBe(false);
  });
});

describe("GET /teams", () => {
  it("sorts by name ascending by default, searches by name, and hides other entities' groups", async () => {
    await createTeam("zz-search-last");
    await createTeam("aa-search-first");
    const res = await emu.call<Team[]>("GET", "/teams?search=search&limit=100");
    expect(res.body.data!.map((t) => t.name)).toEqual(["aa-search-first", "zz-search-last"]);
    const all = await emu.call<Team[]>("GET", "/teams?limit=100");
    const names = all.body.data!.map((t) => t.name.toLowerCase());
    expect(names).toEqual([...names].sort());
    expect(all.body.data!.every((t) => t.entityId === bootstrap.entityId)).toBe(true);
    const desc = await emu.call<Team[]>("GET", "/teams?search=search&sort=name:desc");
    expect(desc.body.data!.map((t) => t.name)).toEqual(["zz-search-last", "aa-search-first"]);
  });

  it("meta carries unassignedUsers and unassignedVMs of the entity", async () => {
    const entityId = bootstrap.childEntityId;
    const q = `?entityId=${entityId}`;
    const before = await emu.call<Team[]>("GET", `/teams${q}`);
    const meta0 = before.body.meta as TeamsMeta;
    const teamId = await createTeam("counted", {}, q);
    const member = await inviteUser(entityId);
    await inviteUser(entityId);
    await emu.call("POST", `/teams/${teamId}/members${q}`, { body: { userId: member.id } });
    seedVm(entityId, null);
    seedVm(entityId, teamId);
    const after = await emu.call<Team[]>("GET", `/teams?filter[entityId]=${entityId}`);
    const meta = after.body.meta as TeamsMeta;
    expect(meta.unassignedUsers).toBe(meta0.unassignedUsers + 1);
    expect(meta.unassignedVMs).toBe(meta0.unassignedVMs + 1);
    expect(after.body.data!.find((t) => t.id === teamId)).toMatchObject({ memberCount: 1, vmCount: 1 });
  });

  it("refuses filter[entityId] of another tenant (403)", async () => {
    const outsiderEntity = ctx.state.users[bootstrap.users.outsider.id].entityId;
    expect((await emu.call("GET", `/teams?filter[entityId]=${outsiderEntity}`)).status).toBe(403);
  });
});

describe("GET /teams/:id", () => {
  it("pages, sorts and searches the members", async () => {
    const id = await createTeam("paged-members");
    const users = [await inviteUser(), await inviteUser(), await inviteUser()];
    await emu.call("POST", "/teams/bulk/add-members", {
      body: { userIds: users.map((u) => u.id), teamIds: [id] },
    });
    const page = await getTeam(id, "?limit=2&page=2&sort=email:asc");
    expect(page.body.data!.memberCount).toBe(3);
    expect(page.body.data!.members.map((m) => m.email)).toEqual([users.map((u) => u.email).sort()[2]]);
    expect(page.body.data!.membersMeta).toMatchObject({ total: 3, page: 2, pageSize: 2, totalPages: 2 });
    const search = await getTeam(id, `?search=${users[1].email.split("@")[0]}`);
    expect(search.body.data!.members.map((m) => m.id)).toEqual([users[1].id]);
    expect(search.body.data!.members[0].teamIds).toContain(id);
  });

  it("is 404 for another tenant's group and for an unknown id", async () => {
    const id = await createTeam("hidden-from-outsider");
    expect((await emu.call("GET", `/teams/${id}`, { as: "outsider" })).status).toBe(404);
    expect((await emu.call("GET", "/teams/987654")).status).toBe(404);
    expect((await emu.call("GET", "/teams/abc")).status).toBe(400);
  });
});

describe("PUT /teams/:id", () => {
  it("renames and moves a group; null removes the parent", async () => {
    const parent = await createTeam("move-parent");
    const id = await createTeam("move-me");
    const res = await emu.call<Team>("PUT", `/teams/${id}`, { body: { name: "moved", parentTeamId: parent } });
    expect(res.status).toBe(200);
    expect(ctx.state.teams[String(id)]).toMatchObject({ name: "moved", parentTeamId: parent });
    await emu.call("PUT", `/teams/${id}`, { body: { parentTeamId: null } });
    expect(ctx.state.teams[String(id)].parentTeamId).toBeNull();
  });

  it("refuses itself or a descendant as parent (400) and a taken name (409)", async () => {
    const a = await createTeam("cycle-a");
    const b = await createTeam("cycle-b", { parentTeamId: a });
    const c = await createTeam("cycle-c", { parentTeamId: b });
    expect((await emu.call("PUT", `/teams/${a}`, { body: { parentTeamId: a } })).status).toBe(400);
    expect((await emu.call("PUT", `/teams/${a}`, { body: { parentTeamId: c } })).status).toBe(400);
    expect(ctx.state.teams[String(a)].parentTeamId).toBeNull();
    expect((await emu.call("PUT", `/teams/${c}`, { body: { name: "CYCLE-A" } })).status).toBe(409);
    expect((await emu.call("PUT", `/teams/${a}`, { body: { name: "cycle-a" } })).status).toBe(200);
  });
});

describe("DELETE /teams/:id", () => {
  it("answers 409 while child groups exist, then 204; resources become unassigned, memberships go", async () => {
    const parent = await createTeam("delete-parent");
    const child = await createTeam("delete-child", { parentTeamId: parent });
    const user = await inviteUser();
    await emu.call("POST", `/teams/${parent}/members`, { body: { userId: user.id } });
    const vm = seedVm(bootstrap.entityId, parent);
    const blocked = await emu.call("DELETE", `/teams/${parent}`);
    expect(blocked.status).toBe(409);
    expect(ctx.state.teams[String(parent)]).toBeDefined();
    expect((await emu.call("DELETE", `/teams/${child}`)).status).toBe(204);
    const res = await emu.call("DELETE", `/teams/${parent}`);
    expect(res.status).toBe(204);
    expect(res.raw.body).toBe("");
    expect(ctx.state.teams[String(parent)]).toBeUndefined();
    expect(ctx.state.vms[vm.id].teamId).toBeNull();
    expect((await emu.call<User>("GET", `/users/${user.id}`)).body.data!.teamIds).toEqual([]);
    expect((await emu.call("DELETE", `/teams/${parent}`)).status).toBe(404);
  });

  it("bulk delete removes a parent listed with its children and reports the rest per id", async () => {
    const parent = await createTeam("bulk-parent");
    const child = await createTeam("bulk-child", { parentTeamId: parent });
    const blockedParent = await createTeam("bulk-blocked");
    await createTeam("bulk-blocked-child", { parentTeamId: blockedParent });
    const res = await emu.call<{ id: number; success: boolean; error: string | null }[]>("POST", "/teams/bulk/delete", {
      body: { ids: [parent, child, blockedParent, 424242] },
    });
    expect(res.status).toBe(200);
    expect(res.body.data!.map((r) => [r.id, r.success])).toEqual([
      [parent, true],
      [child, true],
      [blockedParent, false],
      [424242, false],
    ]);
    expect(ctx.state.teams[String(parent)]).toBeUndefined();
    expect(ctx.state.teams[String(child)]).toBeUndefined();
    expect(ctx.state.teams[String(blockedParent)]).toBeDefined();
  });
});

describe("members", () => {
  it("adds a member (201), refuses a duplicate (409), removes (204), 404 when not a member", async () => {
    const id = await createTeam("members-team");
    const user = await inviteUser();
    const add = await emu.call("POST", `/teams/${id}/members`, { body: { userId: user.id } });
    expect(add.status).toBe(201);
    expect(add.body.data).toEqual({ teamId: id, userId: user.id });
    expect(ctx.state.teams[String(id)].memberIds).toEqual([user.id]);
    expect((await emu.call("POST", `/teams/${id}/members`, { body: { userId: user.id } })).status).toBe(409);
    expect((await emu.call("DELETE", `/teams/${id}/members/${user.id}`)).status).toBe(204);
    expect(ctx.state.teams[String(id)].memberIds).toEqual([]);
    expect((await emu.call("DELETE", `/teams/${id}/members/${user.id}`)).status).toBe(404);
  });

  it("refuses users of another entity and deleted users (400)", async () => {
    const id = await createTeam("members-refused");
    const childUser = await inviteUser(bootstrap.childEntityId);
    const gone = await inviteUser();
    await emu.call("DELETE", `/users/${gone.id}`);
    for (const userId of [childUser.id, gone.id, bootstrap.users.outsider.id]) {
      expect((await emu.call("POST", `/teams/${id}/members`, { body: { userId } })).status).toBe(400);
    }
    expect(ctx.state.teams[String(id)].memberIds).toEqual([]);
  });

  it("bulk add-members creates every combination and skips existing ones", async () => {
    const t1 = await createTeam("bulk-members-1");
    const t2 = await createTeam("bulk-members-2");
    const u1 = await inviteUser();
    const u2 = await inviteUser();
    await emu.call("POST", `/teams/${t1}/members`, { body: { userId: u1.id } });
    const res = await emu.call<{ affected: number }>("POST", "/teams/bulk/add-members", {
      body: { userIds: [u1.id, u2.id], teamIds: [t1, t2] },
    });
    expect(res.body.data).toEqual({ affected: 3 });
    expect(ctx.state.teams[String(t1)].memberIds.sort()).toEqual([u1.id, u2.id].sort());
    expect(ctx.state.teams[String(t2)].memberIds.sort()).toEqual([u1.id, u2.id].sort());
  });
});
