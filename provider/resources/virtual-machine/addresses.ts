import type { VmDetail } from "../../api";
import { Gatherer, type CloudClient } from "../../client";

/** A VM's primary addresses, as its list item reports them (the spec documents them there, not on the detail). */
export interface Addresses {
  privateIp: string | null;
  publicIp: string | null;
}

type Vm = VmDetail["virtualMachine"];

/** Counters for tests and diagnostics. */
export interface AddressReadStats {
  /** Batches sent. */
  batches: number;
  /** List pages read (newest first), each answering any VM of its batch it holds. */
  pages: number;
  /** Searches by name, one per VM the pages did not answer. */
  searches: number;
  /** Reads answered. */
  reads: number;
}

export interface AddressReaderOptions {
  /** A batch with no expected VM still to come is sent once nothing has arrived for this long. Default 50 ms. */
  gatherMs?: number;
  /** ... or this long after its first read, whichever comes first. Default 500 ms. */
  maxGatherMs?: number;
  /** Items per list page (the API allows at most 100). Default 100. */
  pageSize?: number;
}

interface Wanted {
  vm: Vm;
  resolve(value: Addresses | undefined): void;
  reject(error: unknown): void;
}

/**
 * Reads the addresses of VMs whose detail lacks them, gathering the reads that arrive together (the VMs one job poll
 * completed, read back at once) into one batch read through the newest pages of the VM list (`createdAt:desc`: the
 * VMs just made are on page 1) instead of one search by name each. A VM the pages read do not hold is searched by name
 * and matched by id, as a lone read is (a page would cost as much as its search): never a wrong address, at worst
 * today's request.
 *
 * Creates announce their read when their job completes ({@link expect}): once every announced VM has asked (or given
 * up), the batch is sent at once; reads nobody announced (updates, imports) wait `gatherMs` for company.
 */
export class AddressReader {
  readonly stats: AddressReadStats = { batches: 0, pages: 0, searches: 0, reads: 0 };
  /** Gathers the reads into batches, each keyed by its VM's id (the key {@link expect} announces). */
  private readonly gatherer: Gatherer<Wanted>;
  /**
   * The oldest `createdAt` (ms) seen on page 1 when it was last read full: a VM created before it is on a later page
   * (VMs made since only push it further down), so page 1 is not read for it.
   */
  private horizon: number | undefined;
  private readonly pageSize: number;

  constructor(
    private readonly api: CloudClient,
    options: AddressReaderOptions = {},
  ) {
    this.pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));
    // Not the caller's operations: address reads come from only some of them (creates and updates of VMs whose detail
    // lacks the addresses), so all of them in progress would send each read alone; the announcements say instead.
    this.gatherer = new Gatherer((batch) => void this.send(batch), {
      gatherMs: options.gatherMs ?? 50,
      maxGatherMs: options.maxGatherMs ?? 500,
      operations: null,
    });
  }

  /**
   * Announces that VM `id` will read its addresses soon (its create job completed; its detail is being read). The
   * returned function withdraws the announcement when the read never comes (an error on the way); it does nothing once
   * the read arrived.
   */
  expect(id: string): () => void {
    return this.gatherer.expect(id);
  }

  /** The VM's addresses, or undefined when the API reports them nowhere (the VM left the list meanwhile). */
  read(vm: Vm): Promise<Addresses | undefined> {
    return new Promise<Addresses | undefined>((resolve, reject) => this.gatherer.add({ vm, resolve, reject }, vm.id));
  }

  private async send(batch: Wanted[]): Promise<void> {
    this.stats.batches++;
    this.stats.reads += batch.length;
    const wanted = new Map<string, Wanted[]>();
    for (const w of batch) wanted.set(w.vm.id, [...(wanted.get(w.vm.id) ?? []), w]);
    const answer = (id: string, value: Addresses) => {
      for (const w of wanted.get(id) ?? []) w.resolve(value);
      wanted.delete(id);
    };
    try {
      await this.readPages(wanted, answer);
    } catch {
      // The list failed (after the transport's retries): the searches below still answer each VM.
    }
    await Promise.all(
      [...wanted.values()].map((waiting) => {
        const { vm } = waiting[0]!;
        return this.search(vm).then(
          (value) => waiting.forEach((w) => w.resolve(value)),
          (error: unknown) => waiting.forEach((w) => w.reject(error)),
        );
      }),
    );
  }

  /**
   * Reads the list newest first while a page is expected to answer at least two of the wanted VMs: page 1 when two
   * or more may be on it (not older than the horizon); each next page while at least as many wanted VMs are older
   * than the oldest item read as there are pages left (reading them all then costs no more than a search each).
   */
  private async readPages(
    wanted: Map<string, Wanted[]>,
    answer: (id: string, value: Addresses) => void,
  ): Promise<void> {
    const createdOf = (id: string) => Date.parse(wanted.get(id)![0]!.vm.createdAt);
    const horizon = this.horizon;
    const onFirst = [...wanted.keys()].filter((id) => horizon === undefined || !(createdOf(id) < horizon));
    if (onFirst.length < 2) return;
    for (let page = 1; ; page++) {
      this.stats.pages++;
      const { data, meta } = await this.api.listVms({
        query: { page, limit: this.pageSize, sort: "createdAt:desc" },
      });
      for (const item of data) {
        if (wanted.has(item.id)) answer(item.id, { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp });
      }
      if (data.length === 0) return;
      const oldest = Math.min(...data.map((item) => Date.parse(item.createdAt)));
      if (page === 1 && data.length >= this.pageSize) this.horizon = oldest;
      if (page === 1 && data.length < this.pageSize) this.horizon = undefined;
      if (wanted.size === 0 || !meta.hasNextPage) return;
      const further = [...wanted.keys()].filter((id) => !(createdOf(id) > oldest)).length;
      const pagesLeft = Math.max(1, meta.totalPages - page);
      if (further < 2 || further < pagesLeft) return;
    }
  }

  /** Today's read of one VM: its name searched (in its data center), its item matched by id. */
  private async search(vm: Vm): Promise<Addresses | undefined> {
    this.stats.searches++;
    const query = { search: vm.name, "filter[datacenterId]": vm.datacenter.id };
    for await (const item of this.api.listAll("listVms", query)) {
      if (item.id === vm.id) return { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp };
    }
    return undefined;
  }
}

const readers = new WeakMap<CloudClient, AddressReader>();

/** The address reader of this client (one per client: the reads of one provider process are gathered together). */
export function addressReader(api: CloudClient): AddressReader {
  let reader = readers.get(api);
  if (!reader) readers.set(api, (reader = new AddressReader(api)));
  return reader;
}
