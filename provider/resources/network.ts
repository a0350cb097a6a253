import { z } from "zod";
import { CodedError, raiseJobTimeout } from "../client/error-codes";
import { CreateNetworkBody, type Network as ApiNetwork, parseCidr, parseIp, snatRule, UpdateNetworkBody } from "../api";
import { BatchedDeleter, batchedDeleterOf, type CloudClient } from "../client";
import type { CheckFailure } from "./check";
import type { HandlerContext } from "./context";
import { createUnique } from "./create-recovery";
import { changedInputs } from "./diff";
import { isConflict, isNotFound, ResourceInitError } from "./errors";
import { batchedRead, pollUntil, sleep } from "./jobs";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import { plainInputs, type Props } from "./props";
import { diffSpecOf, type InputFields } from "./fields";
import { freeName } from "./preflight";

/** The create request's body (`POST /resource/networks`) and `adopt`. */
export const NetworkInputs = z.strictObject({ ...CreateNetworkBody.shape, adopt: z.boolean().optional() });
export type NetworkInputs = z.output<typeof NetworkInputs>;
export type NetworkState = State<NetworkInputs, typeof inputFields, z.output<typeof NetworkOutputs>>;

const ipv4Expected = "must be an IPv4 address such as 10.0.0.10";

/** How each input changes; the API reports every one of them back. */
const inputFields = {
  name: {
    change: "inPlace",
    reported: "documented",
    description: "Name, unique within the entity. Changed in place.",
    output: "Name, unique within the entity.",
  },
  datacenterId: {
    change: "replace",
    reported: "documented",
    description: "Data center (UUID). Changing it replaces the network.",
    expects: "must be the UUID of a data center",
    output: "Data center (UUID).",
  },
  networkType: {
    change: "replace",
    reported: "documented",
    description: "`standard` or `custom`. Changing it replaces the network.",
    expects: 'must be "standard" or "custom"',
    output: "`standard` or `custom`.",
  },
  description: {
    change: "inPlace",
    reported: "documented",
    description: "Free text. Changed in place.",
    output: "Free text, if any.",
  },
  cidrBlock: {
    change: "inPlace",
    reported: "documented",
    description: "IPv4 CIDR block. Default 10.0.0.0/24. Changed in place (refused by the API while VMs are connected).",
    expects: "must be an IPv4 CIDR block such as 10.0.0.0/24",
    output: "IPv4 CIDR block, e.g. 10.0.0.0/24.",
    reportedType: z.string(),
  },
  snatEnabled: {
    change: "replace",
    reported: "documented",
    description:
      "Source NAT, standard networks only. Default true on standard networks. Changing it replaces the network.",
    output: "Whether source NAT is on (standard networks).",
    reportedType: z.boolean(),
  },
  dhcpServerEnabled: {
    change: "inPlace",
    reported: "documented",
    description: "DHCP server. Default true. Changed in place.",
    output: "Whether the DHCP server is on.",
    reportedType: z.boolean(),
  },
  dhcpStartAddress: {
    change: "inPlace",
    reported: "documented",
    description: "First address of the DHCP range (inside the CIDR block). Changed in place.",
    expects: ipv4Expected,
    output: "First address of the DHCP range, if set.",
  },
  dhcpEndAddress: {
    change: "inPlace",
    reported: "documented",
    description: "Last address of the DHCP range (inside the CIDR block). Changed in place.",
    expects: ipv4Expected,
    output: "Last address of the DHCP range, if set.",
  },
  defaultRouteEnabled: {
    change: "inPlace",
    reported: "documented",
    description: "Announce a default route. Default false. Changed in place.",
    output: "Whether a default route is announced.",
    reportedType: z.boolean(),
  },
  defaultRoute: {
    change: "inPlace",
    reported: "documented",
    description: "Gateway of the default route (inside the CIDR block). Changed in place.",
    expects: ipv4Expected,
    output: "Gateway of the announced default route, if set.",
  },
  serveDNSServersEnabled: {
    change: "inPlace",
    reported: "documented",
    description: "Announce DNS servers by DHCP. Default false. Changed in place.",
    output: "Whether DNS servers are announced by DHCP.",
    reportedType: z.boolean(),
  },
  dnsServers: {
    change: "inPlace",
    reported: "documented",
    description: "DNS server addresses, at most 8. Changed in place.",
    expects: "must be a list of IPv4 addresses such as 10.0.0.10",
    output: "DNS server addresses announced by DHCP (at most 8).",
    reportedType: z.array(z.string()),
  },
  adopt: {
    change: "ignored",
    reported: "never",
    description:
      "When a network of this name already exists, take it over instead of failing (its data center and type must match; the other properties are aligned to the program). The way to bring existing networks under management.",
  },
} as const satisfies InputFields<NetworkInputs>;
const diffSpec = diffSpecOf(NetworkInputs, inputFields, {
  // Names are unique: a replacement keeping its name must delete the old network first.
  deleteBeforeReplace: (olds, news) => olds.name === news.name,
  // A network whose create job failed (status Error) cannot be repaired in place: the next `up` replaces it.
  failed: (olds) => (olds.status === "Error" ? "status" : undefined),
});

/** The prefix lengths a network's block may have. */
const MIN_NETWORK_PREFIX = 8;
const MAX_NETWORK_PREFIX = 30;

function crossChecks(known: Partial<NetworkInputs>, failures: CheckFailure[]): void {
  if (!snatRule.holds(known)) failures.push({ property: snatRule.property, reason: snatRule.reason });
  // The addresses are checked against the block; without one, the API's default block (not documented) decides, so
  // they could not be checked: the block must be given with them (a stricter rule, docs/guides/property-checks.md).
  if (known.cidrBlock === undefined) {
    for (const key of ["dhcpStartAddress", "dhcpEndAddress", "defaultRoute"] as const) {
      if (known[key] !== undefined) {
        failures.push({
          property: key,
          reason:
            "needs cidrBlock too: the API's default block is not documented, so an address without a block cannot " +
            "be checked before the request; set cidrBlock (e.g. 10.0.0.0/24) or remove this address",
        });
      }
    }
  }
  const parsed = known.cidrBlock ? parseCidr(known.cidrBlock) : null;
  if (parsed && !parsed.ok) failures.push({ property: "cidrBlock", reason: parsed.reason });
  if (!parsed?.ok) return;
  // Room for a gateway and an address pool (the API refuses /31, /32 and blocks wider than /8; found by the
  // check-vs-API property test, a stricter rule of docs/guides/property-checks.md as the spec does not show it).
  const prefix = parsed.block.prefixLength;
  if (prefix < MIN_NETWORK_PREFIX || prefix > MAX_NETWORK_PREFIX) {
    failures.push({
      property: "cidrBlock",
      reason:
        `a network's prefix length must be /${MIN_NETWORK_PREFIX} to /${MAX_NETWORK_PREFIX} (room for a gateway ` +
        `and an address pool), got /${prefix}: e.g. ${known.cidrBlock!.split("/")[0]}/24`,
    });
    return;
  }
  const { firstUsable, lastUsable } = parsed.block;
  for (const key of ["dhcpStartAddress", "dhcpEndAddress", "defaultRoute"] as const) {
    const ip = known[key] ? parseIp(known[key]) : null;
    if (ip !== null && (ip < firstUsable || ip > lastUsable)) {
      failures.push({
        property: key,
        reason: `${known[key]} is not a usable address of ${known.cidrBlock}: choose one inside the block`,
      });
    }
  }
  const start = known.dhcpStartAddress ? parseIp(known.dhcpStartAddress) : null;
  const end = known.dhcpEndAddress ? parseIp(known.dhcpEndAddress) : null;
  if (start !== null && end !== null && start > end) {
    failures.push({
      property: "dhcpStartAddress",
      reason: "must not come after dhcpEndAddress: swap the two addresses",
    });
  }
}

/**
 * Outputs: the inputs as given, overlaid with what the API reports about the network itself. The connected-VM count
 * moves with other resources and is left out, so refresh stays quiet when VMs join.
 */
export function outputsOf(given: Props, network: ApiNetwork): NetworkState {
  return stateOf(inputFields, given, {
    name: network.name,
    description: network.description ?? undefined,
    datacenterId: network.datacenter.id,
    datacenterName: network.datacenter.name,
    networkType: network.networkType,
    cidrBlock: network.cidrBlock,
    snatEnabled: network.snatEnabled,
    dhcpServerEnabled: network.dhcpServerEnabled,
    dhcpStartAddress: network.dhcpStartAddress ?? undefined,
    dhcpEndAddress: network.dhcpEndAddress ?? undefined,
    defaultRouteEnabled: network.defaultRouteEnabled,
    defaultRoute: network.defaultRoute ?? undefined,
    serveDNSServersEnabled: network.serveDNSServersEnabled,
    dnsServers: network.dnsServers,
    status: network.status,
    gateway: network.gateway,
    allocationPools: network.allocationPools,
    createdAt: network.createdAt,
    updatedAt: network.updatedAt,
  });
}

/** Networks are read in batches through the list endpoint: its items carry every field of a network. */
const networks = (ctx: HandlerContext) =>
  batchedRead<ApiNetwork>(ctx, "networks", (api) => ({
    list: (page, limit) => api.listNetworks({ query: { page, limit, sort: "createdAt:asc" } }),
    get: (id) => api.getNetwork({ params: { id } }),
  }));

/** Network deletes gathered into `POST /resource/networks/bulk/delete` (synchronous: no jobs). */
const bulkDeleter = (api: CloudClient) =>
  batchedDeleterOf(
    api,
    "networks",
    () => new BatchedDeleter<string>(async (ids) => await api.bulkDeleteNetworks({ body: { ids } })),
  );

async function readNetwork(ctx: HandlerContext, id: string): Promise<ApiNetwork> {
  const found = await networks(ctx).read(id);
  if (!found)
    throw new CodedError("RESOURCE_GONE", `Network ${id} no longer exists: run \`pulumi refresh\`, then \`pulumi up\``);
  return found;
}

async function findByName(ctx: HandlerContext, name: string): Promise<ApiNetwork | undefined> {
  for await (const network of ctx.api.listAll("listNetworks", { search: name })) {
    if (network.name === name) return network;
  }
  return undefined;
}

/**
 * Takes over an existing network of the same name: its fixed properties must match, the rest is aligned. One still
 * being created (e.g. by a run that was killed) is waited for first, so that resources using it in the same
 * deployment find it Active. One in status Error is refused; when `ours` (made by our own create whose answer was
 * lost), it is a failed create, answered as one (see resendAfterFailedCreate).
 */
async function adopt(
  ctx: HandlerContext,
  inputs: NetworkInputs,
  found: ApiNetwork,
  ours: boolean,
): Promise<{ id: string; outs: NetworkState }> {
  const existing = found.status === "Creating" ? await settledNetwork(ctx, found) : found;
  if (existing.status === "Error") {
    const message = `Network "${inputs.name}" (${existing.id}) is in status Error: its creation failed`;
    if (ours) throw new ResourceInitError(message, existing.id, outputsOf(inputs, existing)).ofFailedJob();
    throw new CodedError("NAME_TAKEN", `${message}. Delete it or choose another name`);
  }
  const mismatches = (["datacenterId", "networkType"] as const).filter((k) =>
    k === "datacenterId" ? existing.datacenter.id !== inputs.datacenterId : existing[k] !== inputs[k],
  );
  if (mismatches.length > 0) {
    throw new CodedError(
      "ADOPT_MISMATCH",
      `Cannot adopt network "${inputs.name}" (${existing.id}): its ${mismatches.join(" and ")} differ from the program's ` +
        "and cannot change in place; rename one of them or align the program",
    );
  }
  return { id: existing.id, outs: await update(ctx, existing.id, outputsOf({}, existing), inputs) };
}

/** Polls a network until its create job has ended (bounded by cloudinfra:jobTimeoutMs). */
function settledNetwork(ctx: HandlerContext, found: ApiNetwork): Promise<ApiNetwork> {
  const api = ctx.api;
  return pollUntil(
    ctx,
    () => api.getNetwork({ params: { id: found.id } }),
    (network) => network.status !== "Creating",
    (network, timeoutMs) =>
      new CodedError(
        "JOB_TIMEOUT",
        `Adopting network "${network.name}" (${network.id}): it is still being created after ${timeoutMs} ms; ` +
          raiseJobTimeout("run `pulumi up` again"),
      ),
  );
}

export function create(ctx: HandlerContext, inputs: NetworkInputs): Promise<{ id: string; outs: NetworkState }> {
  const api = ctx.api;
  const get = (id: string) => api.getNetwork({ params: { id } });
  return createUnique(ctx, {
    what: `network named "${inputs.name}"`,
    adopt: inputs.adopt,
    send: () => api.createNetwork({ body: bodyFrom(CreateNetworkBody, inputs) }),
    findByName: () => findByName(ctx, inputs.name),
    takeOver: (existing, ours) => adopt(ctx, inputs, existing, ours),
    outputs: async (id) => outputsOf(inputs, await readNetwork(ctx, id)),
    partialOutputs: async (id) => {
      const network = await get(id).catch(() => undefined);
      return network ? outputsOf(inputs, network) : plainInputs(inputs);
    },
    removeFailed: (id) => remove(ctx, id),
  });
}

export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: NetworkState } | null> {
  const found = await networks(ctx).read(id);
  return found ? { id, props: outputsOf(props, found) } : null;
}

/** The update request's body: the inputs changed in place (every one of them is a member of the update body). */
function updateBody(olds: Props, news: NetworkInputs): z.output<typeof UpdateNetworkBody> {
  const changed = new Set(changedInputs(olds, news, diffSpec));
  const all = bodyFrom(UpdateNetworkBody, news);
  return Object.fromEntries(Object.entries(all).filter(([key]) => changed.has(key)));
}

export async function update(ctx: HandlerContext, id: string, olds: Props, news: NetworkInputs): Promise<NetworkState> {
  const api = ctx.api;
  const body = updateBody(olds, news);
  if (Object.keys(body).length > 0) {
    try {
      await api.updateNetwork({ params: { id }, body });
    } catch (error) {
      if (isConflict(error) && body.name !== undefined) {
        throw new CodedError(
          "NAME_TAKEN",
          `Cannot rename the network to "${String(body.name)}": another network has that name`,
        );
      }
      throw error;
    }
  }
  return outputsOf(news, await api.getNetwork({ params: { id } }));
}

/** Deletes the network; while VMs being deleted still hold it, waits for them (bounded), else names them. */
export async function remove(ctx: HandlerContext, id: string): Promise<void> {
  const api = ctx.api;
  const current = ctx.settings;
  // Deletes arriving together go in one bulk request; what it did not delete goes the single way below.
  const outcome = await bulkDeleter(api).delete(id);
  if (outcome.kind === "deleted") return;
  if (outcome.kind === "unconfirmed" && (await networks(ctx).read(id)) === null) return;
  const deadline = Date.now() + Math.min(current.jobTimeoutMs, 10 * 60_000);
  let triedAgain = false;
  for (;;) {
    try {
      await api.deleteNetwork({ params: { id } });
      return;
    } catch (error) {
      if (isNotFound(error)) return;
      if (!isConflict(error)) throw error;
    }
    const vms = await api
      .networkVms({ params: { id } })
      .catch((e: unknown) => (isNotFound(e) ? [] : Promise.reject(e)));
    const network = await api.getNetwork({ params: { id } }).catch(() => undefined);
    // What refused the delete may have ended before this look (the last VM deleted, the create job done): try again.
    if (vms.length === 0 && network?.status !== "Creating" && !triedAgain) {
      triedAgain = true;
      continue;
    }
    const waiting = vms.every((vm) => vm.status === "Deleting") && (vms.length > 0 || network?.status === "Creating");
    if (!waiting || Date.now() > deadline) {
      const names = vms.map((vm) => `${vm.name} (${vm.id}, ${vm.status})`).join(", ");
      throw new CodedError(
        vms.length > 0 ? "DEPENDENTS_EXIST" : "STATE_CONFLICT",
        vms.length > 0
          ? `Network ${id} still has virtual machines connected: ${names}. Delete them or move their interfaces first`
          : `Network ${id} cannot be deleted now (status ${network?.status ?? "unknown"})`,
      );
    }
    await sleep(current.pollIntervalMs, ctx.signal);
  }
}

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const NetworkOutputs = z.object({
  datacenterName: z.string().describe("Data center name, e.g. fra-1."),
  status: z.string().describe("Status reported by the API (Active once created)."),
  gateway: z.string().describe("Gateway address of the network (the first host of the CIDR block)."),
  allocationPools: z
    .array(
      z.object({
        start: z.string().describe("First address of the range."),
        end: z.string().describe("Last address of the range."),
      }),
    )
    .describe("Address ranges the API hands out to interfaces on this network."),
  createdAt: z.string().describe("Creation time (ISO 8601)."),
  updatedAt: z.string().describe("Last change (ISO 8601)."),
});

export const network = defineKind({
  name: "Network",
  description:
    "A private network. Deleting it waits while VMs being deleted still hold it, then names the VMs that remain.",
  inputs: { schema: NetworkInputs, fields: inputFields },
  outputs: NetworkOutputs,
  crossChecks,
  diffSpec,
  preflight: freeName("network"),
  create,
  read,
  update,
  delete: (ctx, id) => remove(ctx, id),
});
