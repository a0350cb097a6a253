import { z } from "zod";
import { CodedError } from "../../client/error-codes";
import { RescueBody } from "../../api";
import { ApiError, type CloudClient } from "../../client";
import type { CheckResult } from "../check";
import type { HandlerContext } from "../context";
import { ResourceInitError } from "../errors";
import { awaitJob } from "../jobs";
import type { Props } from "../props";
import { create } from "./create";
import type { ObservedState, VirtualMachineInputs, VirtualMachineState } from "./declaration";
import { settledVm } from "./observe";
import { read } from "./read";

type Rescue = NonNullable<VirtualMachineInputs["rescue"]>;
type RescueStatus = Awaited<ReturnType<CloudClient["getRescue"]>>;

/** Where the rescue stands: read only when the VM's status says it is (or is getting) rescued. */
async function rescueOf(ctx: HandlerContext, id: string, status: unknown): Promise<RescueStatus> {
  if (status !== "Rescued" && status !== "Rescuing" && status !== "Unrescuing") return { rescued: false, image: null };
  return ctx.api.getRescue({ params: { id } });
}

/** The `sourceType` `given` (the inputs, or the outputs on a read) declares; the API does not report it. */
const declaredSourceType = (given: Props) =>
  z.object({ sourceType: RescueBody.shape.sourceType }).safeParse(given.rescue).data?.sourceType;

/**
 * The outputs with the rescue as the API reports it: `rescued`, `rescueImage`, and `rescue` (the image as the input
 * names it; the API does not say whether it came from the catalog: the program's `sourceType` is kept, else catalog).
 * A rescued VM counts as running.
 */
export async function withRescue(
  ctx: HandlerContext,
  id: string,
  given: Props,
  outs: ObservedState,
): Promise<VirtualMachineState> {
  const status = await rescueOf(ctx, id, outs.status);
  return {
    ...outs,
    powerState: outs.status === "Rescued" ? "running" : outs.powerState,
    rescued: status.rescued,
    rescueImage: status.image,
    rescue: status.image
      ? { sourceType: declaredSourceType(given) ?? "catalog", sourceImageId: status.image.id }
      : undefined,
  };
}

/** Enters, leaves or changes the rescue to match `wanted` (a changed image: leave, then enter), each job awaited. */
export async function convergeRescue(ctx: HandlerContext, id: string, wanted: Rescue | undefined): Promise<void> {
  const detail = await settledVm(ctx, id);
  const name = `VM "${detail.virtualMachine.name}"`;
  const current = await rescueOf(ctx, id, detail.status);
  const same = current.rescued && wanted !== undefined && current.image?.id === wanted.sourceImageId;
  if (same || (!current.rescued && wanted === undefined)) return;
  const refused = (what: string) => (error: unknown) => {
    if (error instanceof ApiError && error.status < 500) {
      throw new CodedError("REQUEST_REFUSED", `rescue: ${what} ${name} (${id}) was refused: ${error.apiMessage}`, {
        cause: error,
      });
    }
    throw error;
  };
  if (current.rescued) {
    const { jobId } = await ctx.api.unrescueVm({ params: { id } }).catch(refused("ending the rescue of"));
    await awaitJob(ctx, jobId, `Ending the rescue of ${name}`);
  }
  if (wanted !== undefined) {
    const { jobId } = await ctx.api
      .rescueVm({ params: { id }, body: wanted })
      .catch(refused(`rescuing (image ${wanted.sourceImageId})`));
    await awaitJob(ctx, jobId, `Rescuing ${name} with image ${wanted.sourceImageId}`);
  }
}

/** `rescue` with `powerState: "stopped"`: a rescued VM runs its rescue image, so it cannot be stopped. */
export function rescueChecks(news: Props, result: CheckResult<Props>): CheckResult<Props> {
  if (news.rescue !== undefined && news.rescue !== null && news.powerState === "stopped") {
    result.failures.push({
      property: "rescue",
      reason:
        'cannot go with powerState "stopped": a VM in rescue mode runs its rescue image. Remove powerState (or set ' +
        '"running") while the VM is rescued, or remove rescue to stop it',
    });
  }
  return result;
}

/** Creates the VM, then enters the rescue asked for; the VM is recorded even when the rescue fails. */
export async function createWithRescue(
  ctx: HandlerContext,
  inputs: VirtualMachineInputs,
): Promise<{ id: string; outs: VirtualMachineState }> {
  const created = await create(ctx, inputs);
  if (inputs.rescue === undefined) return { ...created, outs: await withRescue(ctx, created.id, inputs, created.outs) };
  try {
    await convergeRescue(ctx, created.id, inputs.rescue);
    const found = await read(ctx, created.id, created.outs);
    return { ...created, outs: await withRescue(ctx, created.id, inputs, found?.props ?? created.outs) };
  } catch (error) {
    throw new ResourceInitError(
      `VM "${inputs.name}" (${created.id}) was created but did not enter rescue mode: ${(error as Error).message}; ` +
        "the next `pulumi up` tries again",
      created.id,
      { ...created.outs, rescued: false, rescueImage: null, rescue: undefined },
    );
  }
}
