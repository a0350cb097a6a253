import { CodedError } from "../../client/error-codes";
import { CreateVmBody, type VmDetail } from "../../api";
import { ApiError, JobFailedError } from "../../client";
import { type HandlerContext, warnAbout } from "../context";
import { AMBIGUOUS_CREATE_SKEW_MS, lostAnswerResends, resendAfterFailedCreate, timesText } from "../create-recovery";
import { diffInputs } from "../diff";
import { codeOfCause, isNotFound, ResourceInitError, settledText } from "../errors";
import { awaitJob } from "../jobs";
import { bodyFrom } from "../kind";
import { plainInputs, type Props } from "../props";
import { diffSpec, type ObservedState, type VirtualMachineInputs } from "./declaration";
import { addressReader } from "./addresses";
import { remove } from "./delete";
import { comparable } from "./diff";
import { exposedKey, getVm, observe, outputsOf, settledVm } from "./observe";
import { update } from "./update";

/** The create request's body: one VM, no teamId when null (no group), each interface's `primary` as check filled it in. */
function createBody(inputs: VirtualMachineInputs): CreateVmBody {
  return bodyFrom(CreateVmBody, {
    ...inputs,
    numberOfInstances: 1,
    teamId: inputs.teamId ?? undefined,
    networkInterfaces: inputs.networkInterfaces?.map((n) => ({ networkId: n.networkId, primary: n.primary === true })),
  });
}

/**
 * VMs that may be the one a create request made, when its id is not known (names are not unique): same name, data
 * center and configuration, created within `windowMs` of `at` (the job's creation time on the API's clock), or at
 * `at` or later when `windowMs` is `"since"`.
 */
async function candidates(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  at: number,
  windowMs: number | "since",
): Promise<string[]> {
  const found: string[] = [];
  const query = {
    search: inputs.name,
    "filter[datacenterId]": inputs.datacenterId,
    "filter[configurationId]": inputs.configurationId,
  };
  for await (const vm of ctx.api.listAll("listVms", query)) {
    const created = Date.parse(vm.createdAt);
    const inWindow = windowMs === "since" ? created >= at : Math.abs(created - at) <= windowMs;
    if (vm.name === inputs.name && inWindow) found.push(vm.id);
  }
  return found;
}

/**
 * Records the VM that exists but did not become ready (its key is left out: a read fetches it later, when asked), with the code of
 * `cause` (the error that stopped it: a timeout, a cancel…), JOB_FAILED without one.
 */
async function failedCreate(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  id: string,
  message: string,
  cause?: unknown,
): Promise<never> {
  const observed = await getVm(ctx, id)
    .then((detail) => observe(ctx, detail))
    .catch(() => undefined);
  const failure = new ResourceInitError(
    message,
    id,
    observed ? outputsOf(inputs, observed, undefined) : plainInputs(inputs),
  ).codedBy(cause);
  // Found in status Error with no other cause (settled after a lost answer): its create job failed, unseen.
  throw cause === undefined && observed?.detail.status === "Error" ? failure.ofFailedJob() : failure;
}

/** Brings a freshly created VM to the declared power state and reads its outputs; failures keep its id. */
async function finishCreate(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  id: string,
): Promise<{ id: string; outs: ObservedState }> {
  // Its addresses are read soon (when the detail lacks them): with those of the VMs that completed with it.
  const release = addressReader(ctx.api).expect(id);
  try {
    let detail = await settledVm(ctx, id);
    if (detail.status === "Error") {
      return await failedCreate(ctx, inputs, id, `Creating VM "${inputs.name}" failed: the VM is in status Error`);
    }
    if (inputs.powerState === "stopped" && detail.status === "Running") {
      await ctx.api.stopVm({ params: { id } });
      detail = await getVm(ctx, id);
    }
    return { id, outs: outputsOf(inputs, await observe(ctx, detail), await exposedKey(ctx, id, inputs, {})) };
  } catch (error) {
    if (error instanceof ResourceInitError) throw error;
    return failedCreate(
      ctx,
      inputs,
      id,
      `VM "${inputs.name}" was created but not finished: ${(error as Error).message}`,
      error,
    );
  } finally {
    release();
  }
}

/**
 * A VM made by a create request whose answer was lost carries its request's moment on the API's clock as `createdAt`:
 * one created more than this before the request was sent (the API's clock, as the client's `clock` knows it) was there
 * before. The margin covers the API's own servers' clocks; a namesake made within it just before the request is taken
 * as the one it made, as a namesake made between the listing of what existed and the request was before the API's
 * clock was learnt.
 */
const CLOCK_MARGIN_MS = 1000;

/**
 * Sends the create request; an answer lost on the way (5xx, connection closed: the VM may have been made) is settled
 * by looking for the VM. Names are not unique, so a VM is ours when it has the name, data center and configuration
 * and was made since the first request was sent. Once a job this client started told the API's clock (the jobs of
 * the run's earlier creates: the networks a VM is on come first), "since" is read on the API's clock; until then the
 * VMs of that name are listed before the first request (so a replacement's namesake is not taken for it) and "since"
 * is this machine's clock give or take clock skew. None: nothing was made, and the request is sent again, each time
 * after that look, up to `cloudinfra:maxRetries` times; the last answer lost with still nothing made is an error
 * saying so. A VM found is finished (its job awaited through its status) and its id returned; the job, when the API
 * answered.
 */
async function sendCreate(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
): Promise<{ job: { id: string; createdAt: string } } | { id: string }> {
  const what = `VM "${inputs.name}"`;
  const before = ctx.api.clock.known ? undefined : new Set(await candidates(ctx, inputs, 0, "since"));
  const sentAt = Date.now();
  const earliest = ctx.api.clock.earliestAt(sentAt);
  const since = earliest !== undefined ? earliest - CLOCK_MARGIN_MS : sentAt - AMBIGUOUS_CREATE_SKEW_MS;
  const resends = lostAnswerResends(ctx);
  for (let attempt = 1; ; attempt++) {
    try {
      const jobs = await ctx.api.createVm({ body: createBody(inputs) });
      if (jobs.length !== 1)
        throw new CodedError("INVALID_RESPONSE", `Creating ${what}: expected one job, the API answered ${jobs.length}`);
      return { job: jobs[0] };
    } catch (error) {
      if (!(error instanceof ApiError && error.mayHaveSucceeded)) throw error;
      const checked =
        `VMs named "${inputs.name}" in data center ${inputs.datacenterId} with configuration ${inputs.configurationId}, ` +
        "created since the request was sent";
      let found: string[];
      try {
        found = (await candidates(ctx, inputs, since, "since")).filter((id) => !before?.has(id));
      } catch (lookup) {
        throw new CodedError(
          "OUTCOME_UNKNOWN",
          `Creating ${what} got no answer (${settledText(error)}), and looking for ${checked} failed too ` +
            `(${settledText(lookup)}): the VM may exist. Look for it before running \`pulumi up\` again (a VM the ` +
            "stack does not hold can be taken over with `adoptId`)",
          { cause: error },
        );
      }
      if (found.length === 1) return { id: found[0]! };
      if (found.length > 1) {
        throw new CodedError(
          "DUPLICATES_CREATED",
          `Creating ${what} got no answer (${settledText(error)}), and several ${checked} could be it: ` +
            `${found.join(", ")}. Delete the unwanted ones (or keep one and set \`adoptId\` to it), then run ` +
            "`pulumi up` again",
          { cause: error },
        );
      }
      if (attempt > resends) {
        throw new CodedError(
          "NOTHING_CHANGED",
          `Creating ${what} failed ${timesText(attempt)} without an answer (${settledText(error)}). No VM was made: there are no ` +
            `${checked}. The next \`pulumi up\` creates it`,
          { cause: error },
        );
      }
      warnAbout(
        ctx,
        what,
        `the create got no answer (${settledText(error)}) and there are no ${checked}: sending it again ` +
          `(resend ${attempt} of at most ${resends}: cloudinfra:maxRetries)`,
      );
    }
  }
}

/**
 * Takes over the VM `adoptId` names instead of creating one: once no job works on it, it must not be in status Error
 * nor differ from the program in what only a replacement changes; the rest (name, size, group, power) is converged as
 * by an update.
 */
async function adopt(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
  id: string,
): Promise<{ id: string; outs: ObservedState }> {
  let detail: VmDetail;
  try {
    detail = await settledVm(ctx, id);
  } catch (error) {
    if (isNotFound(error)) {
      throw new CodedError(
        "INPUT_INVALID",
        `adoptId: no VM ${id} is visible to these credentials; give the id of an existing VM, or remove \`adoptId\` ` +
          "to create one",
        { cause: error },
      );
    }
    throw error;
  }
  const found = `VM "${detail.virtualMachine.name}" (${id})`;
  if (detail.status === "Error") {
    throw new CodedError(
      "ADOPT_MISMATCH",
      `adoptId: ${found} is in status Error (its creation failed) and cannot be taken over; delete it and remove ` +
        "`adoptId` to create a new VM",
    );
  }
  const outs = outputsOf(inputs, await observe(ctx, detail), undefined);
  const given: Props = inputs;
  const { replaces } = diffInputs(comparable(outs), comparable(given), diffSpec);
  if (replaces.length > 0) {
    const differences = replaces.map((k) => `${k}: ${JSON.stringify(outs[k])} ≠ ${JSON.stringify(given[k])}`);
    throw new CodedError(
      "ADOPT_MISMATCH",
      `adoptId: ${found} differs from the program where only a new VM could follow it (${differences.join("; ")}): ` +
        "change the program to match it, or remove `adoptId` to create a new VM",
    );
  }
  warnAbout(ctx, `VM "${inputs.name}"`, `taking over ${found} (adoptId) instead of creating a VM`);
  return { id, outs: await update(ctx, id, outs, inputs) };
}

export async function create(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
): Promise<{ id: string; outs: ObservedState }> {
  if (inputs.adoptId !== undefined) return adopt(ctx, inputs, inputs.adoptId);
  // A create job that fails: the VM it left in status Error is deleted and the create sent once more.
  return resendAfterFailedCreate(
    ctx,
    `VM "${inputs.name}"`,
    () => createOnce(ctx, inputs),
    (id) => remove(ctx, id),
  );
}

async function createOnce(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
): Promise<{ id: string; outs: ObservedState }> {
  const sent = await sendCreate(ctx, inputs);
  if ("id" in sent) return finishCreate(ctx, inputs, sent.id);
  const { job } = sent;
  let id: string;
  try {
    const done = await awaitJob(ctx, job.id, `Creating VM "${inputs.name}"`);
    if (!done.resourceId)
      throw new CodedError("INVALID_RESPONSE", `Creating VM "${inputs.name}": job ${job.id} completed without a VM id`);
    id = done.resourceId;
  } catch (error) {
    // The VM exists whatever went wrong while waiting: find it to record it (no orphan).
    const failedId = error instanceof JobFailedError ? error.job.resourceId : null;
    const found = failedId
      ? [failedId]
      : await candidates(ctx, inputs, Date.parse(job.createdAt), 2_000).catch(() => []);
    const message = (error as Error).message;
    if (found.length === 1) return failedCreate(ctx, inputs, found[0], message, error);
    const note =
      found.length > 1
        ? ` VMs that may be it: ${found.join(", ")}; delete the one of job ${job.id}.`
        : ` Its VM could not be found (job ${job.id}).`;
    throw new CodedError(codeOfCause(error, "JOB_FAILED"), `${message}.${note}`, { cause: error });
  }
  return finishCreate(ctx, inputs, id);
}
