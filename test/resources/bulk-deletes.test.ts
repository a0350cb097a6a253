/**
 * Requests a destroy of users and resource groups costs: the deletes the engine sends together go to
 * `POST /users/bulk/delete` (one request per entity, the bulk request's query) and `POST /teams/bulk/delete`; what a
 * bulk request does not delete (a batch of one, a parent whose child is deleted in an earlier wave) goes the single way.
 */
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { ResourceGroup, User } from "../../sdk";
import { destroy, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const childEntityId = stack.emulator.bootstrap.childEntityId;

/** 4 users invited into the main entity, 2 registered in its child entity; 2 top-level groups and a parent/child. */
const program = () => {
  const users: Record<string, pulumi.Output<string>> = {};
  for (let i = 0; i < 4; i++) users[`u${i}`] = new User(`u${i}`, { email: `bd-user-${i}@example.com` }).id;
  for (let i = 4; i < 6; i++) {
    users[`u${i}`] = new User(`u${i}`, {
      email: `bd-user-${i}@example.com`,
      action: "register",
      password: pulumi.secret("Correct-Horse-42!"),
      entityId: childEntityId,
    }).id;
  }
  const groups: Record<string, pulumi.Output<string>> = {};
  for (let i = 0; i < 2; i++) groups[`g${i}`] = new ResourceGroup(`g${i}`, { name: `bd-group-${i}` }).id;
  const parent = new ResourceGroup("parent", { name: "bd-parent" });
  groups.parent = parent.id;
  groups.child = new ResourceGroup("child", { name: "bd-child", parentTeamId: parent.id }).id;
  return { ...users, ...groups };
};

describe("destroy of 6 users (two entities) and 4 resource groups (a parent with its child among them)", () => {
  it("sends bulk deletes, not one delete each, and the API holds none of them afterwards", async () => {
    const options = stack.options();
    const created = await up(program, options);
    const userIds = [0, 1, 2, 3, 4, 5].map((i) => created.outputs[`u${i}`] as string);
    const teamIds = ["g0", "g1", "parent", "child"].map((k) => Number(created.outputs[k]));
    expect(stack.emulator.ctx.state.users[userIds[4]].entityId).toBe(childEntityId);

    const since = stack.mark();
    await destroy(options);
    const sent = await stack.requests(since);
    const routes = sent.map((r) => r.route);
    const count = (route: string) => routes.filter((r) => r === route).length;

    // One bulk request per entity for the users; the groups deleted together in one, the parent (deleted after its
    // child, the engine's order) alone, the single way.
    const userBulks = sent.filter((r) => r.route === "bulkDeleteUsers");
    expect(userBulks.map((r) => r.status)).toEqual([200, 200]);
    // The emulator's log carries the query string too (the helpers' LogEntry leaves it out).
    const queries = userBulks.map((r) => (r as typeof r & { query: string }).query).sort();
    const entities = [stack.emulator.bootstrap.entityId, childEntityId].map((e) => `entityId=${e}`).sort();
    expect(queries).toEqual(entities);
    expect(count("deleteUser")).toBe(0);
    expect(count("bulkDeleteTeams")).toBe(1);
    expect(sent.filter((r) => r.route === "deleteTeam").map((r) => [r.path.split("?")[0], r.status])).toEqual([
      [`/v1/teams/${teamIds[2]}`, 204],
    ]);
    // 10 deletes before (one each): 4 requests now, and nothing else.
    expect(sent.length).toBe(4);

    // Users are deleted softly: they read as 404 and the API keeps them marked deleted.
    for (const id of userIds) {
      const entityId = stack.emulator.ctx.state.users[id].entityId;
      await expect(stack.api.getUser({ params: { id }, query: { entityId } })).rejects.toMatchObject({ status: 404 });
      expect(stack.emulator.ctx.state.users[id].deletedAt).not.toBeNull();
    }
    for (const id of teamIds) expect(stack.emulator.ctx.state.teams[String(id)]).toBeUndefined();
    const left = (await stack.api.listTeams({ query: { search: "bd-", limit: 100 } })).data;
    expect(left).toEqual([]);
  });

  it("a user the bulk request does not delete (the caller's own, adopted) goes the single way, which says why", async () => {
    const options = stack.options();
    const self = stack.emulator.bootstrap.users.admin;
    const adopting = () => {
      new User("self", { email: self.email, adopt: true });
      new User("other", { email: "bd-other@example.com" });
    };
    await up(adopting, options);
    const since = stack.mark();
    const result = await destroy({ ...options, throwOnError: false });
    const routes = (await stack.requests(since)).map((r) => r.route);
    expect(routes.filter((r) => r === "bulkDeleteUsers")).toHaveLength(1);
    expect(routes.filter((r) => r === "deleteUser")).toHaveLength(1);
    expect(result.errors.map((e) => e.message).join("\n")).toContain("The provider's own credentials belong to");
    expect(stack.emulator.ctx.state.users[self.id].deletedAt).toBeNull();
    const others = (await stack.api.listUsers({ query: { search: "bd-other", limit: 100 } })).data;
    expect(others).toEqual([]);
  });
});
