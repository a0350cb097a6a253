/**
 * The resource operations a caller runs in this process at once. The Pulumi engine runs at most `--parallel` of them
 * (creates, reads, updates, deletes; its checks and diffs run one at a time beside them), so once as many are in
 * progress as it was seen to run together, no other operation will arrive before one of them ends. The hosts count
 * each operation here; the batchers then send what they gathered at once instead of waiting for more.
 */
export class CallerOperations {
  private running = 0;
  /** The most operations seen in progress together, counted when one of them ended (so never a peak still rising). */
  private peak = 0;

  /** Runs `operation` as one of the caller's operations. */
  async run<T>(operation: () => Promise<T>): Promise<T> {
    this.running++;
    try {
      return await operation();
    } finally {
      this.peak = Math.max(this.peak, this.running);
      this.running--;
    }
  }

  /**
   * Whether every operation the caller runs at once is in progress (two or more): nothing more can arrive until one
   * ends. False until an operation has ended: the engine's first wave is still arriving then.
   */
  get full(): boolean {
    return this.peak >= 2 && this.running >= this.peak;
  }
}

/** Arrivals further apart than this are not one trickle: the pause that ends a batch starts short again. */
export const TRICKLE_GAP_MS = 2000;

/** The operations of the engine that serves this process's resources (the plugin's or the dynamic provider host's). */
export const callerOperations = new CallerOperations();

export interface GatherOptions {
  /** A batch is sent once nothing has arrived for this long. Default 100 ms. */
  gatherMs?: number;
  /** ... or this long after its first item, whichever comes first. Default 1 000 ms. */
  maxGatherMs?: number;
  /**
   * When set, the pause that ends a batch stretches to this many times the longest gap between arrivals of the current
   * trickle (arrivals less than {@link TRICKLE_GAP_MS} apart, across batches; never less than `gatherMs`, never past
   * `maxGatherMs` after the batch's first item): items that trickle in (the engine writes a checkpoint before each
   * create, so a large plan's creates arrive spaced out) stay in few batches, while a lone item or a burst after a
   * silence still waits only `gatherMs`. Default: off (a fixed pause of `gatherMs`).
   */
  stretch?: number;
  /**
   * The caller's operations: while all of them are in progress, a batch is sent as soon as the current turn of the
   * event loop has added what it adds (what one job poll completed), instead of after `gatherMs`. Default
   * {@link callerOperations}; `null`: never sent early for that (the items come from only some of the operations, so
   * all of them being in progress says nothing about what is still to come).
   */
  operations?: CallerOperations | null;
}

/**
 * Gathers the items that arrive together (the engine sends up to `--parallel` operations at once; one job poll
 * completes several) into batches: a batch is sent once none has arrived for `gatherMs`, at most `maxGatherMs` after
 * its first, or at once when the caller cannot send more (see {@link CallerOperations.full}).
 *
 * Items can also be announced ahead ({@link expect}, by key): a batch holding an announced item is sent at once (with
 * what the current turn of the event loop adds) as soon as no announced item is still to come, since the ones
 * announced are all it waits for; until then, and for batches of unannounced items only, the rules above apply.
 */
export class Gatherer<T> {
  private pending: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private firstAt = 0;
  private lastAt = 0;
  /** The longest gap between two arrivals of the current trickle. */
  private longestGap = 0;
  /** Announced items not yet arrived nor withdrawn: how many of each key. */
  private readonly expected = new Map<string, number>();
  private expectedCount = 0;
  /** Whether the pending batch holds an announced item. */
  private announcedPending = false;
  private readonly gatherMs: number;
  private readonly stretch: number;
  private readonly maxGatherMs: number;
  private readonly operations: CallerOperations | null;

  constructor(
    private readonly send: (batch: T[]) => void,
    options: GatherOptions = {},
  ) {
    this.gatherMs = options.gatherMs ?? 100;
    this.maxGatherMs = options.maxGatherMs ?? 1000;
    this.stretch = options.stretch ?? 0;
    this.operations = options.operations === undefined ? callerOperations : options.operations;
  }

  /**
   * Announces that an item of `key` will be added soon ({@link add} with the same key takes the announcement). The
   * returned function withdraws the announcement when the item will not come after all (an error on the way); it does
   * nothing once the item arrived, or the second time.
   */
  expect(key: string): () => void {
    this.expected.set(key, (this.expected.get(key) ?? 0) + 1);
    this.expectedCount++;
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      if (this.consume(key)) this.schedule(false);
    };
  }

  /** Adds an item to the batch being gathered; with a `key`, one announcement of that key (if any) has arrived. */
  add(item: T, key?: string): void {
    const now = Date.now();
    if (this.pending.length === 0) this.firstAt = now;
    const gap = now - this.lastAt;
    this.longestGap = gap > TRICKLE_GAP_MS ? 0 : Math.max(this.longestGap, gap);
    this.lastAt = now;
    if (key !== undefined && this.consume(key)) this.announcedPending = true;
    this.pending.push(item);
    this.schedule(true);
  }

  /** Takes one announcement of `key` off, when there is one. */
  private consume(key: string): boolean {
    const count = this.expected.get(key);
    if (count === undefined) return false;
    if (count <= 1) this.expected.delete(key);
    else this.expected.set(key, count - 1);
    this.expectedCount--;
    return true;
  }

  /**
   * Sets when the pending batch is sent: at once when nothing more is awaited for it, else after the pause (restarted
   * by each arrival; a withdrawn announcement leaves the pause of the last arrival running).
   */
  private schedule(arrived: boolean): void {
    if (this.pending.length === 0 || this.immediate) return;
    const complete = this.announcedPending && this.expectedCount === 0;
    if (complete || (arrived && this.operations?.full === true)) {
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.immediate = setImmediate(() => this.flush());
      return;
    }
    if (!arrived) return;
    if (this.timer) clearTimeout(this.timer);
    const pause = Math.max(this.gatherMs, this.stretch * this.longestGap);
    const delay = Math.max(0, Math.min(pause, this.firstAt + this.maxGatherMs - this.lastAt));
    this.timer = setTimeout(() => this.flush(), delay);
  }

  private flush(): void {
    this.timer = null;
    this.immediate = null;
    this.announcedPending = false;
    const batch = this.pending;
    this.pending = [];
    this.send(batch);
  }
}
