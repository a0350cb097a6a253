import { z } from "zod";
import { CodedError, raiseJobTimeout } from "../client/error-codes";
import { CreateGpuBody, type GpuInventoryEntry, type GpuVm, type UpdateGpuBody } from "../api";
import { ApiError } from "../client";
import type { CheckFailure } from "./check";
import { lostAnswerResends, resendAfterFailedCreate, timesText } from "./create-recovery";
import { type HandlerContext, progressAbout, warnAbout } from "./context";
import { changedInputs } from "./diff";
import { isConflict, isNotFound, ResourceInitError, settledText } from "./errors";
import { awaitJob, goneAfterFailedJob, pollUntil, resendAfterFailedJob, sleep } from "./jobs";
import { bodyFrom, defineKind, stateOf, type State } from "./kind";
import { exposedPrivateKey, keptPrivateKey, plainInputs, type Props } from "./props";
import { diffSpecOf, type InputFields } from "./fields";
import { teamIdInput } from "./resource-group";
import { gpuChecks } from "./preflight";

/**
 * The create request's body (`POST /resource/gpu`), with what a program has beyond it: `teamId` also
 * takes a ResourceGroup's `id`, the power state, and what steers the provider (delete, key, reset).
 */
export const GpuVirtualMachineInputs = CreateGpuBody.pick({
  name: true,
  datacenterId: true,
  seriesId: true,
  gpuCount: true,
})
  .extend({
    teamId: teamIdInput.optional(),
    powerState: z.enum(["running", "stopped"], { error: 'must be "running" or "stopped"' }).optional(),
    // Trimmed first (the program's), then the contract's rule.
    imageName: z.string().trim().pipe(CreateGpuBody.shape.imageName.unwrap()).optional(),
    imageId: CreateGpuBody.shape.imageId,
    shutdownBeforeDelete: z.boolean({ error: "must be true or false" }).optional(),
    exposePrivateKey: z.boolean({ error: "must be true or false" }).optional(),
    resetTrigger: z.string({ error: "must be a string (any text: changing it resets the GPU VM)" }).optional(),
  })
  .strict();
export type GpuVirtualMachineInputs = z.output<typeof GpuVirtualMachineInputs>;
export type GpuVirtualMachineState = State<
  GpuVirtualMachineInputs,
  typeof inputFields,
  z.output<typeof GpuVirtualMachineOutputs>
>;

/**
 * How each input changes and what the API reports of it. The documented GPU VM detail has no image: `imageName` is
 * read when the API sends it, `imageId` never.
 */
const inputFields = {
  name: {
    change: "inPlace",
    reported: "documented",
    description: "Display name. Not unique: GPU VMs cannot be adopted by name. Changed in place.",
    output: "Display name.",
  },
  datacenterId: {
    change: "replace",
    reported: "documented",
    expects: "must be the UUID of a data center",
    description:
      "Data center (UUID); the series and GPU count must be available there (see `getGpuInventory`). Changing it replaces the GPU VM.",
    output: "Data center (UUID).",
  },
  seriesId: {
    change: "replace",
    reported: "documented",
    expects: "must be the integer id of a GPU series (see getGpuInventory)",
    description: "GPU series id (an inventory entry's `seriesId`). Changing it replaces the GPU VM.",
    output: "GPU series id.",
  },
  gpuCount: {
    change: "replace",
    reported: "documented",
    expects: "must be 1, 2, 4 or 8",
    description:
      "Number of GPUs: 1, 2, 4 or 8. When the combination is not available in the data center, create fails with the combinations available now. Changing it replaces the GPU VM.",
    output: "Number of GPUs.",
    // The API reports the count as a number: one this program cannot ask for still shows, as drift.
    reportedType: z.number().int(),
  },
  // Removing teamId from the program takes the GPU VM out of its resource group (PUT teamId: null).
  teamId: {
    change: "inPlace",
    reported: "documented",
    clearable: true,
    description:
      "Resource group: the integer team id, or a ResourceGroup's `id` (the same number as a string). Default: none. Changed in place; removing it takes the GPU VM out of its group.",
    output: "Resource group (integer team id), null when none.",
    reportedType: z.number().int().nullable(),
  },
  powerState: {
    change: "inPlace",
    reported: "documented",
    description:
      "`running` or `stopped`; the provider starts or stops the GPU VM to match. Default: no opinion (a new GPU VM runs, and later power changes are left alone). Some series cannot be started by the cloud provider (the API answers 501): `running` then fails with an error saying so. Changed in place.",
    output: "`running` or `stopped` as the API reports it; undefined in other statuses (Creating, Deleting, Error).",
  },
  imageName: {
    change: "replace",
    reported: "undocumented",
    description:
      "Image by name, e.g. `ubuntu-24.04`; give this or `imageId`, not both. Default: the cloud's default image. Changing it replaces the GPU VM.",
    output: "Image name reported by the API.",
  },
  imageId: {
    change: "replace",
    reported: "never",
    expects: "must be the integer id of an image",
    description:
      "Image by integer id; give this or `imageName`, not both. Default: the cloud's default image. Changing it replaces the GPU VM.",
    output: "Image id, as given in the program (the API does not report it).",
  },
  // Recorded by an update without a request, so that a delete (which sees the recorded outputs) follows the program.
  shutdownBeforeDelete: {
    change: "inPlace",
    reported: "never",
    description:
      "Stop the GPU VM before deleting it (on destroy, and when a replacement deletes the old one): a stop, then reads until the API reports it Stopped (bounded by `cloudinfra:jobTimeoutMs`), then the delete. One already stopped is deleted at once; one that does not stop in time is not deleted and the delete fails naming this setting. Default false. Changed in place without a request.",
    output: "`shutdownBeforeDelete` as given at the last create or update: what a delete follows.",
  },
  // Read by the provider only (never sent): removing it from the program drops the key, as `false` does.
  exposePrivateKey: {
    change: "inPlace",
    reported: "never",
    clearable: true,
    description:
      "Read the private SSH key the cloud generated at creation into the secret output `sshPrivateKey` (one request, once: the key is then kept). Default false: the key is not read and `sshPrivateKey` is absent. Changed in place, never a replacement: set to true on an existing GPU VM, the next `pulumi up` reads the key; set to false or removed, it drops the key from the outputs without reading it.",
    output: "`exposePrivateKey` as given at the last create or update: whether `sshPrivateKey` is held.",
  },
  resetTrigger: {
    change: "inPlace",
    reported: "never",
    description:
      "Any text; changing it hard-resets the GPU VM (`POST .../reset`) in place: same GPU VM, same id. The first create does not reset, nor does an update that starts or stops it; a stopped one is not reset (a warning says so). Default none.",
    output: "`resetTrigger` as given at the last create or update.",
  },
} as const satisfies InputFields<GpuVirtualMachineInputs>;

// GPU VM names are not unique: a replacement is created before the old one is deleted.
// A GPU VM in status Error (its creation failed) cannot be repaired in place: the next `up` replaces it.
const diffSpec = diffSpecOf(GpuVirtualMachineInputs, inputFields, {
  failed: (olds) => (olds.status === "Error" ? "status" : undefined),
});

/** Statuses during which the API refuses power operations and deletes until a job ends. */
const transitional = new Set(["Creating", "Deleting"]);

function crossChecks(known: Partial<GpuVirtualMachineInputs>, failures: CheckFailure[]): void {
  if (known.imageName !== undefined && known.imageId !== undefined) {
    failures.push({
      property: "imageId",
      reason: "imageName names the image too: give only one of the two",
    });
  }
}

function powerStateOf(status: string): "running" | "stopped" | undefined {
  if (status === "Running") return "running";
  if (status === "Stopped") return "stopped";
  return undefined;
}

/** Outputs: the inputs as given, overlaid with everything the API reports (and the SSH key, when exposed). */
export function outputsOf(given: Props, gpu: GpuVm, sshPrivateKey?: string): GpuVirtualMachineState {
  return stateOf(inputFields, given, {
    name: gpu.name,
    datacenterId: gpu.datacenter.id,
    seriesId: gpu.series.id,
    gpuCount: gpu.gpuCount,
    teamId: gpu.teamId,
    imageName: gpu.imageName ?? undefined,
    powerState: powerStateOf(gpu.status),
    status: gpu.status,
    publicIp: gpu.publicIp,
    jupyterLabUrl: gpu.jupyterLabUrl,
    series: gpu.series,
    datacenter: gpu.datacenter,
    createdAt: gpu.createdAt,
    sshPrivateKey,
  });
}

/** The create request's body: the inputs it has a member for. */
const createBody = (inputs: GpuVirtualMachineInputs) => bodyFrom(CreateGpuBody, inputs);

async function getGpu(ctx: HandlerContext, id: string): Promise<GpuVm> {
  return ctx.api.getGpuVm({ params: { id } });
}

async function sshKeyOf(ctx: HandlerContext, id: string): Promise<string> {
  return (await ctx.api.getGpuSshKey({ params: { id } })).privateKey;
}

/** `sshPrivateKey` as the outputs hold it (see exposedPrivateKey). */
const exposedKey = (ctx: HandlerContext, id: string, wanted: Props, known: Props) =>
  exposedPrivateKey(wanted, known, () => sshKeyOf(ctx, id));

async function gpusNamed(ctx: HandlerContext, name: string): Promise<GpuVm[]> {
  const found: GpuVm[] = [];
  for await (const gpu of ctx.api.listAll("listGpuVms", { search: name })) if (gpu.name === name) found.push(gpu);
  return found;
}

/** "fra-1 × 1, fra-1 × 2, …" for the combinations of one series that can be ordered now. */
function describeAvailable(entry: GpuInventoryEntry | undefined): string[] {
  if (!entry) return [];
  return entry.availability.flatMap((a) =>
    (["1", "2", "4", "8"] as const).filter((n) => a.gpuCounts[n].available).map((n) => `${a.datacenterName} × ${n}`),
  );
}

/**
 * The 409 of a create: the combination cannot be ordered now. Says which ones can, from a fresh inventory call, or
 * from the 409's own `data.available` when the inventory cannot be read.
 */
async function unavailableError(
  ctx: HandlerContext,
  inputs: GpuVirtualMachineInputs,
  conflict: ApiError,
): Promise<Error> {
  let seriesName = `GPU series ${inputs.seriesId}`;
  let datacenterName = inputs.datacenterId;
  let available: string[];
  try {
    const inventory = await ctx.api.gpuInventory();
    const entry = inventory.find((s) => s.seriesId === inputs.seriesId);
    if (entry) seriesName = entry.seriesName;
    datacenterName =
      inventory.flatMap((s) => s.availability).find((a) => a.datacenterId === inputs.datacenterId)?.datacenterName ??
      datacenterName;
    available = describeAvailable(entry);
  } catch {
    const data = conflict.data as { available?: { datacenterId: string; datacenterName: string; gpuCount: number }[] };
    available = (data?.available ?? []).map((a) => `${a.datacenterName} × ${a.gpuCount}`);
    datacenterName =
      data?.available?.find((a) => a.datacenterId === inputs.datacenterId)?.datacenterName ?? datacenterName;
  }
  const choices =
    available.length > 0
      ? `Available now for ${seriesName}: ${available.join(", ")}. Set datacenterId and gpuCount to one of these`
      : `No ${seriesName} combination is available anywhere now. Choose another seriesId`;
  return new CodedError(
    "GPU_UNAVAILABLE",
    `Cannot create GPU VM "${inputs.name}": ${seriesName} with ${inputs.gpuCount} GPU(s) is not available in ` +
      `${datacenterName} now (the API answered 409: ${conflict.apiMessage}). ${choices} ` +
      "(getGpuInventory lists the current availability), or retry later.",
    { cause: conflict },
  );
}

/** Polls a GPU VM whose job id is unknown until it leaves Creating (bounded by cloudinfra:jobTimeoutMs). */
function settle(ctx: HandlerContext, id: string, what: string): Promise<GpuVm> {
  return pollUntil(
    ctx,
    () => getGpu(ctx, id),
    (gpu) => gpu.status !== "Creating",
    (_gpu, timeoutMs) =>
      new CodedError(
        "JOB_TIMEOUT",
        `${what} did not finish within ${timeoutMs} ms (GPU VM ${id} is still Creating); ` +
          raiseJobTimeout("run `pulumi refresh` and `pulumi up`"),
      ),
  );
}

/**
 * After a create whose outcome is unknown (the request may have reached the API): names are not unique, so the GPU
 * VM is ours only if it is the single new one with our name, data center, series and count.
 */
async function findCreated(
  ctx: HandlerContext,
  inputs: GpuVirtualMachineInputs,
  before: Set<string>,
): Promise<GpuVm | undefined> {
  const fresh = (await gpusNamed(ctx, inputs.name)).filter(
    (g) =>
      !before.has(g.id) &&
      g.datacenter.id === inputs.datacenterId &&
      g.series.id === inputs.seriesId &&
      g.gpuCount === inputs.gpuCount,
  );
  if (fresh.length > 1) {
    throw new CodedError(
      "DUPLICATES_CREATED",
      `Creating GPU VM "${inputs.name}" gave no clear answer, and ${fresh.length} new GPU VMs of that name now exist ` +
        `(${fresh.map((g) => g.id).join(", ")}); delete the ones you do not want, then run \`pulumi up\` again`,
    );
  }
  return fresh[0];
}

/** Brings power state and the other in-place properties to the program's; the 501 of start becomes a clear error. */
async function converge(ctx: HandlerContext, id: string, olds: Props, news: GpuVirtualMachineInputs): Promise<GpuVm> {
  const api = ctx.api;
  const changed = changedInputs(olds, news, diffSpec);
  // The members of the update request's body whose input changed; a teamId removed takes the GPU VM out of its group.
  const body: Partial<z.output<typeof UpdateGpuBody>> = {};
  if (changed.includes("name")) body.name = news.name;
  if (changed.includes("teamId")) body.teamId = news.teamId ?? null;
  // The answer of the update is not shown by the spec: the GPU VM is read again.
  if (Object.keys(body).length > 0) await api.updateGpuVm({ params: { id }, body });
  const gpu = await getGpu(ctx, id);
  if (news.powerState === undefined) return gpu;
  const wanted = news.powerState === "running" ? "Running" : "Stopped";
  if (gpu.status === wanted) return gpu;
  try {
    if (news.powerState === "running") await api.startGpuVm({ params: { id } });
    else await api.stopGpuVm({ params: { id } });
  } catch (error) {
    if (error instanceof ApiError && error.status === 501) {
      throw new ResourceInitError(
        `GPU VM "${gpu.name}" (${id}) is ${gpu.status} and the provider cannot start ${gpu.series.name} GPU VMs ` +
          `(the API answered 501: ${error.apiMessage}), so powerState "running" cannot be converged for it. Set ` +
          'powerState to "stopped" or remove it to accept the stopped VM, or replace the VM (a new one starts Running)',
        id,
        outputsOf(news, gpu, keptPrivateKey(news, olds)),
      );
    }
    if (isConflict(error)) {
      throw new ResourceInitError(
        `Cannot make GPU VM "${gpu.name}" (${id}) ${news.powerState}: it is ${gpu.status} ` +
          `(${(error as ApiError).apiMessage})`,
        id,
        outputsOf(news, gpu, keptPrivateKey(news, olds)),
      );
    }
    throw error;
  }
  return getGpu(ctx, id);
}

export function create(
  ctx: HandlerContext,
  inputs: GpuVirtualMachineInputs,
): Promise<{ id: string; outs: GpuVirtualMachineState }> {
  // A create job that fails: the GPU VM it left in status Error is deleted and the create sent once more.
  return resendAfterFailedCreate(
    ctx,
    `GPU VM "${inputs.name}"`,
    () => createOnce(ctx, inputs),
    (id) => remove(ctx, id),
  );
}

async function createOnce(
  ctx: HandlerContext,
  inputs: GpuVirtualMachineInputs,
): Promise<{ id: string; outs: GpuVirtualMachineState }> {
  const api = ctx.api;
  const what = `Creating GPU VM "${inputs.name}"`;
  // Known before the request, so that an ambiguous failure can tell our new GPU VM from existing ones of that name.
  const before = new Set((await gpusNamed(ctx, inputs.name)).map((g) => g.id));
  let created: { jobId: string; id: string } | undefined;
  let found: GpuVm | undefined;
  // An answer lost on the way (the GPU VM may have been made) is settled by looking for a new GPU VM of ours; none:
  // nothing was made, and the request is sent again (up to cloudinfra:maxRetries times, each after that look).
  const resends = lostAnswerResends(ctx);
  for (let attempt = 1; created === undefined && found === undefined; attempt++) {
    try {
      created = await api.createGpuVm({ body: createBody(inputs) });
    } catch (error) {
      if (isConflict(error)) throw await unavailableError(ctx, inputs, error as ApiError);
      if (!(error instanceof ApiError && error.mayHaveSucceeded)) throw error;
      const checked =
        `GPU VMs named "${inputs.name}" with series ${inputs.seriesId} × ${inputs.gpuCount} in data center ` +
        `${inputs.datacenterId} that were not there before the request`;
      found = await findCreated(ctx, inputs, before).catch((lookup: unknown) => {
        if (!(lookup instanceof ApiError)) throw lookup;
        throw new CodedError(
          "OUTCOME_UNKNOWN",
          `${what} got no answer (${settledText(error)}), and looking for ${checked} failed too ` +
            `(${settledText(lookup)}): the GPU VM may exist. Look for it before running \`pulumi up\` again`,
          { cause: error },
        );
      });
      if (found !== undefined) break;
      if (attempt > resends) {
        throw new CodedError(
          "NOTHING_CHANGED",
          `${what} failed ${timesText(attempt)} without an answer (${settledText(error)}). No GPU VM was made: there are no ` +
            `${checked}. The next \`pulumi up\` creates it`,
          { cause: error },
        );
      }
      warnAbout(
        ctx,
        `GPU VM "${inputs.name}"`,
        `the create got no answer (${settledText(error)}) and there are no ${checked}: sending it again ` +
          `(resend ${attempt} of at most ${resends}: cloudinfra:maxRetries)`,
      );
    }
  }
  if (created === undefined) {
    const id = found!.id;
    const gpu = await settle(ctx, id, what);
    if (gpu.status === "Error") {
      throw new ResourceInitError(
        `${what} failed: GPU VM ${id} is in status Error`,
        id,
        outputsOf(inputs, gpu),
      ).ofFailedJob();
    }
    return finish(ctx, id, gpu, inputs);
  }
  try {
    await awaitJob(ctx, created.jobId, what);
  } catch (error) {
    const failed = await getGpu(ctx, created.id).catch(() => undefined);
    throw new ResourceInitError(
      (error as Error).message,
      created.id,
      failed ? outputsOf(inputs, failed) : plainInputs(inputs),
    ).codedBy(error);
  }
  return finish(ctx, created.id, await getGpu(ctx, created.id), inputs);
}

/** A created GPU VM: its SSH key (with `exposePrivateKey`), then the power state the program asks for. */
async function finish(
  ctx: HandlerContext,
  id: string,
  gpu: GpuVm,
  inputs: GpuVirtualMachineInputs,
): Promise<{ id: string; outs: GpuVirtualMachineState }> {
  const sshPrivateKey = await exposedKey(ctx, id, inputs, {});
  const current =
    inputs.powerState === undefined ? gpu : await converge(ctx, id, outputsOf(inputs, gpu, sshPrivateKey), inputs);
  return { id, outs: outputsOf(inputs, current, sshPrivateKey) };
}

export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: GpuVirtualMachineState } | null> {
  try {
    const gpu = await getGpu(ctx, id);
    // The key never changes: keep the one from creation, fetch it only when the state has none (a failed create).
    // Without `exposePrivateKey` there is none: one an earlier version kept is dropped.
    const sshPrivateKey =
      gpu.status === "Error" ? keptPrivateKey(props, props) : await exposedKey(ctx, id, props, props);
    return { id, props: outputsOf(props, gpu, sshPrivateKey) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

export async function update(
  ctx: HandlerContext,
  id: string,
  olds: Props,
  news: GpuVirtualMachineInputs,
): Promise<GpuVirtualMachineState> {
  const resetting = changedInputs(olds, news, diffSpec).includes("resetTrigger");
  const wasRunning = resetting && (await getGpu(ctx, id)).status === "Running";
  let gpu = await converge(ctx, id, olds, news);
  if (resetting) gpu = await reset(ctx, gpu, wasRunning);
  return outputsOf(news, gpu, await exposedKey(ctx, id, news, olds));
}

/**
 * The hard reset a changed `resetTrigger` asks for: a running GPU VM is power-cycled; one started or stopped by this
 * same update, or stopped, has nothing to reset (a warning says so).
 */
async function reset(ctx: HandlerContext, gpu: GpuVm, wasRunning: boolean): Promise<GpuVm> {
  if (gpu.status !== "Running" || !wasRunning) {
    if (gpu.status === "Running" || gpu.status === "Stopped") {
      warnAbout(
        ctx,
        `GPU VM "${gpu.name}"`,
        "resetTrigger changed, but the GPU VM is stopped or was started by this update: not reset",
      );
      return gpu;
    }
    throw new CodedError(
      "STATE_CONFLICT",
      `resetTrigger changed, but GPU VM "${gpu.name}" (${gpu.id}) is ${gpu.status}: only a Running one can be reset`,
    );
  }
  try {
    await ctx.api.resetGpuVm({ params: { id: gpu.id } });
  } catch (error) {
    if (error instanceof ApiError && (error.status === 409 || error.status === 501)) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `Cannot reset GPU VM "${gpu.name}" (resetTrigger changed): ${error.apiMessage}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
  return getGpu(ctx, gpu.id);
}

/**
 * `shutdownBeforeDelete`: stops a running GPU VM and waits until the API reports it Stopped (bounded by
 * cloudinfra:jobTimeoutMs). A GPU VM already stopped, or in a status where it cannot be stopped, is deleted at once.
 */
async function shutDown(ctx: HandlerContext, id: string): Promise<void> {
  const gpu = await getGpu(ctx, id).catch((e: unknown) => (isNotFound(e) ? null : Promise.reject(e)));
  if (!gpu || gpu.status !== "Running") return;
  const what = `GPU VM "${gpu.name}"`;
  progressAbout(ctx, what, "shutdownBeforeDelete: stopping the GPU VM before deleting it");
  try {
    await ctx.api.stopGpuVm({ params: { id } });
  } catch (error) {
    if (isNotFound(error)) return;
    if (!isConflict(error)) throw error;
  }
  await pollUntil(
    ctx,
    () => getGpu(ctx, id),
    (current) => current.status === "Stopped",
    (current, timeoutMs) =>
      new CodedError(
        "JOB_TIMEOUT",
        `shutdownBeforeDelete: ${what} (${id}) was not Stopped within ${timeoutMs} ms (it is ${current.status}); it ` +
          "was not deleted. Raise cloudinfra:jobTimeoutMs, or set `shutdownBeforeDelete: false`, then run the command again",
      ),
  );
  progressAbout(ctx, what, "shutdownBeforeDelete: the GPU VM is stopped; deleting it");
}

/**
 * Deletes the GPU VM and waits; while a job of it runs (Creating, Deleting), waits for that first (bounded). With
 * `shutdownBeforeDelete` (as recorded in `props`) it is stopped first.
 */
export async function remove(ctx: HandlerContext, id: string, props: Props = {}): Promise<void> {
  if (props.shutdownBeforeDelete === true) await shutDown(ctx, id);
  const api = ctx.api;
  const current = ctx.settings;
  const deadline = Date.now() + current.jobTimeoutMs;
  // A delete job that failed leaves the GPU VM as it was (its previous status): the GPU VM is read first (gone:
  // deleted after all), then the delete is sent once more.
  const resendAfter = resendAfterFailedJob(ctx, `GPU VM ${id}`, "delete");
  for (;;) {
    let jobId: string;
    try {
      jobId = (await api.deleteGpuVm({ params: { id } })).jobId;
    } catch (error) {
      if (isNotFound(error)) return;
      if (!isConflict(error)) throw error;
      const gpu = await getGpu(ctx, id).catch((e: unknown) => (isNotFound(e) ? null : Promise.reject(e)));
      if (!gpu) return;
      if (!transitional.has(gpu.status) || Date.now() > deadline) {
        throw new CodedError(
          "STATE_CONFLICT",
          `GPU VM "${gpu.name}" (${id}) cannot be deleted now (status ${gpu.status})`,
          { cause: error },
        );
      }
      await sleep(current.pollIntervalMs, ctx.signal);
      continue;
    }
    try {
      await awaitJob(ctx, jobId, `Deleting GPU VM ${id}`);
      return;
    } catch (error) {
      if (await goneAfterFailedJob(ctx, error, `GPU VM ${id}`, () => getGpu(ctx, id))) return;
      if (!resendAfter(error)) throw error;
    }
  }
}

/** The outputs beyond the inputs (which the outputs carry too, as the API reports them). */
export const GpuVirtualMachineOutputs = z.object({
  status: z.string().describe("Status reported by the API: Creating, Running, Stopped, Deleting or Error."),
  publicIp: z.string().nullable().describe("Public IPv4 address, once provisioned."),
  jupyterLabUrl: z.string().nullable().describe("URL of the GPU VM's JupyterLab, once it has its public IP."),
  series: z
    .object({
      id: z.number().int().describe("Integer id of the series (the `seriesId` input)."),
      name: z.string().describe("Name of the series, e.g. NVIDIA A100."),
      code: z.string().describe("Short code of the series, e.g. a100."),
    })
    .describe("The GPU series: integer id, name and code."),
  datacenter: z
    .object({
      id: z.string().describe("Data center (UUID)."),
      name: z.string().describe("Data center name, e.g. fra-1."),
    })
    .describe("The data center: id and name."),
  sshPrivateKey: z
    .string()
    .optional()
    .describe("Private SSH key generated at creation (secret). Only with `exposePrivateKey: true`."),
  createdAt: z.string().describe("Creation time (ISO 8601)."),
});

export const gpuVirtualMachine = defineKind({
  name: "GpuVirtualMachine",
  description:
    "A GPU virtual machine. GPU VM names are not unique, so there is no adoption of existing GPU VMs: a program always creates its own. A GPU VM whose creation failed (status Error) is replaced by the next `up`.",
  inputs: { schema: GpuVirtualMachineInputs, fields: inputFields },
  outputs: GpuVirtualMachineOutputs,
  secretOutputs: ["sshPrivateKey"],
  exclusiveInputs: {
    what: "image",
    alternatives: [
      {
        input: "imageName",
        name: "GpuVirtualMachineImageByName",
        description: "The image of a GPU VM given by name (or not at all).",
      },
      { input: "imageId", name: "GpuVirtualMachineImageById", description: "The image of a GPU VM given by id." },
    ],
  },
  crossChecks,
  preflight: gpuChecks,
  diffSpec,
  create,
  read,
  update,
  delete: (ctx, id, props) => remove(ctx, id, props),
});
