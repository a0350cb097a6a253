import { randomUUID } from "node:crypto";
import type { FastifyInstance } from "fastify";
import type { z } from "zod";
import { formatIp, parseCidr, parseIp, type BulkResultItem, type CidrDetails, type Network } from "../../provider/api";
import type { Caller, EmulatorContext } from "../context";
import { ApiProblem, conflict, invalid } from "../errors";
import { iso, owned, paginate } from "../http";
import { registerJobEffects, type JobEffect, startJob } from "../jobs";
import type { NetworkRec, VmRec } from "../state";
import { defineRoutes, type RouteGroupOptions, type RouteHandlers } from "./group";

/** The CIDR block of a network created without one. */
export const DEFAULT_CIDR = "10.0.0.0/24";
/** A network's prefix must leave room for a gateway and a pool (cidr-details itself accepts /0 to /32). */
const MIN_NETWORK_PREFIX = 8;
const MAX_NETWORK_PREFIX = 30;

function cidrDetailsOf(cidr: string): z.input<typeof CidrDetails> {
  const parsed = parseCidr(cidr);
  if (!parsed.ok) {
    return {
      cidr,
      valid: false,
      reason: parsed.reason,
      prefixLength: null,
      networkAddress: null,
      broadcastAddress: null,
      netmask: null,
      firstUsable: null,
      lastUsable: null,
      usableAddresses: 0,
    };
  }
  const b = parsed.block;
  const mask = b.prefixLength === 0 ? 0 : (0xffffffff << (32 - b.prefixLength)) >>> 0;
  return {
    cidr,
    valid: true,
    reason: null,
    prefixLength: b.prefixLength,
    networkAddress: formatIp(b.network),
    broadcastAddress: formatIp(b.broadcast),
    netmask: formatIp(mask),
    firstUsable: formatIp(b.firstUsable),
    lastUsable: formatIp(b.lastUsable),
    usableAddresses: b.usable,
  };
}

// ---- network records ----

/** The settable fields whose combination is validated together, on create and after a partial update. */
type Settings = Pick<NetworkRec, "cidrBlock" | "dhcpStartAddress" | "dhcpEndAddress" | "defaultRoute">;

interface Layout {
  gateway: string;
  pool: { start: string; end: string };
}

/** Checks the settings as a whole, naming every offending field; returns the gateway and allocation pool. */
function layoutOf(settings: Settings): Layout {
  const issues: { field: string; message: string }[] = [];
  const parsed = parseCidr(settings.cidrBlock);
  if (!parsed.ok) throw badBody([{ field: "cidrBlock", message: parsed.reason }]);
  const b = parsed.block;
  if (b.prefixLength < MIN_NETWORK_PREFIX || b.prefixLength > MAX_NETWORK_PREFIX) {
    throw badBody([
      {
        field: "cidrBlock",
        message: `a network's prefix length must be /${MIN_NETWORK_PREFIX} to /${MAX_NETWORK_PREFIX}, got /${b.prefixLength}`,
      },
    ]);
  }
  const range = `${formatIp(b.firstUsable)} - ${formatIp(b.lastUsable)}`;
  const inside = (field: keyof Settings, value: string | null): number | null => {
    if (value === null) return null;
    const ip = parseIp(value);
    if (ip === null || ip < b.firstUsable || ip > b.lastUsable) {
      issues.push({
        field,
        message: `${value} is outside the usable addresses of ${settings.cidrBlock} (${range})`,
      });
      return null;
    }
    return ip;
  };
  // An end left out defaults around the one given, never past it: the spec shows no default range, so a range that
  // is only inverted by a default is not the caller's mistake (found by the check-vs-API property test).
  const givenStart = inside("dhcpStartAddress", settings.dhcpStartAddress);
  const givenEnd = inside("dhcpEndAddress", settings.dhcpEndAddress);
  const start = givenStart ?? Math.min(b.firstUsable + 1, b.lastUsable, givenEnd ?? Number.POSITIVE_INFINITY);
  const end = givenEnd ?? b.lastUsable;
  inside("defaultRoute", settings.defaultRoute);
  if (issues.length === 0 && start > end) {
    issues.push({
      field: settings.dhcpStartAddress !== null ? "dhcpStartAddress" : "dhcpEndAddress",
      message: `the DHCP range starts at ${formatIp(start)}, after its end ${formatIp(end)}`,
    });
  }
  if (issues.length > 0) throw badBody(issues);
  return { gateway: formatIp(b.firstUsable), pool: { start: formatIp(start), end: formatIp(end) } };
}

function badBody(issues: { field: string; message: string }[]): ApiProblem {
  return invalid(`Invalid body: ${issues.map((i) => `${i.field}: ${i.message}`).join("; ")}`, { issues });
}

/** VMs with at least one network interface on the network. */
const connectedVms = (ctx: EmulatorContext, networkId: string): VmRec[] =>
  Object.values(ctx.state.vms).filter((vm) => vm.nics.some((n) => n.networkId === networkId));

function networkView(ctx: EmulatorContext, net: NetworkRec): z.input<typeof Network> {
  const { gateway, pool } = layoutOf(net);
  const dc = ctx.state.catalog.datacenters.find((d) => d.id === net.datacenterId);
  return {
    id: net.id,
    name: net.name,
    description: net.description,
    status: net.status,
    datacenter: { id: net.datacenterId, name: dc?.name ?? "unknown" },
    networkType: net.networkType,
    cidrBlock: net.cidrBlock,
    snatEnabled: net.snatEnabled,
    dhcpServerEnabled: net.dhcpServerEnabled,
    dhcpStartAddress: net.dhcpStartAddress,
    dhcpEndAddress: net.dhcpEndAddress,
    defaultRouteEnabled: net.defaultRouteEnabled,
    defaultRoute: net.defaultRoute,
    serveDNSServersEnabled: net.serveDNSServersEnabled,
    dnsServers: [...net.dnsServers],
    gateway,
    allocationPools: [pool],
    connectedVmCount: connectedVms(ctx, net.id).length,
    createdAt: iso(net.createdAt),
    updatedAt: iso(net.updatedAt),
  };
}

function assertUniqueName(ctx: EmulatorContext, caller: Caller, name: string, selfId: string | null): void {
  const taken = Object.values(ctx.state.networks).some(
    (n) => n.entityId === caller.entityId && n.name === name && n.id !== selfId,
  );
  if (taken) throw conflict(`A network named ${name} already exists`);
}

const vmList = (vms: VmRec[]) => vms.map((vm) => `${vm.name} (${vm.id})`).join(", ");

/** Deletes a network at once, or explains why it cannot be deleted. */
function deleteNetwork(ctx: EmulatorContext, net: NetworkRec): void {
  if (net.status === "Creating") {
    throw conflict(`Network ${net.name} is still being created; delete it once its job has ended`);
  }
  const vms = connectedVms(ctx, net.id);
  if (vms.length > 0) {
    throw conflict(
      `Network ${net.name} still has connected virtual machines: ${vmList(vms)}; remove their network interfaces first`,
      { virtualMachines: vms.map((vm) => ({ id: vm.id, name: vm.name })) },
    );
  }
  delete ctx.state.networks[net.id];
}

/** What the network operations do to the state when their jobs end. */
const networkJobEffects: Record<string, JobEffect> = {
  "network.create": {
    complete: (ctx, job) => {
      const net = ctx.state.networks[job.targetId];
      if (!net) throw new Error(`Network ${job.targetId} no longer exists`);
      net.status = "Active";
      net.updatedAt = ctx.now();
    },
    fail: (ctx, job) => {
      const net = ctx.state.networks[job.targetId];
      if (net) {
        net.status = "Error";
        net.updatedAt = ctx.now();
      }
    },
  },
};

function networkHandlers(ctx: EmulatorContext): RouteHandlers {
  return {
    listNetworks({ query, caller }) {
      const regionOf = (dcId: string) => ctx.state.catalog.datacenters.find((d) => d.id === dcId)?.regionId;
      const rows = Object.values(ctx.state.networks).filter(
        (n) =>
          n.entityId === caller.entityId &&
          (query["filter[regionId]"] === undefined || regionOf(n.datacenterId) === query["filter[regionId]"]) &&
          (query["filter[datacenterId]"] === undefined || n.datacenterId === query["filter[datacenterId]"]) &&
          (query["filter[networkType]"] === undefined || n.networkType === query["filter[networkType]"]),
      );
      // Sort CIDR blocks by address, then prefix length (a number up to 2^38: exact in a double).
      const cidrKey = (cidr: string) => {
        const parsed = parseCidr(cidr);
        return parsed.ok ? parsed.block.network * 64 + parsed.block.prefixLength : 0;
      };
      return paginate(
        rows.map((n) => networkView(ctx, n)),
        query,
        {
          sortFields: { name: (n) => n.name, createdAt: (n) => n.createdAt, cidrBlock: (n) => cidrKey(n.cidrBlock) },
          defaultSort: "createdAt:desc",
          searchFields: [(n) => n.name, (n) => n.cidrBlock],
        },
      );
    },

    createNetwork({ body, caller }) {
      if (!ctx.state.catalog.datacenters.some((d) => d.id === body.datacenterId)) {
        const valid = ctx.state.catalog.datacenters.map((d) => `${d.id} (${d.name})`).join(", ");
        throw badBody([
          { field: "datacenterId", message: `data center ${body.datacenterId} does not exist; valid: ${valid}` },
        ]);
      }
      const now = ctx.now();
      const net: NetworkRec = {
        id: randomUUID(),
        entityId: caller.entityId,
        name: body.name,
        description: body.description ?? null,
        status: "Creating",
        datacenterId: body.datacenterId,
        networkType: body.networkType,
        cidrBlock: body.cidrBlock ?? DEFAULT_CIDR,
        snatEnabled: body.snatEnabled ?? body.networkType === "standard",
        dhcpServerEnabled: body.dhcpServerEnabled ?? true,
        dhcpStartAddress: body.dhcpStartAddress ?? null,
        dhcpEndAddress: body.dhcpEndAddress ?? null,
        defaultRouteEnabled: body.defaultRouteEnabled ?? false,
        defaultRoute: body.defaultRoute ?? null,
        serveDNSServersEnabled: body.serveDNSServersEnabled ?? false,
        dnsServers: body.dnsServers ?? [],
        createdAt: now,
        updatedAt: now,
      };
      layoutOf(net);
      assertUniqueName(ctx, caller, net.name, null);
      ctx.state.networks[net.id] = net;
      const job = startJob(ctx, {
        entityId: caller.entityId,
        resourceType: "network",
        operation: "network.create",
        targetId: net.id,
      });
      return { jobId: job.id, id: net.id };
    },

    cidrDetails({ query }) {
      return cidrDetailsOf(query.cidr);
    },

    getNetwork({ params, caller }) {
      return networkView(ctx, owned(ctx.state.networks, params.id, caller, "Network"));
    },

    updateNetwork({ params, body, caller }) {
      const net = owned(ctx.state.networks, params.id, caller, "Network");
      const next: NetworkRec = {
        ...net,
        ...Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined)),
        dnsServers: body.dnsServers ? [...body.dnsServers] : net.dnsServers,
      };
      layoutOf(next);
      if (body.name !== undefined) assertUniqueName(ctx, caller, body.name, net.id);
      if (next.cidrBlock !== net.cidrBlock) {
        const vms = connectedVms(ctx, net.id);
        if (vms.length > 0) {
          throw conflict(
            `The CIDR block of network ${net.name} cannot change while virtual machines are connected: ${vmList(vms)}`,
            { virtualMachines: vms.map((vm) => ({ id: vm.id, name: vm.name })) },
          );
        }
      }
      Object.assign(net, next, { updatedAt: ctx.now() });
      return networkView(ctx, net);
    },

    deleteNetwork({ params, caller }) {
      deleteNetwork(ctx, owned(ctx.state.networks, params.id, caller, "Network"));
      return { id: params.id, deleted: true as const };
    },

    networkVms({ params, caller }) {
      const net = owned(ctx.state.networks, params.id, caller, "Network");
      return connectedVms(ctx, net.id)
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((vm) => {
          const nics = vm.nics.filter((n) => n.networkId === net.id);
          const nic = nics.find((n) => n.primary) ?? nics[0];
          return { id: vm.id, name: vm.name, status: vm.status, privateIp: nic.privateIp, primary: nic.primary };
        });
    },

    bulkDeleteNetworks({ body, caller }) {
      return body.ids.map((id): z.input<typeof BulkResultItem> => {
        try {
          deleteNetwork(ctx, owned(ctx.state.networks, id, caller, "Network"));
          return { id, success: true, jobId: null, error: null };
        } catch (e) {
          if (!(e instanceof ApiProblem)) throw e;
          return { id, success: false, jobId: null, error: e.message };
        }
      });
    },
  };
}

/** Private networks: CRUD (create is a job, delete is synchronous), connected VMs, CIDR arithmetic, bulk delete. */
export async function networkRoutes(app: FastifyInstance, { ctx }: RouteGroupOptions): Promise<void> {
  registerJobEffects(ctx, networkJobEffects);
  defineRoutes(app, ctx, networkHandlers(ctx));
}
