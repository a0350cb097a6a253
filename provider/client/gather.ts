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
   * {@link callerOperations}.
   */
  operations?: CallerOperations;
}

/**
 * Gathers the items that arrive together (the engine sends up to `--parallel` operations at once; one job poll
 * completes several) into batches: a batch is sent once none has arrived for `gatherMs`, at most `maxGatherMs` after
 * its first, or at once when the caller cannot send more (see {@link CallerOperations.full}).
 */
export class Gatherer<T> {
  private pending: T[] = [];
  private timer: NodeJS.Timeout | null = null;
  private immediate: NodeJS.Immediate | null = null;
  private firstAt = 0;
  private lastAt = 0;
  /** The longest gap between two arrivals of the current trickle. */
  private longestGap = 0;
  private readonly gatherMs: number;
  private readonly stretch: number;
  private readonly maxGatherMs: number;
  private readonly operations: CallerOperations;

  constructor(
    private readonly send: (batch: T[]) => void,
    options: GatherOptions = {},
  ) {
    this.gatherMs = options.gatherMs ?? 100;
    this.maxGatherMs = options.maxGatherMs ?? 1000;
    this.stretch = options.stretch ?? 0;
    this.operations = options.operations ?? callerOperations;
  }

  add(item: T): void {
    const now = Date.now();
    if (this.pending.length === 0) this.firstAt = now;
    const gap = now - this.lastAt;
    this.longestGap = gap > TRICKLE_GAP_MS ? 0 : Math.max(this.longestGap, gap);
    this.lastAt = now;
    this.pending.push(item);
    if (this.immediate) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.operations.full) {
      this.immediate = setImmediate(() => this.flush());
      return;
    }
    const pause = Math.max(this.gatherMs, this.stretch * this.longestGap);
    const delay = Math.max(0, Math.min(pause, this.firstAt + this.maxGatherMs - now));
    this.timer = setTimeout(() => this.flush(), delay);
  }

  private flush(): void {
    this.timer = null;
    this.immediate = null;
    const batch = this.pending;
    this.pending = [];
    this.send(batch);
  }
}
