import type { FastifyInstance } from "fastify";
import type { EmulatorContext } from "../context";
import { apiKeyRoutes } from "./apikeys";
import { authRoutes, sessionCookies } from "./auth";
import { gpuRoutes } from "./gpu";
import { jobRoutes } from "./jobs";
import { metricsRoutes } from "./metrics";
import { networkRoutes } from "./networks";
import { teamRoutes } from "./teams";
import { userRoutes } from "./users";
import { vmRoutes } from "./vms";
import { volumeRoutes } from "./volumes";

/** The route groups of the API besides authentication; each is a Fastify plugin registering its contract routes. */
export const routeGroups = [
  apiKeyRoutes,
  vmRoutes,
  gpuRoutes,
  volumeRoutes,
  networkRoutes,
  userRoutes,
  teamRoutes,
  jobRoutes,
  metricsRoutes,
];

/**
 * Registers every route group on the root `app`, each plugin in its own context (the root's decorators, hooks and
 * error handler apply to it), and each plugin's job effects with it. The session cookie's refresh hook goes on the
 * root itself: it covers every /v1 reply, whichever group answers it (or none).
 */
export async function registerRouteGroups(app: FastifyInstance, ctx: EmulatorContext): Promise<void> {
  const cookies = sessionCookies(ctx);
  app.addHook("onSend", cookies.refresh);
  await app.register(authRoutes, { ctx, sessionCookies: cookies });
  for (const group of routeGroups) await app.register(group, { ctx });
}
