import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import type { EmulatorContext } from "./context";
import type { State } from "./state";

/** Reads a state file written by `--state`; null when there is none yet. */
export function loadStateFile(path: string): State | null {
  if (!existsSync(path)) return null;
  const state = JSON.parse(readFileSync(path, "utf8")) as State;
  if (state.version !== 1) throw new Error(`${path}: unsupported emulator state version ${String(state.version)}`);
  return state;
}

/** Writes the whole state to a temporary file and renames it over the target, so a crash never leaves half a file. */
export function writeStateFile(path: string, state: State): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state));
  renameSync(tmp, path);
}

/** Writes the state at most every `intervalMs` while it changes, and once more at close. */
export function startPersistence(ctx: EmulatorContext, path: string, intervalMs = 200) {
  let dirty = false;
  const previousTouch = ctx.touch;
  ctx.touch = () => {
    dirty = true;
    previousTouch();
  };
  const flush = () => {
    if (!dirty) return;
    dirty = false;
    writeStateFile(path, ctx.state);
  };
  const timer = setInterval(flush, intervalMs);
  timer.unref();
  return {
    flush,
    stop() {
      clearInterval(timer);
      dirty = true;
      flush();
    },
  };
}
