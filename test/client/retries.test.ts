import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ApiError, Pacer, retryAfterMs } from "../../provider/client";
import { clientHarness, type ClientHarness } from "./helpers";

let h: ClientHarness;
const state = () => h.emulator.ctx.state;
let volumeCount = 0;

beforeAll(async () => {
  h = await clientHarness();
});

/** Installs request faults through the emulator's admin API (they answer before any handler runs). */
async function injectFaults(...rules: Record<string, unknown>[]): Promise<void> {
  const response = await fetch(`${h.emulator.baseUrl.replace(/\/v1$/, "")}/__admin/faults`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ rules: rules.map((r) => ({ kind: "request", ...r })) }),
  });
  expect(response.status).toBe(200);
}

beforeEach(async () => {
  await injectFaults();
});

function volumeBody() {
  return {
    name: `vol-${++volumeCount}`,
    datacenterId: h.emulator.bootstrap.fixtures.datacenters[0].id,
    volumeTypeId: 1,
    volumeSizeId: 101,
    sizeGb: 10,
  };
}

const statusesOf = (route: string, since: number) =>
  h.exchanges
    .slice(since)
    .filter((e) => e.route === route)
    .map((e) => e.status);

describe("retries", () => {
  it("retries a GET through injected 500 and 503 answers", async () => {
    await injectFaults({ route: "me", status: 500, count: 1 }, { route: "me", status: 503, count: 1 });
    const since = h.exchanges.length;
    const me = await h.client().me();
    expect(me.id).toBe(h.emulator.bootstrap.users.admin.id);
    expect(statusesOf("me", since)).toEqual([500, 503, 200]);
    const logged = (await h.requestLog({ route: "me" })).map((r) => r.status);
    expect(logged.slice(-3)).toEqual([500, 503, 200]);
  });

  it("retries DELETE and a PUT that starts no job after a 503", async () => {
    const client = h.client();
    const created = await client.createVolume({ body: volumeBody() });
    await client.jobs.wait(created.jobId);
    const network = await client.createNetwork({
      body: {
        name: `retry-net-${created.id.slice(0, 8)}`,
        datacenterId: volumeBody().datacenterId,
        networkType: "standard",
      },
    });
    await client.jobs.wait(network.jobId);
    await injectFaults(
      { route: "updateNetwork", status: 503, count: 1 },
      { route: "deleteVolume", status: 503, count: 1 },
    );
    const since = h.exchanges.length;
    await client.updateNetwork({ params: { id: network.id }, body: { description: "retried" } });
    expect(state().networks[network.id].description).toBe("retried");
    await client.jobs.wait((await client.deleteVolume({ params: { id: created.id } })).jobId);
    expect(state().volumes[created.id]).toBeUndefined();
    expect(statusesOf("updateNetwork", since)).toEqual([503, 200]);
    expect(statusesOf("deleteVolume", since)).toEqual([503, 202]);
  });

  it("does not repeat a PUT that starts a job (resize, attach, detach): its answer may be lost after the job started", async () => {
    const client = h.client();
    const created = await client.createVolume({ body: volumeBody() });
    await client.jobs.wait(created.jobId);
    await injectFaults({ route: "resizeVolume", status: 503, count: 1 });
    const since = h.exchanges.length;
    const error = await client
      .resizeVolume({ params: { id: created.id }, body: { newSizeGb: 20 } })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 503, mayHaveSucceeded: true });
    expect(statusesOf("resizeVolume", since)).toEqual([503]);
  });

  it("gives up after the configured retries with the last error", async () => {
    await injectFaults({ route: "me", status: 500 });
    const since = h.exchanges.length;
    const error = await h
      .client({ retry: { retries: 2, minDelayMs: 1, maxDelayMs: 2 } })
      .me()
      .catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 500, code: "SERVER_ERROR", attempts: 3, mayHaveSucceeded: false });
    expect(statusesOf("me", since)).toEqual([500, 500, 500]);
  });

  it("never retries a create blindly after a 500: the error is flagged ambiguous", async () => {
    await injectFaults({ route: "createVolume", status: 500, count: 1 });
    const since = h.exchanges.length;
    const body = volumeBody();
    const error = await h
      .client()
      .createVolume({ body })
      .catch((e) => e);
    expect(error).toMatchObject({ status: 500, code: "SERVER_ERROR", mayHaveSucceeded: true, attempts: 1 });
    expect(statusesOf("createVolume", since)).toEqual([500]);
    expect(Object.values(state().volumes).filter((v) => v.name === body.name)).toHaveLength(0);
  });

  it("does not retry bulk routes or rotation after a 503 either", async () => {
    await injectFaults(
      { route: "bulkDeleteVolumes", status: 503, count: 1 },
      { route: "rotateApiKey", status: 503, count: 1 },
    );
    const client = h.client();
    const keyId = Object.values(state().apiKeys).find((k) => k.userId === h.emulator.bootstrap.users.member.id)!.id;
    const since = h.exchanges.length;
    await expect(
      client.bulkDeleteVolumes({ body: { ids: ["7d4c3b2a-1e0f-4a9b-8c7d-6e5f4a3b2c1d"] } }),
    ).rejects.toMatchObject({ status: 503, mayHaveSucceeded: true });
    await expect(client.rotateApiKey({ params: { keyId } })).rejects.toMatchObject({
      status: 503,
      mayHaveSucceeded: true,
    });
    expect(statusesOf("bulkDeleteVolumes", since)).toEqual([503]);
    expect(statusesOf("rotateApiKey", since)).toEqual([503]);
  });

  it("retries a create refused with 429 (refused before processing) and creates it once", async () => {
    await injectFaults({ route: "createVolume", status: 429, count: 1 });
    const since = h.exchanges.length;
    const body = volumeBody();
    const created = await h.client().createVolume({ body });
    expect(statusesOf("createVolume", since)).toEqual([429, 202]);
    expect(
      Object.values(state().volumes)
        .filter((v) => v.name === body.name)
        .map((v) => v.id),
    ).toEqual([created.id]);
  });

  it("does not retry other 4xx answers", async () => {
    const client = h.client();
    const body = volumeBody();
    await client.createVolume({ body });
    const since = h.exchanges.length;
    const error = await client.createVolume({ body }).catch((e) => e);
    expect(error).toMatchObject({ status: 409, code: "CONFLICT", mayHaveSucceeded: false, attempts: 1 });
    const missing = await client.getVolume({ params: { id: "7d4c3b2a-1e0f-4a9b-8c7d-6e5f4a3b2c1d" } }).catch((e) => e);
    expect(missing).toMatchObject({ status: 404, code: "NOT_FOUND", attempts: 1 });
    expect(statusesOf("createVolume", since)).toEqual([409]);
    expect(statusesOf("getVolume", since)).toEqual([404]);
  });
});

describe("how long a 429 asks to wait", () => {
  it("takes data.retryAfter, then Retry-After (seconds or date), then X-RateLimit-Reset, else 1 s", () => {
    const now = 1_700_000_000_500;
    expect(retryAfterMs({ "retry-after": "9" }, { data: { retryAfter: 3 } }, now)).toBe(3000);
    expect(retryAfterMs({ "retry-after": "2" }, { error: "RATE_LIMIT_EXCEEDED" }, now)).toBe(2000);
    expect(retryAfterMs({ "retry-after": new Date(now + 5000).toUTCString() }, undefined, now)).toBe(4500);
    expect(retryAfterMs({ "x-ratelimit-reset": String(Math.ceil((now + 7000) / 1000)) }, undefined, now)).toBe(7500);
    expect(retryAfterMs({}, undefined, now)).toBe(1000);
  });
});

describe("a call's waits signal (the plugin's Cancel)", () => {
  it("ends the back-off between retries: no further attempt, the signal's reason thrown", async () => {
    await injectFaults({ route: "me", status: 503 });
    const since = h.exchanges.length;
    const controller = new AbortController();
    const pending = h
      .client({ retry: { retries: 3, minDelayMs: 60_000, maxDelayMs: 60_000 } })
      .me({ waits: controller.signal })
      .catch((e: unknown) => e);
    await expect.poll(() => statusesOf("me", since), { interval: 5 }).toEqual([503]);
    controller.abort(new Error("stopped"));
    expect(await pending).toMatchObject({ message: "stopped" });
    expect(statusesOf("me", since)).toEqual([503]);
  });

  it("ends a wait for rate-limit budget: nothing sent", async () => {
    const pacing = new Pacer();
    pacing.budgetFor("me").pause(60_000);
    const since = h.exchanges.length;
    const controller = new AbortController();
    const pending = h.client({ pacing }).me({ waits: controller.signal });
    controller.abort(new Error("stopped"));
    await expect(pending).rejects.toThrow("stopped");
    expect(statusesOf("me", since)).toEqual([]);
    pacing.close();
  });

  it("never cuts an exchange in flight: a create already sent answers with what it created", async () => {
    await injectFaults({ route: "createVolume", latencyMs: 1000 });
    const mark = h.emulator.ctx.requestMark();
    const controller = new AbortController();
    const body = volumeBody();
    const pending = h.client().createVolume({ body, waits: controller.signal });
    await expect.poll(() => h.emulator.ctx.requestMark(), { interval: 5 }).toBeGreaterThan(mark);
    controller.abort(new Error("stopped"));
    const created = await pending;
    expect(state().volumes[created.id]?.name).toBe(body.name);
  });

  it("is ignored when already aborted as the call starts (the client's default one too)", async () => {
    const aborted = AbortSignal.abort(new Error("stopped"));
    const me = await h.client({ waits: () => aborted }).me();
    expect(me.id).toBe(h.emulator.bootstrap.users.admin.id);
  });
});
