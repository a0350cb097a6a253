import { describe, expect, it } from "vitest";
import { ResourceGroup, type ResourceGroupArgs } from "../../sdk";
import { destroy, preview, RunError, up } from "../../tools/harness";
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

// The lifecycle contract (create, no-op, in place, drift, deleted behind the stack, bad input, a failed member update,
// adopt, destroy) is the lifecycle table's (test/lifecycle/table.ts); here, what is particular to groups.
describe("ResourceGroup", () => {
  it("a parent removed from the program makes the group top-level; members left out are no longer managed", async () => {
    const options = stack.options();
    const [alice, bob] = [await inviteUser(), await inviteUser()];
    const outside = await stack.api.createTeam({ body: { name: "lc-outside-parent" } });
    const created = await up(program({ name: "lc-rg", parentTeamId: outside.teamId, members: [alice, bob] }), options);
    const id = created.outputs.id as string;
    expect((await getTeam(id)).parentTeamId).toBe(outside.teamId);

    const cleared = await up(program({ name: "lc-rg" }), options);
    expect(cleared.step("rg").op).toBe("update");
    expect((await getTeam(id)).parentTeamId).toBeNull();
    expect(await memberIds(id)).toEqual([alice, bob].sort());
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

  it("10. an ambiguous create failure is resent without duplicates; lost on every send (1 + maxRetries) is a clear error", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createTeam,status=500,count=1");
    const created = await up(program({ name: "amb-rg" }), options);
    await stack.faults("");
    const posts = (await stack.requests(since)).filter((r) => r.route === "createTeam");
    expect(posts.map((r) => r.status)).toEqual([500, 201]);
    expect((await groupsNamed("amb-")).map((t) => String(t.id))).toEqual([created.outputs.id]);
    await destroy(options);

    await stack.faults("createTeam,status=500,count=4");
    const failed = await up(program({ name: "amb-rg" }), { ...options, throwOnError: false });
    await stack.faults("");
    expect(failed.errors.map((e) => e.message).join("\n")).toMatch(
      /No resource of that name exists, so nothing was created; the next `pulumi up` creates it/,
    );
    expect(failed.state.resources.filter((r) => r.name === "rg")).toEqual([]);
    expect(await groupsNamed("amb-")).toEqual([]);
  });
});
