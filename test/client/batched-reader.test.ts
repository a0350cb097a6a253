import { describe, expect, it } from "vitest";
import { BatchedReader } from "../../provider/client/batched-reader";
import { clientHarness } from "./helpers";

const h = await clientHarness();
const api = h.client();
const datacenterId = h.emulator.bootstrap.fixtures.datacenters[0].id;

function reader(options = {}) {
  return new BatchedReader(
    (page, limit) => api.listNetworks({ query: { page, limit, sort: "createdAt:asc" } }),
    (id) => api.getNetwork({ params: { id } }),
    options,
  );
}

async function networks(prefix: string, count: number): Promise<string[]> {
  const created = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      api.createNetwork({ body: { name: `${prefix}-${i}`, datacenterId, networkType: "standard" } }),
    ),
  );
  await api.jobs.waitAll(created.map((c) => c.jobId));
  return created.map((c) => c.id);
}

describe("BatchedReader", () => {
  it("refresh read each resource by id (N GETs): reads gathered together go through the list, 100 a page", async () => {
    const ids = await networks("br", 150);
    const gone = "00000000-0000-4000-8000-000000000000";
    const since = h.emulator.ctx.requestMark();
    const read = reader();
    const found = await Promise.all([...ids, gone].map((id) => read.read(id)));
    expect(found.slice(0, -1).map((n) => n?.id)).toEqual(ids);
    expect(found.at(-1)).toBeNull();
    // What the API holds, as the detail shows it: the list items are the same.
    expect(found[0]).toEqual(await api.getNetwork({ params: { id: ids[0] } }));
    const log = await h.requestLog({ after: String(since) });
    expect(log.filter((e) => e.route === "listNetworks")).toHaveLength(2);
    // The id the list did not show is read by id (a 404), never taken as gone from its absence alone.
    expect(log.filter((e) => e.route === "getNetwork").map((e) => e.status)).toEqual([404, 200]);
  });

  it("a read alone is one GET; reads gathered go to the page where each id was last seen, new ids to the last page", async () => {
    const ids = await networks("few", 3);
    const read = reader({ pageSize: 10 });
    const since = h.emulator.ctx.requestMark();
    await read.read(ids[0]);
    const alone = await h.requestLog({ after: String(since) });
    expect(alone.map((e) => e.route)).toEqual(["getNetwork"]);

    // The reader learns the pages (here: 16 of 10) from a first batch of old ids on page 1.
    const since1 = h.emulator.ctx.requestMark();
    const first = await api.listNetworks({ query: { limit: 3, sort: "createdAt:asc" } });
    await Promise.all(first.data.map((n) => read.read(n.id)));
    const warm = await h.requestLog({ after: String(since1) });
    expect(warm.filter((e) => e.route === "listNetworks")).toHaveLength(2); // ours, and the reader's page 1

    // Five networks made since: the last page (or the one after it) holds them, one page, no read by id.
    const five = await networks("pg", 5);
    const since2 = h.emulator.ctx.requestMark();
    const all = await Promise.all(five.map((id) => read.read(id)));
    expect(all.map((n) => n?.name)).toEqual(["pg-0", "pg-1", "pg-2", "pg-3", "pg-4"]);
    const log = await h.requestLog({ after: String(since2) });
    expect(log.filter((e) => e.route === "getNetwork")).toHaveLength(0);
    expect(log.filter((e) => e.route === "listNetworks").length).toBeLessThanOrEqual(2);

    // Read again, they are found on the page where they were seen: one page for the five.
    const since3 = h.emulator.ctx.requestMark();
    await Promise.all(five.map((id) => read.read(id)));
    const again = await h.requestLog({ after: String(since3) });
    expect(again.map((e) => e.route)).toEqual(["listNetworks"]);
  });

  it("a fresh reader finds many ids from the middle of the list through their pages; a few go by id", async () => {
    const ids = await networks("deep", 250);
    const pages = (await api.listNetworks({ query: { limit: 50 } })).meta.totalPages;
    expect(pages).toBeGreaterThanOrEqual(8);

    // 120 ids from the middle pages (not the first, not the last), gathered by a reader that has seen no page: the N=1000
    // refresh read them one by one (only page 1 and the last pages were tried), now every page at most once.
    const middle = ids.slice(60, 180);
    const since = h.emulator.ctx.requestMark();
    const fresh = reader({ pageSize: 50 });
    const read = await Promise.all(middle.map((id) => fresh.read(id)));
    expect(read.map((n) => n?.name)).toEqual(middle.map((_, i) => `deep-${60 + i}`));
    const log = await h.requestLog({ after: String(since) });
    expect(log.filter((e) => e.route === "getNetwork")).toHaveLength(0);
    expect(log.filter((e) => e.route === "listNetworks").length).toBeLessThanOrEqual(pages + 1);

    // Two ids from the middle: reading every page would cost more than two reads by id, so they go by id.
    const since2 = h.emulator.ctx.requestMark();
    const two = reader({ pageSize: 50 });
    await Promise.all([ids[100], ids[101]].map((id) => two.read(id)));
    const log2 = await h.requestLog({ after: String(since2) });
    expect(log2.filter((e) => e.route === "getNetwork")).toHaveLength(2);
    expect(log2.filter((e) => e.route === "listNetworks").length).toBeLessThanOrEqual(3);
  });
});
