import { CodedError } from "../../client/error-codes";
import type { VmDetail } from "../../api";
import type { ApiError } from "../../client";
import { type HandlerContext, progressAbout, warnAbout } from "../context";
import { isConflict, isNotFound } from "../errors";
import { awaitJob, goneAfterFailedJob, pollUntil, resendAfterFailedJob, sleep } from "../jobs";
import type { Props } from "../props";
import { getVm, settledVm } from "./observe";

/**
 * `shutdownBeforeDelete`: stops a running VM and waits until the API reports it Stopped (bounded by
 * cloudinfra:jobTimeoutMs), so that the delete finds it shut down. A VM already stopped, or in a status where it
 * cannot be stopped (Error), is deleted at once; a VM gone is left to the delete.
 */
async function shutDown(ctx: HandlerContext, id: string): Promise<void> {
  let detail: VmDetail;
  try {
    detail = await settledVm(ctx, id);
  } catch (error) {
    if (isNotFound(error)) return;
    throw error;
  }
  const what = `VM "${detail.virtualMachine.name}"`;
  if (detail.status !== "Running") {
    if (detail.status !== "Stopped") {
      warnAbout(
        ctx,
        what,
        `shutdownBeforeDelete: the VM is ${detail.status}, which cannot be stopped: deleting it as it is`,
      );
    }
    return;
  }
  progressAbout(ctx, what, "shutdownBeforeDelete: stopping the VM before deleting it");
  try {
    await ctx.api.stopVm({ params: { id } });
  } catch (error) {
    if (isNotFound(error)) return;
    if (!isConflict(error)) throw error; // stopped meanwhile: the wait below sees it
  }
  let polls = 0;
  await pollUntil(
    ctx,
    async () => {
      const current = await getVm(ctx, id);
      if (++polls % 5 === 0)
        progressAbout(ctx, what, `shutdownBeforeDelete: waiting for the VM to stop (${current.status})`);
      return current;
    },
    (current) => current.status === "Stopped",
    (current, timeoutMs) =>
      new CodedError(
        "JOB_TIMEOUT",
        `shutdownBeforeDelete: ${what} (${id}) was not Stopped within ${timeoutMs} ms (it is ${current.status}); it ` +
          "was not deleted. Raise cloudinfra:jobTimeoutMs if it shuts down slowly, or set `shutdownBeforeDelete: " +
          "false` to delete it without a shutdown, then run the command again",
      ),
  );
  progressAbout(ctx, what, "shutdownBeforeDelete: the VM is stopped; deleting it");
}

/**
 * Deletes the VM and waits for its job; while another job works on it, waits (bounded) and tries again. With
 * `shutdownBeforeDelete` (as recorded in `props`) the VM is stopped first.
 */
export async function remove(ctx: HandlerContext, id: string, props: Props = {}): Promise<void> {
  if (props.shutdownBeforeDelete === true) await shutDown(ctx, id);
  const current = ctx.settings;
  const deadline = Date.now() + current.jobTimeoutMs;
  // A delete job that failed leaves the VM as it was (its previous status): the VM is read first (gone: deleted after
  // all), then the delete is sent once more.
  const resendAfter = resendAfterFailedJob(ctx, `VM ${id}`, "delete");
  for (;;) {
    let jobId: string;
    try {
      jobId = (await ctx.api.deleteVm({ params: { id } })).jobId;
    } catch (error) {
      if (isNotFound(error)) return;
      if (!isConflict(error)) throw error;
      if (Date.now() > deadline) {
        throw new CodedError(
          "JOB_TIMEOUT",
          `VM ${id} could not be deleted within ${current.jobTimeoutMs} ms: ${(error as ApiError).apiMessage}`,
          { cause: error },
        );
      }
      await sleep(current.pollIntervalMs, ctx.signal);
      continue;
    }
    try {
      await awaitJob(ctx, jobId, `Deleting VM ${id}`);
      return;
    } catch (error) {
      if (await goneAfterFailedJob(ctx, error, `VM ${id}`, () => getVm(ctx, id))) return;
      if (!resendAfter(error)) throw error;
    }
  }
}
