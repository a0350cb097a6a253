import type { FastifyInstance } from "fastify";
import type { EmulatorContext } from "./context";

/** Operator features: rate limits, fault injection, request log, admin API. */
export function installOperator(_app: FastifyInstance, _ctx: EmulatorContext): { close(): Promise<void> } {
  return { close: async () => {} };
}
