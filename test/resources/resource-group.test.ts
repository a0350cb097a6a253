import { describe, expect, it } from "vitest";
import { ResourceGroup, type ResourceGroupArgs } from "../../sdk";
import { destroy, preview, refresh, RunError, up } from "../harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();

const getTeam = (id: string | number) => stack.api.getTeam({ params: { id: Number(id) }, query: { limit: 100 } });
const memberIds = async (id: string | number) => (await getTeam(id)).members.map((m) => m.id).sort();
const groupsNamed = async (prefix: string) =>
  (await stack.api.listTeams({ query: { search: prefix, limit: 100 } })).data.filter((t) =>
    t.name.toLowerCase().startsWith(prefix),
  );
let users = 0;
const inviteUser = async () => (await stack.api.createUser({ body: { email: `rg-user-${++users}@acme.example` } })).id;
/** Shortens the wait on a name held by another group (retried in case it is being renamed in the same run). */
const quickConflicts = { "cloudinfra:jobTimeoutMs": "1500" };

function program(args: ResourceGroupArgs) {
  return () => {
    const group = new ResourceGroup("rg", args);
    return { id: group.id, teamId: group.teamId, members: group.members };
  };
}

describe("ResourceGroup lifecycle", () => {
  it("creates, stays unchanged, updates in place, survives drift and deletion, and is destroyed", async () => {
    const options = stack.options();
    const [alice, bob] = [await inviteUser(), await inviteUser()];

    // 1. create with minimal inputs: the API holds the group; the id is the integer team id as text
    const created = await up(program({ name: "lc-rg" }), options);
    const id = created.outputs.id as string;
    expect(created.step("rg").op).toBe("create");
    expect(id).toMatch(/^\d+$/);
    expect(created.outputs.teamId).toBe(Number(id));
    expect(created.step("rg").outputs).toMatchObject({ name: "lc-rg" });
    expect(created.step("rg").outputs.members).toBeUndefined(); // not managed: the program did not set it
    expect(await getTeam(id)).toMatchObject({ name: "lc-rg", parentTeamId: null, memberCount: 0 });

    // 2. a second up: no changes; 3. refresh without drift: no changes
    expect((await up(program({ name: "lc-rg" }), options)).step("rg").op).toBe("same");
    expect((await refresh(options)).step("rg").refresh).toBe("same");

    // 4. in place: rename, a parent (a plain id) and members (order and repetition do not matter) keep the id
    const outside = await stack.api.createTeam({ body: { name: "lc-outside-parent" } });
    const changed = { name: "lc-rg-renamed", parentTeamId: outside.teamId, members: [bob, alice, bob] };
    const updated = await up(program(changed), options);
    expect(updated.step("rg").op).toBe("update");
    expect(updated.outputs.id).toBe(id);
    expect(await getTeam(id)).toMatchObject({ name: "lc-rg-renamed", parentTeamId: outside.teamId });
    expect(await memberIds(id)).toEqual([alice, bob].sort());

    // 5. replacement: does not apply, every ResourceGroup property is changed in place

    // 6. drift: renamed and a member removed behind the stack's back; refresh shows it, up repairs it
    await stack.api.updateTeam({ params: { id: Number(id) }, body: { name: "lc-rg-by-hand" } });
    await stack.api.removeTeamMember({ params: { id: Number(id), userId: alice } });
    const refreshed = await refresh(options);
    expect(refreshed.step("rg").refresh).toBe("changed");
    expect(refreshed.step("rg").outputs).toMatchObject({ name: "lc-rg-by-hand", members: [bob] });
    expect((await up(program(changed), options)).step("rg").op).toBe("update");
    expect((await getTeam(id)).name).toBe("lc-rg-renamed");
    expect(await memberIds(id)).toEqual([alice, bob].sort());

    // parentTeamId removed from the program: the group becomes top-level; members left out are not managed
    const cleared = await up(program({ name: "lc-rg-renamed" }), options);
    expect(cleared.step("rg").op).toBe("update");
    expect((await getTeam(id)).parentTeamId).toBeNull();
    expect(await memberIds(id)).toEqual([alice, bob].sort());

    // 7. deleted behind the stack's back: refresh drops it, up recreates it with its members
    await stack.api.deleteTeam({ params: { id: Number(id) } });
    expect((await refresh(options)).step("rg").refresh).toBe("gone");
    const recreated = await up(program(changed), options);
    expect(recreated.step("rg").op).toBe("create");
    const newId = recreated.outputs.id as string;
    expect(newId).not.toBe(id);
    expect((await getTeam(newId)).name).toBe("lc-rg-renamed");
    expect(await memberIds(newId)).toEqual([alice, bob].sort());

    // 8. destroy leaves nothing of the stack (the child goes before the parent made outside it)
    await destroy(options);
    await stack.api.deleteTeam({ params: { id: outside.teamId } });
    expect(await groupsNamed("lc-")).toEqual([]);
  });

  it("a parent and its child: the child points at the parent and is deleted first", async () => {
    const options = stack.options();
    const family = () => {
      const parent = new ResourceGroup("parent", { name: "pc-parent" });
      const child = new ResourceGroup("child", { name: "pc-child", parentTeamId: parent.id });
      return { parentId: parent.id, childId: child.id };
    };

    // preview: the parent's id is not known yet; check and diff let it through and nothing is sent
    const since = stack.mark();
    const planned = await preview(family, options);
    expect(planned.step("child").op).toBe("create");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);

    const created = await up(family, options);
    const parentId = Number(created.outputs.parentId);
    const childId = Number(created.outputs.childId);
    expect((await getTeam(childId)).parentTeamId).toBe(parentId);
    expect((await up(family, options)).step("child").op).toBe("same");

    // the API refuses to delete a parent with children: destroy deletes the child first
    await expect(stack.api.deleteTeam({ params: { id: parentId } })).rejects.toMatchObject({ status: 409 });
    const destroyedSince = stack.mark();
    await destroy(options);
    const deletes = (await stack.requests(destroyedSince)).filter((r) => r.route === "deleteTeam");
    expect(deletes.map((r) => [r.path.split("?")[0], r.status])).toEqual([
      [`/v1/teams/${childId}`, 204],
      [`/v1/teams/${parentId}`, 204],
    ]);
    expect(await groupsNamed("pc-")).toEqual([]);
  });

  it("renames that pass a name along in one up succeed; a name held elsewhere is a clear error", async () => {
    const options = stack.options({ config: { ...stack.options().config, ...quickConflicts } });
    const pair = (a: string, b: string) => () => {
      new ResourceGroup("a", { name: a });
      new ResourceGroup("b", { name: b });
    };
    await up(pair("rn-1", "rn-2"), options);
    // a takes b's old name while b moves on: whichever runs first, both end renamed
    await up(pair("rn-2", "rn-3"), options);
    expect((await groupsNamed("rn-")).map((t) => t.name).sort()).toEqual(["rn-2", "rn-3"]);

    const outside = await stack.api.createTeam({ body: { name: "rn-outside" } });
    const refused = (await up(pair("RN-OUTSIDE", "rn-3"), options).catch((e: unknown) => e)) as RunError;
    expect(refused).toBeInstanceOf(RunError);
    expect(refused.message).toContain(`resource group ${outside.teamId} is named "rn-outside"`);
    expect(refused.message).toContain("Choose another name");
    await destroy(options);
    await stack.api.deleteTeam({ params: { id: outside.teamId } });
    expect(await groupsNamed("rn-")).toEqual([]);
  });

  it("9. refuses bad inputs at check, naming each property, before any request", async () => {
    const options = stack.options();
    const since = stack.mark();
    const bad = { name: " ", parentTeamId: "first", members: ["bob"], colour: "red" } as unknown as ResourceGroupArgs;
    const error = (await up(program(bad), options).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    for (const text of ["name: must not be empty", "parentTeamId: must be the integer id", "members.0", "colour"]) {
      expect(error.message).toContain(text);
    }
    expect(error.message).toContain("UUID");
    expect(await stack.requests(since)).toEqual([]);
  });

  it("10. an ambiguous create failure is retried once without duplicates; twice is a clear error", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createTeam,status=500,count=1");
    const created = await up(program({ name: "amb-rg" }), options);
    await stack.faults("");
    const posts = (await stack.requests(since)).filter((r) => r.route === "createTeam");
    expect(posts.map((r) => r.status)).toEqual([500, 201]);
    expect((await groupsNamed("amb-")).map((t) => String(t.id))).toEqual([created.outputs.id]);
    await destroy(options);

    await stack.faults("createTeam,status=500,count=2");
    const failed = await up(program({ name: "amb-rg" }), { ...options, throwOnError: false });
    await stack.faults("");
    expect(failed.errors.map((e) => e.message).join("\n")).toMatch(
      /No resource of that name exists, so nothing was created; the next `pulumi up` creates it/,
    );
    expect(failed.state.resources.filter((r) => r.name === "rg")).toEqual([]);
    expect(await groupsNamed("amb-")).toEqual([]);
  });

  it("10. a group created whose members cannot be set is recorded with the error, then repaired or destroyed", async () => {
    const options = stack.options();
    const ghost = "00000000-0000-4000-8000-000000000000";
    const failed = await up(program({ name: "pf-rg", members: [ghost] }), { ...options, throwOnError: false });
    expect(failed.errors.map((e) => e.message).join("\n")).toContain(`no such user in this entity: ${ghost}`);
    const partial = failed.state.resources.find((r) => r.name === "rg");
    expect(partial?.id).toMatch(/^\d+$/);
    expect(partial?.initErrors?.join(" ")).toContain("could not be set");
    expect((await getTeam(partial!.id!)).name).toBe("pf-rg");

    // the next up (fixed program) finishes the same group instead of creating another
    const member = await inviteUser();
    const fixed = await up(program({ name: "pf-rg", members: [member] }), options);
    expect(fixed.outputs.id).toBe(partial!.id);
    expect(await memberIds(partial!.id!)).toEqual([member]);
    await destroy(options);
    expect(await groupsNamed("pf-")).toEqual([]);
  });

  it("11. adopts an existing group by name (ignoring case) and aligns it; without adopt it explains the conflict", async () => {
    const options = stack.options({ config: { ...stack.options().config, ...quickConflicts } });
    const existing = await stack.api.createTeam({ body: { name: "ad-rg" } });
    const member = await inviteUser();

    const refused = (await up(program({ name: "AD-RG" }), options).catch((e: unknown) => e)) as RunError;
    expect(refused.message).toContain(`A resource group named "AD-RG" already exists (${existing.teamId})`);
    expect(refused.message).toContain("adopt: true");

    const adopted = await up(program({ name: "AD-RG", members: [member], adopt: true }), options);
    expect(adopted.outputs.id).toBe(String(existing.teamId));
    expect((await getTeam(existing.teamId)).name).toBe("AD-RG");
    expect(await memberIds(existing.teamId)).toEqual([member]);
    await destroy(options);
    expect(await groupsNamed("ad-")).toEqual([]);
  });
});
