import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { z } from "zod";
import type { EntityUsage, VmMetrics } from "../../provider/api";
import type { EmulatorContext } from "../../emulator/context";
import type { Bootstrap, VmRec } from "../../emulator/state";
import { seedCatalog } from "../../emulator/fixtures";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

let emu: TestEmulator;
let bootstrap: Bootstrap;
let ctx: EmulatorContext;
beforeAll(async () => {
  emu = await testEmulator();
  ({ bootstrap, ctx } = emu);
});
afterAll(() => emu.app.close());
const HOUR = 3600_000;
const DAY = 24 * HOUR;
const [fra, ams, nyc] = seedCatalog().datacenters;
const outsiderEntityId = () => ctx.state.users[bootstrap.users.outsider.id].entityId;

/** Puts a VM straight into the state (the VM routes belong to another module). */
function seedVm(entityId: string, configurationId: number, datacenterId: string, createdAt: number, name?: string) {
  const vm: VmRec = {
    id: randomUUID(),
    entityId,
    name: name ?? `vm-${randomUUID().slice(0, 8)}`,
    status: "Running",
    datacenterId,
    imageId: 1,
    configurationId,
    teamId: null,
    publicIp: null,
    nics: [],
    sshKeyIds: [],
    privateKey: "key",
    rescueImageId: null,
    createdAt,
    updatedAt: createdAt,
  };
  ctx.state.vms[vm.id] = vm;
  return vm;
}

const monthOf = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const isoAt = (ms: number) => new Date(ms).toISOString();
const metrics = (query: string, as: "admin" | "member" | "outsider" = "admin") =>
  emu.call<VmMetrics>("GET", `/metrics/virtual-machines?${query}`, { as });

describe("GET /metrics/virtual-machines", () => {
  let now: number;
  let period: string;
  beforeAll(() => {
    now = ctx.now();
    seedVm(bootstrap.entityId, 1, fra.id, now - 40 * DAY, "old-general");
    seedVm(bootstrap.entityId, 2, ams.id, now - HOUR, "new-general");
    seedVm(bootstrap.entityId, 3, nyc.id, now - HOUR, "new-memory");
    seedVm(bootstrap.entityId, 1, fra.id, now - 2 * HOUR, "new-general-fra");
    seedVm(outsiderEntityId(), 4, fra.id, now - 40 * DAY, "foreign");
    period = `currentPeriodStart=${isoAt(now - 10 * DAY)}&currentPeriodEnd=${isoAt(now)}`;
  });

  it("builds the hierarchy summary → categories → tiers → regions → data centers with trends", async () => {
    const res = await metrics(period);
    expect(res.status).toBe(200);
    const data = res.body.data!;
    expect(data.period).toEqual({
      currentPeriodStart: isoAt(now - 10 * DAY),
      currentPeriodEnd: isoAt(now),
      comparisonPeriodStart: isoAt(now - 20 * DAY),
      comparisonPeriodEnd: isoAt(now - 10 * DAY),
    });
    expect(data.summary).toEqual({
      totalVms: 4,
      totalCpu: 2 + 4 + 8 + 2,
      totalRam: 4 + 8 + 32 + 4,
      totalDisk: 50 + 100 + 200 + 50,
      trend: { direction: "up", current: 4, previous: 1, change: 3 },
    });
    expect(data.categories.map((c) => [c.code, c.vmCount, c.trend.direction])).toEqual([
      ["general", 3, "up"],
      ["memory", 1, "up"],
    ]);
    const general = data.categories[0];
    expect(general.tiers.map((t) => [t.configurationId, t.vmCount, t.trend.direction, t.trend.previous])).toEqual([
      [1, 2, "up", 1],
      [2, 1, "up", 0],
    ]);
    expect(general.tiers[0].specs).toEqual({ cpu: 2, ram: 4, disk: 50 });
    expect(general.tiers[0].regions).toEqual([
      { region: fra.region, vmCount: 2, datacenters: [{ id: fra.id, name: fra.name, vmCount: 2 }] },
    ]);
    expect(JSON.stringify(data)).not.toContain("foreign");
  });

  it("lists VM names only with includeVmNames", async () => {
    const res = await metrics(`${period}&includeVmNames=true`);
    const dc = res.body.data!.categories[0].tiers[0].regions[0].datacenters[0];
    expect(dc.vmNames).toEqual(["new-general-fra", "old-general"]);
  });

  it("filters by category codes and data centers", async () => {
    const byCategory = await metrics(`${period}&categories=memory,compute`);
    expect(byCategory.body.data!.categories.map((c) => c.code)).toEqual(["memory"]);
    expect(byCategory.body.data!.summary.totalVms).toBe(1);
    const byDc = await metrics(`${period}&datacenters=${ams.id}&datacenters=${nyc.id}`);
    expect(byDc.body.data!.summary.totalVms).toBe(2);
    const regions = byDc.body.data!.categories.flatMap((c) => c.tiers.flatMap((t) => t.regions.map((r) => r.region)));
    expect(regions.sort()).toEqual([ams.region, nyc.region].sort());
  });

  it("shows a downward trend when the comparison period holds more VMs", async () => {
    const res = await metrics(
      `currentPeriodStart=${isoAt(now - 60 * DAY)}&currentPeriodEnd=${isoAt(now - 30 * DAY)}` +
        `&comparisonPeriodStart=${isoAt(now - 10 * DAY)}&comparisonPeriodEnd=${isoAt(now)}`,
    );
    expect(res.body.data!.summary.trend).toEqual({ direction: "down", current: 1, previous: 4, change: -3 });
    expect(res.body.data!.categories.find((c) => c.code === "memory")?.tiers[0].regions).toEqual([]);
  });

  it("defaults the current period to the start of the month until now", async () => {
    const res = await metrics("");
    const d = new Date(ctx.now());
    expect(res.body.data!.period.currentPeriodStart).toBe(isoAt(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)));
    expect(res.body.data!.period.comparisonPeriodEnd).toBe(res.body.data!.period.currentPeriodStart);
    expect(res.body.data!.summary.totalVms).toBe(4);
  });

  it("refuses an inverted period and bad parameters (400)", async () => {
    expect((await metrics(`currentPeriodStart=${isoAt(now)}&currentPeriodEnd=${isoAt(now - DAY)}`)).status).toBe(400);
    expect((await metrics("datacenters=not-a-uuid")).status).toBe(400);
    expect((await metrics("currentPeriodStart=yesterday")).status).toBe(400);
  });

  it("answers a tenant-user and nobody unauthenticated", async () => {
    expect((await metrics(period, "member")).status).toBe(200);
    expect((await emu.call("GET", "/metrics/virtual-machines", { as: null })).status).toBe(401);
  });
});

describe("GET /metrics/entity/:id/usage and available-months", () => {
  let child: string;
  let d: Date;
  let thisMonthStart: number;
  let lastMonthStart: number;
  let lastMonthDays: number;
  beforeAll(() => {
    child = bootstrap.childEntityId;
    const now = ctx.now();
    d = new Date(now);
    thisMonthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    lastMonthStart = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
    lastMonthDays = (thisMonthStart - lastMonthStart) / DAY;
    seedVm(child, 1, fra.id, lastMonthStart + 10 * DAY);
    seedVm(child, 3, nyc.id, lastMonthStart - 5 * DAY);
    seedVm(child, 2, ams.id, now + DAY);
  });

  const usage = (entityId: string, query = "", as: "admin" | "member" | "outsider" = "admin") =>
    emu.call<z.infer<typeof EntityUsage>>("GET", `/metrics/entity/${entityId}/usage${query}`, { as });

  it("computes VM hours of a month, split by category and region", async () => {
    const res = await usage(child, `?month=${monthOf(lastMonthStart)}`);
    expect(res.status).toBe(200);
    const smallHours = (lastMonthDays - 10) * 24;
    const memoryHours = lastMonthDays * 24;
    expect(res.body.data).toEqual({
      entityId: child,
      month: monthOf(lastMonthStart),
      summary: {
        vmCount: 2,
        cpuHours: smallHours * 2 + memoryHours * 8,
        ramGbHours: smallHours * 4 + memoryHours * 32,
        diskGbHours: smallHours * 50 + memoryHours * 200,
      },
      byCategory: [
        {
          code: "general",
          vmCount: 1,
          cpuHours: smallHours * 2,
          ramGbHours: smallHours * 4,
          diskGbHours: smallHours * 50,
        },
        {
          code: "memory",
          vmCount: 1,
          cpuHours: memoryHours * 8,
          ramGbHours: memoryHours * 32,
          diskGbHours: memoryHours * 200,
        },
      ],
      byRegion: [
        {
          region: fra.region,
          vmCount: 1,
          cpuHours: smallHours * 2,
          ramGbHours: smallHours * 4,
          diskGbHours: smallHours * 50,
        },
        {
          region: nyc.region,
          vmCount: 1,
          cpuHours: memoryHours * 8,
          ramGbHours: memoryHours * 32,
          diskGbHours: memoryHours * 200,
        },
      ].sort((a, b) => (a.region < b.region ? -1 : 1)),
    });
  });

  it("defaults to the current month and counts only time already elapsed", async () => {
    const before = ctx.now();
    const res = await usage(child);
    const after = ctx.now();
    expect(res.body.data!.month).toBe(monthOf(ctx.now()));
    // Both VMs existed all month so far (2 + 8 CPUs); the VM created tomorrow does not count.
    expect(res.body.data!.summary.vmCount).toBe(2);
    const cpuHours = res.body.data!.summary.cpuHours;
    expect(cpuHours).toBeGreaterThanOrEqual(((before - thisMonthStart) / HOUR) * 10 - 0.01);
    expect(cpuHours).toBeLessThanOrEqual(((after - thisMonthStart) / HOUR) * 10 + 0.01);
  });

  it("refuses a future month and one older than 24 months (400)", async () => {
    const next = monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
    const future = await usage(child, `?month=${next}`);
    expect(future.status).toBe(400);
    expect(future.body.error).toBe("INVALID_REQUEST");
    expect(future.body.message).toContain("future");
    const oldest = monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 23, 1));
    const tooOld = monthOf(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 24, 1));
    expect((await usage(child, `?month=${oldest}`)).status).toBe(200);
    expect((await usage(child, `?month=${tooOld}`)).status).toBe(400);
    expect((await usage(child, "?month=2024-13")).status).toBe(400);
  });

  it("is 403 for another tenant's entity, 404 for an unknown one, open to the caller's own and its children", async () => {
    expect((await usage(outsiderEntityId())).status).toBe(403);
    expect((await usage(child, "", "outsider")).status).toBe(403);
    expect((await usage(randomUUID())).status).toBe(404);
    expect((await usage(bootstrap.entityId, "", "member")).status).toBe(200);
    expect((await usage(outsiderEntityId(), "", "outsider")).status).toBe(200);
  });

  it("lists the last 24 months, most recent first, and follows the clock", async () => {
    const res = await emu.call<string[]>("GET", `/metrics/entity/${child}/available-months`);
    expect(res.status).toBe(200);
    const months = res.body.data!;
    expect(months).toHaveLength(24);
    expect(months[0]).toBe(monthOf(ctx.now()));
    expect(months.every((m) => /^\d{4}-(0[1-9]|1[0-2])$/.test(m))).toBe(true);
    for (let i = 1; i < months.length; i++) {
      expect(months[i - 1] > months[i]).toBe(true);
      expect(monthOf(Date.UTC(Number(months[i - 1].slice(0, 4)), Number(months[i - 1].slice(5)) - 2, 1))).toBe(
        months[i],
      );
    }
    expect((await emu.call("GET", `/metrics/entity/${outsiderEntityId()}/available-months`)).status).toBe(403);
    emu.advance(40 * DAY);
    const later = await emu.call<string[]>("GET", `/metrics/entity/${child}/available-months`);
    expect(later.body.data![0]).toBe(monthOf(ctx.now()));
    expect(later.body.data![0] > months[0]).toBe(true);
  });
});
