import { Gatherer, type GatherOptions } from "./gather";

/** How deletes are gathered into a batch (see {@link Gatherer}), and how a batch is sent. */
export interface BatchedDeleterOptions extends GatherOptions {
  /** Fewer deletes than this in a batch are left to the caller's own delete (one request each). Default 2. */
  minBatch?: number;
  /** Ids per bulk request (the API allows at most 50). Default 50. */
  maxBatch?: number;
}

/** One row of a bulk answer: whether that id was deleted (or its delete job started). */
export interface BulkRow {
  /** Compared with the requested ids as text. */
  id: string | number;
  success: boolean;
  jobId: string | null;
}

/**
 * What became of one id: `deleted` (with the job that deletes it, when there is one), `unconfirmed` (the bulk request
 * succeeded but its answer says nothing per id: read the resource to know), or `single` (not deleted by a bulk request:
 * refused, failed, or a batch too small; the caller deletes it the usual way, which explains any refusal).
 */
export type BulkOutcome = { kind: "deleted"; jobId: string | null } | { kind: "unconfirmed" } | { kind: "single" };

/** Counters for tests and diagnostics. */
export interface BatchedDeleterStats {
  batches: number;
  /** Bulk delete requests sent. */
  requests: number;
  /** Ids deleted by bulk requests. */
  deleted: number;
  /** Ids handed back to the caller's own delete. */
  singles: number;
}

interface Pending<Id> {
  id: Id;
  resolve(outcome: BulkOutcome): void;
}

/**
 * Gathers the deletes of one kind that arrive together (the engine deletes up to `--parallel` resources at once) into
 * the API's bulk delete request (`POST …/bulk/delete`, `ids` 1-50), as the BatchedReader gathers reads. The bulk
 * answer's row for an id says whether it was deleted; an id it refused, a request that failed, or a batch of one is
 * handed back to the caller's single delete, so nothing is lost and every refusal keeps its own message.
 */
export class BatchedDeleter<Id extends string | number> {
  readonly stats: BatchedDeleterStats = { batches: 0, requests: 0, deleted: 0, singles: 0 };
  private readonly gatherer: Gatherer<Pending<Id>>;
  private readonly options: Required<Pick<BatchedDeleterOptions, "minBatch" | "maxBatch">>;

  /**
   * @param bulk sends one bulk delete of these ids; resolves with its rows, or undefined when the answer has none (an
   *   API whose bulk answer is not documented)
   */
  constructor(
    private readonly bulk: (ids: Id[]) => Promise<BulkRow[] | undefined>,
    options: BatchedDeleterOptions = {},
  ) {
    this.options = { minBatch: options.minBatch ?? 2, maxBatch: Math.min(50, Math.max(1, options.maxBatch ?? 50)) };
    this.gatherer = new Gatherer((batch) => void this.flush(batch), options);
  }

  /** Deletes `id` with others gathered at the same time; see {@link BulkOutcome}. */
  delete(id: Id): Promise<BulkOutcome> {
    return new Promise<BulkOutcome>((resolve) => this.gatherer.add({ id, resolve }));
  }

  private async flush(batch: Pending<Id>[]): Promise<void> {
    this.stats.batches++;
    const byId = new Map<Id, Pending<Id>[]>();
    for (const p of batch) byId.set(p.id, [...(byId.get(p.id) ?? []), p]);
    const settle = (id: Id, outcome: BulkOutcome) => {
      if (outcome.kind === "single") this.stats.singles++;
      if (outcome.kind === "deleted") this.stats.deleted++;
      for (const p of byId.get(id) ?? []) p.resolve(outcome);
      byId.delete(id);
    };
    const ids = [...byId.keys()];
    if (ids.length < this.options.minBatch) {
      for (const id of ids) settle(id, { kind: "single" });
      return;
    }
    const chunks: Id[][] = [];
    for (let i = 0; i < ids.length; i += this.options.maxBatch) chunks.push(ids.slice(i, i + this.options.maxBatch));
    await Promise.all(
      chunks.map(async (chunk) => {
        this.stats.requests++;
        let rows: BulkRow[] | undefined;
        try {
          rows = await this.bulk(chunk);
        } catch {
          // The request failed as a whole (after the transport's retries): each id goes its usual way.
          for (const id of chunk) settle(id, { kind: "single" });
          return;
        }
        if (rows === undefined) {
          for (const id of chunk) settle(id, { kind: "unconfirmed" });
          return;
        }
        const answered = new Map(rows.map((row) => [String(row.id), row]));
        for (const id of chunk) {
          const row = answered.get(String(id));
          settle(id, row?.success ? { kind: "deleted", jobId: row.jobId } : { kind: "single" });
        }
      }),
    );
  }
}

const deleters = new WeakMap<object, Map<string, BatchedDeleter<string | number>>>();

/**
 * The batched deleter of a kind for a client (one per client and kind, so deletes gathered together share one bulk
 * request), made by `make` the first time.
 */
export function batchedDeleterOf<Id extends string | number>(
  owner: object,
  kind: string,
  make: () => BatchedDeleter<Id>,
): BatchedDeleter<Id> {
  let byKind = deleters.get(owner);
  if (!byKind) deleters.set(owner, (byKind = new Map()));
  let deleter = byKind.get(kind) as BatchedDeleter<Id> | undefined;
  if (!deleter) {
    deleter = make();
    byKind.set(kind, deleter as unknown as BatchedDeleter<string | number>);
  }
  return deleter;
}
