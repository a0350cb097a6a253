import { z } from "zod";
import { CodedError, raiseJobTimeout } from "../client/error-codes";
import { CreateVolumeBody, type Volume as ApiVolume } from "../api";
import { ApiError, BatchedDeleter, batchedDeleterOf, type CloudClient } from "../client";
import { type CheckFailure, checkInputs, type CheckResult, reasonFor } from "./check";
import { type HandlerContext, verifyCredentials, warnAbout } from "./context";
import { createUnique } from "./create-recovery";
import { isConflict, isNotFound, ResourceInitError, settledText } from "./errors";
import { awaitJob, batchedRead, pollUntil, resendAfterFailedJob, sleep } from "./jobs";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import { plainInputs, type Props } from "./props";
import { diffSpecOf, type InputFields } from "./fields";
import { teamIdInput } from "./resource-group";
import { freeName } from "./preflight";

/**
 * The create request's body (`POST /resource/volumes`), with what a program has beyond it: `volumeSizeId` is the
 * provider's to choose (from `sizeGb`), `teamId` also takes a ResourceGroup's `id`, and `adopt`.
 */
export const VolumeInputs = CreateVolumeBody.extend({
  volumeSizeId: CreateVolumeBody.shape.volumeSizeId.optional(),
  teamId: teamIdInput.optional(),
  adopt: z.boolean().optional(),
});
export type VolumeInputs = z.output<typeof VolumeInputs>;
export type VolumeState = State<VolumeInputs, typeof inputFields, z.output<typeof VolumeOutputs>>;

/** How each input changes; the API reports every one of them back. */
const inputFields = {
  name: {
    change: "replace",
    reported: "documented",
    description: "Name, unique within the entity. Changing it replaces the volume (the new one is created first).",
    output: "Name of the volume.",
  },
  datacenterId: {
    change: "replace",
    reported: "documented",
    description: "Data center (UUID). Changing it replaces the volume.",
    expects: "must be the UUID of a data center",
    output: "Data center (UUID).",
  },
  // The API has no volume update route: everything but the size is fixed at creation, teamId included.
  volumeTypeId: {
    change: "replace",
    reported: "documented",
    description: "Volume type id (e.g. SSD or NVMe; see `getVolumeSizes`). Changing it replaces the volume.",
    expects: "must be the integer id of a volume type (see getVolumeSizes)",
    output: "Volume type id.",
  },
  // volumeSizeId, when given, agrees with sizeGb (checked): the two change together.
  sizeGb: {
    change: "inPlace",
    reported: "documented",
    expects: "must be a whole number of GB offered by the volume type (see getVolumeSizes)",
    description:
      "Size in GB: one of the sizes the volume type offers in the data center (see `getVolumeSizes`; a size that is not offered fails at create/update time, naming the sizes that are). Growing it is done in place by a resize job; shrinking it is refused by `check` (volumes cannot shrink).",
    output: "Size in GB, as the API reports it.",
  },
  volumeSizeId: {
    change: "inPlace",
    reported: "documented",
    expects: "must be the integer id of the volume size of sizeGb (see getVolumeSizes), or left out",
    description:
      "The API's id of the volume size (see `getVolumeSizes`). Optional: `sizeGb` decides it. When given it must be the id of the `sizeGb` size of this type in this data center (a clear error names the right id otherwise); it changes together with `sizeGb`.",
    output: "Id of the volume size the provider chose for `sizeGb` (from the data center's volume sizes).",
    reportedType: z.number().int(),
  },
  teamId: {
    change: "replace",
    reported: "documented",
    description:
      "Resource group: its integer id, or a ResourceGroup's `id` or `teamId` (e.g. `group.id`). Default: none. The API has no volume update route, so this is set at creation only: changing it replaces the volume. Removing it from the program leaves the volume as it is.",
    output: "Resource group (teamId), or null.",
    reportedType: z.number().int().nullable(),
  },
  adopt: {
    change: "ignored",
    reported: "never",
    description:
      "When a volume of this name already exists, take it over instead of failing (its data center, type and resource group must match; a smaller size is grown, a larger one is an error). The way to bring existing volumes under management (`pulumi import` does not work for dynamic resources). Default false. Never a change by itself.",
  },
} as const satisfies InputFields<VolumeInputs>;
const diffSpec = diffSpecOf(VolumeInputs, inputFields, {
  // Names are unique: a replacement keeping its name must delete the old volume first.
  deleteBeforeReplace: (olds, news) => olds.name === news.name,
  // A volume whose creation failed (status Error) cannot be repaired in place: the next `up` replaces it.
  failed: (olds) => (olds.failed === true ? "failed" : undefined),
});

/** Statuses that a running job will end; anything acting on the volume waits them out. */
const transitional = new Set(["Creating", "Attaching", "Detaching", "Resizing"]);

/** Shrinking is refused, unless another change replaces the volume anyway (olds are the previous inputs). */
function shrinkCheck(olds: Props, known: Partial<VolumeInputs>, failures: CheckFailure[]): void {
  const before = olds.sizeGb;
  // A property not known yet (preview) may replace the volume too: the update refuses a shrink that gets through.
  const replaced = diffSpec.replaceOnChanges.some((k) => olds[k] !== known[k as keyof VolumeInputs]);
  if (typeof before === "number" && typeof known.sizeGb === "number" && known.sizeGb < before && !replaced) {
    failures.push({
      property: "sizeGb",
      reason:
        `volumes cannot shrink (${before} GB → ${known.sizeGb} GB): keep sizeGb at ${before} or more, ` +
        "or give the volume a new name to replace it with a smaller one",
    });
  }
}

/**
 * Outputs: the inputs as given, overlaid with what the API reports about the volume itself. The attachment state
 * (status In-use, the VM) belongs to VolumeAttachment: kept out of here, attaching does not read as drift.
 */
export function outputsOf(given: Props, volume: ApiVolume): VolumeState {
  return stateOf(inputFields, given, {
    name: volume.name,
    datacenterId: volume.datacenter.id,
    datacenterName: volume.datacenter.name,
    volumeTypeId: volume.volumeTypeId,
    volumeTypeName: volume.volumeTypeName,
    sizeGb: volume.sizeGb,
    volumeSizeId: volume.volumeSizeId,
    teamId: volume.teamId,
    failed: volume.status === "Error",
    createdAt: volume.createdAt,
  });
}

const getVolume = (ctx: HandlerContext, id: string) => ctx.api.getVolume({ params: { id } });

/** Polls the volume until no job is running on it (bounded by cloudinfra:jobTimeoutMs). */
export function settledVolume(ctx: HandlerContext, id: string, what: string): Promise<ApiVolume> {
  return pollUntil(
    ctx,
    () => getVolume(ctx, id),
    (volume) => !transitional.has(volume.status),
    (volume, timeoutMs) =>
      new CodedError(
        "JOB_TIMEOUT",
        `${what}: volume "${volume.name}" (${id}) is still ${volume.status} after ${timeoutMs} ms; ` +
          raiseJobTimeout("run `pulumi up` again"),
      ),
  );
}

type SizeCatalog = Awaited<ReturnType<CloudClient["volumeSizes"]>>;

/**
 * The volume-size catalogue of each data center, asked once per API and process (it does not change within a
 * deployment), and again only after the API refused a size taken from it (`forgetSizes`).
 */
const catalogs = new Map<string, Promise<SizeCatalog>>();
const catalogKey = (ctx: HandlerContext, datacenterId: string) => `${ctx.settings.baseUrl} ${datacenterId}`;

function sizeCatalog(ctx: HandlerContext, datacenterId: string): Promise<SizeCatalog> {
  const key = catalogKey(ctx, datacenterId);
  let found = catalogs.get(key);
  if (!found) {
    found = ctx.api.volumeSizes({ params: { id: datacenterId } });
    catalogs.set(key, found);
    // A failed look-up is not kept: the next one asks again.
    found.catch(() => catalogs.delete(key));
  }
  return found;
}

/** Drops a data center's cached catalogue (the API refused a size taken from it). */
function forgetSizes(ctx: HandlerContext, datacenterId: string): void {
  catalogs.delete(catalogKey(ctx, datacenterId));
}

/** A refusal that a newer catalogue may cure: the API says a size (or type) is not what we were told. */
const refusedSize = (error: unknown) =>
  error instanceof ApiError && (error.status === 400 || error.status === 422) && /size|type/i.test(error.message);

/**
 * The id of the volume size of `sizeGb` GB for this type in this data center (GET .../volume-sizes, cached). The
 * available sizes need a request: `check` reads them when it has a context (the catalogue is cached), and create and
 * update check them again.
 */
async function sizeIdFor(
  ctx: HandlerContext,
  datacenterId: string,
  volumeTypeId: number,
  sizeGb: number,
  above = 0,
): Promise<number> {
  let catalog;
  try {
    catalog = await sizeCatalog(ctx, datacenterId);
  } catch (error) {
    if (isNotFound(error))
      throw new CodedError("INPUT_INVALID", `datacenterId: data center ${datacenterId} does not exist`);
    throw error;
  }
  const type = catalog.volumeTypes.find((t) => t.id === volumeTypeId);
  if (!type) {
    const types = catalog.volumeTypes.map((t) => `${t.id} (${t.name})`).join(", ");
    throw new CodedError(
      "INPUT_INVALID",
      `volumeTypeId: volume type ${volumeTypeId} is not offered in data center ${datacenterId}; available: ${types}`,
    );
  }
  const size = type.availableSizes.find((s) => s.sizeGb === sizeGb);
  if (!size) {
    const offered = type.availableSizes.filter((s) => s.sizeGb > above).map((s) => s.sizeGb);
    throw new CodedError(
      "INPUT_INVALID",
      `sizeGb: volume type ${type.name} has no ${sizeGb} GB size in data center ${datacenterId}; available sizes` +
        `${above > 0 ? ` above ${above} GB` : ""}: ${offered.length > 0 ? `${offered.join(", ")} GB` : "none"}`,
    );
  }
  return size.id;
}

async function findByName(ctx: HandlerContext, name: string): Promise<ApiVolume | undefined> {
  for await (const volume of ctx.api.listAll("listVolumes", { search: name })) {
    if (volume.name === name) return volume;
  }
  return undefined;
}

/**
 * Takes over an existing volume of the program's name: its data center, type and resource group must match (they
 * cannot change); a smaller size is grown. `ours` marks a volume our own ambiguous create may have made.
 */
async function adopt(
  ctx: HandlerContext,
  inputs: VolumeInputs,
  found: ApiVolume,
  ours: boolean,
): Promise<{ id: string; outs: VolumeState }> {
  const what = `Adopting volume "${inputs.name}" (${found.id})`;
  if (found.status === "Deleting")
    throw new CodedError("STATE_CONFLICT", `${what}: it is being deleted; choose another name`);
  const existing = await settledVolume(ctx, found.id, what);
  if (existing.status === "Error") {
    const message = `Volume "${inputs.name}" (${existing.id}) is in status Error: its creation failed`;
    if (ours) throw new ResourceInitError(message, existing.id, outputsOf(inputs, existing)).ofFailedJob();
    throw new CodedError("NAME_TAKEN", `${message}. Delete it or choose another name`);
  }
  const mismatches: string[] = [];
  if (existing.datacenter.id !== inputs.datacenterId) mismatches.push("datacenterId");
  if (existing.volumeTypeId !== inputs.volumeTypeId) mismatches.push("volumeTypeId");
  if (inputs.teamId !== undefined && existing.teamId !== inputs.teamId) mismatches.push("teamId");
  if (mismatches.length > 0) {
    throw new CodedError(
      "ADOPT_MISMATCH",
      `Cannot adopt volume "${inputs.name}" (${existing.id}): its ${mismatches.join(", ")} differ from the program's ` +
        "and cannot change in place; rename one of them or align the program",
    );
  }
  return { id: existing.id, outs: await update(ctx, existing.id, outputsOf({}, existing), inputs) };
}

/** The size id to send: the catalogue's for `sizeGb`, which a `volumeSizeId` of the program must agree with. */
async function agreedSizeId(ctx: HandlerContext, inputs: VolumeInputs): Promise<number> {
  const volumeSizeId = await sizeIdFor(ctx, inputs.datacenterId, inputs.volumeTypeId, inputs.sizeGb);
  if (inputs.volumeSizeId !== undefined && inputs.volumeSizeId !== volumeSizeId) {
    throw new CodedError("INPUT_INVALID", sizeIdMismatch(inputs.volumeSizeId, volumeSizeId, inputs.sizeGb));
  }
  return volumeSizeId;
}

const sizeIdMismatch = (given: number, expected: number, sizeGb: number) =>
  `volumeSizeId: ${given} does not agree with sizeGb ${sizeGb}: the ${sizeGb} GB size of this volume type is ` +
  `${expected}. Leave volumeSizeId out (sizeGb decides it), or set it to ${expected}`;

export async function create(ctx: HandlerContext, inputs: VolumeInputs): Promise<{ id: string; outs: VolumeState }> {
  const api = ctx.api;
  const body = async () => bodyFrom(CreateVolumeBody, { ...inputs, volumeSizeId: await agreedSizeId(ctx, inputs) });
  const first = await body();
  return createUnique(ctx, {
    what: `volume named "${inputs.name}"`,
    adopt: inputs.adopt,
    send: async () => {
      try {
        return await api.createVolume({ body: first });
      } catch (error) {
        if (!refusedSize(error)) throw error;
        // The catalogue may have changed since it was read: read it again, and send again only if it did.
        forgetSizes(ctx, inputs.datacenterId);
        const again = await body();
        if (again.volumeSizeId === first.volumeSizeId) throw error;
        return api.createVolume({ body: again });
      }
    },
    findByName: () => findByName(ctx, inputs.name),
    takeOver: (existing, ambiguous) => adopt(ctx, inputs, existing, ambiguous),
    outputs: async (id) => outputsOf(inputs, await readVolume(ctx, id)),
    partialOutputs: async (id) => {
      const volume = await getVolume(ctx, id).catch(() => undefined);
      return volume ? outputsOf(inputs, volume) : { ...plainInputs(inputs), failed: true };
    },
    removeFailed: (id) => remove(ctx, id),
  });
}

/** Volumes are read in batches through the list endpoint: its items carry every field of a volume. */
const volumes = (ctx: HandlerContext) =>
  batchedRead<ApiVolume>(ctx, "volumes", (api) => ({
    list: (page, limit) => api.listVolumes({ query: { page, limit, sort: "createdAt:asc" } }),
    get: (id) => api.getVolume({ params: { id } }),
  }));

/** Volume deletes gathered into `POST /resource/volumes/bulk/delete` (a delete job per volume). */
const bulkDeleter = (api: CloudClient) =>
  batchedDeleterOf(
    api,
    "volumes",
    () => new BatchedDeleter<string>(async (ids) => await api.bulkDeleteVolumes({ body: { ids } })),
  );

/** The volume through the batched reader. */
async function readVolume(ctx: HandlerContext, id: string): Promise<ApiVolume> {
  const found = await volumes(ctx).read(id);
  if (!found)
    throw new CodedError("RESOURCE_GONE", `Volume ${id} no longer exists: run \`pulumi refresh\`, then \`pulumi up\``);
  return found;
}

export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: VolumeState } | null> {
  const found = await volumes(ctx).read(id);
  return found ? { id, props: outputsOf(props, found) } : null;
}

/** Only the size changes in place: grown by a resize job with the matching size id; shrinking is refused. */
export async function update(ctx: HandlerContext, id: string, _olds: Props, news: VolumeInputs): Promise<VolumeState> {
  let volume = await getVolume(ctx, id);
  if (news.sizeGb !== volume.sizeGb) {
    if (news.sizeGb < volume.sizeGb) {
      throw new CodedError(
        "CANNOT_SHRINK",
        `sizeGb: volume "${volume.name}" (${id}) is ${volume.sizeGb} GB and volumes cannot shrink (the program asks ` +
          `for ${news.sizeGb} GB): set sizeGb to ${volume.sizeGb} or more, or give the volume a new name to replace it`,
      );
    }
    const what = `Resizing volume "${volume.name}" to ${news.sizeGb} GB`;
    volume = await settledVolume(ctx, id, what);
    const sizeId = () => sizeIdFor(ctx, volume.datacenter.id, volume.volumeTypeId, news.sizeGb, volume.sizeGb);
    const resize = async (newVolumeSizeId: number) => {
      if (news.volumeSizeId !== undefined && news.volumeSizeId !== newVolumeSizeId) {
        throw new CodedError("INPUT_INVALID", sizeIdMismatch(news.volumeSizeId, newVolumeSizeId, news.sizeGb));
      }
      return ctx.api.resizeVolume({ params: { id }, body: { newSizeGb: news.sizeGb, newVolumeSizeId } });
    };
    const send = async () => {
      const first = await sizeId();
      return resize(first).catch(async (error: unknown) => {
        if (!refusedSize(error)) throw error;
        forgetSizes(ctx, volume.datacenter.id);
        const again = await sizeId();
        if (again === first) throw error;
        return resize(again);
      });
    };
    let job: { jobId: string } | undefined;
    for (let attempt = 1; job === undefined; attempt++) {
      try {
        job = await send();
      } catch (error) {
        if (!(error instanceof ApiError && error.mayHaveSucceeded)) throw error;
        // The answer was lost: the size the volume shows once no job runs on it says whether the resize took effect.
        volume = await settledVolume(ctx, id, what);
        if (volume.sizeGb === news.sizeGb) return outputsOf(news, volume);
        if (attempt >= 2) {
          throw new CodedError(
            "NOTHING_CHANGED",
            `${what} got no answer twice (${settledText(error)}), and the volume is still ${volume.sizeGb} GB: ` +
              "nothing was resized; the next `pulumi up` resizes it",
            { cause: error },
          );
        }
        // Not resized (the request was not carried out, or its job failed): sent once more, as an attach is.
        warnAbout(
          ctx,
          `volume "${volume.name}"`,
          `the resize got no answer (${settledText(error)}) and the volume is still ${volume.sizeGb} GB: sending it again`,
        );
      }
    }
    await awaitJob(ctx, job.jobId, what);
    volume = await getVolume(ctx, id);
  }
  return outputsOf(news, volume);
}

/**
 * Deletes the volume: the delete is sent at once, and the volume is looked at only when the API refuses it (409).
 * Its VolumeAttachment depends on it, so Pulumi detaches it first; a job still running on the volume is waited out
 * (bounded by cloudinfra:jobTimeoutMs). A volume that stays attached with no job running (attached outside the
 * program) is given a short grace, then named in a clear error.
 */
export async function remove(ctx: HandlerContext, id: string): Promise<void> {
  const api = ctx.api;
  const current = ctx.settings;
  const deadline = Date.now() + current.jobTimeoutMs;
  const attachedDeadline = Date.now() + Math.min(current.jobTimeoutMs, 60_000);
  // Deletes arriving together go in one bulk request; what it did not delete goes the single way below.
  const outcome = await bulkDeleter(api).delete(id);
  // A delete job that failed leaves the volume as it was: the delete is sent once more (a replacement that deletes
  // first waits on it, and under --continue-on-error the engine never ends an up whose such delete failed).
  const resendAfter = resendAfterFailedJob(ctx, id, "delete");
  if (outcome.kind === "deleted") {
    try {
      if (outcome.jobId !== null) await awaitJob(ctx, outcome.jobId, `Deleting volume ${id}`);
      return;
    } catch (error) {
      if (!resendAfter(error)) throw error;
    }
  }
  if (outcome.kind === "unconfirmed" && (await volumes(ctx).read(id)) === null) return;
  for (;;) {
    try {
      const job = await api.deleteVolume({ params: { id } });
      await awaitJob(ctx, job.jobId, `Deleting volume ${id}`);
      return;
    } catch (error) {
      if (isNotFound(error)) return;
      if (resendAfter(error)) continue;
      if (!isConflict(error)) throw error;
    }
    // Refused: something holds the volume. Look at what, and wait or explain.
    let volume: ApiVolume;
    try {
      volume = await getVolume(ctx, id);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    if (volume.status === "In-use" && Date.now() > attachedDeadline) {
      throw new CodedError(
        "DEPENDENTS_EXIST",
        `Volume "${volume.name}" (${id}) is still attached to virtual machine ${volume.virtualMachineName ?? "?"} ` +
          `(${volume.virtualMachineId ?? "?"}): delete the VolumeAttachment that holds it, or detach it, then run ` +
          "the command again",
      );
    }
    if (Date.now() > deadline) {
      throw new CodedError(
        "JOB_TIMEOUT",
        `Volume "${volume.name}" (${id}) is still ${volume.status} after ${current.jobTimeoutMs} ms, and only an ` +
          `Available volume can be deleted; ${raiseJobTimeout("run the command again")}`,
      );
    }
    await sleep(current.pollIntervalMs, ctx.signal);
  }
}

/**
 * The size catalogue, when it can be read (cached; read-only): the data center must offer the volume type, the type
 * a size of `sizeGb` GB, and a `volumeSizeId` given in the program must be that size's. Without a context, or when
 * the catalogue cannot be read, this is left to create and update, which check it too. (Found by the check-vs-API
 * property test: a size the type does not offer passed check and failed mid-`up`.)
 */
async function sizeIdCheck(
  ctx: HandlerContext | undefined,
  known: Partial<VolumeInputs>,
  failures: CheckFailure[],
): Promise<void> {
  const { datacenterId, volumeTypeId, sizeGb, volumeSizeId } = known;
  // `skipCredentialsValidation`: a preview without network access, which this read would only slow down. Sign-in
  // credentials: signing in at check would spend the TOTP code the `up` after a preview needs (create checks then).
  if (!ctx || ctx.settings.skipCredentialsValidation || "password" in ctx.settings.auth) return;
  if (typeof datacenterId !== "string" || typeof volumeTypeId !== "number" || typeof sizeGb !== "number") return;
  if (failures.some((f) => ["datacenterId", "volumeTypeId", "sizeGb", "volumeSizeId"].includes(f.property))) return;
  // Read with credentials the API accepted (the run's one GET /auth/check): refused ones are told once, by that check.
  if (
    !(await verifyCredentials(ctx).then(
      () => true,
      () => false,
    ))
  )
    return;
  let expected: number;
  try {
    expected = await sizeIdFor(ctx, datacenterId, volumeTypeId, sizeGb);
  } catch (error) {
    // Not offered (INPUT_INVALID, `<property>: <reason>`); anything else (the API unreachable) is left to create.
    const found = error instanceof CodedError && error.code === "INPUT_INVALID" && /^(\w+): (.*)$/s.exec(error.message);
    if (found) failures.push({ property: found[1]!, reason: found[2]! });
    return;
  }
  if (typeof volumeSizeId === "number" && expected !== volumeSizeId) {
    failures.push({
      property: "volumeSizeId",
      reason: reasonFor("volumeSizeId", sizeIdMismatch(volumeSizeId, expected, sizeGb)),
    });
  }
}

async function check(ctx: HandlerContext | undefined, olds: Props, news: Props): Promise<CheckResult<Props>> {
  const result = checkInputs(VolumeInputs, news, (known, failures) => shrinkCheck(olds, known, failures), inputFields);
  await sizeIdCheck(ctx, result.inputs, result.failures);
  return result;
}

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const VolumeOutputs = z.object({
  datacenterName: z.string().describe("Data center name, e.g. `fra-1`."),
  volumeTypeName: z.string().describe("Volume type name, e.g. `ssd`."),
  failed: z
    .boolean()
    .describe(
      "True when the API reports the volume in status Error (its creation failed): the next `up` replaces it. The attachment state is on `VolumeAttachment`, so attaching does not read as drift of the volume.",
    ),
  createdAt: z.string().describe("Creation time (ISO 8601)."),
});

export const volume = defineKind({
  name: "Volume",
  description:
    "A block storage volume. Attach it to a virtual machine with a `VolumeAttachment`. Deleting it waits until it is Available (its attachments, which depend on it, are deleted first), bounded by `cloudinfra:jobTimeoutMs`.",
  inputs: { schema: VolumeInputs, fields: inputFields },
  outputs: VolumeOutputs,
  check: (olds, news, ctx) => check(ctx, olds, news),
  preflight: freeName("volume"),
  diffSpec,
  create,
  read,
  update,
  delete: (ctx, id) => remove(ctx, id),
});
