import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll } from "vitest";
import type { RunOptions } from "../../../tools/harness/engine";
import { TestRecord } from "./fixtures/test-record";

/** One line of the test record provider's call log. */
export interface Call {
  method: "check" | "diff" | "create" | "read" | "update" | "delete";
  phase?: "start" | "end";
  id?: string;
  label?: string;
  olds?: Record<string, unknown>;
  news?: Record<string, unknown>;
  at: number;
}

export interface Sandbox {
  options: RunOptions;
  stateFile: string;
  storeFile: string;
  /** The test record store (`{ [id]: outputs }`). */
  store(): Record<string, Record<string, unknown>>;
  writeStore(store: Record<string, Record<string, unknown>>): void;
  /** The provider calls since the last {@link Sandbox.clearCalls}. */
  calls(): Call[];
  clearCalls(): void;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** A temporary stack for the test record fixture: state file, record store, call log, and its stack config. */
export function sandbox(extra: Partial<RunOptions> = {}): Sandbox {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "harness-test-"));
  dirs.push(dir);
  const stateFile = path.join(dir, "state.json");
  const storeFile = path.join(dir, "store.json");
  const callLog = path.join(dir, "calls.log");
  return {
    stateFile,
    storeFile,
    options: {
      stateFile,
      config: { "harness:storeFile": storeFile, "harness:callLog": callLog, "harness:token": { secret: "cfg-secret" } },
      ...extra,
    },
    store: () => (fs.existsSync(storeFile) ? JSON.parse(fs.readFileSync(storeFile, "utf8")) : {}),
    writeStore: (store) => fs.writeFileSync(storeFile, JSON.stringify(store)),
    calls: () =>
      fs.existsSync(callLog)
        ? fs
            .readFileSync(callLog, "utf8")
            .split("\n")
            .filter((line) => line !== "")
            .map((line) => JSON.parse(line) as Call)
        : [],
    clearCalls: () => fs.rmSync(callLog, { force: true }),
  };
}

/** A program of two test records, `b` referring to `a`'s id; exports both ids. */
export function pair(a: { label?: string; zone?: string; size?: number } = {}): () => Record<string, unknown> {
  return () => {
    const first = new TestRecord("a", { label: a.label ?? "A", zone: a.zone, size: a.size ?? 1 });
    const second = new TestRecord("b", { label: "B", size: 2, ref: first.id });
    return { aId: first.id, bRef: second.ref };
  };
}

/** The completed create/update/delete calls, as `method label:id`, in order. */
export function ends(calls: Call[]): string[] {
  return calls.filter((c) => c.phase === "end").map((c) => `${c.method} ${c.label}:${c.id}`);
}
