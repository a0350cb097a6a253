import { z } from "zod";
import type { Volume as ApiVolume } from "../api";
import {
  awaitJob,
  checkInputs,
  client,
  diffInputs,
  isConflict,
  isNotFound,
  plainInputs,
  ResourceInitError,
  settings,
  uuidInput,
  type CheckFailure,
  type DiffResult,
  type DiffSpec,
  type Props,
  type ResourceKind,
  pollUntil,
  sleep,
  createUnique,
} from "./framework";
import { teamIdInput } from "./resource-group";

const positiveInt = (what: string) =>
  z
    .number({ error: `must be ${what}` })
    .int(`must be ${what}`)
    .positive(`must be ${what}`);

export const VolumeInputs = z.strictObject({
  name: z.string().trim().min(1, "must not be empty").max(128, "must be at most 128 characters"),
  datacenterId: uuidInput("a data center"),
  volumeTypeId: positiveInt("the integer id of a volume type (see getVolumeSizes)"),
  sizeGb: positiveInt("a whole number of GB offered by the volume type (see getVolumeSizes)"),
  // A ResourceGroup's `id` (the team id as text) or `teamId`.
  teamId: teamIdInput.optional(),
  adopt: z.boolean().optional(),
});
export type VolumeInputs = z.output<typeof VolumeInputs>;

const diffSpec: DiffSpec = {
  inPlace: ["sizeGb"],
  // The API has no volume update route: everything but the size is fixed at creation, teamId included.
  replaceOnChanges: ["name", "datacenterId", "volumeTypeId", "teamId"],
  ignored: ["adopt"],
  // Names are unique: a replacement keeping its name must delete the old volume first.
  deleteBeforeReplace: (olds, news) => olds.name === news.name,
};

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
        `sizeGb: volumes cannot shrink (${before} GB → ${known.sizeGb} GB): keep sizeGb at ${before} or more, ` +
        "or give the volume a new name to replace it with a smaller one",
    });
  }
}

/**
 * Outputs: the inputs as given, overlaid with what the API reports about the volume itself. The attachment state
 * (status In-use, the VM) belongs to VolumeAttachment: kept out of here, attaching does not read as drift.
 */
function outputsOf(inputs: Props, volume: ApiVolume): Props {
  return {
    ...plainInputs(inputs),
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
  };
}

const getVolume = (id: string) => client().getVolume({ params: { id } });

/** Polls the volume until no job is running on it (bounded by cloudinfra:jobTimeoutMs). */
export function settledVolume(id: string, what: string): Promise<ApiVolume> {
  return pollUntil(
    () => getVolume(id),
    (volume) => !transitional.has(volume.status),
    (volume, timeoutMs) =>
      new Error(
        `${what}: volume "${volume.name}" (${id}) is still ${volume.status} after ${timeoutMs} ms; raise ` +
          "cloudinfra:jobTimeoutMs if the cloud is slow, then run `pulumi up` again",
      ),
  );
}

/**
 * The id of the volume size of `sizeGb` GB for this type in this data center (GET .../volume-sizes). The available
 * sizes need a request, so this is checked at create/update time rather than by `check`.
 */
async function sizeIdFor(datacenterId: string, volumeTypeId: number, sizeGb: number, above = 0): Promise<number> {
  let catalog;
  try {
    catalog = await client().volumeSizes({ params: { id: datacenterId } });
  } catch (error) {
    if (isNotFound(error)) throw new Error(`datacenterId: data center ${datacenterId} does not exist`);
    throw error;
  }
  const type = catalog.volumeTypes.find((t) => t.id === volumeTypeId);
  if (!type) {
    const types = catalog.volumeTypes.map((t) => `${t.id} (${t.name})`).join(", ");
    throw new Error(
      `volumeTypeId: volume type ${volumeTypeId} is not offered in data center ${datacenterId}; available: ${types}`,
    );
  }
  const size = type.availableSizes.find((s) => s.sizeGb === sizeGb);
  if (!size) {
    const offered = type.availableSizes.filter((s) => s.sizeGb > above).map((s) => s.sizeGb);
    throw new Error(
      `sizeGb: volume type ${type.name} has no ${sizeGb} GB size in data center ${datacenterId}; available sizes` +
        `${above > 0 ? ` above ${above} GB` : ""}: ${offered.length > 0 ? `${offered.join(", ")} GB` : "none"}`,
    );
  }
  return size.id;
}

async function findByName(name: string): Promise<ApiVolume | undefined> {
  for await (const volume of client().listAll("listVolumes", { search: name })) {
    if (volume.name === name) return volume;
  }
  return undefined;
}

/**
 * Takes over an existing volume of the program's name: its data center, type and resource group must match (they
 * cannot change); a smaller size is grown. `ours` marks a volume our own ambiguous create may have made.
 */
async function adopt(inputs: VolumeInputs, found: ApiVolume, ours: boolean): Promise<{ id: string; outs: Props }> {
  const what = `Adopting volume "${inputs.name}" (${found.id})`;
  if (found.status === "Deleting") throw new Error(`${what}: it is being deleted; choose another name`);
  const existing = await settledVolume(found.id, what);
  if (existing.status === "Error") {
    const message = `Volume "${inputs.name}" (${existing.id}) is in status Error: its creation failed`;
    if (ours) throw new ResourceInitError(message, existing.id, outputsOf(inputs, existing));
    throw new Error(`${message}. Delete it or choose another name`);
  }
  const mismatches: string[] = [];
  if (existing.datacenter.id !== inputs.datacenterId) mismatches.push("datacenterId");
  if (existing.volumeTypeId !== inputs.volumeTypeId) mismatches.push("volumeTypeId");
  if (inputs.teamId !== undefined && existing.teamId !== inputs.teamId) mismatches.push("teamId");
  if (mismatches.length > 0) {
    throw new Error(
      `Cannot adopt volume "${inputs.name}" (${existing.id}): its ${mismatches.join(", ")} differ from the program's ` +
        "and cannot change in place; rename one of them or align the program",
    );
  }
  return { id: existing.id, outs: await update(existing.id, outputsOf({}, existing), inputs) };
}

export async function create(inputs: VolumeInputs): Promise<{ id: string; outs: Props }> {
  const api = client();
  const volumeSizeId = await sizeIdFor(inputs.datacenterId, inputs.volumeTypeId, inputs.sizeGb);
  const body = {
    name: inputs.name,
    datacenterId: inputs.datacenterId,
    volumeTypeId: inputs.volumeTypeId,
    volumeSizeId,
    sizeGb: inputs.sizeGb,
    ...(inputs.teamId !== undefined ? { teamId: inputs.teamId } : {}),
  };
  return createUnique({
    what: `volume named "${inputs.name}"`,
    adopt: inputs.adopt,
    send: () => api.createVolume({ body }),
    findByName: () => findByName(inputs.name),
    takeOver: (existing, ambiguous) => adopt(inputs, existing, ambiguous),
    outputs: async (id) => outputsOf(inputs, await getVolume(id)),
    partialOutputs: async (id) => {
      const volume = await getVolume(id).catch(() => undefined);
      return volume ? outputsOf(inputs, volume) : { ...plainInputs(inputs), failed: true };
    },
  });
}

export async function read(id: string, props: Props): Promise<{ id: string; props: Props } | null> {
  try {
    return { id, props: outputsOf(props, await getVolume(id)) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/** Only the size changes in place: grown by a resize job with the matching size id; shrinking is refused. */
export async function update(id: string, _olds: Props, news: VolumeInputs): Promise<Props> {
  let volume = await getVolume(id);
  if (news.sizeGb !== volume.sizeGb) {
    if (news.sizeGb < volume.sizeGb) {
      throw new Error(
        `sizeGb: volume "${volume.name}" (${id}) is ${volume.sizeGb} GB and volumes cannot shrink (the program asks ` +
          `for ${news.sizeGb} GB): set sizeGb to ${volume.sizeGb} or more, or give the volume a new name to replace it`,
      );
    }
    const what = `Resizing volume "${volume.name}" to ${news.sizeGb} GB`;
    volume = await settledVolume(id, what);
    const newVolumeSizeId = await sizeIdFor(volume.datacenter.id, volume.volumeTypeId, news.sizeGb, volume.sizeGb);
    const job = await client().resizeVolume({ params: { id }, body: { newSizeGb: news.sizeGb, newVolumeSizeId } });
    await awaitJob(job.jobId, what);
    volume = await getVolume(id);
  }
  return outputsOf(news, volume);
}

/**
 * Deletes the volume once it is Available. Its VolumeAttachment depends on it, so Pulumi detaches it first; a job
 * still running on the volume is waited out (bounded by cloudinfra:jobTimeoutMs). A volume that stays attached with
 * no job running (attached outside the program) is given a short grace, then named in a clear error.
 */
export async function remove(id: string): Promise<void> {
  const api = client();
  const current = settings();
  const deadline = Date.now() + current.jobTimeoutMs;
  const attachedDeadline = Date.now() + Math.min(current.jobTimeoutMs, 60_000);
  for (;;) {
    let volume: ApiVolume;
    try {
      volume = await getVolume(id);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
    const deletable = volume.status === "Available" || (volume.status === "Error" && volume.virtualMachineId === null);
    if (deletable) {
      try {
        const job = await api.deleteVolume({ params: { id } });
        await awaitJob(job.jobId, `Deleting volume "${volume.name}"`);
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        // Something started on the volume meanwhile: look again.
        if (!isConflict(error)) throw error;
      }
    } else if (volume.status === "In-use" && Date.now() > attachedDeadline) {
      throw new Error(
        `Volume "${volume.name}" (${id}) is still attached to virtual machine ${volume.virtualMachineName ?? "?"} ` +
          `(${volume.virtualMachineId ?? "?"}): delete the VolumeAttachment that holds it, or detach it, then run ` +
          "the command again",
      );
    } else if (Date.now() > deadline) {
      throw new Error(
        `Volume "${volume.name}" (${id}) is still ${volume.status} after ${current.jobTimeoutMs} ms, and only an ` +
          "Available volume can be deleted; raise cloudinfra:jobTimeoutMs if the cloud is slow, then run the command again",
      );
    }
    await sleep(current.pollIntervalMs);
  }
}

/** A volume whose creation failed (status Error) cannot be repaired in place: the next `up` replaces it. */
function diff(olds: Props, news: Props): DiffResult {
  const result = diffInputs(olds, news, diffSpec);
  if (olds.failed !== true) return result;
  return {
    changes: true,
    replaces: [...result.replaces, "failed"],
    stables: result.stables,
    deleteBeforeReplace: result.deleteBeforeReplace || olds.name === news.name,
  };
}

export const volume: ResourceKind = {
  name: "Volume",
  check: (olds: Props, news: Props) =>
    checkInputs(VolumeInputs, news, (known, failures) => shrinkCheck(olds, known, failures)),
  diff: (_id: string, olds: Props, news: Props) => diff(olds, news),
  create: (inputs: Props) => create(inputs as VolumeInputs),
  read: (id: string, props: Props) => read(id, props),
  update: (id: string, olds: Props, news: Props) => update(id, olds, news as VolumeInputs),
  delete: (id: string) => remove(id),
};
