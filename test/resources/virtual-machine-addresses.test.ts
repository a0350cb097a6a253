import { describe, expect, it } from "vitest";
import type { VmDetail } from "../../provider/api";
import { AddressReader } from "../../provider/resources/virtual-machine/addresses";
import { stackOnEmulator } from "./helpers";

// An API that sends only what the spec documents: the VM detail has no addresses, the list items have them.
const stack = await stackOnEmulator({ specFieldsOnly: true, jobDurationMs: 20 });
const [dc] = stack.datacenters;
const [ubuntu] = stack.emulator.bootstrap.fixtures.images;
const [small] = stack.emulator.bootstrap.fixtures.configurations;

async function createVm(name: string, allocatePublicIp: boolean): Promise<VmDetail> {
  const [job] = await stack.api.createVm({
    body: { name, datacenterId: dc!.id, imageId: ubuntu!.id, configurationId: small!.id, allocatePublicIp },
  });
  const done = await stack.api.jobs.wait(job!.id);
  return stack.api.getVm({ params: { id: done.resourceId! } });
}

// Six VMs, oldest first (createdAt apart), in pages of two newest first: [v5 v4] [v3 v2] [v1 v0].
const vms: VmDetail[] = [];
for (let i = 0; i < 6; i++) {
  vms.push(await createVm(`adr-${i}`, i % 2 === 0));
  await new Promise((resolve) => setTimeout(resolve, 5));
}
const v = (i: number) => vms[i]!.virtualMachine;

// Each VM's addresses as the API holds them (its list item's), read once here, before the requests counted.
const items = (await stack.api.listVms({ query: { search: "adr-", limit: 100 } })).data;
const itemAddresses = (i: number) => {
  const item = items.find((vm) => vm.id === v(i).id)!;
  return { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp };
};

/** The listVms requests after `since`: pages read (sorted, no search) and searches by name. */
async function listRequests(since: number) {
  const lists = (await stack.requests(since))
    .filter((r) => r.route === "listVms")
    .map((r) => new URLSearchParams(r.query));
  return {
    pages: lists.filter((q) => !q.has("search")).map((q) => `${q.get("sort")} ${q.get("page")}`),
    searches: lists.filter((q) => q.has("search")).map((q) => q.get("search")),
  };
}

const reader = (pageSize = 2) => new AddressReader(stack.api, { pageSize, gatherMs: 20 });

describe("AddressReader (VM addresses from the list, gathered)", () => {
  it("the VMs read together that page 1 holds: one page for all, each its own item's addresses", async () => {
    const r = reader();
    const since = stack.mark();
    const read = await Promise.all([r.read(v(5)), r.read(v(4))]);
    expect(read).toEqual([itemAddresses(5), itemAddresses(4)]);
    expect(read[0]!.publicIp).toBeNull();
    expect(read[1]!.publicIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(await listRequests(since)).toEqual({ pages: ["createdAt:desc 1"], searches: [] });
    expect(r.stats).toMatchObject({ batches: 1, pages: 1, searches: 0, reads: 2 });
  });

  it("older VMs read together: the next pages while they answer at least as many as pages are left", async () => {
    const r = reader();
    const since = stack.mark();
    const ids = [0, 1, 2, 3];
    const read = await Promise.all(ids.map((i) => r.read(v(i))));
    expect(read).toEqual(ids.map(itemAddresses));
    // 3 pages for 4 VMs (4 searches before).
    expect(await listRequests(since)).toEqual({
      pages: ["createdAt:desc 1", "createdAt:desc 2", "createdAt:desc 3"],
      searches: [],
    });
  });

  it("a lone read is a search by name (a page would cost as much); VMs older than page 1 as last read are searched", async () => {
    const r = reader();
    let since = stack.mark();
    expect(await r.read(v(5))).toEqual(itemAddresses(5));
    expect(await listRequests(since)).toEqual({ pages: [], searches: [v(5).name] });

    // Page 1 read full ([v5 v4]): v0 and v1 are older than all of it, so it is not read for them.
    await Promise.all([r.read(v(5)), r.read(v(4))]);
    since = stack.mark();
    expect(await Promise.all([r.read(v(0)), r.read(v(1))])).toEqual([itemAddresses(0), itemAddresses(1)]);
    const sent = await listRequests(since);
    expect(sent.pages).toEqual([]);
    expect(sent.searches.sort()).toEqual([v(0).name, v(1).name]);
  });

  it("a VM the pages miss (deleted after its detail was read) is searched: no addresses, never another VM's", async () => {
    const gone = await createVm("adr-gone", true);
    const { jobId } = await stack.api.deleteVm({ params: { id: gone.virtualMachine.id } });
    await stack.api.jobs.wait(jobId);
    const r = reader();
    const since = stack.mark();
    const [lost, kept] = await Promise.all([r.read(gone.virtualMachine), r.read(v(5))]);
    expect(lost).toBeUndefined();
    expect(kept).toEqual(itemAddresses(5));
    expect(await listRequests(since)).toEqual({ pages: ["createdAt:desc 1"], searches: ["adr-gone"] });
  });

  it("a list page that fails: each VM is searched instead, and still answered", async () => {
    const r = reader();
    await stack.faults("listVms,status=400,count=1");
    const since = stack.mark();
    try {
      const read = await Promise.all([r.read(v(5)), r.read(v(4))]);
      expect(read).toEqual([itemAddresses(5), itemAddresses(4)]);
    } finally {
      await stack.faults("");
    }
    const sent = await listRequests(since);
    expect(sent.pages).toEqual(["createdAt:desc 1"]);
    expect(sent.searches.sort()).toEqual([v(4).name, v(5).name]);
  });

  it("announced reads are sent together as soon as every announced VM has asked; a withdrawn one does not hold them", async () => {
    // A long pause: only the announcements can send the batch early.
    const r = new AddressReader(stack.api, { pageSize: 2, gatherMs: 5_000, maxGatherMs: 5_000 });
    const releases = [5, 4, 3].map((i) => r.expect(v(i).id));
    const started = Date.now();
    const first = r.read(v(5));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const second = r.read(v(4));
    releases[2]!(); // v3 never asks (its create failed on the way)
    expect(await Promise.all([first, second])).toEqual([itemAddresses(5), itemAddresses(4)]);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r.stats).toMatchObject({ batches: 1, pages: 1, searches: 0 });
    releases.forEach((release) => release()); // no effect once read
  });
});
