import { CodedError } from "../../client/error-codes";
import type { z } from "zod";
import type { UpdateVmBody, VmDetail } from "../../api";
import { ApiError } from "../../client";
import { type HandlerContext, warnAbout } from "../context";
import { changedInputs } from "../diff";
import { isConflict, ResourceInitError, settledText } from "../errors";
import { awaitJob } from "../jobs";
import { keptPrivateKey, type Props } from "../props";
import { diffSpec, type ObservedState, type VirtualMachineInputs } from "./declaration";
import { exposedKey, getVm, observe, outputsOf, powerStateOf, settledVm } from "./observe";
import { isSize, shrinkMessage, shrinks, sizeOf, sizeOfDetail } from "./sizes";

async function resize(ctx: HandlerContext, detail: VmDetail, news: VirtualMachineInputs, attempt = 1): Promise<void> {
  const vm = detail.virtualMachine;
  const target = news.configurationId;
  const to = isSize(news.configurationSize) ? news.configurationSize : await sizeOf(ctx, target);
  const shrinking = to ? shrinks(sizeOfDetail(vm), to) : [];
  const replaceHint =
    "; `allowReplaceOnShrink` is set, but the shrink was not known when the change was planned: run " +
    "`pulumi up --replace <urn of this VM>` to replace it";
  if (shrinking.length > 0) {
    throw new CodedError(
      "CANNOT_SHRINK",
      shrinkMessage(vm.configurationId, target, shrinking) + (news.allowReplaceOnShrink ? replaceHint : ""),
    );
  }
  let jobId: string;
  try {
    jobId = (await ctx.api.resizeVm({ params: { id: vm.id }, body: { configurationId: target } })).jobId;
  } catch (error) {
    if (error instanceof ApiError && error.mayHaveSucceeded) {
      // The answer was lost: the configuration the VM shows once no job runs on it says whether the resize took
      // effect. Not resized (the request was not carried out, or its job failed): sent once more, as an attach is.
      const after = await settledVm(ctx, vm.id);
      const still = after.virtualMachine.configurationId;
      if (still === target) return;
      if (attempt < 2) {
        warnAbout(
          ctx,
          `VM "${vm.name}"`,
          `the resize got no answer (${settledText(error)}) and the VM still has configuration ${still}: sending it again`,
        );
        return resize(ctx, after, news, attempt + 1);
      }
      throw new CodedError(
        "NOTHING_CHANGED",
        `Resizing VM "${vm.name}" to configuration ${target} got no answer twice (${settledText(error)}), and the VM ` +
          `still has configuration ${still}: nothing was resized; the next \`pulumi up\` resizes it`,
        { cause: error },
      );
    }
    if (error instanceof ApiError && error.status === 400) {
      throw new CodedError(
        "CANNOT_SHRINK",
        `configurationId: the API refused to resize VM "${vm.name}" from configuration ${vm.configurationId} ` +
          `(${vm.configuration}) to ${target}: ${error.apiMessage}. A VM can only grow in place: choose a ` +
          "configuration at least as large, or set `allowReplaceOnShrink: true`" +
          (news.allowReplaceOnShrink ? replaceHint : ""),
        { cause: error },
      );
    }
    throw error;
  }
  await awaitJob(ctx, jobId, `Resizing VM "${vm.name}" to configuration ${target}`);
}

async function setPower(ctx: HandlerContext, detail: VmDetail, wanted: "running" | "stopped"): Promise<void> {
  const id = detail.virtualMachine.id;
  const from = wanted === "running" ? "Stopped" : "Running";
  // A rescued VM runs its rescue image: running, as far as powerState goes.
  if (powerStateOf(detail.status) === wanted || (wanted === "running" && detail.status === "Rescued")) return;
  if (detail.status !== from) {
    throw new CodedError(
      "STATE_CONFLICT",
      `Cannot make VM "${detail.virtualMachine.name}" (${id}) ${wanted}: it is ${detail.status}, and only a ` +
        `${from} VM can be ${wanted === "running" ? "started" : "stopped"}` +
        (detail.status === "Rescued" ? "; end its rescue mode first" : ""),
    );
  }
  try {
    if (wanted === "running") await ctx.api.startVm({ params: { id } });
    else await ctx.api.stopVm({ params: { id } });
  } catch (error) {
    if (isConflict(error)) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `Cannot make VM "${detail.virtualMachine.name}" ${wanted}: ${(error as ApiError).apiMessage}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}

/**
 * Converges the live VM to the inputs, resize first: a refused resize (the last line against a shrink) then leaves
 * everything else untouched.
 */
export async function update(
  ctx: HandlerContext,
  id: string,
  olds: Props,
  news: VirtualMachineInputs,
): Promise<ObservedState> {
  const key = keptPrivateKey(news, olds);
  let detail = await settledVm(ctx, id);
  if (detail.status === "Error") {
    throw new ResourceInitError(
      `VM "${detail.virtualMachine.name}" (${id}) is in status Error (its creation failed); the next \`pulumi up\` ` +
        "replaces it",
      id,
      outputsOf(news, await observe(ctx, detail), key),
    );
  }
  if (news.configurationId !== detail.virtualMachine.configurationId) {
    await resize(ctx, detail, news);
    detail = await getVm(ctx, id);
  }
  // The members of the update request's body that differ from the VM.
  const body: Partial<z.output<typeof UpdateVmBody>> = {};
  if (news.name !== detail.virtualMachine.name) body.name = news.name;
  const teamId = news.teamId ?? null;
  if (teamId !== detail.virtualMachine.teamId) body.teamId = teamId;
  if (Object.keys(body).length > 0) {
    // The answer of the update is not shown by the spec: the VM is read again.
    await ctx.api.updateVm({ params: { id }, body });
    detail = await getVm(ctx, id);
  }
  const wasRunning = detail.status === "Running";
  if (news.powerState) {
    await setPower(ctx, detail, news.powerState);
    detail = await getVm(ctx, id);
  }
  if (changedInputs(olds, news, diffSpec).includes("resetTrigger")) {
    await reset(ctx, detail, wasRunning);
    detail = await getVm(ctx, id);
  }
  return outputsOf(news, await observe(ctx, detail), await exposedKey(ctx, id, news, olds));
}

/**
 * The hard reset a changed `resetTrigger` asks for: a running VM is power-cycled; a VM started or stopped by this
 * same update, or stopped, has nothing to reset (a warning says so).
 */
async function reset(ctx: HandlerContext, detail: VmDetail, wasRunning: boolean): Promise<void> {
  const { id, name } = detail.virtualMachine;
  if (detail.status !== "Running" || !wasRunning) {
    if (detail.status === "Running" || detail.status === "Stopped") {
      warnAbout(
        ctx,
        `VM "${name}"`,
        `resetTrigger changed, but the VM was ${wasRunning ? "stopped" : "started"} by this update (or is stopped): not reset`,
      );
      return;
    }
    throw new CodedError(
      "STATE_CONFLICT",
      `resetTrigger changed, but VM "${name}" (${id}) is ${detail.status}: only a Running VM can be reset` +
        (detail.status === "Rescued" ? "; end its rescue mode first" : ""),
    );
  }
  try {
    await ctx.api.resetVm({ params: { id } });
  } catch (error) {
    if (isConflict(error)) {
      throw new CodedError(
        "REQUEST_REFUSED",
        `Cannot reset VM "${name}" (resetTrigger changed): ${(error as ApiError).apiMessage}`,
        {
          cause: error,
        },
      );
    }
    throw error;
  }
}
