import { z } from "zod";
import { CodedError, raiseJobTimeout } from "../client/error-codes";
import { AttachVolumeBody, IdParams, type Volume as ApiVolume } from "../api";
import { ApiError, BatchedDeleter, batchedDeleterOf, JobFailedError, type CloudClient } from "../client";
import { type HandlerContext, warnAbout } from "./context";
import { isConflict, isNotFound } from "./errors";
import { awaitJob, resendAfterFailedJob, sleep } from "./jobs";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import type { Props } from "./props";
import { diffSpecOf, type InputFields } from "./fields";
import { settledVolume } from "./volume";
import { attachable } from "./preflight";

/** The attach request (`PUT /resource/volumes/{id}/attach`): the volume of its path, and its body's VM. */
export const VolumeAttachmentInputs = z.strictObject({ volumeId: IdParams.shape.id, ...AttachVolumeBody.shape });
export type VolumeAttachmentInputs = z.output<typeof VolumeAttachmentInputs>;
type VolumeAttachmentState = State<
  VolumeAttachmentInputs,
  typeof inputFields,
  z.output<typeof VolumeAttachmentOutputs>
>;

/** Both inputs replace the attachment; the volume reports the VM it is attached to. */
const inputFields = {
  volumeId: {
    change: "replace",
    reported: "documented",
    description:
      "The volume (UUID), e.g. `volume.id`. Changing it replaces the attachment (the new volume is attached first).",
    expects: "must be the UUID of a volume",
    output: "The attached volume (UUID).",
  },
  virtualMachineId: {
    change: "replace",
    reported: "documented",
    description:
      "The virtual machine (UUID), in the volume's data center (else the API refuses the attach, naming both data centers: this cannot be checked before a request is made). Changing it replaces the attachment: the volume is detached from the old VM before it is attached to the new one.",
    expects: "must be the UUID of a virtual machine",
    output: "The virtual machine (UUID).",
  },
} as const satisfies InputFields<VolumeAttachmentInputs>;

/** The id of an attachment: `<volumeId>:<virtualMachineId>` (the API has no attachment object of its own). */
export const attachmentId = (volumeId: string, virtualMachineId: string) => `${volumeId}:${virtualMachineId}`;

function parseId(id: string): { volumeId: string; virtualMachineId: string } {
  const [volumeId, virtualMachineId, ...rest] = id.split(":");
  if (!volumeId || !virtualMachineId || rest.length > 0) {
    throw new CodedError("ID_INVALID", `"${id}" is not a volume attachment id (<volumeId>:<virtualMachineId>)`);
  }
  return { volumeId, virtualMachineId };
}

/** Held: the volume is attached to that VM (or an attach, detach or resize job runs on it there). */
const heldBy = (volume: ApiVolume, virtualMachineId: string) =>
  volume.virtualMachineId === virtualMachineId && volume.status !== "Available";

/** Outputs: the volume as attached to the VM (the API has no attachment object of its own). */
function outputsOf(given: Props, volume: ApiVolume, virtualMachineId: string): VolumeAttachmentState {
  return stateOf(inputFields, given, {
    volumeId: volume.id,
    virtualMachineId,
    datacenterId: volume.datacenter.id,
    datacenterName: volume.datacenter.name,
    status: volume.status,
  });
}

async function volumeOrNull(ctx: HandlerContext, volumeId: string): Promise<ApiVolume | null> {
  try {
    return await ctx.api.getVolume({ params: { id: volumeId } });
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * Attaches the volume to the VM and waits for the job. When the volume is already attached to that VM (attached by
 * hand, or by an earlier run whose record was lost) the attachment is simply taken over: no request is sent.
 */
async function attach(
  ctx: HandlerContext,
  inputs: VolumeAttachmentInputs,
  attempt = 1,
  resendAfter = resendAfterFailedJob(ctx, attachmentId(inputs.volumeId, inputs.virtualMachineId), "attach"),
): Promise<VolumeAttachmentState> {
  const { volumeId, virtualMachineId } = inputs;
  const what = `Attaching volume ${volumeId} to virtual machine ${virtualMachineId}`;
  let volume: ApiVolume;
  try {
    volume = await settledVolume(ctx, volumeId, what);
  } catch (error) {
    if (isNotFound(error))
      throw new CodedError("INPUT_INVALID", `${what}: volumeId: volume ${volumeId} does not exist`, { cause: error });
    throw error;
  }
  if (heldBy(volume, virtualMachineId)) return outputsOf(inputs, volume, virtualMachineId);
  if (volume.virtualMachineId !== null) {
    throw new CodedError(
      "STATE_CONFLICT",
      `${what}: volume "${volume.name}" is attached to virtual machine ${volume.virtualMachineName ?? "?"} ` +
        `(${volume.virtualMachineId}), and a volume attaches to one VM at a time: detach it there first`,
    );
  }
  if (volume.status !== "Available") {
    throw new CodedError(
      "STATE_CONFLICT",
      `${what}: volume "${volume.name}" is ${volume.status}; only an Available volume can be attached`,
    );
  }
  let jobId: string;
  try {
    ({ jobId } = await ctx.api.attachVolume({ params: { id: volumeId }, body: bodyFrom(AttachVolumeBody, inputs) }));
  } catch (error) {
    // The API's 400 names both data centers when they differ; the 409s say which limit or status is in the way.
    if (error instanceof ApiError && error.status < 500 && !error.mayHaveSucceeded) {
      throw new CodedError("REQUEST_REFUSED", `${what} failed: ${error.apiMessage}`, { cause: error });
    }
    if (!(error instanceof ApiError && error.mayHaveSucceeded)) throw error;
    // The answer was lost: what the volume shows once its job ended says whether the attach took effect.
    const after = await settledVolume(ctx, volumeId, what);
    if (heldBy(after, virtualMachineId)) return outputsOf(inputs, after, virtualMachineId);
    // Nothing was attached: the attach is sent once more.
    if (attempt < 2) return attach(ctx, inputs, attempt + 1, resendAfter);
    throw new CodedError(
      "NOTHING_CHANGED",
      `${what} got no answer twice (${error.apiMessage}), and the volume is not attached to it: nothing was ` +
        "attached; the next `pulumi up` attaches it",
      { cause: error },
    );
  }
  try {
    await awaitJob(ctx, jobId, `Attaching volume "${volume.name}" to virtual machine ${virtualMachineId}`);
  } catch (error) {
    // A failed attach job leaves the volume Available with no VM: the volume is read first (attached to that VM all
    // the same: done, nothing sent), then the attach is sent once more.
    if (error instanceof JobFailedError) {
      const after = await settledVolume(ctx, volumeId, what);
      if (heldBy(after, virtualMachineId)) {
        warnAbout(ctx, what, `${error.message}; yet the volume is attached to it: done`);
        return outputsOf(inputs, after, virtualMachineId);
      }
    }
    if (resendAfter(error)) return attach(ctx, inputs, attempt, resendAfter);
    throw error;
  }
  return outputsOf(inputs, await ctx.api.getVolume({ params: { id: volumeId } }), virtualMachineId);
}

export async function create(
  ctx: HandlerContext,
  inputs: VolumeAttachmentInputs,
): Promise<{ id: string; outs: VolumeAttachmentState }> {
  // A failed attach job leaves the volume Available with no VM: nothing exists to record, so a plain error is right.
  const outs = await attach(ctx, inputs);
  return { id: attachmentId(inputs.volumeId, inputs.virtualMachineId), outs };
}

/** The attachment exists while the volume is attached to that VM; otherwise (detached, moved, deleted) it is gone. */
export async function read(
  ctx: HandlerContext,
  id: string,
): Promise<{ id: string; props: VolumeAttachmentState } | null> {
  const { volumeId, virtualMachineId } = parseId(id);
  const volume = await volumeOrNull(ctx, volumeId);
  if (!volume || !heldBy(volume, virtualMachineId)) return null;
  // Read from the id and the volume alone: every output is reported (nothing else is kept).
  return { id, props: outputsOf({}, volume, virtualMachineId) };
}

/** Nothing changes in place; an update (after a failed run) makes sure the volume is attached again. */
export async function update(
  ctx: HandlerContext,
  id: string,
  _olds: Props,
  news: VolumeAttachmentInputs,
): Promise<VolumeAttachmentState> {
  const { volumeId, virtualMachineId } = parseId(id);
  if (volumeId !== news.volumeId || virtualMachineId !== news.virtualMachineId) {
    throw new CodedError(
      "INTERNAL_ERROR",
      `Volume attachment ${id} cannot be changed in place to ${attachmentId(news.volumeId, news.virtualMachineId)}`,
    );
  }
  return attach(ctx, news);
}

/**
 * Detaches gathered into `POST /resource/volumes/bulk/detach` (`ids` 1-50, a detach job per volume). Its answer's row
 * for a volume (when the answer has rows) says whether its detach started and with which job; a volume it refused,
 * a request that failed, or a detach alone in its batch goes the single way.
 */
const bulkDetacher = (api: CloudClient) =>
  batchedDeleterOf(
    api,
    "volumes/detach",
    () => new BatchedDeleter<string>(async (ids) => await api.bulkDetachVolumes({ body: { ids } })),
  );

/** Detaches and waits; a volume already detached, attached elsewhere, or gone, or a VM gone, is success. */
export async function remove(ctx: HandlerContext, id: string): Promise<void> {
  const { volumeId, virtualMachineId } = parseId(id);
  const current = ctx.settings;
  const deadline = Date.now() + current.jobTimeoutMs;
  const resendAfter = resendAfterFailedJob(ctx, id, "detach");
  let bulk = true;
  for (;;) {
    const volume = await volumeOrNull(ctx, volumeId);
    if (!volume || !heldBy(volume, virtualMachineId)) return;
    const what = `Detaching volume "${volume.name}" from virtual machine ${virtualMachineId}`;
    if (volume.status === "In-use" && bulk) {
      // Once: detaches arriving together go in one bulk request (the volume was read first, so a volume moved to
      // another VM is never detached there). Unconfirmed: the loop looks at the volume again.
      bulk = false;
      const outcome = await bulkDetacher(ctx.api).delete(volumeId);
      if (outcome.kind === "deleted" && outcome.jobId !== null) {
        try {
          await awaitJob(ctx, outcome.jobId, what);
          return;
        } catch (error) {
          // A detach job that failed leaves the volume attached: it is looked at (and detached singly) once more.
          if (!resendAfter(error)) throw error;
        }
      }
      if (outcome.kind !== "single") continue;
    }
    if (volume.status === "In-use") {
      try {
        const { jobId } = await ctx.api.detachVolume({ params: { id: volumeId } });
        await awaitJob(ctx, jobId, what);
        return;
      } catch (error) {
        if (isNotFound(error)) return;
        // Another job started on the volume meanwhile, or the answer was lost: look again. A detach job that failed
        // leaves the volume attached: it is looked at (and the detach sent) once more.
        if (!resendAfter(error) && !isConflict(error) && !(error instanceof ApiError && error.mayHaveSucceeded)) {
          throw error;
        }
      }
    } else if (Date.now() > deadline) {
      throw new CodedError(
        "JOB_TIMEOUT",
        `Volume "${volume.name}" (${volumeId}) is still ${volume.status} after ${current.jobTimeoutMs} ms; ` +
          raiseJobTimeout("run the command again"),
      );
    }
    await sleep(current.pollIntervalMs, ctx.signal);
  }
}

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const VolumeAttachmentOutputs = z.object({
  datacenterId: z.string().describe("Data center of the volume and VM (UUID)."),
  datacenterName: z.string().describe("Data center name, e.g. `fra-1`."),
  status: z
    .string()
    .describe("The volume's status: In-use once attached (Resizing or Detaching while such a job runs)."),
});

export const volumeAttachment = defineKind({
  name: "VolumeAttachment",
  description:
    "Attaches a volume to a virtual machine (an attach job; deleting it runs a detach job, and a volume already detached, or a VM or volume already gone, counts as deleted). The id is `<volumeId>:<virtualMachineId>`. Nothing changes in place. When the volume is already attached to that VM, the attachment is simply taken over: no `adopt` flag is needed. `refresh` drops the attachment when the volume is no longer attached to that VM.",
  inputs: { schema: VolumeAttachmentInputs, fields: inputFields },
  outputs: VolumeAttachmentOutputs,
  preflight: attachable,
  diffSpec: diffSpecOf(VolumeAttachmentInputs, inputFields, {
    // A volume is attached to one VM at a time: moving it to another VM must detach it first.
    deleteBeforeReplace: (olds, news) => olds.volumeId === news.volumeId,
  }),
  create,
  read,
  update,
  delete: (ctx, id) => remove(ctx, id),
});
