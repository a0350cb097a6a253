import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../provider/client";
import { BatchedPairWriter, productsOf, type PairOutcome } from "../../provider/client/batched-writer";
import { clientHarness } from "./helpers";

/**
 * The batched pair writer (issue 27): pairs written together (memberships, role grants) gathered into the bulk routes
 * that write every combination of two lists, `POST /teams/bulk/add-members` and `POST /users/bulk/assign-roles`. What
 * the emulator holds afterwards is read from its state; the requests from its log.
 */
const h = await clientHarness();
const admin = h.client();
const state = () => h.emulator.ctx.state;
const since = () => h.emulator.ctx.requestMark();
const routesSince = async (mark: number) => (await h.requestLog({ after: String(mark) })).map((e) => e.route);

const usersNamed = (prefix: string, count: number) =>
  Promise.all(
    Array.from({ length: count }, (_, i) => admin.createUser({ body: { email: `${prefix}-${i}@acme.example` } })),
  );
const groupsNamed = (prefix: string, count: number) =>
  Promise.all(Array.from({ length: count }, (_, i) => admin.createTeam({ body: { name: `${prefix}-${i}` } })));
const membersOf = (teamId: number) => [...state().teams[String(teamId)]!.memberIds].sort();

const adder = () =>
  new BatchedPairWriter<string, number>(
    async (userIds, teamIds) => await admin.bulkAddTeamMembers({ body: { userIds, teamIds } }),
  );

describe("productsOf", () => {
  it("covers a product of users × groups with one product, and a product of users × roles with one", () => {
    const users = Array.from({ length: 10 }, (_, i) => `u${i}`);
    const groups = [1, 2, 3, 4, 5, 6];
    expect(productsOf(users.flatMap((u) => groups.map((g) => [u, g] as [string, number])))).toEqual([
      { left: users, right: groups },
    ]);
    const many = Array.from({ length: 30 }, (_, i) => `u${i}`);
    const pairs = many.flatMap((u) => ["tenant-admin", "vm-operator"].map((r) => [u, r] as [string, string]));
    expect(productsOf(pairs)).toHaveLength(1);
  });

  it("groups by the side that needs fewer requests, and cuts sides longer than maxPerSide", () => {
    // 3 groups, each with its own 4 users: grouping by user needs 12 products, by group 3.
    const pairs = [1, 2, 3].flatMap((g) => [0, 1, 2, 3].map((i) => [`g${g}u${i}`, g] as [string, number]));
    expect(productsOf(pairs)).toHaveLength(3);
    const wide = Array.from({ length: 120 }, (_, i) => [`u${i}`, 7] as [string, number]);
    expect(productsOf(wide, 50).map((p) => p.left.length)).toEqual([50, 50, 20]);
  });

  it("never covers a pair not asked for, misses none, and needs no more products than the smaller side has items", () => {
    const pair = fc.tuple(
      fc.integer({ min: 0, max: 12 }).map((i) => `u${i}`),
      fc.integer({ min: 1, max: 7 }),
    );
    fc.assert(
      fc.property(fc.array(pair, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 5 }), (pairs, max) => {
        const wanted = new Set(pairs.map(([u, g]) => `${u}:${g}`));
        const products = productsOf(pairs, max);
        const covered: string[] = products.flatMap((p) => p.left.flatMap((u) => p.right.map((g) => `${u}:${g}`)));
        expect(new Set(covered)).toEqual(wanted);
        expect(covered).toHaveLength(wanted.size); // no pair twice
        for (const p of products) expect(Math.max(p.left.length, p.right.length)).toBeLessThanOrEqual(max);
        const users = new Set(pairs.map(([u]) => u)).size;
        const groups = new Set(pairs.map(([, g]) => g)).size;
        if (max >= 13) expect(products.length).toBeLessThanOrEqual(Math.min(users, groups));
      }),
    );
  });
});

describe("BatchedPairWriter on the bulk routes", () => {
  it("adds 10 users to 6 groups gathered together in one add-members request: the emulator holds exactly those 60", async () => {
    const users = await usersNamed("bw-product", 10);
    const groups = await groupsNamed("bw-product", 6);
    const writer = adder();
    const mark = since();
    const outcomes = await Promise.all(users.flatMap((u) => groups.map((g) => writer.write(u.id, g.teamId))));
    expect(await routesSince(mark)).toEqual(["bulkAddTeamMembers"]);
    expect(outcomes).toEqual(Array(60).fill({ kind: "done" } satisfies PairOutcome));
    for (const g of groups) expect(membersOf(g.teamId)).toEqual(users.map((u) => u.id).sort());
    expect(writer.stats).toEqual({ batches: 1, requests: 1, done: 60, singles: 0 });
  });

  it("grants 2 roles to 30 users gathered together in one assign-roles request", async () => {
    const users = await usersNamed("bw-roles", 30);
    const writer = new BatchedPairWriter<string, "tenant-admin" | "vm-operator">(
      async (userIds, roleNames) => await admin.bulkAssignRoles({ body: { userIds, roleNames } }),
    );
    const mark = since();
    const outcomes = await Promise.all(
      users.flatMap((u) => (["tenant-admin", "vm-operator"] as const).map((r) => writer.write(u.id, r))),
    );
    expect(await routesSince(mark)).toEqual(["bulkAssignRoles"]);
    expect(outcomes.every((o) => o.kind === "done")).toBe(true);
    for (const u of users) {
      expect([...state().users[u.id]!.roles].sort()).toEqual(["tenant-admin", "tenant-user", "vm-operator"]);
    }
  });

  it("pairs that form no product: fewer requests than pairs, and no membership not asked for", async () => {
    const users = await usersNamed("bw-stagger", 12);
    const groups = await groupsNamed("bw-stagger", 3);
    // user i in groups i % 3 and (i + 1) % 3: 24 pairs, three distinct sets of groups.
    const pairs = users.flatMap((u, i) => [groups[i % 3]!, groups[(i + 1) % 3]!].map((g) => [u.id, g.teamId] as const));
    const writer = adder();
    const mark = since();
    const outcomes = await Promise.all(pairs.map(([u, g]) => writer.write(u, g)));
    const requests = await routesSince(mark);
    expect(requests).toEqual(["bulkAddTeamMembers", "bulkAddTeamMembers", "bulkAddTeamMembers"]);
    expect(outcomes.every((o) => o.kind === "done")).toBe(true);
    groups.forEach((g, k) => {
      const wanted = users.filter((_, i) => i % 3 === k || (i + 1) % 3 === k).map((u) => u.id);
      expect(membersOf(g.teamId)).toEqual(wanted.sort());
    });
  });

  it("a refused pair fails alone: the request is halved until only it is left for the single route", async () => {
    const users = await usersNamed("bw-refused", 7);
    const [group] = await groupsNamed("bw-refused", 1);
    const ghost = randomUUID(); // no such user: the API refuses any request naming it
    const ids = [...users.map((u) => u.id).slice(0, 4), ghost, ...users.map((u) => u.id).slice(4)];
    const writer = adder();
    const mark = since();
    const outcomes = await Promise.all(ids.map((id) => writer.write(id, group!.teamId)));
    expect(outcomes[4]).toEqual({ kind: "single" });
    // The halves end in single pairs: the ghost, and at most one good pair that shared the last half with it (both
    // go the single way, which adds the good one and names the ghost in its own error).
    const done = ids.filter((_, i) => outcomes[i]!.kind === "done");
    expect(done.length).toBeGreaterThanOrEqual(6);
    expect(membersOf(group!.teamId)).toEqual(done.sort());
    const requests = await routesSince(mark);
    expect(requests.every((r) => r === "bulkAddTeamMembers")).toBe(true);
    expect(requests.length).toBeLessThan(ids.length);
    expect(writer.stats).toMatchObject({ done: done.length, singles: ids.length - done.length });
  });

  it("a lone pair sends nothing: it goes the single way (one request either way)", async () => {
    const writer = adder();
    const mark = since();
    expect(await writer.write(randomUUID(), 1)).toEqual({ kind: "single" });
    expect(await routesSince(mark)).toEqual([]);
    expect(writer.stats).toEqual({ batches: 1, requests: 0, done: 0, singles: 1 });
  });

  it.each([
    { status: 502, code: "SERVER_ERROR", mayHaveSucceeded: true },
    { status: 429, code: "RATE_LIMIT_EXCEEDED", mayHaveSucceeded: false },
  ])(
    "a bulk request with no answer, or refused for its pace ($status), hands every pair back, unhalved",
    async ({ status, code, mayHaveSucceeded }) => {
      let calls = 0;
      const writer = new BatchedPairWriter<string, number>(async () => {
        calls++;
        throw new ApiError({
          status,
          code,
          message: "no luck",
          method: "POST",
          path: "/teams/bulk/add-members",
          mayHaveSucceeded,
        });
      });
      const outcomes = await Promise.all(["a", "b", "c"].flatMap((u) => [1, 2].map((g) => writer.write(u, g))));
      expect(calls).toBe(1);
      expect(outcomes).toEqual(Array(6).fill({ kind: "single" }));
    },
  );

  it("the same pair written twice at once is sent once, and both callers get its outcome", async () => {
    const users = await usersNamed("bw-twice", 2);
    const [group] = await groupsNamed("bw-twice", 1);
    const writer = adder();
    const mark = since();
    const outcomes = await Promise.all([users[0]!, users[0]!, users[1]!].map((u) => writer.write(u.id, group!.teamId)));
    expect(outcomes).toEqual(Array(3).fill({ kind: "done" }));
    expect(await routesSince(mark)).toEqual(["bulkAddTeamMembers"]);
    expect(membersOf(group!.teamId)).toEqual(users.map((u) => u.id).sort());
  });
});
