/**
 * ResourceGroupMember and UserRole: memberships and role grants as resources of their own, beside a group and a user
 * that do not list them (the inline lists, when not given, leave them alone).
 */
import { describe, expect, it } from "vitest";
import { ResourceGroup, ResourceGroupMember, User, UserRole } from "../../sdk";
import { destroy, preview, refresh, RunError, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();

const memberIds = async (teamId: number) =>
  (await stack.api.getTeam({ params: { id: teamId }, query: { limit: 100 } })).members.map((m) => m.id).sort();
const rolesOf = async (userId: string) => [...(await stack.api.getUser({ params: { id: userId } })).roles].sort();

describe("ResourceGroupMember and UserRole", () => {
  it("add, stay quiet, find removals behind the stack, repair them, and remove on destroy", async () => {
    const { teamId } = await stack.api.createTeam({ body: { name: "mb-platform" } });
    const platform = stack.options();
    const owned = () => {
      const group = new ResourceGroup("group", { name: "mb-platform", adopt: true });
      return { teamId: group.teamId };
    };
    await up(owned, platform);

    const app = stack.options();
    const program = () => {
      const user = new User("user", { email: "mb-user@acme.example" });
      const member = new ResourceGroupMember("member", { teamId: String(teamId), userId: user.id });
      const role = new UserRole("role", { userId: user.id, roleName: "vm-operator" });
      return { userId: user.id, memberId: member.id, roleId: role.id, teamIds: user.teamIds };
    };
    const created = await up(program, app);
    const userId = created.outputs.userId as string;
    expect(created.outputs.memberId).toBe(`${teamId}:${userId}`);
    expect(created.outputs.roleId).toBe(`${userId}:vm-operator`);
    expect(created.outputs.teamIds).toBeUndefined(); // not managed by the User: no drift from the membership
    expect(await memberIds(teamId)).toEqual([userId]);
    expect(await rolesOf(userId)).toEqual(["tenant-user", "vm-operator"]);

    // the group's own stack (no inline members) and the app stack: nothing to change, refresh quiet
    expect((await preview(owned, platform)).step("group").op).toBe("same");
    expect((await refresh(platform)).step("group").refresh).toBe("same");
    const quiet = await refresh(app);
    expect([quiet.step("member").refresh, quiet.step("role").refresh]).toEqual(["same", "same"]);
    expect((await up(program, app)).step("member").op).toBe("same");

    // removed behind the stack's back: refresh drops both, the next up restores them
    await stack.api.removeTeamMember({ params: { id: teamId, userId } });
    await stack.api.removeUserRole({ params: { userId, roleName: "vm-operator" } });
    const drifted = await refresh(app);
    expect([drifted.step("member").refresh, drifted.step("role").refresh]).toEqual(["gone", "gone"]);
    const repaired = await up(program, app);
    expect([repaired.step("member").op, repaired.step("role").op]).toEqual(["create", "create"]);
    expect(await memberIds(teamId)).toEqual([userId]);
    expect(await rolesOf(userId)).toEqual(["tenant-user", "vm-operator"]);

    await destroy(app);
    expect(await memberIds(teamId)).toEqual([]);
    await destroy(platform);
  });

  it("refuses bad inputs at check, naming the property", async () => {
    const failed = await up(() => {
      new ResourceGroupMember("member", { teamId: "first", userId: "not-a-uuid" });
      new UserRole("role", { userId: "00000000-0000-4000-8000-000000000000", roleName: "superuser" as "vm-operator" });
    }, stack.options()).catch((e: unknown) => e);
    expect(failed).toBeInstanceOf(RunError);
    const message = String((failed as Error).message);
    expect(message).toMatch(/teamId/);
    expect(message).toMatch(/userId/);
    expect(message).toMatch(/unknown role "superuser"/);
  });

  it("takes over a membership and a grant that already exist", async () => {
    const { teamId } = await stack.api.createTeam({ body: { name: "mb-existing" } });
    const { id: userId } = await stack.api.createUser({
      body: { email: "mb-existing@acme.example", roleNames: ["tenant-user", "vm-operator"], teamIds: [teamId] },
    });
    const options = stack.options();
    const created = await up(() => {
      new ResourceGroupMember("member", { teamId, userId });
      new UserRole("role", { userId, roleName: "vm-operator" });
    }, options);
    expect([created.step("member").op, created.step("role").op]).toEqual(["create", "create"]);
    await destroy(options);
    expect(await memberIds(teamId)).toEqual([]);
    expect(await rolesOf(userId)).toEqual(["tenant-user"]);
  });
});
