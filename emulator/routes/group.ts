import type { FastifyInstance } from "fastify";
import { routes, type RouteName, type Routes } from "../../provider/api";
import type { EmulatorContext } from "../context";
import { defineRoute } from "../http";

/** What every route group plugin is registered with. */
export interface RouteGroupOptions {
  ctx: EmulatorContext;
}

/** Named handlers of contract routes, each typed by its route's spec (a misspelt route name does not compile). */
export type RouteHandlers = { [K in RouteName]?: Parameters<typeof defineRoute<Routes[K]>>[4] };

/** Registers each handler under the contract route of its name (`defineRoute`), in the order given. */
export function defineRoutes(app: FastifyInstance, ctx: EmulatorContext, handlers: RouteHandlers): void {
  for (const [name, handler] of Object.entries(handlers)) {
    defineRoute(app, ctx, name, routes[name as RouteName], handler as Parameters<typeof defineRoute>[4]);
  }
}
