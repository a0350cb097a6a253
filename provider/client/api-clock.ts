/** Jobs remembered as requested but not seen yet (a job never polled must not grow the map without end). */
const REQUESTS_KEPT = 10_000;

/**
 * How the API's clock reads against this machine's, learnt from the jobs this client started: a job made by a request
 * sent at `sentAt` and answered at `receivedAt` (this machine's clock) has a `createdAt` (the API's) between the two,
 * so the offset of the API's clock lies within [createdAt − receivedAt, createdAt − sentAt]. Each job seen narrows
 * that interval; one that does not meet it (the API's clock was set) starts it anew. A create whose answer was lost is
 * then settled by the API's own clock (see {@link earliestAt}): what was made before the request was sent is older.
 * Every answer's `Date` header (HTTP's, to the second; the spec does not document it: read when present) tells the
 * clock more roughly, enough for {@link now} (e.g. how far a key is from its expiry), never for {@link earliestAt}.
 */
export class ApiClock {
  private readonly requested = new Map<string, { sentAt: number; receivedAt: number }>();
  private offset: { low: number; high: number } | undefined;
  /** The offset as the latest `Date` header told it (the middle of what it allows). */
  private roughOffset: number | undefined;

  /** An answer's `Date` header, for a request sent at `sentAt` and answered at `receivedAt` (this machine's clock). */
  heard(date: string | undefined, sentAt: number, receivedAt: number): void {
    const at = date === undefined ? Number.NaN : Date.parse(date);
    // The header is the second the answer was made in: the API's clock read between `at` and `at` + 1 s.
    if (Number.isFinite(at)) this.roughOffset = at + 500 - (sentAt + receivedAt) / 2;
  }

  /**
   * Now on the API's clock (epoch ms), as the latest answer's `Date` told it (every answer has a say: a clock that
   * was set shows at once), else the jobs; undefined before either did.
   */
  now(): number | undefined {
    const offset = this.roughOffset ?? (this.offset ? (this.offset.low + this.offset.high) / 2 : undefined);
    return offset === undefined ? undefined : Date.now() + offset;
  }

  /** Jobs started by a request sent at `sentAt` and answered at `receivedAt` (this machine's clock, ms). */
  started(jobIds: readonly string[], sentAt: number, receivedAt: number): void {
    for (const id of jobIds) {
      if (this.requested.size >= REQUESTS_KEPT) this.requested.delete(this.requested.keys().next().value!);
      this.requested.set(id, { sentAt, receivedAt });
    }
  }

  /** A job record as the API reports it (a create's answer, a poll): its `createdAt` tells the API's clock. */
  seen(job: { id: string; createdAt: string }): void {
    const request = this.requested.get(job.id);
    if (!request) return;
    this.requested.delete(job.id);
    const createdAt = Date.parse(job.createdAt);
    if (!Number.isFinite(createdAt)) return;
    const sample = { low: createdAt - request.receivedAt, high: createdAt - request.sentAt };
    const low = Math.max(sample.low, this.offset?.low ?? -Infinity);
    const high = Math.min(sample.high, this.offset?.high ?? Infinity);
    this.offset = low <= high ? { low, high } : sample;
  }

  /** Whether a job this client started told the offset precisely enough for {@link earliestAt}. */
  get known(): boolean {
    return this.offset !== undefined;
  }

  /**
   * The earliest moment, on the API's clock (epoch ms), at which a request sent at `sentAt` (this machine's clock)
   * can have been carried out; undefined until a job this client started told the offset.
   */
  earliestAt(sentAt: number): number | undefined {
    return this.offset === undefined ? undefined : sentAt + this.offset.low;
  }
}
