import type { VmDetail } from "../../api";
import type { CloudClient } from "../../client";

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
  private pending: Wanted[] = [];
  /** Announced reads not yet arrived, by VM id. */
  private readonly expected = new Map<string, number>();
  private expectedCount = 0;
  /** Whether the pending batch holds an announced read. */
  private announcedPending = false;
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private firstAt = 0;
  /**
   * The oldest `createdAt` (ms) seen on page 1 when it was last read full: a VM created before it is on a later page
   * (VMs made since only push it further down), so page 1 is not read for it.
   */
  private horizon: number | undefined;
  private readonly gatherMs: number;
  private readonly maxGatherMs: number;
  private readonly pageSize: number;

  constructor(
    private readonly api: CloudClient,
    options: AddressReaderOptions = {},
  ) {
    this.gatherMs = options.gatherMs ?? 50;
    this.maxGatherMs = options.maxGatherMs ?? 500;
    this.pageSize = Math.min(100, Math.max(1, options.pageSize ?? 100));
  }

  /**
   * Announces that VM `id` will read its addresses soon (its create job completed; its detail is being read). The
   * returned function withdraws the announcement when the read never comes (an error on the way); it does nothing once
   * the read arrived.
   */
  expect(id: string): () => void {
    this.expected.set(id, (this.expected.get(id) ?? 0) + 1);
    this.expectedCount++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      if (this.consume(id)) this.schedule();
    };
  }

  /** The VM's addresses, or undefined when the API reports them nowhere (the VM left the list meanwhile). */
  read(vm: Vm): Promise<Addresses | undefined> {
    return new Promise<Addresses | undefined>((resolve, reject) => {
      if (this.consume(vm.id)) this.announcedPending = true;
      if (this.pending.length === 0) this.firstAt = Date.now();
      this.pending.push({ vm, resolve, reject });
      this.schedule(true);
    });
  }

  /** Takes one announcement of `id` off, when there is one. */
  private consume(id: string): boolean {
    const count = this.expected.get(id);
    if (count === undefined) return false;
    if (count <= 1) this.expected.delete(id);
    else this.expected.set(id, count - 1);
    this.expectedCount--;
    return true;
  }

  private schedule(arrived = false): void {
    if (this.pending.length === 0 || this.immediate) return;
    if (this.announcedPending && this.expectedCount === 0) {
      // Every announced read is here: send once this turn of the event loop has added what it adds.
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.immediate = setImmediate(() => this.flush());
      return;
    }
    if (!arrived && this.timer) return;
    if (this.timer) clearTimeout(this.timer);
    const delay = Math.max(0, Math.min(this.gatherMs, this.firstAt + this.maxGatherMs - Date.now()));
    this.timer = setTimeout(() => this.flush(), delay);
  }

  private flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.immediate = null;
    const batch = this.pending;
    this.pending = [];
    this.announcedPending = false;
    if (batch.length > 0) void this.send(batch);
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
