/** Jobs remembered as requested but not seen yet (a job never polled must not grow the map without end). */
const REQUESTS_KEPT = 10_000;

/**
 * How the API's clock reads against this machine's, learnt from the jobs this client started: a job made by a request
 * sent at `sentAt` and answered at `receivedAt` (this machine's clock) has a `createdAt` (the API's) between the two,
 * so the offset of the API's clock lies within [createdAt − receivedAt, createdAt − sentAt]. Each job seen narrows
 * that interval; one that does not meet it (the API's clock was set) starts it anew. A create whose answer was lost is
 * then settled by the API's own clock (see {@link earliestAt}): what was made before the request was sent is older.
 */
export class ApiClock {
  private readonly requested = new Map<string, { sentAt: number; receivedAt: number }>();
  private offset: { low: number; high: number } | undefined;

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

  /**
   * The earliest moment, on the API's clock (epoch ms), at which a request sent at `sentAt` (this machine's clock)
   * can have been carried out; undefined until a job this client started told the offset.
   */
  earliestAt(sentAt: number): number | undefined {
    return this.offset === undefined ? undefined : sentAt + this.offset.low;
  }
}
