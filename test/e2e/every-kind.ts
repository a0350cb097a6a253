/**
 * Programs of every resource kind through the real CLI, for either SDK, and what the API holds of them: shared by the
 * lost-answers suites (lost-answers.ts) and the converge run (test/bench/converge.ts). No test runner here: the
 * converge run is a plain script.
 */
import type * as pulumi from "@pulumi/pulumi";
import type { RunningEmulator } from "../../emulator/server";
import { routes } from "../../provider/api";
import type { CloudClient } from "../../provider/client";
import * as sdk from "../../sdk";
import { resource } from "../plugin/launcher";

/** The SDK a program registers its resources with: the dynamic classes (sdk/), or the plugin's tokens. */
export type Family = "dynamic" | "plugin";

/** The kinds whose records the API lists (an attachment is a volume's state). */
export type Listed = "net" | "vm" | "gpu" | "vol" | "group" | "user" | "key";

/** The listed kind of each resource class. */
export const listedKind: Record<string, Listed> = {
  Network: "net",
  VirtualMachine: "vm",
  GpuVirtualMachine: "gpu",
  Volume: "vol",
  ResourceGroup: "group",
  User: "user",
  ApiKey: "key",
};

/**
 * The routes that change something, except signing in and two-factor set-up (how the ApiKey's session is made, not a
 * resource): every create, update, delete, attach, detach, resize, start, stop, rotate.
 */
export const mutatingRoutes = Object.entries(routes)
  .filter(([name, route]) => route.method !== "GET" && name !== "queryJobs")
  .filter(([, route]) => !route.path.startsWith("/auth/") || route.path.startsWith("/auth/api-keys"))
  .map(([name]) => name);

/** Registers a resource of `kind` with the family's SDK: the dynamic classes, or the plugin's tokens. */
export function register(family: Family) {
  return (kind: keyof typeof sdk & string, name: string, props: Record<string, unknown>): pulumi.CustomResource =>
    family === "dynamic"
      ? new (sdk[kind] as unknown as new (n: string, a: unknown) => pulumi.CustomResource)(name, props)
      : resource(kind, name, props);
}

/** What programs of every kind need from the emulator's catalogue. */
export interface EveryKindFixtures {
  /** The first data center. */
  datacenterId: string;
  /** The configurations, in ascending size. */
  configurations: RunningEmulator["bootstrap"]["fixtures"]["configurations"];
  /** A GPU series and data center where one GPU is available. */
  gpuOffer: { seriesId: number; datacenterId: string };
  /** The first volume type of that data center. */
  volumeTypeId: number;
}

/** Reads {@link EveryKindFixtures} from the emulator's bootstrap and the API. */
export async function everyKindFixtures(emulator: RunningEmulator, api: CloudClient): Promise<EveryKindFixtures> {
  const fixtures = emulator.bootstrap.fixtures;
  const datacenterId = fixtures.datacenters[0]!.id;
  const a100 = fixtures.gpuSeries.find((s) => s.code === "a100")!;
  const gpuOffer = (await api.gpuInventory({ query: {} }))
    .filter((s) => s.seriesId === a100.id)
    .flatMap((s) =>
      s.availability
        .filter((a) => a.gpuCounts[1].available)
        .map((a) => ({ seriesId: s.seriesId, datacenterId: a.datacenterId })),
    )[0]!;
  const volumeTypeId = (await api.volumeSizes({ params: { id: datacenterId } })).volumeTypes[0]!.id;
  return { datacenterId, configurations: fixtures.configurations, gpuOffer, volumeTypeId };
}

/** A record the API holds: its id and its name (a user's email, a group's name in lower case). */
export interface ApiRecord {
  id: string;
  name: string;
}

/** The records of every listed kind whose name (or email) starts with `prefix` (lower case). */
export async function recordsInApi(api: CloudClient, prefix: string): Promise<Record<Listed, ApiRecord[]>> {
  const query = { search: prefix, limit: 100 };
  const named = <T extends { id: string | number }>(items: T[], name: (item: T) => string) =>
    items
      .map((item) => ({ id: String(item.id), name: name(item).toLowerCase() }))
      .filter((record) => record.name.startsWith(prefix));
  return {
    net: named((await api.listNetworks({ query })).data, (n) => n.name),
    vm: named((await api.listVms({ query })).data, (v) => v.name),
    gpu: named((await api.listGpuVms({ query })).data, (g) => g.name),
    vol: named((await api.listVolumes({ query })).data, (v) => v.name),
    group: named((await api.listTeams({ query })).data, (t) => t.name),
    user: named((await api.listUsers({ query })).data, (u) => u.email),
    key: named((await api.listApiKeys({ query })).data, (k) => k.name),
  };
}
