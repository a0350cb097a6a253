import { ApiError } from "./errors";
import { Gatherer, type GatherOptions } from "./gather";

/** How reads are gathered into a batch (see {@link Gatherer}), and how a batch is read. */
export interface BatchedReaderOptions extends GatherOptions {
  /** Fewer reads than this in a batch are sent one by one (one GET each). Default 2. */
  minBatch?: number;
  /** Items per list page (the API allows at most 100). Default 100. */
  pageSize?: number;
}

/** A page of the kind's list endpoint. */
export interface ListPage<T> {
  data: T[];
  meta: { totalPages: number; hasNextPage: boolean };
}

/** Counters for tests and diagnostics. */
export interface BatchedReaderStats {
  /** Batches sent. */
  batches: number;
  /** List pages requested. */
  pages: number;
  /** Single reads (GET by id) sent. */
  singles: number;
  /** Reads answered. */
  reads: number;
}

interface Pending<T> {
  id: string;
  resolve(value: T | null): void;
  reject(error: unknown): void;
}

const isNotFound = (error: unknown) => error instanceof ApiError && error.status === 404;

/**
 * Reads resources of one kind by id, gathering the reads that arrive together (as `pulumi refresh` sends them, or the
 * read-backs of jobs that one poll saw completed) into one batch, as the JobWaiter gathers job polls. A batch of one is
 * read with one GET; a larger one through the kind's list endpoint (its list function must sort by creation, oldest
 * first): the reader remembers on which page it last saw each id (every item of every page it read), reads the pages
 * where the wanted ids should be (a new id: the last page), most wanted first, while a page is expected to answer at
 * least two of them, then reads what is still missing by id, so absence from a list never counts as deletion. Use it
 * only for kinds whose list items carry every field the caller compares. Resolves null for a resource that does not
 * exist.
 */
export class BatchedReader<T extends { id: string }> {
  readonly stats: BatchedReaderStats = { batches: 0, pages: 0, singles: 0, reads: 0 };
  /** The page each id was last seen on. */
  private readonly positions = new Map<string, number>();
  private lastPage = 1;
  private readonly gatherer: Gatherer<Pending<T>>;
  private readonly options: Required<Pick<BatchedReaderOptions, "minBatch" | "pageSize">>;

  constructor(
    private readonly listPage: (page: number, limit: number) => Promise<ListPage<T>>,
    private readonly getOne: (id: string) => Promise<T>,
    options: BatchedReaderOptions = {},
  ) {
    this.options = { minBatch: options.minBatch ?? 2, pageSize: Math.min(100, Math.max(1, options.pageSize ?? 100)) };
    // Reads of one refresh trickle in (the engine sends them as it goes): wait for a pause in them, bounded.
    this.gatherer = new Gatherer((batch) => void this.flush(batch), options);
  }

  /** The resource of this id, or null when it does not exist. */
  read(id: string): Promise<T | null> {
    return new Promise<T | null>((resolve, reject) => this.gatherer.add({ id, resolve, reject }));
  }

  private async single(id: string): Promise<T | null> {
    this.stats.singles++;
    try {
      return await this.getOne(id);
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  /**
   * The page expected to answer the most of `ids` (an id's last page, else its neighbours: deletions move items to
   * earlier pages; a new id: the last page), when it should answer at least two; else undefined (read them by id).
   */
  private nextPage(ids: string[], tried: Set<number>): number | undefined {
    const counts = new Map<number, number>();
    // An id never seen (a fresh reader, e.g. the process of a refresh) is on the last page or the one after it when it
    // is new, but may be on any page. The pages not read yet are tried too while the unseen ids outnumber them: reading
    // them all then costs fewer requests than a read by id each.
    const unread = Array.from({ length: this.lastPage }, (_, i) => i + 1).filter((p) => !tried.has(p));
    const unseen = ids.filter((id) => !this.positions.has(id)).length;
    const unseenGuesses = [this.lastPage, this.lastPage + 1, ...(unseen > unread.length ? unread : [])];
    for (const id of ids) {
      const seen = this.positions.get(id);
      const guesses = seen === undefined ? unseenGuesses : [seen, seen - 1, seen + 1];
      const page = guesses.find((p) => p >= 1 && p <= this.lastPage + 1 && !tried.has(p));
      if (page !== undefined) counts.set(page, (counts.get(page) ?? 0) + 1);
    }
    let best: [number, number] | undefined;
    for (const entry of counts) if (!best || entry[1] > best[1]) best = entry;
    return best && best[1] >= 2 ? best[0] : undefined;
  }

  private async flush(batch: Pending<T>[]): Promise<void> {
    this.stats.batches++;
    this.stats.reads += batch.length;
    const wanted = new Map<string, Pending<T>[]>();
    for (const p of batch) wanted.set(p.id, [...(wanted.get(p.id) ?? []), p]);
    const answer = (id: string, value: T | null) => {
      for (const p of wanted.get(id) ?? []) p.resolve(value);
      wanted.delete(id);
    };
    const fail = (id: string, error: unknown) => {
      for (const p of wanted.get(id) ?? []) p.reject(error);
      wanted.delete(id);
    };
    if (wanted.size >= this.options.minBatch) {
      const tried = new Set<number>();
      try {
        for (;;) {
          const page = this.nextPage([...wanted.keys()], tried);
          if (page === undefined) break;
          tried.add(page);
          this.stats.pages++;
          const { data, meta } = await this.listPage(page, this.options.pageSize);
          this.lastPage = Math.max(1, meta.totalPages);
          for (const item of data) {
            this.positions.set(item.id, page);
            if (wanted.has(item.id)) answer(item.id, item);
          }
          if (wanted.size === 0) break;
        }
      } catch {
        // The list failed (after the transport's retries): the single reads below still answer each id.
      }
    }
    await Promise.all(
      [...wanted.keys()].map((id) =>
        this.single(id).then(
          (value) => answer(id, value),
          (error: unknown) => fail(id, error),
        ),
      ),
    );
  }
}
