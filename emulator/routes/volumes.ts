import type { FastifyInstance } from "fastify";
import type { EmulatorContext } from "../context";

export function registerVolumeRoutes(_app: FastifyInstance, _ctx: EmulatorContext): void {}
