import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { routes, type EntityUsage, type Trend, type VmMetrics } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { forbidden, invalid, notFound } from "../errors";
import { iso, isWithinEntity } from "../http";
import type { Catalog, VmRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

/** How many months of usage are kept, the current one included. */
export const USAGE_MONTHS = 24;
const HOUR_MS = 3600_000;

type Configuration = Catalog["configurations"][number];
type Datacenter = Catalog["datacenters"][number];

const monthKey = (year: number, month: number) => `${year}-${String(month + 1).padStart(2, "0")}`;

/** The last `USAGE_MONTHS` months as YYYY-MM (UTC), the month of `now` first. */
export function availableMonths(now: number): string[] {
  const d = new Date(now);
  const months: string[] = [];
  for (let i = 0; i < USAGE_MONTHS; i++) {
    const first = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - i, 1));
    months.push(monthKey(first.getUTCFullYear(), first.getUTCMonth()));
  }
  return months;
}

function trend(current: number, previous: number): z.output<typeof Trend> {
  const direction = current > previous ? "up" : current < previous ? "down" : "stable";
  return { direction, current, previous, change: current - previous };
}

/** The entity named in the path: unknown → 404, outside the caller's active entity and its children → 403. */
function pathEntity(ctx: EmulatorContext, caller: Caller, id: string): string {
  if (!ctx.state.entities[id]) throw notFound("Entity", id);
  if (!isWithinEntity(ctx, id, caller.entityId)) {
    throw forbidden(`Entity ${id} is not the active entity or one of its children`);
  }
  return id;
}

function parseTime(value: string | undefined, fallback: number): number {
  return value === undefined ? fallback : Date.parse(value);
}

interface Placed {
  vm: VmRec;
  config: Configuration;
  datacenter: Datacenter;
}

function vmMetrics(ctx: EmulatorContext, caller: Caller, query: z.output<typeof routes.vmMetrics.query>): VmMetrics {
  const now = ctx.now();
  const nowDate = new Date(now);
  const monthStart = Date.UTC(nowDate.getUTCFullYear(), nowDate.getUTCMonth(), 1);
  const currentStart = parseTime(query.currentPeriodStart, monthStart);
  const currentEnd = parseTime(query.currentPeriodEnd, now);
  if (currentStart >= currentEnd) throw invalid("currentPeriodStart must be before currentPeriodEnd");
  const length = currentEnd - currentStart;
  // The comparison period defaults to the same length immediately before; one bound given fixes the other.
  let comparisonStart: number;
  let comparisonEnd: number;
  if (query.comparisonPeriodStart !== undefined && query.comparisonPeriodEnd !== undefined) {
    comparisonStart = Date.parse(query.comparisonPeriodStart);
    comparisonEnd = Date.parse(query.comparisonPeriodEnd);
  } else if (query.comparisonPeriodStart !== undefined) {
    comparisonStart = Date.parse(query.comparisonPeriodStart);
    comparisonEnd = comparisonStart + length;
  } else {
    comparisonEnd = parseTime(query.comparisonPeriodEnd, currentStart);
    comparisonStart = comparisonEnd - length;
  }
  if (comparisonStart >= comparisonEnd) throw invalid("comparisonPeriodStart must be before comparisonPeriodEnd");

  const categories = query.categories
    ?.split(",")
    .map((c) => c.trim())
    .filter((c) => c.length > 0);
  const { catalog } = ctx.state;
  const placed: Placed[] = Object.values(ctx.state.vms).flatMap((vm) => {
    if (vm.entityId !== caller.entityId) return [];
    const config = catalog.configurations.find((c) => c.id === vm.configurationId);
    const datacenter = catalog.datacenters.find((d) => d.id === vm.datacenterId);
    if (!config || !datacenter) return [];
    if (categories && !categories.includes(config.categoryCode)) return [];
    if (query.datacenters && !query.datacenters.includes(datacenter.id)) return [];
    return [{ vm, config, datacenter }];
  });
  // A VM counts in a period when it was created before the period's end.
  const current = placed.filter((p) => p.vm.createdAt < currentEnd);
  const previous = placed.filter((p) => p.vm.createdAt < comparisonEnd);
  const count = (rows: Placed[], where: (p: Placed) => boolean) => rows.filter(where).length;
  const sorted = <T>(values: Iterable<T>, key: (v: T) => string | number) =>
    [...values].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

  const categoryCodes = sorted(new Set([...current, ...previous].map((p) => p.config.categoryCode)), (c) => c);
  return {
    period: {
      currentPeriodStart: iso(currentStart),
      currentPeriodEnd: iso(currentEnd),
      comparisonPeriodStart: iso(comparisonStart),
      comparisonPeriodEnd: iso(comparisonEnd),
    },
    summary: {
      totalVms: current.length,
      totalCpu: current.reduce((sum, p) => sum + p.config.cpu, 0),
      totalRam: current.reduce((sum, p) => sum + p.config.ram, 0),
      totalDisk: current.reduce((sum, p) => sum + p.config.disk, 0),
      trend: trend(current.length, previous.length),
    },
    categories: categoryCodes.map((code) => {
      const inCategory = (p: Placed) => p.config.categoryCode === code;
      const configs = sorted(
        new Map([...current, ...previous].filter(inCategory).map((p) => [p.config.id, p.config])).values(),
        (c) => c.id,
      );
      return {
        code,
        vmCount: count(current, inCategory),
        trend: trend(count(current, inCategory), count(previous, inCategory)),
        tiers: configs.map((config) => {
          const inTier = current.filter((p) => p.config.id === config.id);
          const regions = sorted(new Set(inTier.map((p) => p.datacenter.region)), (r) => r);
          return {
            configurationId: config.id,
            name: config.name,
            specs: { cpu: config.cpu, ram: config.ram, disk: config.disk },
            vmCount: inTier.length,
            trend: trend(
              inTier.length,
              count(previous, (p) => p.config.id === config.id),
            ),
            regions: regions.map((region) => {
              const inRegion = inTier.filter((p) => p.datacenter.region === region);
              const datacenters = sorted(
                new Map(inRegion.map((p) => [p.datacenter.id, p.datacenter])).values(),
                (d) => d.name,
              );
              return {
                region,
                vmCount: inRegion.length,
                datacenters: datacenters.map((dc) => {
                  const inDc = inRegion.filter((p) => p.datacenter.id === dc.id);
                  return {
                    id: dc.id,
                    name: dc.name,
                    vmCount: inDc.length,
                    ...(query.includeVmNames
                      ? {
                          vmNames: sorted(
                            inDc.map((p) => p.vm.name),
                            (n) => n,
                          ),
                        }
                      : {}),
                  };
                }),
              };
            }),
          };
        }),
      };
    }),
  };
}

type Figures = z.output<typeof EntityUsage>["summary"];

function entityUsage(ctx: EmulatorContext, entityId: string, month: string): z.output<typeof EntityUsage> {
  const [year, monthIndex] = month.split("-").map(Number);
  const start = Date.UTC(year, monthIndex - 1, 1);
  const end = Math.min(Date.UTC(year, monthIndex, 1), ctx.now());
  const empty = (): Figures => ({ vmCount: 0, cpuHours: 0, ramGbHours: 0, diskGbHours: 0 });
  const summary = empty();
  const byCategory = new Map<string, Figures>();
  const byRegion = new Map<string, Figures>();
  const { catalog } = ctx.state;
  for (const vm of Object.values(ctx.state.vms)) {
    if (vm.entityId !== entityId) continue;
    // VMs leave the state when deleted, so a live VM's lifetime runs from its creation to now.
    const hours = (end - Math.max(start, vm.createdAt)) / HOUR_MS;
    const config = catalog.configurations.find((c) => c.id === vm.configurationId);
    const datacenter = catalog.datacenters.find((d) => d.id === vm.datacenterId);
    if (hours <= 0 || !config || !datacenter) continue;
    const category = byCategory.get(config.categoryCode) ?? empty();
    const region = byRegion.get(datacenter.region) ?? empty();
    byCategory.set(config.categoryCode, category);
    byRegion.set(datacenter.region, region);
    for (const f of [summary, category, region]) {
      f.vmCount += 1;
      f.cpuHours += hours * config.cpu;
      f.ramGbHours += hours * config.ram;
      f.diskGbHours += hours * config.disk;
    }
  }
  const round = (f: Figures): Figures => ({
    vmCount: f.vmCount,
    cpuHours: Math.round(f.cpuHours * 100) / 100,
    ramGbHours: Math.round(f.ramGbHours * 100) / 100,
    diskGbHours: Math.round(f.diskGbHours * 100) / 100,
  });
  const byKey = <K extends string>(map: Map<string, Figures>, key: K) =>
    [...map.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, f]) => ({ ...round(f), [key]: name }) as Figures & Record<K, string>);
  return {
    entityId,
    month,
    summary: round(summary),
    byCategory: byKey(byCategory, "code"),
    byRegion: byKey(byRegion, "region"),
  };
}

function metricsHandlers(ctx: EmulatorContext): RouteHandlers {
  return {
    vmMetrics({ query, caller }) {
      return vmMetrics(ctx, caller, query);
    },

    entityUsage({ params, query, caller }) {
      const entityId = pathEntity(ctx, caller, params.id);
      const months = availableMonths(ctx.now());
      const month = query.month ?? months[0];
      if (month > months[0]) throw invalid(`month: ${month} is in the future; the latest is ${months[0]}`);
      if (!months.includes(month)) {
        throw invalid(`month: ${month} is older than the last ${USAGE_MONTHS} months; the oldest is ${months.at(-1)}`);
      }
      return entityUsage(ctx, entityId, month);
    },

    availableMonths({ params, caller }) {
      pathEntity(ctx, caller, params.id);
      return availableMonths(ctx.now());
    },
  };
}

/** Metrics: VM metrics, entity usage per month and the months available. */
export async function metricsRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  defineRoutes(app, ctx, metricsHandlers(ctx));
}
