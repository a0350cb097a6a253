import { ApiError } from "./errors";
import { Gatherer, type GatherOptions } from "./gather";

/** How pairs are gathered into a batch (see {@link Gatherer}), and how a batch is sent. */
export interface BatchedPairWriterOptions extends GatherOptions {
  /** Fewer pairs than this in a batch are left to the caller's own request (one each). Default 2. */
  minBatch?: number;
  /** Items per side of one bulk request (the contract allows at most 50 ids of each list). Default 50. */
  maxPerSide?: number;
}

/**
 * What became of one pair: `done` (a bulk request that covered it succeeded), or `single` (not written by a bulk
 * request: alone in its batch, or in a bulk request the API refused or did not answer; the caller writes it the usual
 * way, one request, which takes over what already exists and explains a refusal with its own message).
 */
export type PairOutcome = { kind: "done" } | { kind: "single" };

/** Counters for tests and diagnostics. */
export interface BatchedPairWriterStats {
  batches: number;
  /** Bulk requests sent (those refused included). */
  requests: number;
  /** Pairs written by bulk requests. */
  done: number;
  /** Pairs handed back to the caller's own request. */
  singles: number;
}

/** Every left item with every right item: what one bulk request writes. */
export interface Product<L, R> {
  left: L[];
  right: R[];
}

type Key = string | number;

/** The products that cover `pairs` exactly, grouping the items of `by` whose partners are the same. */
function productsBy<L extends Key, R extends Key>(pairs: [L, R][], by: "left" | "right"): Product<L, R>[] {
  const partners = new Map<Key, { item: Key; others: Map<string, Key> }>();
  for (const [l, r] of pairs) {
    const [item, other] = by === "left" ? [l, r] : [r, l];
    const key = `${typeof item}:${item}`;
    let entry = partners.get(key);
    if (!entry) partners.set(key, (entry = { item, others: new Map() }));
    entry.others.set(`${typeof other}:${other}`, other);
  }
  const groups = new Map<string, { items: Key[]; others: Key[] }>();
  for (const { item, others } of partners.values()) {
    const signature = [...others.keys()].sort().join("\n");
    let group = groups.get(signature);
    if (!group) groups.set(signature, (group = { items: [], others: [...others.values()] }));
    group.items.push(item);
  }
  return [...groups.values()].map(({ items, others }) =>
    by === "left" ? { left: items as L[], right: others as R[] } : { left: others as L[], right: items as R[] },
  );
}

const chunks = <T>(items: T[], size: number): T[][] => {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
};

/**
 * Covers the distinct `pairs` with products (each left item with each right item) that hold no pair not asked for,
 * in few requests of at most `maxPerSide` items a side: the items of one side that share the same partners are one
 * product, grouped by whichever side gives fewer requests (10 users in the same 6 groups: one product; 30 users each
 * given the same 2 roles: one product).
 */
export function productsOf<L extends Key, R extends Key>(pairs: [L, R][], maxPerSide = 50): Product<L, R>[] {
  const split = (products: Product<L, R>[]) =>
    products.flatMap(({ left, right }) =>
      chunks(left, maxPerSide).flatMap((l) => chunks(right, maxPerSide).map((r) => ({ left: l, right: r }))),
    );
  const byLeft = split(productsBy(pairs, "left"));
  const byRight = split(productsBy(pairs, "right"));
  return byRight.length < byLeft.length ? byRight : byLeft;
}

const size = <L, R>(product: Product<L, R>) => product.left.length * product.right.length;

/**
 * A refusal of the whole request (validation, permission, a missing item): some pair of it is at fault. Not a refusal
 * of the caller (credentials) or of the pace (rate limit, timeout), which halving would only multiply.
 */
const refused = (error: unknown) =>
  error instanceof ApiError &&
  error.status >= 400 &&
  error.status < 500 &&
  ![401, 408, 429].includes(error.status) &&
  !error.mayHaveSucceeded;

interface Pending<L, R> {
  left: L;
  right: R;
  resolve(outcome: PairOutcome): void;
}

/**
 * Gathers writes of (left, right) pairs that arrive together (the engine creates up to `--parallel` resources at
 * once) into a bulk route that writes every combination of two lists and answers nothing per item, such as
 * `POST /teams/bulk/add-members` (`userIds` × `teamIds`) or `POST /users/bulk/assign-roles` (`userIds` ×
 * `roleNames`): see {@link productsOf}. A bulk request that succeeded wrote each of its pairs. A request the API
 * refused is split in two and each half sent again, down to single pairs, so one bad pair costs a few requests and
 * fails only its own resource; a request with no answer (lost, or a server error after the retries) hands its pairs to
 * the caller's single request, which takes over what was written. A pair alone in its batch or in its product is
 * handed back too: one request either way, and the single route's answer is the richer one.
 */
export class BatchedPairWriter<L extends Key, R extends Key> {
  readonly stats: BatchedPairWriterStats = { batches: 0, requests: 0, done: 0, singles: 0 };
  private readonly gatherer: Gatherer<Pending<L, R>>;
  private readonly minBatch: number;
  private readonly maxPerSide: number;

  /** @param bulk sends one bulk request writing every pair of `left` × `right`; its answer is not read */
  constructor(
    private readonly bulk: (left: L[], right: R[]) => Promise<unknown>,
    options: BatchedPairWriterOptions = {},
  ) {
    this.minBatch = options.minBatch ?? 2;
    this.maxPerSide = Math.min(50, Math.max(1, options.maxPerSide ?? 50));
    // Not sent early when the caller's operations look full (see CallerOperations.full): pairs become ready as the
    // users and groups they name are created, so the operations in progress are still growing when the first pairs
    // arrive, and a batch sent then would cut a product into many requests. A batch waits for a pause instead,
    // stretched while the pairs trickle in (a lone pair waits only gatherMs, 300 ms: pairs come out of the engine less
    // bunched than deletes do, since each waits for the user and group it names).
    this.gatherer = new Gatherer((batch) => void this.flush(batch), {
      gatherMs: 300,
      stretch: 3,
      maxGatherMs: 20_000,
      ...options,
      operations: options.operations ?? null,
    });
  }

  /** Writes the pair with others gathered at the same time; see {@link PairOutcome}. */
  write(left: L, right: R): Promise<PairOutcome> {
    return new Promise<PairOutcome>((resolve) => this.gatherer.add({ left, right, resolve }));
  }

  private async flush(batch: Pending<L, R>[]): Promise<void> {
    this.stats.batches++;
    const waiting = new Map<string, Pending<L, R>[]>();
    const keyOf = (l: L, r: R) => JSON.stringify([l, r]);
    for (const p of batch) {
      const key = keyOf(p.left, p.right);
      waiting.set(key, [...(waiting.get(key) ?? []), p]);
    }
    const settle = (product: Product<L, R>, outcome: PairOutcome) => {
      for (const l of product.left) {
        for (const r of product.right) {
          if (outcome.kind === "done") this.stats.done++;
          else this.stats.singles++;
          for (const p of waiting.get(keyOf(l, r)) ?? []) p.resolve(outcome);
          waiting.delete(keyOf(l, r));
        }
      }
    };
    const pairs = [...waiting.values()].map(([p]) => [p!.left, p!.right] as [L, R]);
    if (pairs.length < this.minBatch) {
      for (const [l, r] of pairs) settle({ left: [l], right: [r] }, { kind: "single" });
      return;
    }
    const send = async (product: Product<L, R>): Promise<void> => {
      if (size(product) < 2) return settle(product, { kind: "single" });
      this.stats.requests++;
      try {
        await this.bulk(product.left, product.right);
      } catch (error) {
        if (!refused(error)) return settle(product, { kind: "single" });
        // Some pair is at fault: each half is sent on its own, so the others are still written together.
        const [a, b] = halves(product);
        await Promise.all([send(a), send(b)]);
        return;
      }
      settle(product, { kind: "done" });
    };
    await Promise.all(productsOf(pairs, this.maxPerSide).map(send));
  }
}

/** A product cut in two along its longer side. */
function halves<L, R>({ left, right }: Product<L, R>): [Product<L, R>, Product<L, R>] {
  if (left.length >= right.length) {
    const at = Math.ceil(left.length / 2);
    return [
      { left: left.slice(0, at), right },
      { left: left.slice(at), right },
    ];
  }
  const at = Math.ceil(right.length / 2);
  return [
    { left, right: right.slice(0, at) },
    { left, right: right.slice(at) },
  ];
}

const writers = new WeakMap<object, Map<string, BatchedPairWriter<Key, Key>>>();

/**
 * The batched pair writer of a route for a client (one per client and route, so pairs gathered together share
 * requests), made by `make` the first time.
 */
export function batchedPairWriterOf<L extends Key, R extends Key>(
  owner: object,
  route: string,
  make: () => BatchedPairWriter<L, R>,
): BatchedPairWriter<L, R> {
  let byRoute = writers.get(owner);
  if (!byRoute) writers.set(owner, (byRoute = new Map()));
  let writer = byRoute.get(route) as BatchedPairWriter<L, R> | undefined;
  if (!writer) {
    writer = make();
    byRoute.set(route, writer as unknown as BatchedPairWriter<Key, Key>);
  }
  return writer;
}
