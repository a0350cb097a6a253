import { ApiError } from "../client";
import { CodedError } from "../client/error-codes";
import { warnAbout, type HandlerContext } from "./context";
import { isConflict, ResourceInitError, settledText } from "./errors";
import { awaitJob, sleep } from "./jobs";
import type { Props } from "./props";

/**
 * After an ambiguous create (the request may have reached the server but the answer was lost), a record of the same
 * unique name is taken as the one that request made when it was created after the request was sent, give or take
 * this much clock skew; an older one was there before and needs `adopt: true`.
 */
export const AMBIGUOUS_CREATE_SKEW_MS = 2 * 60_000;

/**
 * How many times a create whose answer was lost, and which made nothing (checked first each time), is sent again:
 * `cloudinfra:maxRetries`, at least once (a single resend was always made, whatever the setting).
 */
export function lostAnswerResends(ctx: HandlerContext): number {
  return Math.max(1, ctx.settings.maxRetries);
}

/** `twice`, `3 times`: how many times a request was sent, for messages. */
export const timesText = (sent: number) => (sent === 1 ? "once" : sent === 2 ? "twice" : `${sent} times`);

/**
 * Runs `attempt`, retrying it while it fails with 409 for a short bounded time, then rethrows the 409: another
 * resource of the same deployment may be giving the name up right now (renames and deletes run concurrently).
 */
export async function retryOnConflict<T>(ctx: HandlerContext, attempt: () => Promise<T>): Promise<T> {
  const current = ctx.settings;
  const deadline = Date.now() + Math.min(current.jobTimeoutMs, 10_000);
  const pause = Math.max(100, Math.min(current.pollIntervalMs, 1000));
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (!isConflict(error) || Date.now() + pause > deadline) throw error;
    }
    await sleep(pause, ctx.signal);
  }
}

export interface UniqueCreate<E extends { id: string | number; createdAt: string }, S extends Props = Props> {
  /** What is created, for messages: `network named "app"`. */
  what: string;
  /** The program's `adopt` input. */
  adopt: boolean | undefined;
  /** Sends the create request: the new id, and the job that creates it when the API answers with one. */
  send(): Promise<{ id: string; jobId?: string }>;
  /** While not adopting, a 409 is retried for a short time: the name may be being given up in the same run. */
  retryConflicts?: boolean;
  /** The existing resource of the same unique name, if any. */
  findByName(): Promise<E | undefined>;
  /** Takes an existing resource over; `ambiguous` when it is the one our own failed-looking request created. */
  takeOver(existing: E, ambiguous: boolean): Promise<{ id: string; outs: S }>;
  /** Outputs of the created resource once its job completed (it may finish setting it up, e.g. members). */
  outputs(id: string): Promise<S>;
  /** Best-known outputs of a resource that exists but did not become ready. */
  partialOutputs(id: string): Promise<Props>;
  /**
   * Deletes the record a failed create job left behind (and waits until it is gone), so that the create can be sent
   * once more; kinds without it record the failed resource at once.
   */
  removeFailed?(id: string): Promise<void>;
}

/**
 * Creates a resource whose name is unique in the API (and waits for its job, when there is one). A duplicate (409)
 * is adopted when the program says `adopt`, otherwise explained. An answer lost on the way (the request may have
 * been carried out) is resolved by the name: a resource of that name made since the request was sent is ours; none
 * means nothing was created, so the request is sent again (names are unique: it cannot make a second one), each
 * time after that check, up to `cloudinfra:maxRetries` times ({@link lostAnswerResends}); when the last answer is lost
 * too, the error says plainly that nothing was created. A create job that fails is, for kinds
 * that can remove what it left (`removeFailed`), answered once by deleting that record and sending the create again
 * (see {@link resendAfterFailedCreate}). A resource that exists but did not become ready (failed job, failed set-up) is
 * recorded with its id (ResourceInitError), never orphaned.
 */
export async function createUnique<E extends { id: string | number; createdAt: string }, S extends Props>(
  ctx: HandlerContext,
  spec: UniqueCreate<E, S>,
): Promise<{ id: string; outs: S }> {
  const once = () => createUniqueOnce(ctx, spec);
  return spec.removeFailed === undefined ? once() : resendAfterFailedCreate(ctx, spec.what, once, spec.removeFailed);
}

/**
 * Runs a create; when its job fails (a ResourceInitError caused by a failed job, naming the record it left), warns,
 * deletes that record with `removeFailed` and runs the create once more. A transient failure in the cloud (a host
 * that went away, a capacity blip) then costs no extra `up`, as the once-resends of failed delete, attach and detach
 * jobs do. When the record cannot be deleted, or the second create fails too, the failure is recorded as without the
 * resend: the resource with its id, which the next `up` replaces.
 */
export async function resendAfterFailedCreate<S extends Props>(
  ctx: HandlerContext,
  what: string,
  create: () => Promise<{ id: string; outs: S }>,
  removeFailed: (id: string) => Promise<void>,
): Promise<{ id: string; outs: S }> {
  try {
    return await create();
  } catch (error) {
    if (!(error instanceof ResourceInitError) || !error.jobFailed) throw error;
    warnAbout(ctx, what, `${error.message}; deleting what it left (${error.id}) and sending the create once more`);
    try {
      await removeFailed(error.id);
    } catch (removal) {
      throw new ResourceInitError(
        `${error.message}; deleting what it left (${error.id}) to send the create again failed too ` +
          `(${(removal as Error).message}); the next \`pulumi up\` replaces it`,
        error.id,
        error.properties,
      ).codedBy(removal);
    }
    return create();
  }
}

async function createUniqueOnce<E extends { id: string | number; createdAt: string }, S extends Props>(
  ctx: HandlerContext,
  spec: UniqueCreate<E, S>,
): Promise<{ id: string; outs: S }> {
  let created: { id: string; jobId?: string } | undefined;
  const resends = lostAnswerResends(ctx);
  for (let attempt = 1; created === undefined; attempt++) {
    const sentAt = Date.now();
    try {
      created = spec.retryConflicts && !spec.adopt ? await retryOnConflict(ctx, spec.send) : await spec.send();
    } catch (error) {
      const ambiguous = error instanceof ApiError && error.mayHaveSucceeded;
      if (!isConflict(error) && !ambiguous) throw error;
      const existing = await spec.findByName();
      if (existing) {
        const ours = ambiguous && Date.parse(existing.createdAt) >= sentAt - AMBIGUOUS_CREATE_SKEW_MS;
        if (spec.adopt || ours) return spec.takeOver(existing, ours);
        throw new CodedError(
          "NAME_TAKEN",
          `A ${spec.what} already exists (${existing.id}). Set \`adopt: true\` to manage it from this program, or ` +
            "choose another name",
        );
      }
      if (!ambiguous) {
        throw new CodedError(
          "NAME_TAKEN",
          `Cannot create the ${spec.what}: the API refused the name (${settledText(error)}), but no such resource is ` +
            "visible to these credentials; choose another name",
          { cause: error },
        );
      }
      if (attempt > resends) {
        throw new CodedError(
          "NOTHING_CHANGED",
          `Creating the ${spec.what} failed: ${settledText(error)} (sent ${timesText(attempt)}, no answer each time). No ` +
            "resource of that name exists, so nothing was created; the next `pulumi up` creates it",
          { cause: error },
        );
      }
      warnAbout(
        ctx,
        spec.what,
        `the create got no answer (${settledText(error)}) and no resource of that name exists: sending it again ` +
          `(resend ${attempt} of at most ${resends}: cloudinfra:maxRetries)`,
      );
    }
  }
  const id = created.id;
  try {
    if (created.jobId !== undefined) await awaitJob(ctx, created.jobId, `Creating ${spec.what}`);
    return { id, outs: await spec.outputs(id) };
  } catch (error) {
    if (error instanceof ResourceInitError) throw error;
    throw new ResourceInitError((error as Error).message, id, await spec.partialOutputs(id)).codedBy(error);
  }
}
