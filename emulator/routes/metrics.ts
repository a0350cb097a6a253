import type { FastifyInstance } from "fastify";
import type { EmulatorContext } from "../context";

export function registerMetricsRoutes(_app: FastifyInstance, _ctx: EmulatorContext): void {}
