/**
 * Memberships and role grants gathered into the bulk routes, through the real CLI with the dynamic SDK (issue 27): a
 * stack making 10 users members of 6 groups (60 memberships) and granting 2 roles to 30 users (60 grants) sends at most
 * 4 requests for them (`POST /teams/bulk/add-members`, `POST /users/bulk/assign-roles`; the emulator's request log),
 * and the API holds exactly those memberships and roles (that run raises --parallel, which caps what a request can
 * hold, and skips the engine's checkpoint before each step, which spaces the creates out). A plan whose pairs form no such product, with the CLI's defaults, still sends fewer requests than one per
 * pair, with both SDKs (the dynamic one and the plugin's). Destroy removes them.
 */
import * as plugin from "@cloudinfra/pulumi/plugin";
import type { LocalWorkspace } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import * as dynamic from "../../sdk";
import { cliWorld, describeCli } from "./helpers";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();

/** The requests that add memberships or grant roles, bulk or single. */
const WRITES = new Set(["bulkAddTeamMembers", "bulkAssignTeams", "addTeamMember", "bulkAssignRoles", "addUserRole"]);
const pairWrites = async (mark: number) =>
  (await world.requests(mark)).map((r) => r.route ?? "").filter((route) => WRITES.has(route));
const membersOf = async (teamId: number) =>
  (await world.api.getTeam({ params: { id: teamId }, query: { limit: 100 } })).members.map((m) => m.id).sort();
const rolesOf = async (userId: string) => [...(await world.api.getUser({ params: { id: userId } })).roles].sort();
const ROLES = ["tenant-admin", "vm-operator"] as const;

describeCli("memberships and role grants gathered into bulk requests (real CLI)", () => {
  it("10 users × 6 groups and 2 roles × 30 users: at most 4 requests; the API holds exactly those; destroy removes them", async () => {
    const stack = await world.stack("quickstart", async () => {
      const users = Array.from(
        { length: 30 },
        (_, i) => new dynamic.User(`user-${i}`, { email: `bulk-p-${i}@acme.example` }),
      );
      const groups = Array.from(
        { length: 6 },
        (_, g) => new dynamic.ResourceGroup(`group-${g}`, { name: `bulk-p-${g}` }),
      );
      users
        .slice(0, 10)
        .forEach((user, i) =>
          groups.forEach(
            (group, g) => new dynamic.ResourceGroupMember(`m-${i}-${g}`, { teamId: group.id, userId: user.id }),
          ),
        );
      users.forEach((user, i) =>
        ROLES.forEach((roleName) => new dynamic.UserRole(`r-${i}-${roleName}`, { userId: user.id, roleName })),
      );
      return { userIds: users.map((u) => u.id), teamIds: groups.map((g) => g.id) };
    });
    const mark = world.mark();
    // The engine sends at most --parallel creates at once (default 4 per CPU), and writes a checkpoint before each,
    // which spaces a large plan's creates out over seconds on a loaded machine (the gathering pause stretches with
    // that trickle, but how far it spreads varies from run to run: 2 to 5 requests here). A rollout that wants its
    // pairs in the fewest requests raises the first and skips the second (docs/guides/bulk-requests.md).
    const workspace = stack.workspace as LocalWorkspace;
    const envVars = workspace.envVars;
    workspace.envVars = { ...envVars, PULUMI_EXPERIMENTAL: "true", PULUMI_SKIP_CHECKPOINTS: "true" };
    const up = await stack.up({ color: "never", parallel: 256 }).finally(() => (workspace.envVars = envVars));
    expect(up.summary.resourceChanges).toMatchObject({ create: 30 + 6 + 60 + 60 + 1 }); // and the stack
    const writes = await pairWrites(mark);
    console.log(`10 users × 6 groups, 2 roles × 30 users: ${writes.length} requests (${writes.join(", ")})`);
    expect(writes.length, writes.join(", ")).toBeLessThanOrEqual(4);
    expect(writes.filter((w) => w.startsWith("bulk")).length).toBeGreaterThanOrEqual(2);

    const userIds = up.outputs.userIds!.value as string[];
    const teamIds = (up.outputs.teamIds!.value as string[]).map(Number);
    for (const teamId of teamIds) expect(await membersOf(teamId)).toEqual(userIds.slice(0, 10).sort());
    for (const userId of userIds) expect(await rolesOf(userId)).toEqual(["tenant-admin", "tenant-user", "vm-operator"]);
    await stack.preview({ color: "never", expectNoChanges: true });

    await stack.destroy({ color: "never" });
    expect(await world.namesInApi("bulk-p-")).toMatchObject({ users: [], groups: [] });
  });

  it.each(["dynamic", "plugin"] as const)(
    "%s SDK: pairs that form no product, at the CLI's defaults: fewer requests than pairs; exactly those in the API; destroy removes them",
    async (sdk) => {
      const sdkOf = sdk === "dynamic" ? dynamic : plugin;
      // Users and groups made through the API, so what destroy removes shows on them afterwards.
      const users = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          world.api.createUser({ body: { email: `bulk-s-${sdk}-${i}@acme.example` } }),
        ),
      );
      const groups = await Promise.all(
        Array.from({ length: 3 }, (_, g) => world.api.createTeam({ body: { name: `bulk-s-${sdk}-${g}` } })),
      );
      // User i in groups i % 3 and (i + 1) % 3 (24 memberships); vm-operator to users 0-5, tenant-admin to 3-8 (12 grants).
      const groupsOf = (i: number) => [groups[i % 3]!.teamId, groups[(i + 1) % 3]!.teamId];
      const rolesFor = (i: number) => ROLES.filter((role) => (role === "vm-operator" ? i <= 5 : i >= 3 && i <= 8));
      const stack = await world.stack("quickstart", async () => {
        users.forEach((user, i) => {
          for (const teamId of groupsOf(i))
            new sdkOf.ResourceGroupMember(`m-${i}-${teamId}`, { teamId, userId: user.id });
          for (const roleName of rolesFor(i)) new sdkOf.UserRole(`r-${i}-${roleName}`, { userId: user.id, roleName });
        });
      });
      const mark = world.mark();
      await stack.up({ color: "never" });
      const writes = await pairWrites(mark);
      console.log(`${sdk} SDK, 24 memberships and 12 grants in no product, CLI defaults: ${writes.length} requests`);
      expect(writes.length, writes.join(", ")).toBeLessThan(24 + 12);
      for (const [g, group] of groups.entries()) {
        const wanted = users.filter((_, i) => groupsOf(i).includes(group.teamId)).map((u) => u.id);
        expect(await membersOf(group.teamId), `group ${g}`).toEqual(wanted.sort());
      }
      for (const [i, user] of users.entries())
        expect(await rolesOf(user.id)).toEqual(["tenant-user", ...rolesFor(i)].sort());

      await stack.destroy({ color: "never" });
      for (const group of groups) expect(await membersOf(group.teamId)).toEqual([]);
      for (const user of users) expect(await rolesOf(user.id)).toEqual(["tenant-user"]);
    },
  );
});
