import type { FastifyInstance } from "fastify";
import type { EmulatorContext } from "../context";
import { registerApiKeyRoutes } from "./apikeys";
import { registerAuthRoutes } from "./auth";
import { registerGpuRoutes } from "./gpu";
import { registerJobRoutes } from "./jobs";
import { registerMetricsRoutes } from "./metrics";
import { registerNetworkRoutes } from "./networks";
import { registerTeamRoutes } from "./teams";
import { registerUserRoutes } from "./users";
import { registerVmRoutes } from "./vms";
import { registerVolumeRoutes } from "./volumes";

/** Every route group of the API; each registers the contract routes it implements. */
export const routeModules: ((app: FastifyInstance, ctx: EmulatorContext) => void)[] = [
  registerAuthRoutes,
  registerApiKeyRoutes,
  registerVmRoutes,
  registerGpuRoutes,
  registerVolumeRoutes,
  registerNetworkRoutes,
  registerUserRoutes,
  registerTeamRoutes,
  registerJobRoutes,
  registerMetricsRoutes,
];
