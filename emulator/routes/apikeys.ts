import type { FastifyInstance } from "fastify";
import type { EmulatorContext } from "../context";

export function registerApiKeyRoutes(_app: FastifyInstance, _ctx: EmulatorContext): void {}
