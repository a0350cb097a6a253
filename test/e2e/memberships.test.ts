/**
 * Memberships as resources of their own, through the real CLI: a group owned by one stack (no inline members), users
 * added to it by ResourceGroupMember in another stack, with both SDKs (the plugin's and the dynamic one); the owning
 * stack stays without changes, a member removed through the API is restored by the next `up`, and `pulumi import`
 * takes over a membership and a user role made through the API.
 */
import * as cloudinfra from "@cloudinfra/pulumi/plugin";
import { expect, it } from "vitest";
import * as dynamic from "../../sdk";
import { cliWorld, describeCli } from "./helpers";
import { pluginResources, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();

const memberIds = async (teamId: number) =>
  (await world.api.getTeam({ params: { id: teamId }, query: { limit: 100 } })).members.map((m) => m.id).sort();
const rolesOf = async (userId: string) => [...(await world.api.getUser({ params: { id: userId } })).roles].sort();

const sdks = {
  plugin: {
    group: (name: string) => new cloudinfra.ResourceGroup("group", { name }),
    user: (email: string) => new cloudinfra.User("user", { email }),
    member: (teamId: string, userId: unknown) =>
      new cloudinfra.ResourceGroupMember("member", { teamId, userId: userId as string }),
    role: (userId: unknown) => new cloudinfra.UserRole("role", { userId: userId as string, roleName: "vm-operator" }),
  },
  dynamic: {
    group: (name: string) => new dynamic.ResourceGroup("group", { name }),
    user: (email: string) => new dynamic.User("user", { email }),
    member: (teamId: string, userId: unknown) =>
      new dynamic.ResourceGroupMember("member", { teamId, userId: userId as string }),
    role: (userId: unknown) => new dynamic.UserRole("role", { userId: userId as string, roleName: "vm-operator" }),
  },
};

describeCli("memberships as resources (real CLI)", () => {
  it.concurrent.each(Object.keys(sdks) as (keyof typeof sdks)[])(
    "%s SDK: a group of stack A, its members added by stack B; A stays unchanged, B repairs a removal",
    async (sdk) => {
      const make = sdks[sdk];
      const platform = await world.stack("quickstart", async () => ({ teamId: make.group(`mb-${sdk}`).id }));
      const teamId = (await platform.up({ color: "never" })).outputs.teamId!.value as string;
      const app = await world.stack("quickstart", async () => {
        const user = make.user(`mb-${sdk}@acme.example`);
        const member = make.member(teamId, user.id);
        const role = make.role(user.id);
        return { userId: user.id, memberId: member.id, roleId: role.id };
      });
      const created = await app.up({ color: "never" });
      const userId = created.outputs.userId!.value as string;
      expect(created.outputs.memberId!.value).toBe(`${teamId}:${userId}`);
      expect(await memberIds(Number(teamId))).toEqual([userId]);
      expect(await rolesOf(userId)).toEqual(["tenant-user", "vm-operator"]);

      // Stack A declares no members: B's member is nobody's drift, in A's preview or refresh
      await platform.preview({ color: "never", expectNoChanges: true });
      const refreshedA = await platform.refresh({ color: "never" });
      expect(Object.keys(refreshedA.summary.resourceChanges ?? {})).toEqual(["same"]);
      await app.preview({ color: "never", expectNoChanges: true });

      // removed through the API: B's refresh drops the records, its next up restores both
      await world.api.removeTeamMember({ params: { id: Number(teamId), userId } });
      await world.api.removeUserRole({ params: { userId, roleName: "vm-operator" } });
      const drift = await app.refresh({ color: "never" });
      expect(drift.summary.resourceChanges).toMatchObject({ delete: 2 });
      const repaired = await app.up({ color: "never" });
      expect(repaired.summary.resourceChanges).toMatchObject({ create: 2 });
      expect(await memberIds(Number(teamId))).toEqual([userId]);
      expect(await rolesOf(userId)).toEqual(["tenant-user", "vm-operator"]);
      await app.preview({ color: "never", expectNoChanges: true });
      await platform.preview({ color: "never", expectNoChanges: true });

      await app.destroy({ color: "never" });
      expect(await memberIds(Number(teamId))).toEqual([]);
      await platform.destroy({ color: "never" });
    },
  );

  it("`pulumi import` takes over a membership and a user role made through the API", async () => {
    const { teamId } = await world.api.createTeam({ body: { name: "mb-import" } });
    const user = await world.api.createUser({
      body: { email: "mb-import@acme.example", roleNames: ["tenant-user", "vm-operator"], teamIds: [teamId] },
    });
    const stack = await world.stack("quickstart", async () => {
      new cloudinfra.ResourceGroupMember("member", { teamId, userId: user.id }, { protect: false });
      new cloudinfra.UserRole("role", { userId: user.id, roleName: "vm-operator" });
    });
    await stack.import({
      resources: [
        { type: "cloudinfra:index:ResourceGroupMember", name: "member", id: `${teamId}:${user.id}` },
        { type: "cloudinfra:index:UserRole", name: "role", id: `${user.id}:vm-operator` },
      ],
      protect: false,
    });
    const imported = await pluginResources(stack);
    expect(imported.find((r) => r.urn.endsWith("::member"))).toMatchObject({
      id: `${teamId}:${user.id}`,
      outputs: { teamId, userId: user.id },
    });
    expect(imported.find((r) => r.urn.endsWith("::role"))?.id).toBe(`${user.id}:vm-operator`);
    // The program declaring the same values changes nothing.
    await stack.preview({ color: "never", expectNoChanges: true });
    // An id naming no membership finds nothing.
    const other = await world.api.createUser({ body: { email: "mb-import-2@acme.example" } });
    const missing = await world.stack("quickstart", async () => undefined);
    await expect(
      missing.import({
        resources: [{ type: "cloudinfra:index:ResourceGroupMember", name: "none", id: `${teamId}:${other.id}` }],
        protect: false,
      }),
    ).rejects.toThrow(/does not exist|not found|no resource/i);
    await stack.destroy({ color: "never" });
    expect(await memberIds(teamId)).toEqual([]);
    expect(await rolesOf(user.id)).toEqual(["tenant-user"]);
  });
});
