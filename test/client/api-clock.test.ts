import { describe, expect, it } from "vitest";
import { ApiClock } from "../../provider/client/api-clock";
import { clientHarness } from "./helpers";

const harness = await clientHarness();

describe("ApiClock", () => {
  it("knows nothing until a job it was told of is seen, then bounds the offset by the request's send and answer", () => {
    const clock = new ApiClock();
    clock.seen({ id: "unknown", createdAt: new Date(5_000).toISOString() });
    expect(clock.earliestAt(1_000)).toBeUndefined();
    // Sent at 1 000, answered at 1 200 (ours); made at 11 100 (the API's): the API runs 9 900-10 100 ms ahead.
    clock.started(["a"], 1_000, 1_200);
    expect(clock.earliestAt(1_000)).toBeUndefined();
    expect(clock.known).toBe(false);
    clock.seen({ id: "a", createdAt: new Date(11_100).toISOString() });
    expect(clock.known).toBe(true);
    expect(clock.earliestAt(2_000)).toBe(2_000 + 9_900);
    // A tighter sample narrows it; one seen twice counts once.
    clock.started(["b"], 3_000, 3_050);
    clock.seen({ id: "b", createdAt: new Date(13_020).toISOString() });
    expect(clock.earliestAt(0)).toBe(9_970);
    clock.seen({ id: "b", createdAt: new Date(99_999).toISOString() });
    expect(clock.earliestAt(0)).toBe(9_970);
    // The API's clock set back an hour: a sample outside the interval starts it anew.
    clock.started(["c"], 4_000, 4_100);
    clock.seen({ id: "c", createdAt: new Date(4_050 - 3_600_000).toISOString() });
    expect(clock.earliestAt(0)).toBe(4_050 - 3_600_000 - 4_100);
  });

  it("tells now on the API's clock from the latest Date header (a clock that was set shows at once), else the jobs", () => {
    const clock = new ApiClock();
    expect(clock.now()).toBeUndefined();
    clock.started(["a"], 1_000, 1_200);
    clock.seen({ id: "a", createdAt: new Date(11_100).toISOString() });
    expect(clock.now()! - Date.now()).toBeCloseTo(10_000, -2);
    // An answer made in second 3 600 of the API's clock, sent at 1 000 and answered at 1 200 (ours).
    clock.heard(new Date(3_600_000).toUTCString(), 1_000, 1_200);
    expect(clock.now()! - Date.now()).toBeCloseTo(3_600_000 + 500 - 1_100, -2);
    // No header, or one that is no date: what was known stays; the jobs' bound is untouched (the header is rough).
    clock.heard(undefined, 5_000, 5_100);
    clock.heard("soon", 5_000, 5_100);
    expect(clock.now()! - Date.now()).toBeCloseTo(3_599_400, -2);
    expect(clock.earliestAt(0)).toBe(9_900);
  });

  it("learns the API's clock from a create's job, when its poll answers, and from a VM create's own answer", async () => {
    const client = harness.client();
    const [dc] = harness.emulator.bootstrap.fixtures.datacenters;
    const before = Date.now();
    const { jobId } = await client.createNetwork({
      body: { name: "clock-net", datacenterId: dc.id, networkType: "standard" },
    });
    expect(client.clock.earliestAt(before)).toBeUndefined();
    await client.jobs.wait(jobId);
    const after = Date.now();
    // The emulator runs on this machine's clock: the earliest moment is at most the send, and not long before it.
    expect(client.clock.earliestAt(after)).toBeLessThanOrEqual(after);
    expect(client.clock.earliestAt(after)).toBeGreaterThan(before - 1);

    const other = harness.client();
    const [job] = await other.createVm({
      body: {
        name: "clock-vm",
        datacenterId: dc.id,
        imageId: harness.emulator.bootstrap.fixtures.images[0].id,
        configurationId: harness.emulator.bootstrap.fixtures.configurations[0].id,
      },
    });
    expect(other.clock.earliestAt(Date.now())).toBeLessThanOrEqual(Date.now());
    await other.jobs.wait(job.id);
  });
});
