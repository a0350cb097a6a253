import { describe, expect, it } from "vitest";
import { BatchedDeleter, type BulkOutcome } from "../../provider/client";
import { clientHarness } from "./helpers";

/**
 * The batched deleter on the two bulk routes that the resource kinds do not use yet (issue 18): users
 * (`POST /users/bulk/delete`, soft deletes) and resource groups (`POST /teams/bulk/delete`, integer ids). Deletes
 * gathered together go in one request; whatever a bulk answer refuses is handed back for the single delete, which
 * explains the refusal.
 */
const h = await clientHarness();
const admin = h.client();
const state = () => h.emulator.ctx.state;
const since = () => h.emulator.ctx.requestMark();

describe("BatchedDeleter on users and resource groups", () => {
  it("deletes users gathered together in one bulk request; refused and gone ones go back to the single delete", async () => {
    const users = await Promise.all(
      Array.from({ length: 6 }, (_, i) => admin.createUser({ body: { email: `bulk-${i}@acme.example` } })),
    );
    await admin.deleteUser({ params: { id: users[5].id } }); // already gone before the batch
    const deleter = new BatchedDeleter<string>(async (ids) => await admin.bulkDeleteUsers({ body: { ids } }));
    const mark = since();
    const self = h.emulator.bootstrap.users.admin.id;
    const outcomes = await Promise.all([...users.map((u) => u.id), self].map((id) => deleter.delete(id)));

    const requests = (await h.requestLog({ after: String(mark) })).map((e) => e.route);
    expect(requests).toEqual(["bulkDeleteUsers"]);
    expect(outcomes.slice(0, 5)).toEqual(Array(5).fill({ kind: "deleted", jobId: null } satisfies BulkOutcome));
    for (const u of users.slice(0, 5)) expect(state().users[u.id].deletedAt).not.toBeNull();
    // The user deleted before and the caller's own user: not deleted by the bulk request, left to the single delete.
    expect(outcomes.slice(5)).toEqual([{ kind: "single" }, { kind: "single" }]);
    expect(state().users[self].deletedAt).toBeNull();
    expect(deleter.stats).toEqual({ batches: 1, requests: 1, deleted: 5, singles: 2 });
  });

  it("deletes resource groups gathered together, a parent with its children in the same request", async () => {
    const { teamId: parent } = await admin.createTeam({ body: { name: "bulk-parent" } });
    const children = await Promise.all(
      ["a", "b"].map((s) => admin.createTeam({ body: { name: `bulk-child-${s}`, parentTeamId: parent } })),
    );
    const { teamId: keptParent } = await admin.createTeam({ body: { name: "bulk-kept-parent" } });
    const { teamId: keptChild } = await admin.createTeam({
      body: { name: "bulk-kept-child", parentTeamId: keptParent },
    });
    const others = await Promise.all([1, 2, 3].map((i) => admin.createTeam({ body: { name: `bulk-other-${i}` } })));
    const deleter = new BatchedDeleter<number>(async (ids) => await admin.bulkDeleteTeams({ body: { ids } }));
    const mark = since();
    // The parent is listed before its children; keptParent's child is not being deleted.
    const ids = [parent, ...children.map((c) => c.teamId), keptParent, ...others.map((o) => o.teamId)];
    const outcomes = await Promise.all(ids.map((id) => deleter.delete(id)));

    expect((await h.requestLog({ after: String(mark) })).map((e) => e.route)).toEqual(["bulkDeleteTeams"]);
    const byId = new Map(ids.map((id, i) => [id, outcomes[i]]));
    for (const id of [parent, ...children.map((c) => c.teamId), ...others.map((o) => o.teamId)]) {
      expect(byId.get(id)).toEqual({ kind: "deleted", jobId: null });
      expect(state().teams[String(id)]).toBeUndefined();
    }
    // A group whose child stays is refused by the bulk request: the single delete explains why (child groups).
    expect(byId.get(keptParent)).toEqual({ kind: "single" });
    expect(state().teams[String(keptParent)]).toBeDefined();
    expect(state().teams[String(keptChild)]).toBeDefined();
  });

  it("sends more than 50 gathered user deletes as several bulk requests of at most 50 ids", async () => {
    const users = await Promise.all(
      Array.from({ length: 51 }, (_, i) => admin.createUser({ body: { email: `many-${i}@acme.example` } })),
    );
    const deleter = new BatchedDeleter<string>(async (ids) => await admin.bulkDeleteUsers({ body: { ids } }));
    const mark = since();
    const outcomes = await Promise.all(users.map((u) => deleter.delete(u.id)));
    expect((await h.requestLog({ after: String(mark) })).map((e) => e.route)).toEqual([
      "bulkDeleteUsers",
      "bulkDeleteUsers",
    ]);
    expect(outcomes.every((o) => o.kind === "deleted")).toBe(true);
    for (const u of users) expect(state().users[u.id].deletedAt).not.toBeNull();
  });
});
