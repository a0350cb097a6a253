/** The emulator of the whole Cloud Infrastructure Management API, for tests and local development. */
export { buildEmulator, startEmulator } from "./server";
export type { BuiltEmulator, RunningEmulator } from "./server";
export type { EmulatorOptions } from "./context";
export type { Bootstrap, SeedUser } from "./state";
