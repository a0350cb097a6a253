import { z } from "zod";
import * as A from "../api/auth";
import * as M from "../api/metrics";
import * as N from "../api/networks";
import * as V from "../api/volumes";
import { routes, User as ApiUser, Uuid, type QueryOf, type RouteSpec } from "../api";
import type { CloudClient, ItemOf, PagedRouteName } from "../client";
import * as data from "./data";
import type { HandlerContext } from "./context";
import { isNotFound } from "./errors";
import { sdkTypes } from "./fields";
import { CodedError } from "../client/error-codes";
import type { ResourceKind } from "./kind";
import type { Props } from "./props";
import { network, outputsOf as networkOutputs } from "./network";
import { volume, outputsOf as volumeOutputs } from "./volume";
import { virtualMachine, observe, outputsOf as vmOutputs } from "./virtual-machine";
import { gpuVirtualMachine, outputsOf as gpuOutputs } from "./gpu-virtual-machine";
import { resourceGroup, outputsOf as groupOutputs } from "./resource-group";
import { user, outputsOf as userOutputs } from "./user";
import { apiKeyOptions } from "./api-key";

/**
 * The read side: look up one resource by id or by its name, list resources with the API's filters, and who the caller
 * is. Host-agnostic like the kinds: each function is its zod arguments, its zod result and the call, registered in
 * {@link dataFunctions}, which the plugin's invokes, the schema and the SDKs iterate.
 */

/** A data function: what a host needs to serve it and a generator to describe it. */
export interface DataFunction {
  /** Arguments, validated before any request (a failure names the argument and the fix). */
  args: z.ZodType<Props>;
  /** The arguments' object schema (for the package schema). */
  argsShape: z.ZodObject;
  /** The result (for the package schema). */
  result: z.ZodObject;
  /**
   * What the function does: the schema's description. Its arguments and results are described on their zod schemas
   * (`.describe()`), except what `describes` describes.
   */
  description: string;
  /**
   * The kind whose declaration describes the result (single lookups) or the items (lists whose items are the single
   * result); items of their own (`listItem`) describe themselves.
   */
  describes?: LookupKindName;
  /**
   * Result members (of the result, or of the list's items) that the function describes itself (their `.describe()`),
   * not the kind: what a lookup reports otherwise than the resource (e.g. a user's roles, whoever granted them).
   */
  ownResults?: readonly string[];
  /** The one line of code the SDK's doc shows (default: a call derived from the arguments). */
  example?: string;
  /** The call, with the context of the host's configuration. */
  call(ctx: HandlerContext, args: never): Promise<unknown>;
}

const entityIdText = "Entity (UUID) to read in: a child entity of the configured one. Default: the configured entity.";
const entityIdArg = Uuid.optional().describe(entityIdText);

// ---------------------------------------------------------------- shared reads

/**
 * Lists in flight, by route and query: lookups of one program that need the same list (the engine sends the invokes
 * of a program together) share its requests instead of reading it once each.
 */
const inFlight = new WeakMap<CloudClient, Map<string, Promise<unknown[]>>>();

/** Every item of a list route (100 per page, every page), shared with identical reads in flight. */
export function listEvery<N extends PagedRouteName>(
  api: CloudClient,
  route: N,
  query: Record<string, unknown>,
): Promise<ItemOf<N>[]> {
  const defined = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
  const key = `${route} ${JSON.stringify(Object.entries(defined).sort(([a], [b]) => a.localeCompare(b)))}`;
  let ofClient = inFlight.get(api);
  if (!ofClient) inFlight.set(api, (ofClient = new Map()));
  const reads = ofClient;
  let pending = reads.get(key);
  if (!pending) {
    pending = (async () => {
      const items: unknown[] = [];
      const pages = (api.listAll as (route: PagedRouteName, query: unknown) => AsyncGenerator<unknown>)(route, {
        ...defined,
        limit: 100,
      });
      for await (const item of pages) items.push(item);
      return items;
    })().finally(() => reads.delete(key));
    reads.set(key, pending);
  }
  return pending as Promise<ItemOf<N>[]>;
}

/**
 * Name lookups of one kind and entity that arrive together (within `gatherMs`): one alone searches the list by its
 * name; several read the whole list once and match each name in it.
 */
class NameGatherer {
  private pending: { name: string; resolve(items: unknown[]): void; reject(error: unknown): void }[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly read: (search: string | undefined) => Promise<unknown[]>,
    private readonly gatherMs = 20,
  ) {}

  /** The list items whose name may match (the caller keeps the exact matches). */
  candidates(name: string): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      this.pending.push({ name, resolve, reject });
      if (this.timer) return;
      this.timer = setTimeout(() => {
        this.timer = null;
        const batch = this.pending;
        this.pending = [];
        const names = new Set(batch.map((p) => p.name));
        const read = this.read(names.size === 1 ? batch[0]!.name : undefined);
        for (const p of batch) read.then(p.resolve, p.reject);
      }, this.gatherMs);
    });
  }
}

/** The gatherers of each client (a host may serve several configurations): by kind and entity. */
const gatherers = new WeakMap<CloudClient, Map<string, NameGatherer>>();

// ---------------------------------------------------------------- the kinds

/** A list route's query parameters that are arguments of its list function: all but paging (every page is read). */
type ListParam<N extends PagedRouteName> = Exclude<keyof NonNullable<QueryOf<N>>, "page" | "limit"> & string;

/** How to read one kind: its list route and name field, by id, and its list items as outputs. */
interface LookupKind<N extends PagedRouteName> {
  /** The entity the messages name, e.g. `network`. */
  noun: string;
  plural: string;
  /** The kind looked up: its outputs, less its secret outputs (never returned). */
  kind: ResourceKind;
  route: N;
  /** The field names are matched on. */
  nameField: "name" | "email";
  /** One resource's outputs, by id (null when the API has no such resource). */
  byId(ctx: HandlerContext, id: string, entityId: string | undefined): Promise<Props>;
  /** A list item's outputs. */
  outputsOfItem(item: ItemOf<N>, entityId: string | undefined): Promise<Props> | Props;
  /** The list item carries less than the single lookup returns: the one found by name is read again by id. */
  readFound?: true;
  /**
   * The list function's arguments are the route's documented query (its schema in provider/api), less paging: this
   * describes each, by query parameter. Their names and types come from the contract, not from here.
   */
  queryDescriptions: Record<ListParam<N>, string>;
  /** Items of the list result, when they are not the single result (VM list items carry less than the detail). */
  listItem?: z.ZodObject;
  /** Members of the single result the list's items leave out (the list route does not carry them). */
  listOmits?: readonly string[];
  /**
   * What the lookup reports otherwise than the resource, typed and described here (these members override the
   * resource's): values the resource leaves out or keeps only where the program manages them, so that refresh stays
   * quiet (a volume's status and VM move with its VolumeAttachment; a user's roles and groups with UserRole and
   * ResourceGroupMember resources). A lookup returns what the API reports.
   */
  reported?: z.ZodObject;
  /** The resource's outputs that are no fact the API reports, but a rule of the resource (a volume's `failed`). */
  resourceOnly?: readonly string[];
}

const entityQuery = (entityId: string | undefined) => (entityId ? { entityId } : {});
const teamNumber = (id: string) => {
  if (!/^\d+$/.test(id))
    throw lookupError("ID_INVALID", `\`id\` must be a resource group id (decimal digits), not "${id}"`);
  return Number(id);
};

/** The description of a list's `search`: what the API matches it against. */
const searchText = (plural: string, fields: string) =>
  `Only ${plural} whose ${fields} contains this text (the API's case-insensitive partial match).`;
/** The description of a list's `sort`: the API's default order and its fields, when the spec names them. */
const sortText = (byDefault: string, fields?: string, nameField = "name") =>
  `The API's order of the list, \`field:direction\` (direction \`asc\` or \`desc\`${fields ? `; fields ${fields}` : ""}); the API's default is \`${byDefault}\`. ` +
  `When given, the result keeps the API's order; without it the result is sorted by ${nameField}, then id.`;

/** A volume's lookup result beyond its state: what an attachment changes. */
const VolumeReported = z.object({
  status: z
    .string()
    .describe(
      "The API's status: `Available` (attached to nothing; only then can it be deleted), `In-use` (attached), or one in progress (`Creating`, `Attaching`, `Detaching`, `Resizing`, `Deleting`), or `Error`.",
    ),
  virtualMachineId: z.string().optional().describe("The VM the volume is attached to, if any."),
});
const volumeLookupOutputs = (item: ItemOf<"listVolumes">): Props => ({
  ...volumeOutputs({}, item),
  status: item.status,
  virtualMachineId: item.virtualMachineId ?? undefined,
});

/** A user as the API reports it: every role and group, whoever granted them. */
const UserReported = z.object({
  roleNames: ApiUser.shape.roles.describe("Roles held, sorted."),
  roles: ApiUser.shape.roles.describe("Roles held, as the API lists them."),
  teamIds: ApiUser.shape.teamIds.describe("Ids of the resource groups the user belongs to, ascending."),
  updatedAt: ApiUser.shape.updatedAt.describe("Last change time (ISO 8601)."),
});

/** A resource group as the API reports it: its members too. */
const ResourceGroupReported = z.object({
  members: z
    .array(ApiUser.shape.id)
    .describe("User ids (UUIDs) of the members, sorted: every page of the group's members (`GET /teams/{id}`)."),
});

/** A group's detail and every one of its members (`GET /teams/{id}` pages them, 100 per request). */
async function teamWithMembers(ctx: HandlerContext, id: number, entityId: string | undefined): Promise<Props> {
  const members: string[] = [];
  for (let page = 1; ; page++) {
    const detail = await ctx.api.getTeam({ params: { id }, query: { page, limit: 100, ...entityQuery(entityId) } });
    members.push(...detail.members.map((m) => m.id));
    if (!detail.membersMeta.hasNextPage || detail.members.length === 0) {
      return { ...groupOutputs({}, detail, []), members: [...new Set(members)].sort() };
    }
  }
}

const lookupKinds = {
  Network: {
    noun: "network",
    plural: "networks",
    kind: network,
    route: "listNetworks",
    nameField: "name",
    byId: async (ctx, id, entityId) =>
      networkOutputs({}, await ctx.api.getNetwork({ params: { id }, query: entityQuery(entityId) })),
    outputsOfItem: (item) => networkOutputs({}, item),
    queryDescriptions: {
      entityId: entityIdText,
      search: searchText("networks", "name or CIDR block"),
      sort: sortText("createdAt:desc"),
      "filter[regionId]": "Only networks of this region (integer id).",
      "filter[datacenterId]": "Only networks of this data center (UUID).",
      "filter[networkType]": "Only networks of this type: `standard` or `custom`.",
    },
  } satisfies LookupKind<"listNetworks">,
  Volume: {
    noun: "volume",
    plural: "volumes",
    kind: volume,
    route: "listVolumes",
    nameField: "name",
    byId: async (ctx, id, entityId) =>
      volumeLookupOutputs(await ctx.api.getVolume({ params: { id }, query: entityQuery(entityId) })),
    outputsOfItem: volumeLookupOutputs,
    reported: VolumeReported,
    resourceOnly: ["failed"],
    queryDescriptions: {
      entityId: entityIdText,
      search: searchText("volumes", "name"),
      sort: sortText("createdAt:desc"),
      "filter[virtualMachineId]": "Only volumes attached to this VM (UUID).",
      "filter[status]": "Only volumes in this status, e.g. `Available` or `In-use`.",
      "filter[teamId]": "Only volumes of this resource group (integer id).",
      "filter[regionId]": "Only volumes of this region (integer id).",
      "filter[datacenterId]": "Only volumes of this data center (UUID).",
      "filter[volumeTypeId]": "Only volumes of this volume type (its id; see `getVolumeSizes`).",
      "filter[volumeSizeId]": "Only volumes of this volume size (its id; see `getVolumeSizes`).",
      "filter[sizeGb]": "Only volumes of this size in GB.",
    },
  } satisfies LookupKind<"listVolumes">,
  VirtualMachine: {
    noun: "virtual machine",
    plural: "virtualMachines",
    kind: virtualMachine,
    route: "listVms",
    nameField: "name",
    byId: async (ctx, id, entityId) =>
      vmOutputs(
        {},
        await observe(ctx, await ctx.api.getVm({ params: { id }, query: entityQuery(entityId) })),
        undefined,
      ),
    readFound: true,
    outputsOfItem: (item) => ({
      id: item.id,
      name: item.name,
      status: item.status,
      datacenterId: item.datacenter.id,
      datacenterName: item.datacenter.name,
      imageName: item.imageName,
      cpu: item.configuration.cpu,
      ram: item.configuration.ram,
      disk: item.configuration.disk,
      privateIp: item.primaryPrivateIp,
      publicIp: item.primaryPublicIp,
      teamId: item.teamId ?? undefined,
      createdAt: item.createdAt,
      updatedAt: item.updatedAt,
    }),
    queryDescriptions: {
      entityId: entityIdText,
      search: searchText("VMs", "name, private IP or public IP"),
      sort: sortText("createdAt:desc", "`name`, `createdAt`, `updatedAt`, `configuration`, `region`, `datacenter`"),
      "filter[teamId]": "Only VMs of this resource group (integer id).",
      "filter[regionId]": "Only VMs of this region (integer id).",
      "filter[datacenterId]": "Only VMs of this data center (UUID).",
      "filter[configurationId]": "Only VMs of this configuration (integer id).",
      "filter[imageName]": "Only VMs of this image, by name.",
      "filter[status]": "Only VMs in this status, e.g. `Running`.",
    },
    listItem: z.object({
      id: z.string().describe("VM id (UUID)."),
      name: z.string().describe("Name (not unique)."),
      status: z.string().describe("Status, e.g. `Running`."),
      datacenterId: z.string().describe("Data center (UUID)."),
      datacenterName: z.string().describe("Data center name."),
      imageName: z.string().describe("Image name."),
      cpu: z.number().int().describe("vCPUs."),
      ram: z.number().int().describe("RAM in GB."),
      disk: z.number().int().describe("Disk in GB."),
      privateIp: z.string().nullable().describe("Primary private address, or null."),
      publicIp: z.string().nullable().describe("Primary public address, or null."),
      teamId: z.number().int().optional().describe("Resource group (integer id), when the API reports it."),
      createdAt: z.string().describe("Creation time (ISO 8601)."),
      updatedAt: z.string().describe("Last change (ISO 8601)."),
    }),
  } satisfies LookupKind<"listVms">,
  GpuVirtualMachine: {
    noun: "GPU virtual machine",
    plural: "gpuVirtualMachines",
    kind: gpuVirtualMachine,
    route: "listGpuVms",
    nameField: "name",
    byId: async (ctx, id, entityId) =>
      gpuOutputs({}, await ctx.api.getGpuVm({ params: { id }, query: entityQuery(entityId) })),
    outputsOfItem: (item) => gpuOutputs({}, item),
    queryDescriptions: {
      entityId: entityIdText,
      search: searchText("GPU VMs", "name"),
      sort: sortText("createdAt:desc"),
      "filter[teamId]": "Only GPU VMs of this resource group (integer id).",
    },
  } satisfies LookupKind<"listGpuVms">,
  ResourceGroup: {
    noun: "resource group",
    plural: "resourceGroups",
    kind: resourceGroup,
    route: "listTeams",
    nameField: "name",
    byId: (ctx, id, entityId) => teamWithMembers(ctx, teamNumber(id), entityId),
    readFound: true,
    outputsOfItem: (item) => groupOutputs({}, item, []),
    reported: ResourceGroupReported,
    listOmits: ["members"],
    queryDescriptions: {
      entityId: entityIdText,
      search: searchText("resource groups", "name"),
      sort: sortText("name:asc"),
      "filter[entityId]":
        "Only resource groups of this entity (UUID): the active entity or one of its children (`entityId` instead acts in that entity).",
    },
  } satisfies LookupKind<"listTeams">,
  User: {
    noun: "user",
    plural: "users",
    kind: user,
    route: "listUsers",
    nameField: "email",
    byId: async (ctx, id, entityId) =>
      userOutputs({}, await ctx.api.getUser({ params: { id }, query: entityQuery(entityId) })),
    outputsOfItem: (item) => userOutputs({}, item),
    reported: UserReported,
    queryDescriptions: {
      entityId: entityIdText,
      search: searchText("users", "email, first name or last name"),
      sort: sortText("createdAt:desc", undefined, "email"),
      "filter[entityId]":
        "Only users of this entity (UUID): the active entity or one of its children (`entityId` instead acts in that entity).",
      "filter[excludeTeamId]": "Leave out the members of this resource group (integer id).",
      inviteStatus:
        "Only users with one of these invite statuses: `activated`, `pending` (invitation not accepted yet), `expired` (invitation older than 7 days).",
      teamId: "Only members of this resource group (integer id); `0`: only users in no resource group.",
      roleId: 'Only users holding this role (its id, e.g. `tenant-admin`); `"0"`: only users with no role.',
      noTeam: "`true`: only users in no resource group.",
      noRole: "`true`: only users with no role.",
      deletedFilter: "Deleted users: left out (`exclude`, the API's default), `include`d, or `only` them.",
    },
  } satisfies LookupKind<"listUsers">,
} as const;

sdkTypes.add(lookupKinds.VirtualMachine.listItem, {
  name: "VirtualMachineSummary",
  io: "output",
  description:
    "A VM as its list item reports it (the list does not carry the detail: look a VM up with getVirtualMachine for it).",
});

/** The kinds that have lookups, by SDK class name. */
export type LookupKindName = keyof typeof lookupKinds;
type AnyLookupKind = LookupKind<PagedRouteName>;
const kindOf = (name: LookupKindName) => lookupKinds[name] as unknown as AnyLookupKind;

/** The error of a lookup: a plain message, as a check failure reads, with its code. */
function lookupError(code: "LOOKUP_NO_MATCH" | "LOOKUP_AMBIGUOUS" | "ID_INVALID", message: string): Error {
  return Object.assign(new CodedError(code, message), { name: "LookupError" });
}

/**
 * A lookup's result schema: `id`, the kind's reported inputs and its outputs, less what is a rule of the resource
 * rather than a fact of the API (`resourceOnly`) and its secrets, with what the lookup reports otherwise (`reported`).
 */
function resultOf(kind: AnyLookupKind): z.ZodObject {
  const inputs = kind.kind.inputs;
  const shape: Record<string, z.ZodType> = { id: z.string() };
  const inputShape = (inputs.schema as z.ZodObject).shape;
  for (const [key, field] of Object.entries(inputs.fields as Record<string, { reported: string }>)) {
    if (field.reported !== "never" && inputShape[key]) shape[key] = (inputShape[key] as z.ZodType).optional();
  }
  for (const [key, value] of Object.entries(kind.kind.outputs.shape)) shape[key] = value as z.ZodType;
  for (const [key, value] of Object.entries(kind.reported?.shape ?? {})) shape[key] = value as z.ZodType;
  for (const key of [...(kind.kind.secretOutputs ?? []), ...(kind.resourceOnly ?? [])]) delete shape[key];
  return z.object(shape);
}

/** The result of a lookup: no secret, nothing that is only a rule of the resource, no undefined member. */
const returned = (kind: AnyLookupKind, props: Props): Props =>
  Object.fromEntries(
    Object.entries(props).filter(
      ([key, value]) =>
        !kind.kind.secretOutputs?.includes(key) && !kind.resourceOnly?.includes(key) && value !== undefined,
    ),
  );

// ---------------------------------------------------------------- one resource

/** `id` or `name` (`email` for users), exactly one. */
function oneArgs(kind: AnyLookupKind) {
  const key = kind.nameField;
  const shape = z.strictObject({
    id: z.string().trim().min(1, "must not be empty").optional().describe(`The ${kind.noun}'s id.`),
    [key]: z
      .string()
      .trim()
      .min(1, "must not be empty")
      .optional()
      .describe(
        `The ${kind.noun}'s ${key}, matched exactly${key === "email" ? " (case aside)" : ""}: an error when none or several match.`,
      ),
    entityId: entityIdArg,
  });
  const args = shape.superRefine((value, ctx) => {
    const given = [value.id, value[key]].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        path: [given === 0 ? key : "id"],
        message:
          given === 0
            ? `is required (or \`id\`): give the ${kind.noun}'s ${key} or its id`
            : `and \`${key}\` were both given: give exactly one of them (the id when ${key}s are not unique)`,
      });
    }
  });
  return { args, shape };
}

/** The closest names to `wanted` among `names`: the ones that contain it or share its start, at most 5. */
function closest(wanted: string, names: string[]): string[] {
  const lower = wanted.toLowerCase();
  const score = (name: string) => {
    const n = name.toLowerCase();
    let common = 0;
    while (common < n.length && common < lower.length && n[common] === lower[common]) common++;
    return (n.includes(lower) || lower.includes(n) ? 100 : 0) + common;
  };
  return [...new Set(names)]
    .map((name) => ({ name, score: score(name) }))
    .filter((c) => c.score > 0)
    .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
    .slice(0, 5)
    .map((c) => c.name);
}

/** What the entity is called in messages: the given one, else the configured one. */
const entityText = (entityId: string | undefined) =>
  entityId ? `entity ${entityId}` : "the configured entity (cloudinfra:entityId, else the credentials' own)";

/** Looks up one resource of a kind by id or by exact name (every page of the API's partial-match search). */
export async function lookupOne(ctx: HandlerContext, name: LookupKindName, args: Props): Promise<Props> {
  const kind = kindOf(name);
  const entityId = args.entityId as string | undefined;
  if (typeof args.id === "string") {
    const id = args.id;
    const outputs = await kind.byId(ctx, id, entityId).catch((error: unknown) => {
      if (isNotFound(error))
        throw lookupError(
          "LOOKUP_NO_MATCH",
          `no ${kind.noun} has the id "${id}" in ${entityText(entityId)}: check the id and the entity`,
        );
      throw error;
    });
    return { ...returned(kind, outputs), id };
  }
  const wanted = args[kind.nameField] as string;
  const api = ctx.api;
  const key = `${name} ${entityId ?? ""}`;
  let ofClient = gatherers.get(api);
  if (!ofClient) gatherers.set(api, (ofClient = new Map()));
  let gatherer = ofClient.get(key);
  if (!gatherer) {
    gatherer = new NameGatherer((search) => listEvery(api, kind.route, { search, ...entityQuery(entityId) }));
    ofClient.set(key, gatherer);
  }
  const items = (await gatherer.candidates(wanted)) as { id: string; createdAt?: string; [k: string]: unknown }[];
  const exact = (item: (typeof items)[number]) =>
    kind.nameField === "email"
      ? String(item.email).toLowerCase() === wanted.toLowerCase()
      : item[kind.nameField] === wanted;
  const matches = items.filter(exact);
  if (matches.length === 0) {
    const near = closest(
      wanted,
      items.map((item) => String(item[kind.nameField])),
    );
    throw lookupError(
      "LOOKUP_NO_MATCH",
      `no ${kind.noun} has the ${kind.nameField} "${wanted}" in ${entityText(entityId)}` +
        (near.length > 0 ? `; the closest ${kind.nameField}s found: ${near.map((n) => `"${n}"`).join(", ")}` : "") +
        `: check the ${kind.nameField} (matched exactly, case included${kind.nameField === "email" ? " except for emails" : ""}) and the entity`,
    );
  }
  if (matches.length > 1) {
    throw lookupError(
      "LOOKUP_AMBIGUOUS",
      `${matches.length} ${kind.plural} have the ${kind.nameField} "${wanted}" in ${entityText(entityId)}: ` +
        matches.map((m) => `${m.id} (created ${m.createdAt ?? "at an unknown time"})`).join(", ") +
        `; look it up by \`id\` instead`,
    );
  }
  const found = matches[0]!;
  // VM and group list items carry less than the lookup returns: read the one found by id.
  const outputs = kind.readFound
    ? await kind.byId(ctx, String(found.id), entityId)
    : await kind.outputsOfItem(found as never, entityId);
  return { ...returned(kind, outputs), id: String(found.id) };
}

// ---------------------------------------------------------------- lists

/** Query parameters that are no argument: paging (every page is read, 100 per request). */
const pagingParams: ReadonlySet<string> = new Set(["page", "limit"]);

/**
 * The argument each query parameter of a list route is (parameter → argument), paging aside: `filter[x]` is `x`,
 * unless the query has a parameter `x` of its own (the users' and groups' `filter[entityId]` beside `entityId`): then
 * `filterX`. Any other parameter keeps its name.
 */
export function argumentNames(query: z.ZodObject): Map<string, string> {
  const params = Object.keys(query.shape).filter((param) => !pagingParams.has(param));
  const names = new Map<string, string>();
  for (const param of params) {
    const inner = /^filter\[(.+)\]$/.exec(param)?.[1];
    const name =
      inner === undefined
        ? param
        : params.includes(inner)
          ? `filter${inner[0]!.toUpperCase()}${inner.slice(1)}`
          : inner;
    if ([...names.values()].includes(name))
      throw new CodedError("INTERNAL_ERROR", `two query parameters would be the argument ${name}`);
    names.set(param, name);
  }
  return names;
}

/**
 * A query parameter's value as an argument: the contract's schema of the value, without its wire form (the query
 * string's text, which `qInt`, `qBool` and `qList` parse into numbers, booleans and lists).
 */
export function argumentSchema(param: z.ZodType): z.ZodType {
  let schema = param;
  while (schema instanceof z.ZodOptional) schema = schema.unwrap() as z.ZodType;
  if (schema instanceof z.ZodPipe && schema.in instanceof z.ZodTransform) schema = schema.out as z.ZodType;
  return schema;
}

/**
 * A function's arguments from a route's documented query (its schema in provider/api), paging aside, each described
 * by `descriptions` (by query parameter; one left undescribed is an error), and the query parameter of each argument.
 * `extra` are arguments of the function's own (a path parameter, a filter on what the route answers).
 */
function queryArgs(
  route: RouteSpec,
  descriptions: Readonly<Record<string, string>>,
  extra: Record<string, z.ZodType> = {},
): { args: z.ZodObject; params: Map<string, string> } {
  const query = route.query as z.ZodObject;
  const names = argumentNames(query);
  const shape: Record<string, z.ZodType> = { ...extra };
  const params = new Map<string, string>();
  for (const [param, name] of names) {
    const description = descriptions[param];
    if (description === undefined)
      throw new CodedError("INTERNAL_ERROR", `${route.path}: the query parameter ${param} is not described`);
    shape[name] = argumentSchema(query.shape[param] as z.ZodType)
      .optional()
      .describe(description);
    params.set(name, param);
  }
  const known = Object.keys(shape);
  const args = z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `unknown argument(s) ${issue.keys.map((k) => `\`${k}\``).join(", ")}: the arguments are ${known.map((k) => `\`${k}\``).join(", ")} (the API's documented query of ${route.path}${Object.keys(extra).length > 0 ? ", and the function's own" : ""})`
        : undefined,
  });
  return { args, params };
}

/** A list function's arguments, from its route's documented query, and the query parameter of each. */
function listArgs(kind: AnyLookupKind): { args: z.ZodObject; params: Map<string, string> } {
  return queryArgs(routes[kind.route], kind.queryDescriptions as Record<string, string>);
}

/** The query of a call: each argument given, as its query parameter. */
function queryOf(params: ReadonlyMap<string, string>, args: Props): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [name, param] of params) if (args[name] !== undefined) query[param] = args[name];
  return query;
}

const byNameThenId = (nameField: string) => (a: Props, b: Props) =>
  String(a[nameField]).localeCompare(String(b[nameField])) || String(a.id).localeCompare(String(b.id));

/**
 * Every resource of a kind that the arguments select (every page), and how many: in the API's order when `sort` is
 * given, else sorted by name then id. Each argument is sent as its query parameter (a list as the parameter repeated).
 */
async function lookupList(
  ctx: HandlerContext,
  kind: AnyLookupKind,
  params: ReadonlyMap<string, string>,
  args: Props,
): Promise<Props> {
  const items = await listEvery(ctx.api, kind.route, queryOf(params, args));
  const entityId = args.entityId as string | undefined;
  const outputs = await Promise.all(
    items.map(async (item) => {
      const props = returned(kind, await kind.outputsOfItem(item as never, entityId));
      for (const key of kind.listOmits ?? []) delete props[key];
      return { ...props, id: String((item as { id: string | number }).id) };
    }),
  );
  if (args.sort === undefined) outputs.sort(byNameThenId(kind.nameField));
  return { [kind.plural]: outputs, count: outputs.length };
}

// ---------------------------------------------------------------- the caller

export const GetCallerArgs = z.strictObject({ entityId: entityIdArg });
export const GetCallerResult = z.object({
  userId: z.string().describe("The signed-in user (UUID); for an API key, the user it belongs to."),
  email: z.string().describe("The user's email."),
  name: z.string().describe("The user's name."),
  roles: z.array(z.string()).describe("The user's roles."),
  permissions: z.array(z.string()).describe("The user's permissions."),
  entityId: z.string().describe("The active entity (UUID): where the provider acts."),
  entityName: z.string().describe("The active entity's name."),
});

/** Who the credentials are (`GET /auth/check`) and the entity they act in. */
export async function caller(
  ctx: HandlerContext,
  args: { entityId?: string },
): Promise<z.output<typeof GetCallerResult>> {
  const check = await ctx.api.check({ query: entityQuery(args.entityId) });
  return {
    userId: check.user.id,
    email: check.user.email,
    name: check.user.name,
    roles: check.user.roles,
    permissions: check.user.permissions,
    entityId: check.activeEntity.id,
    entityName: check.activeEntity.name,
  };
}

// ---------------------------------------------------------------- reads beyond the kinds

/** The schema of a route's path parameter `id`, as the contract has it. */
const pathId = (route: RouteSpec) => (route.params as z.ZodObject).shape.id as z.ZodType;

/** `id` (the route's path parameter) or `name` of a resource of a kind, exactly one, and the route's query. */
function byIdOrName(route: RouteSpec, noun: string) {
  const query = queryArgs(
    route,
    { entityId: entityIdText },
    {
      id: pathId(route).optional().describe(`The ${noun}'s id (UUID).`),
      name: z
        .string()
        .trim()
        .min(1, "must not be empty")
        .optional()
        .describe(
          `The ${noun}'s name, matched exactly (as get${noun[0]!.toUpperCase()}${noun.slice(1)} matches it): an error when none or several match.`,
        ),
    },
  );
  const shape = query.args as z.ZodObject<{ id: z.ZodOptional<z.ZodString>; name: z.ZodOptional<z.ZodString> }>;
  const args = shape.superRefine((value, ctx) => {
    const given = [value.id, value.name].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        path: [given === 0 ? "name" : "id"],
        message:
          given === 0
            ? `is required (or \`id\`): give the ${noun}'s name or its id`
            : "and `name` were both given: give exactly one of them",
      });
    }
  });
  return { args, shape, params: query.params };
}

/** The id of the resource the arguments name: the id given, or the one resource of the name (as getX finds it). */
async function resolvedId(ctx: HandlerContext, kind: "Network" | "Volume", args: Props): Promise<string> {
  if (typeof args.id === "string") return args.id;
  return String((await lookupOne(ctx, kind, { name: args.name, entityId: args.entityId })).id);
}

/**
 * What an answer whose fields the spec does not show reports beyond the contract's schema of it (its members the
 * schema does not name), as a free-form object: absent when there is nothing more. Unknown fields never fail a read.
 */
function beyond(schema: z.ZodObject, raw: unknown): { other?: Record<string, unknown> } {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return {};
  const other = Object.fromEntries(Object.entries(raw).filter(([key]) => !(key in schema.shape)));
  return Object.keys(other).length > 0 ? { other } : {};
}
const otherText = (what: string) =>
  `What the API reports of ${what} beyond the members above (the spec does not name the fields of this answer), as it sends it; absent when nothing more.`;
/** Each item of a list answer, typed by `item`, with what the API sent beyond it. */
const itemsWithOther = <T extends z.ZodObject>(item: T, raw: unknown, items: readonly unknown[]) =>
  items.map((value, i) => ({ ...item.parse(value), ...beyond(item, Array.isArray(raw) ? raw[i] : undefined) }));

const NetworkVirtualMachine = z.object({
  id: N.NetworkVm.shape.id.describe("VM id (UUID)."),
  name: N.NetworkVm.shape.name.describe("VM name."),
  status: N.NetworkVm.shape.status.describe("VM status, e.g. `Running`."),
  privateIp: N.NetworkVm.shape.privateIp.describe("The VM's private address on this network."),
  primary: N.NetworkVm.shape.primary.describe("Whether this network is the VM's primary interface."),
  other: z.record(z.string(), z.unknown()).optional().describe(otherText("the VM")),
});
sdkTypes.add(NetworkVirtualMachine, {
  name: "NetworkVirtualMachine",
  io: "output",
  description: "A VM with an interface on a network (`GET /resource/networks/{id}/virtual-machines`).",
});
/**
 * The call of a function that reads the VMs a route lists for one network or volume (named by id or by name): the
 * resource's id under `idKey`, and each VM as `item` types it, with what the API sent beyond it.
 */
function vmsOf(
  route: "networkVms" | "attachableVms",
  kind: "Network" | "Volume",
  args: ReturnType<typeof byIdOrName>,
  item: z.ZodObject,
  idKey: "networkId" | "volumeId",
): (ctx: HandlerContext, args: never) => Promise<unknown> {
  return (async (ctx: HandlerContext, given: Props) => {
    const id = await resolvedId(ctx, kind, given);
    const answer = await ctx.api.request(route, { params: { id }, query: queryOf(args.params, given) });
    return { [idKey]: id, virtualMachines: itemsWithOther(item, answer.raw, answer.data) };
  }) as (ctx: HandlerContext, args: never) => Promise<unknown>;
}

const networkVmsArgs = byIdOrName(routes.networkVms, "network");
const GetNetworkVirtualMachinesResult = z.object({
  networkId: z.string().describe("The network's id (UUID)."),
  virtualMachines: z
    .array(NetworkVirtualMachine)
    .describe("Every VM with an interface on the network, in the API's order."),
});

const AttachableVirtualMachine = z.object({
  id: V.AttachableVm.shape.id.describe("VM id (UUID)."),
  name: V.AttachableVm.shape.name.describe("VM name."),
  datacenterId: V.AttachableVm.shape.datacenterId.describe("The VM's data center (UUID): the volume's."),
  currentVolumeCount: V.AttachableVm.shape.currentVolumeCount.describe("Volumes attached to the VM now."),
  maxVolumeCount: V.AttachableVm.shape.maxVolumeCount.describe(
    "Most volumes the VM can have attached: below it, the volume can be attached.",
  ),
  other: z.record(z.string(), z.unknown()).optional().describe(otherText("the VM")),
});
sdkTypes.add(AttachableVirtualMachine, {
  name: "AttachableVirtualMachine",
  io: "output",
  description:
    "A VM of a volume's data center, with its current and maximum volume counts (`GET /resource/volumes/{id}/available-virtual-machines`).",
});
const attachableArgs = byIdOrName(routes.attachableVms, "volume");
const GetAttachableVirtualMachinesResult = z.object({
  volumeId: z.string().describe("The volume's id (UUID)."),
  virtualMachines: z
    .array(AttachableVirtualMachine)
    .describe("Every VM in the volume's data center, with its current and maximum volume counts, in the API's order."),
});

// API keys: what the list reports of each, never its secret (`key`: only creation and rotation answer it).
const ApiKeySummary = z.object({
  id: A.ApiKey.shape.id.describe("Key id."),
  name: A.ApiKey.shape.name.describe("Display name (not unique)."),
  start: A.ApiKey.shape.start.describe("Leading characters of the key, its prefix `svc_` included: never the key."),
  status: A.ApiKey.shape.status.describe(
    "`Active`, `Expiring` (within 30 days of expiry; still authenticates), `Suspended` or `Expired`.",
  ),
  expiresAt: A.ApiKey.shape.expiresAt.describe("Expiry (ISO 8601)."),
  createdAt: A.ApiKey.shape.createdAt.describe("Creation time (ISO 8601)."),
  roleId: z.string().optional().describe("The role the key is limited to, when the API reports one."),
  userId: z.string().optional().describe("The user the key belongs to (UUID), when the API reports it."),
  enabled: z.boolean().optional().describe("Whether the key is enabled (not suspended), when the API reports it."),
  lastUsedAt: z.string().optional().describe("Last use (ISO 8601), when the API reports one."),
});
sdkTypes.add(ApiKeySummary, {
  name: "ApiKeySummary",
  io: "output",
  description: "An API key as `GET /auth/api-keys` lists it: never its secret.",
});
/** A listed key as returned: the members of {@link ApiKeySummary} alone (whatever else the API sends, e.g. a secret). */
function keySummary(key: A.ApiKey): z.output<typeof ApiKeySummary> {
  const summary: Props = {
    id: key.id,
    name: key.name,
    start: key.start,
    status: key.status,
    expiresAt: key.expiresAt,
    createdAt: key.createdAt,
    roleId: key.roleId ?? undefined,
    userId: key.userId,
    enabled: key.enabled,
    lastUsedAt: key.lastUsedAt ?? undefined,
  };
  return Object.fromEntries(
    Object.entries(summary).filter(([k, v]) => v !== undefined && k in ApiKeySummary.shape),
  ) as z.output<typeof ApiKeySummary>;
}
const apiKeyQuery = {
  entityId: entityIdText,
  search: searchText("keys", "name"),
  sort: sortText("createdAt:desc"),
};
const keyStatusArg = A.ApiKeyStatus.optional().describe(
  "Only keys in this status (e.g. `Expiring`: every key within 30 days of its expiry), matched on what the list reports (the route's query has no such filter).",
);
const apiKeysArgs = queryArgs(routes.listApiKeys, apiKeyQuery, { status: keyStatusArg });
const GetApiKeysResult = z.object({
  apiKeys: z
    .array(ApiKeySummary)
    .describe(
      "Every key the arguments select (every page read): by name then id, or in the API's order when `sort` is given.",
    ),
  count: z.number().int().describe("How many there are."),
});
const apiKeyArgs = (() => {
  const shape = z.strictObject({
    id: A.ApiKey.shape.id.trim().min(1, "must not be empty").optional().describe("The key's id."),
    name: A.ApiKey.shape.name
      .trim()
      .min(1, "must not be empty")
      .optional()
      .describe("The key's name, matched exactly: an error when none or several match."),
    entityId: entityIdArg,
  });
  const args = shape.superRefine((value, ctx) => {
    const given = [value.id, value.name].filter((v) => v !== undefined).length;
    if (given !== 1) {
      ctx.addIssue({
        code: "custom",
        path: [given === 0 ? "name" : "id"],
        message:
          given === 0
            ? "is required (or `id`): give the key's name or its id"
            : "and `name` were both given: give exactly one of them (the id when names are not unique)",
      });
    }
  });
  return { args, shape };
})();

/** The keys of the entity the arguments select, without secrets. */
async function apiKeys(ctx: HandlerContext, args: Props): Promise<z.output<typeof GetApiKeysResult>> {
  const listed = await listEvery(ctx.api, "listApiKeys", queryOf(apiKeysArgs.params, args));
  const keys = listed.filter((k) => args.status === undefined || k.status === args.status).map(keySummary);
  if (args.sort === undefined) keys.sort(byNameThenId("name") as (a: object, b: object) => number);
  return { apiKeys: keys, count: keys.length };
}

/** One key by id or exact name (the list read: the API has no route for one key). */
async function apiKey(ctx: HandlerContext, args: Props): Promise<z.output<typeof ApiKeySummary>> {
  const entityId = args.entityId as string | undefined;
  const byId = typeof args.id === "string";
  const listed = await listEvery(ctx.api, "listApiKeys", {
    ...entityQuery(entityId),
    ...(byId ? {} : { search: args.name }),
  });
  const matches = listed.filter((k) => (byId ? k.id === args.id : k.name === args.name));
  const what = byId ? `the id "${String(args.id)}"` : `the name "${String(args.name)}"`;
  if (matches.length === 0) {
    const near = byId
      ? []
      : closest(
          String(args.name),
          listed.map((k) => k.name),
        );
    throw lookupError(
      "LOOKUP_NO_MATCH",
      `no API key has ${what} in ${entityText(entityId)}` +
        (near.length > 0 ? `; the closest names found: ${near.map((n) => `"${n}"`).join(", ")}` : "") +
        (byId ? ": check the id and the entity" : ": check the name (matched exactly, case included) and the entity"),
    );
  }
  if (matches.length > 1) {
    throw lookupError(
      "LOOKUP_AMBIGUOUS",
      `${matches.length} API keys have ${what} in ${entityText(entityId)}: ` +
        matches.map((m) => `${m.id} (created ${m.createdAt})`).join(", ") +
        "; look it up by `id` instead",
    );
  }
  return keySummary(matches[0]!);
}

// Metrics. The spec names their structure, not their fields: the fields are the contract's (provider/api/metrics.ts).
const vmMetricsArgs = queryArgs(routes.vmMetrics, {
  currentPeriodStart:
    "Start of the period measured (ISO 8601 with offset). The API's default: the start of the current month.",
  currentPeriodEnd: "End of the period measured (ISO 8601 with offset). The API's default: now.",
  comparisonPeriodStart: "Start of the period compared with (ISO 8601 with offset), for the trends.",
  comparisonPeriodEnd: "End of the period compared with (ISO 8601 with offset), for the trends.",
  categories: "Only these VM size categories (their codes, comma-separated).",
  datacenters: "Only these data centers (UUIDs).",
  includeVmNames: "`true`: each data center lists the names of its VMs (the API's default: `false`).",
  entityId: entityIdText,
});
const GetVirtualMachineMetricsResult = z.object({
  period: M.VmMetrics.shape.period.describe("The periods measured and compared (ISO 8601)."),
  summary: M.VmMetrics.shape.summary.describe(
    "Totals of the period: VMs, vCPUs, RAM and disk (GB), with the trend of the VM count (`up`, `down` or `stable`).",
  ),
  categories: M.VmMetrics.shape.categories.describe(
    "By VM size category: its tiers (configurations, with specs), each by region and data center, with VM counts and trends.",
  ),
  other: z.record(z.string(), z.unknown()).optional().describe(otherText("the metrics")),
});

const usageEntityId = (route: RouteSpec) =>
  pathId(route)
    .optional()
    .describe("The entity (UUID) whose usage to read. Default: `entityId`, else the configured entity.");
const entityUsageArgs = queryArgs(
  routes.entityUsage,
  {
    month: "The month (`YYYY-MM`, not in the future; see getUsageMonths). The API's default: the current month.",
    entityId: entityIdText,
  },
  { id: usageEntityId(routes.entityUsage) },
);
const GetEntityUsageResult = z.object({
  entityId: M.EntityUsage.shape.entityId.describe("The entity (UUID)."),
  month: M.EntityUsage.shape.month.describe("The month (`YYYY-MM`)."),
  summary: M.EntityUsage.shape.summary.describe("The month's usage: VMs, vCPU hours, RAM and disk GB hours."),
  byCategory: M.EntityUsage.shape.byCategory.describe("The usage by VM size category (its code)."),
  byRegion: M.EntityUsage.shape.byRegion.describe("The usage by region."),
  other: z.record(z.string(), z.unknown()).optional().describe(otherText("the usage")),
});
const usageMonthsArgs = queryArgs(
  routes.availableMonths,
  { entityId: entityIdText },
  { id: usageEntityId(routes.availableMonths) },
);
const GetUsageMonthsResult = z.object({
  months: M.AvailableMonths.describe("The months with usage to read (`YYYY-MM`), most recent first: the last 24."),
});

// The options of new API keys: the spec names neither answer's fields; the contract's are typed, the rest kept.
const ApiKeyRoleOption = z.object({
  id: A.RoleOption.shape.id.describe("The role's id: what an ApiKey's `roleId` takes."),
  name: A.RoleOption.shape.name.describe("The role's name."),
  description: A.RoleOption.shape.description.describe("What the role may do."),
  other: z.record(z.string(), z.unknown()).optional().describe(otherText("the role")),
});
sdkTypes.add(ApiKeyRoleOption, {
  name: "ApiKeyRoleOption",
  io: "output",
  description: "A role the signed-in user may give a new API key (`GET /auth/api-keys/options/roles`).",
});
const ApiKeyExpirationOption = z.object({
  days: A.ExpirationOption.shape.days.describe("Days of validity: what an ApiKey's `expiresInDays` takes."),
  label: A.ExpirationOption.shape.label.describe('How the API names the choice, e.g. "90 days".'),
  other: z.record(z.string(), z.unknown()).optional().describe(otherText("the choice")),
});
sdkTypes.add(ApiKeyExpirationOption, {
  name: "ApiKeyExpirationOption",
  io: "output",
  description: "An expiry the API offers for new API keys (`GET /auth/api-keys/options/expiration`).",
});
const GetApiKeyOptionsArgs = z.strictObject({});
const GetApiKeyOptionsResult = z.object({
  roles: z
    .array(ApiKeyRoleOption)
    .describe("The roles the signed-in user may give a new key (an ApiKey's `roleId`), in the API's order."),
  expirations: z
    .array(ApiKeyExpirationOption)
    .describe("The expiry choices the API offers for new keys (an ApiKey's `expiresInDays`), in the API's order."),
});

/** The options of new keys, each read once per run (shared with ApiKey's check); session only. */
async function keyOptions(ctx: HandlerContext): Promise<z.output<typeof GetApiKeyOptionsResult>> {
  const options = apiKeyOptions(ctx, "getApiKeyOptions (GET /auth/api-keys/options/roles and …/expiration)");
  const [roles, expirations] = await Promise.all([options.roles(), options.expirations()]);
  return {
    roles: itemsWithOther(A.RoleOption, roles.raw, roles.data) as z.output<typeof ApiKeyRoleOption>[],
    expirations: itemsWithOther(A.ExpirationOption, expirations.raw, expirations.data) as z.output<
      typeof ApiKeyExpirationOption
    >[],
  };
}

/** The entity whose usage the arguments ask for: `id`, else `entityId`, else the one the credentials act in. */
async function usageEntity(ctx: HandlerContext, args: Props): Promise<string> {
  if (typeof args.id === "string") return args.id;
  if (typeof args.entityId === "string") return args.entityId;
  return (await caller(ctx, {})).entityId;
}

// ---------------------------------------------------------------- the registry

const singleName = (kind: LookupKindName) => `get${kind}`;
const pluralName = (kind: LookupKindName) =>
  `get${kindOf(kind).plural.charAt(0).toUpperCase()}${kindOf(kind).plural.slice(1)}`;

function registry(): Record<string, DataFunction> {
  const functions: Record<string, DataFunction> = {
    getGpuInventory: {
      args: data.GetGpuInventoryArgs as z.ZodType<Props>,
      argsShape: data.GetGpuInventoryArgs,
      result: data.GetGpuInventoryResult,
      description:
        "The GPU inventory now: which series, data centers and GPU counts can be ordered. Read at each call (the API never caches it), with the provider's configuration.",
      call: data.gpuInventory as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getVolumeSizes: {
      args: data.GetVolumeSizesArgs as z.ZodType<Props>,
      argsShape: data.GetVolumeSizesArgs,
      result: data.GetVolumeSizesResult,
      description:
        "The volume types of a data center and the sizes each offers (`volumeTypeId`, and `volumeSizeId` / `sizeGb` of a Volume), with the provider's configuration.",
      call: data.volumeSizes as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getCaller: {
      args: GetCallerArgs as z.ZodType<Props>,
      argsShape: GetCallerArgs,
      result: GetCallerResult,
      description:
        "Who the configured credentials are (`GET /auth/check`): user, roles and permissions, and the entity acted in.",
      call: caller as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getNetworkVirtualMachines: {
      args: networkVmsArgs.args as unknown as z.ZodType<Props>,
      argsShape: networkVmsArgs.shape,
      result: GetNetworkVirtualMachinesResult,
      description:
        "The VMs with an interface on a network (`GET /resource/networks/{id}/virtual-machines`), the network by id or by exact name (found as getNetwork finds it).",
      example: 'const { virtualMachines } = await getNetworkVirtualMachines({ name: "my-network" });',
      call: vmsOf("networkVms", "Network", networkVmsArgs, N.NetworkVm, "networkId"),
    },
    getAttachableVirtualMachines: {
      args: attachableArgs.args as unknown as z.ZodType<Props>,
      argsShape: attachableArgs.shape,
      result: GetAttachableVirtualMachinesResult,
      description:
        "The VMs a volume can be attached to: those of its data center, with their current and maximum volume counts (`GET /resource/volumes/{id}/available-virtual-machines`), the volume by id or by exact name (found as getVolume finds it).",
      example: 'const { virtualMachines } = await getAttachableVirtualMachines({ name: "my-volume" });',
      call: vmsOf("attachableVms", "Volume", attachableArgs, V.AttachableVm, "volumeId"),
    },
    getApiKey: {
      args: apiKeyArgs.args as unknown as z.ZodType<Props>,
      argsShape: apiKeyArgs.shape,
      result: ApiKeySummary.extend({}),
      description:
        "One API key of the entity, by id or by exact name (`GET /auth/api-keys`, every page): its name, start, status, expiry and role, never its secret. No match is an error naming the closest names; several an error listing their ids (look up by id then).",
      example: 'const key = await getApiKey({ name: "ci" });',
      call: apiKey as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getApiKeys: {
      args: apiKeysArgs.args as z.ZodType<Props>,
      argsShape: apiKeysArgs.args,
      result: GetApiKeysResult,
      description:
        "Every API key of the entity the arguments select (`GET /auth/api-keys`, the API's documented query; each page read, 100 per request), and `status` among them: names, starts, statuses, expiries and roles, never a secret. Sorted by name then id unless `sort` asks the API for its order.",
      call: apiKeys as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getApiKeyOptions: {
      args: GetApiKeyOptionsArgs as z.ZodType<Props>,
      argsShape: GetApiKeyOptionsArgs,
      result: GetApiKeyOptionsResult,
      description:
        "What the API offers the signed-in user for new API keys: the roles (`GET /auth/api-keys/options/roles`) and the expiry choices (`GET /auth/api-keys/options/expiration`). Session only: it needs `cloudinfra:email`, `cloudinfra:password` and `cloudinfra:totpSecret` (or `cloudinfra:sessionToken`); with only an API key configured it fails, saying so, before any request.",
      example: "const { roles, expirations } = await getApiKeyOptions();",
      call: keyOptions as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getVirtualMachineMetrics: {
      args: vmMetricsArgs.args as z.ZodType<Props>,
      argsShape: vmMetricsArgs.args,
      result: GetVirtualMachineMetricsResult,
      description:
        "VM metrics of a period (`GET /metrics/virtual-machines`, its documented query): totals, then by size category, tier, region and data center, with VM counts, specs and trends against a comparison period.",
      example: "const metrics = await getVirtualMachineMetrics({ includeVmNames: true });",
      call: (async (ctx: HandlerContext, args: Props) => {
        const answer = await ctx.api.request("vmMetrics", { query: queryOf(vmMetricsArgs.params, args) });
        return { ...answer.data, ...beyond(M.VmMetrics, answer.raw) };
      }) as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getEntityUsage: {
      args: entityUsageArgs.args as z.ZodType<Props>,
      argsShape: entityUsageArgs.args,
      result: GetEntityUsageResult,
      description:
        "An entity's usage of a month (`GET /metrics/entity/{id}/usage`): a summary, and the same by VM size category and by region.",
      example: 'const usage = await getEntityUsage({ month: "2026-01" });',
      call: (async (ctx: HandlerContext, args: Props) => {
        const id = await usageEntity(ctx, args);
        const answer = await ctx.api.request("entityUsage", {
          params: { id },
          query: queryOf(entityUsageArgs.params, args),
        });
        return { ...answer.data, ...beyond(M.EntityUsage, answer.raw) };
      }) as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
    getUsageMonths: {
      args: usageMonthsArgs.args as z.ZodType<Props>,
      argsShape: usageMonthsArgs.args,
      result: GetUsageMonthsResult,
      description:
        "The months whose usage can be read with getEntityUsage (`GET /metrics/entity/{id}/available-months`): `YYYY-MM`, most recent first.",
      call: (async (ctx: HandlerContext, args: Props) => {
        const id = await usageEntity(ctx, args);
        return {
          months: await ctx.api.availableMonths({ params: { id }, query: queryOf(usageMonthsArgs.params, args) }),
        };
      }) as (ctx: HandlerContext, args: never) => Promise<unknown>,
    },
  };
  for (const name of Object.keys(lookupKinds) as LookupKindName[]) {
    const kind = kindOf(name);
    const one = oneArgs(kind);
    const single = resultOf(kind);
    functions[singleName(name)] = {
      args: one.args as unknown as z.ZodType<Props>,
      argsShape: one.shape,
      result: single,
      description:
        `One ${kind.noun}, by id or by exact ${kind.nameField} (every page of the API's partial-match search is read, and only exact matches kept): its outputs, as a \`${name}\` has them. ` +
        `No match is an error naming the ${kind.nameField} and the closest found; several matches an error listing their ids and creation times (look up by id then).`,
      describes: name,
      ...(kind.reported ? { ownResults: Object.keys(kind.reported.shape) } : {}),
      call: ((ctx: HandlerContext, args: Props) => lookupOne(ctx, name, args)) as (
        ctx: HandlerContext,
        args: never,
      ) => Promise<unknown>,
    };
    const list = listArgs(kind);
    const omitted = kind.listOmits ?? [];
    const item =
      kind.listItem ??
      z.object(Object.fromEntries(Object.entries(single.shape).filter(([key]) => !omitted.includes(key))));
    const leftOut =
      omitted.length > 0
        ? `, without ${omitted.map((k) => `\`${k}\``).join(", ")} (the list does not carry it: look one up for it)`
        : "";
    functions[pluralName(name)] = {
      args: list.args as z.ZodType<Props>,
      argsShape: list.args,
      result: z.object({
        [kind.plural]: z
          .array(item)
          .describe(
            `Every ${kind.noun} the arguments select (every page read): by ${kind.nameField} then id, or in the API's order when \`sort\` is given${leftOut}.`,
          ),
        count: z.number().int().describe("How many there are."),
      }),
      description: `Every ${kind.noun} the arguments select, which are the API's documented query of its list (\`${routes[kind.route].path}\`): each page read (100 per request), sorted by ${kind.nameField} then id unless \`sort\` asks the API for its order.`,
      // Items of their own (a VM list's) describe themselves; others are the single result, which the kind describes.
      ...(kind.listItem ? {} : { describes: name }),
      ...(kind.reported ? { ownResults: Object.keys(kind.reported.shape) } : {}),
      call: ((ctx: HandlerContext, args: Props) => lookupList(ctx, kind, list.params, args)) as (
        ctx: HandlerContext,
        args: never,
      ) => Promise<unknown>,
    };
  }
  return functions;
}

/**
 * Every data function, by name (`getNetwork`, `getNetworks`, ..., `getCaller`, `getGpuInventory`): the plugin serves
 * each as the invoke `cloudinfra:index:<name>`, the schema describes each, the SDKs offer each.
 */
export const dataFunctions: Readonly<Record<string, DataFunction>> = registry();

/** The data function names of the lookups of a kind: one resource and the list. */
export function lookupNames(kind: LookupKindName): { single: string; list: string; plural: string } {
  return { single: singleName(kind), list: pluralName(kind), plural: kindOf(kind).plural };
}

/** The kinds that have lookups. */
export const lookupKindNames = Object.keys(lookupKinds) as LookupKindName[];
