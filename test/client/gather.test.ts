import { describe, expect, it } from "vitest";
import { CallerOperations, callerOperations, Gatherer } from "../../provider/client/gather";

/** Resolves when `promise` has settled or `ms` have passed, whichever comes first: true if it settled. */
const settlesWithin = (promise: Promise<unknown>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

/** A gatherer whose batches are recorded, with a gather long enough that a batch sent early is plain to see. */
function recording(operations: CallerOperations) {
  const batches: number[][] = [];
  let sent: () => void = () => {};
  const gatherer = new Gatherer<number>(
    (batch) => {
      batches.push(batch);
      sent();
    },
    { gatherMs: 2000, maxGatherMs: 5000, operations },
  );
  const nextBatch = () => new Promise<void>((r) => (sent = r));
  return { gatherer, batches, nextBatch };
}

/** `count` operations of `operations` that run until the returned function ends them. */
function hold(operations: CallerOperations, count: number) {
  const ends: (() => void)[] = [];
  const done = Array.from({ length: count }, () => operations.run(() => new Promise<void>((r) => ends.push(r))));
  return async () => {
    for (const end of ends) end();
    await Promise.all(done);
  };
}

describe("Gatherer", () => {
  it("waits for a pause while the caller may still send: the engine's first wave (no operation ended yet) is one batch", async () => {
    const operations = new CallerOperations();
    const { gatherer, batches, nextBatch } = recording(operations);
    const release = hold(operations, 3);
    // Three operations in progress, none ended: the caller may run more of them at once, so nothing is sent early.
    expect(operations.full).toBe(false);
    const batch = nextBatch();
    gatherer.add(1);
    gatherer.add(2);
    expect(await settlesWithin(batch, 300)).toBe(false);
    gatherer.add(3);
    await batch;
    expect(batches).toEqual([[1, 2, 3]]);
    await release();
  });

  it("sends at once, with what the same turn added, when every operation the caller runs together is in progress", async () => {
    const operations = new CallerOperations();
    // The caller was seen running three at once (counted when they ended), and runs three again.
    await hold(operations, 3)();
    expect(operations.full).toBe(false);
    const release = hold(operations, 3);
    expect(operations.full).toBe(true);

    const { gatherer, batches, nextBatch } = recording(operations);
    const first = nextBatch();
    // What one job poll completes arrives in one turn of the event loop: it is one batch, sent without the 2 s gather.
    gatherer.add(1);
    await Promise.resolve();
    gatherer.add(2);
    expect(await settlesWithin(first, 200)).toBe(true);
    expect(batches).toEqual([[1, 2]]);

    // With one operation ended, the caller can send another: the gather waits again.
    await release();
    const partly = hold(operations, 2);
    expect(operations.full).toBe(false);
    const second = nextBatch();
    gatherer.add(3);
    expect(await settlesWithin(second, 300)).toBe(false);
    // The third operation arrives: all are in progress, so the batch goes at once, with the item it brought.
    const last = hold(operations, 1);
    gatherer.add(4);
    expect(await settlesWithin(second, 200)).toBe(true);
    expect(batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    await partly();
    await last();
  });

  it("a batch is sent at most maxGatherMs after its first item, however items keep arriving", async () => {
    const operations = new CallerOperations();
    const batches: number[][] = [];
    const gatherer = new Gatherer<number>((batch) => batches.push(batch), {
      gatherMs: 60,
      maxGatherMs: 200,
      operations,
    });
    const started = Date.now();
    for (let i = 0; Date.now() - started < 400; i++) {
      gatherer.add(i);
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 100));
    expect(batches.length).toBeGreaterThanOrEqual(2);
    expect(batches.flat()).toEqual([...batches.flat()].sort((a, b) => a - b));
  });

  it("with stretch, items trickling in stay one batch while a fixed pause would cut it; a lone item waits only gatherMs", async () => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const trickle = async (stretch: number | undefined) => {
      const batches: number[][] = [];
      const gatherer = new Gatherer<number>((batch) => batches.push(batch), {
        gatherMs: 50,
        maxGatherMs: 5000,
        stretch,
        operations: new CallerOperations(),
      });
      // Gaps of 40 ms, then one of 90 ms (more than gatherMs, less than 3 × the gaps seen), then 40 ms again.
      for (const [i, gap] of [40, 40, 40, 90, 40, 40].entries()) {
        gatherer.add(i);
        await sleep(gap);
      }
      gatherer.add(6);
      await sleep(400);
      return batches;
    };
    expect(await trickle(3)).toEqual([[0, 1, 2, 3, 4, 5, 6]]);
    expect((await trickle(undefined)).length).toBeGreaterThanOrEqual(2);

    // After a silence longer than a trickle's gaps, a lone item is sent after gatherMs, not a stretched pause.
    const batches: number[][] = [];
    const gatherer = new Gatherer<number>((batch) => batches.push(batch), {
      gatherMs: 50,
      maxGatherMs: 5000,
      stretch: 3,
      operations: new CallerOperations(),
    });
    gatherer.add(1);
    await sleep(300); // a 300 ms gap: the next batch would wait 900 ms if it counted
    gatherer.add(2);
    await sleep(2300); // longer than a trickle gap (2 s): the trickle is over
    const lone = Date.now();
    gatherer.add(3);
    while (batches.length < 3 && Date.now() - lone < 1000) await sleep(10);
    expect(batches).toEqual([[1], [2], [3]]);
    expect(Date.now() - lone).toBeLessThan(400);
  });
});

describe("Gatherer with announced items (expect)", () => {
  /** A gatherer that records its batches, with a 2 s pause: a batch sent early is plain to see. */
  function announcing(options: { gatherMs?: number; maxGatherMs?: number } = {}) {
    const batches: string[][] = [];
    const gatherer = new Gatherer<string>((batch) => batches.push(batch), {
      gatherMs: 2000,
      maxGatherMs: 5000,
      operations: null,
      ...options,
    });
    /** Resolves when `count` batches have been sent (true), or after `ms` (false). */
    const sent = async (count: number, ms: number) => {
      const started = Date.now();
      while (batches.length < count && Date.now() - started < ms) await new Promise((r) => setTimeout(r, 5));
      return batches.length >= count;
    };
    return { gatherer, batches, sent };
  }

  it("a batch of announced items is sent at once when the last announced one arrives, with what that turn adds", async () => {
    const { gatherer, batches, sent } = announcing();
    gatherer.expect("a");
    gatherer.expect("b");
    gatherer.expect("b"); // announced twice: both must arrive
    gatherer.add("a1", "a");
    gatherer.add("b1", "b");
    expect(await sent(1, 300)).toBe(false);
    gatherer.add("b2", "b");
    gatherer.add("x"); // unannounced, in the same turn: it goes with them
    expect(await sent(1, 200)).toBe(true);
    expect(batches).toEqual([["a1", "b1", "b2", "x"]]);
  });

  it("a withdrawn announcement releases the batch; withdrawing after the arrival, or twice, changes nothing", async () => {
    const { gatherer, batches, sent } = announcing();
    const withdrawA = gatherer.expect("a");
    const withdrawB = gatherer.expect("b");
    const withdrawC = gatherer.expect("c");
    withdrawC(); // before anything arrived: no empty batch
    gatherer.add("a1", "a");
    expect(await sent(1, 300)).toBe(false);
    withdrawB();
    expect(await sent(1, 200)).toBe(true);
    expect(batches).toEqual([["a1"]]);

    // Withdrawing "a" (arrived) and "b" again does not take off the next announcement of either key.
    withdrawA();
    withdrawB();
    gatherer.expect("a");
    gatherer.expect("b");
    gatherer.add("a2", "a");
    expect(await sent(2, 300)).toBe(false);
    gatherer.add("b2", "b");
    expect(await sent(2, 200)).toBe(true);
    expect(batches).toEqual([["a1"], ["a2", "b2"]]);
  });

  it("an unannounced item waits gatherMs, announcements outstanding or not; an unknown key counts as unannounced", async () => {
    const { gatherer, batches, sent } = announcing({ gatherMs: 400 });
    gatherer.add("x", "never-announced");
    expect(await sent(1, 200)).toBe(false);
    expect(await sent(1, 1000)).toBe(true);

    // While "a" is announced, an unannounced item is not held for it: the pause alone sends it.
    gatherer.expect("a");
    gatherer.add("y");
    expect(await sent(2, 200)).toBe(false);
    expect(await sent(2, 1000)).toBe(true);
    expect(batches).toEqual([["x"], ["y"]]);
  });

  it("a batch whose announced items are not all in is sent at maxGatherMs after its first item at the latest", async () => {
    const { gatherer, batches } = announcing({ gatherMs: 250, maxGatherMs: 600 });
    gatherer.expect("a");
    gatherer.expect("late"); // never arrives, never withdrawn
    gatherer.add("a0", "a");
    // Arrivals every 50 ms keep restarting the 250 ms pause, and "late" is still awaited: only maxGatherMs ends the
    // batch (without it, none would be sent in these 3 s).
    const started = Date.now();
    for (let i = 1; batches.length === 0 && Date.now() - started < 3000; i++) {
      await new Promise((r) => setTimeout(r, 50));
      gatherer.add(`x${i}`);
    }
    expect(batches.length).toBe(1);
    expect(batches[0]![0]).toBe("a0");
    expect(batches[0]!.length).toBeGreaterThanOrEqual(4);
  });

  it("operations: null turns the full rule off: items wait for the pause while the caller's operations are all in progress", async () => {
    // The process's own operations (the default), seen three at once and running three again: full.
    await hold(callerOperations, 3)();
    const release = hold(callerOperations, 3);
    expect(callerOperations.full).toBe(true);
    try {
      const byDefault: number[][] = [];
      new Gatherer<number>((batch) => byDefault.push(batch), { gatherMs: 2000, maxGatherMs: 5000 }).add(1);
      const { gatherer, batches, sent } = announcing();
      gatherer.add("x");
      expect(await sent(1, 300)).toBe(false);
      expect(batches).toEqual([]);
      expect(byDefault).toEqual([[1]]);
    } finally {
      await release();
    }
  });
});
