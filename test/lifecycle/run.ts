/**
 * Plays the lifecycle table (table.ts) on one host. Every kind shares one stack per sequence, so each host operation
 * moves every kind at once; the operation runs in a `beforeAll` and each kind's part is its own case, so a kind that
 * fails does not hide the others (a case whose kind went wrong shows the operation's error).
 */
import { isDeepStrictEqual } from "node:util";
import { beforeAll, describe, expect, it } from "vitest";
import type { CloudClient } from "../../provider/client";
import type { LogEntry } from "../resources/helpers";
import {
  ADOPT_STEPS,
  FAILED_STEPS,
  MAIN_STEPS,
  OPERATION,
  type Bad,
  type Ctx,
  type Fixtures,
  type InState,
  type KindTable,
  type NotApplicable,
  type Op,
  type Program,
  type Refreshed,
  type Step,
  type StepName,
} from "./table";

/** What a host reports of one operation: the engine's operation per resource (up, destroy) and its error. */
export interface Outcome {
  ops: Record<string, Op>;
  /** Per replaced resource, the properties the replacement is for (the engine's replace keys). */
  replaces?: Record<string, string[]>;
  error?: string;
}

/** One stack on a host. */
export interface HostStack {
  up(program: Program): Promise<Outcome>;
  preview(program: Program): Promise<Outcome>;
  refresh(): Promise<Outcome>;
  destroy(): Promise<Outcome>;
  /** The resources the stack's state holds, by name. */
  state(): Promise<Record<string, InState>>;
}

/** What the runner needs of the test file's emulator. */
export interface LifecycleWorld {
  api: CloudClient;
  mark(): number;
  requests(mark?: number): Promise<LogEntry[]>;
  faults(spec: string): Promise<void>;
  accepted(secret: string): Promise<boolean>;
  datacenters: { id: string }[];
  emulator: {
    bootstrap: {
      fixtures: {
        configurations: { id: number; cpu: number; ram: number }[];
        gpuSeries: { id: number; code: string }[];
        rescueImages: { id: string }[];
      };
      users: { admin: { id: string } };
    };
  };
}

export interface HostOptions {
  /** Opens a fresh stack for a sequence (`main`, `failed`, `adopt`). */
  open(sequence: string): Promise<HostStack>;
  /** The host knows the provider only by its schema (YAML): a refusal names the properties, not the reasons. */
  schemaOnly?: boolean;
  /** Milliseconds for one step's operation. */
  timeout: number;
}

/** The table's fixtures read from the emulator. */
export async function lifecycleFixtures(world: LifecycleWorld): Promise<Fixtures> {
  const [fra, ams] = world.datacenters;
  const { configurations, gpuSeries, rescueImages } = world.emulator.bootstrap.fixtures;
  const a100 = gpuSeries.find((s) => s.code === "a100")!;
  const gpu = (await world.api.gpuInventory({ query: {} }))
    .filter((s) => s.seriesId === a100.id)
    .flatMap((s) =>
      s.availability
        .filter((a) => a.gpuCounts[1].available && a.gpuCounts[2].available)
        .map((a) => ({ seriesId: s.seriesId, datacenterId: a.datacenterId })),
    )[0]!;
  const ssd = (await world.api.volumeSizes({ params: { id: fra!.id } })).volumeTypes[0]!;
  const size = ({ id, cpu, ram }: { id: number; cpu: number; ram: number }) => ({ id, cpu, ram });
  return {
    fra: fra!.id,
    ams: ams!.id,
    small: size(configurations[0]!),
    medium: size(configurations[1]!),
    ssd: { id: ssd.id, sizeIds: Object.fromEntries(ssd.availableSizes.map((s) => [s.sizeGb, s.id])) },
    gpu,
    rescueImage: { id: rescueImages[0]!.id },
    keyOwner: world.emulator.bootstrap.users.admin.id,
  };
}

const notApplicable = (step: Step | NotApplicable | Bad | undefined): step is NotApplicable =>
  step !== undefined && "na" in step;

/** What one step left for its cases. */
interface Played {
  /** The error of the step's own set-up (API actions, faults), per kind. */
  setup: Record<string, string>;
  outcome: Outcome;
  /** Refresh: what each resource became. */
  refreshed: Record<string, Refreshed>;
  ctx: Omit<Ctx, "made">;
  /** The bad step: one preview per kind. */
  previews: Record<string, { outcome: Outcome; requests: LogEntry[]; state: Record<string, InState> }>;
}

const describeError = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The lifecycle table's cases on one host. */
export function describeLifecycle(world: LifecycleWorld, table: KindTable[], host: HostOptions): void {
  sequence(world, table, host, "main", MAIN_STEPS, (kind) => kind.main);
  sequence(world, table, host, "failed", FAILED_STEPS, (kind) => kind.failed);
  sequence(world, table, host, "adopt", ADOPT_STEPS, (kind) => kind.adopt);
}

function sequence(
  world: LifecycleWorld,
  table: KindTable[],
  host: HostOptions,
  name: string,
  steps: readonly StepName[],
  of: (kind: KindTable) => Record<string, Step | NotApplicable | Bad> | NotApplicable,
): void {
  const taking = table.filter((kind) => !notApplicable(of(kind)));
  const stepOf = (kind: KindTable, step: StepName) =>
    (of(kind) as Record<string, Step | NotApplicable | Bad>)[step] as Step | NotApplicable | Bad;

  describe(`${name} sequence`, () => {
    let stack: HostStack;
    const made: Record<string, string> = {};
    /** The program of each kind as last declared. */
    const declared: Record<string, Program> = {};
    let state: Record<string, InState> = {};
    const program = () => Object.assign({}, ...taking.map((kind) => declared[kind.kind])) as Program;

    beforeAll(async () => {
      stack = await host.open(name);
    }, host.timeout);

    for (const step of steps) {
      const operation = OPERATION[step];
      const played = {} as Played;

      describe(`${step} (${operation})`, () => {
        beforeAll(
          async () => {
            const prior = state;
            const setup: Record<string, string> = {};
            const ctx = (requests: LogEntry[], after: Record<string, InState>): Omit<Ctx, "made"> => ({
              api: world.api,
              state: after,
              prior,
              requests,
              accepted: (secret) => world.accepted(secret),
            });
            const faults: string[] = [];
            for (const kind of taking) {
              const found = stepOf(kind, step);
              if (notApplicable(found) || step === "bad") continue;
              const entry = found as Step;
              try {
                await entry.before?.({ ...ctx([], prior), made });
                if (entry.declare !== undefined) declared[kind.kind] = entry.declare(made);
                faults.push(...(entry.faults ?? []));
              } catch (error) {
                setup[kind.kind] = describeError(error);
              }
            }
            played.setup = setup;

            if (step === "bad") {
              played.previews = {};
              for (const kind of taking) {
                const bad = stepOf(kind, step) as Bad;
                const mark = world.mark();
                const outcome = await stack.preview({ ...program(), ...bad.declare(declared[kind.kind]!) });
                played.previews[kind.kind] = {
                  outcome,
                  requests: await world.requests(mark),
                  state: await stack.state(),
                };
              }
              played.ctx = ctx([], prior);
              return;
            }

            if (faults.length > 0) await world.faults(faults.join(";"));
            const mark = world.mark();
            let outcome: Outcome;
            try {
              outcome =
                operation === "up"
                  ? await stack.up(program())
                  : operation === "refresh"
                    ? await stack.refresh()
                    : operation === "destroy"
                      ? await stack.destroy()
                      : await stack.preview(program());
            } catch (error) {
              outcome = { ops: {}, error: describeError(error) };
            } finally {
              if (faults.length > 0) await world.faults("");
            }
            state = await stack.state();
            played.outcome = outcome;
            played.refreshed = Object.fromEntries(
              Object.entries(prior).map(([resource, before]) => {
                const after = state[resource];
                const found: Refreshed =
                  after === undefined ? "gone" : isDeepStrictEqual(after.outputs, before.outputs) ? "same" : "changed";
                return [resource, found];
              }),
            );
            played.ctx = { ...ctx(await world.requests(mark), state), error: outcome.error };
          },
          host.timeout * (step === "bad" ? taking.length : 1),
        );

        if (step !== "bad") {
          it("the operation ends as the table says", () => {
            const failing = taking.some((kind) => {
              const entry = stepOf(kind, step);
              return !notApplicable(entry) && (entry as Step).fails !== undefined;
            });
            if (failing) expect(played.outcome.error, "the operation was meant to fail").toBeDefined();
            else expect(played.outcome.error).toBeUndefined();
          });
        }

        for (const kind of table) {
          const entry = notApplicable(of(kind)) ? (of(kind) as NotApplicable) : stepOf(kind, step);
          if (notApplicable(entry) && name !== "main") {
            // The kind takes no part in this sequence (the table says why): its resource is not in the stack.
            it(`${kind.kind} — not applicable (${entry.na}): not in this stack`, () => {
              expect(played.outcome?.ops[kind.subject]).toBeUndefined();
              expect(played.ctx.state[kind.subject]).toBeUndefined();
            });
            continue;
          }
          const title = notApplicable(entry) ? `${kind.kind} — not applicable (${entry.na}): unaffected` : kind.kind;
          it(title, async () => {
            if (played.setup[kind.kind] !== undefined) {
              throw new Error(`the step's set-up failed: ${played.setup[kind.kind]}`);
            }
            if (step === "bad") return assertRefused(kind, entry as Bad, played, host.schemaOnly === true);
            const context = `${operation} ${played.outcome.error === undefined ? "succeeded" : `failed: ${played.outcome.error}`}`;
            if (notApplicable(entry)) {
              // the kind's resource stays as it is
              const found = operation === "refresh" ? played.refreshed[kind.subject] : played.outcome.ops[kind.subject];
              expect(found, context).toBe("same");
              return;
            }
            const expected = (entry as Step).ops ?? {};
            const actual = Object.fromEntries(
              Object.keys(expected).map((resource) => [
                resource,
                operation === "refresh" ? played.refreshed[resource] : (played.outcome.ops[resource] ?? "none"),
              ]),
            );
            expect(actual, context).toEqual(expected);
            for (const [resource, keys] of Object.entries((entry as Step).replaces ?? {})) {
              expect([...(played.outcome.replaces?.[resource] ?? [])].sort(), `${resource} replaced for`).toEqual(
                [...keys].sort(),
              );
            }
            for (const text of (entry as Step).fails ?? []) expect(played.outcome.error ?? "", context).toContain(text);
            await (entry as Step).api?.({ ...played.ctx, made });
          });
        }
      });
    }
  });
}

/** The bad step's case: refused at check naming each property, nothing sent, the state unchanged. */
function assertRefused(kind: KindTable, bad: Bad, played: Played, schemaOnly: boolean): void {
  const preview = played.previews[kind.kind]!;
  const message = preview.outcome.error;
  expect(message, "the preview was meant to fail").toBeDefined();
  for (const property of bad.properties) expect(message).toContain(property);
  if (!schemaOnly) for (const reason of bad.reasons) expect(message).toContain(reason);
  if (bad.hides !== undefined) expect(message).not.toContain(bad.hides);
  // only the credentials may have been checked, and reads made: nothing changed
  const sent = preview.requests.filter((r) => r.method !== "GET" && r.route !== "queryJobs").map((r) => r.route);
  expect(sent).toEqual([]);
  expect(preview.state).toEqual(played.ctx.prior);
}
