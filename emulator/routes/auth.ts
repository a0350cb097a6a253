import type { FastifyInstance } from "fastify";
import { routes } from "../../provider/api";
import type { EmulatorContext } from "../context";
import { defineRoute } from "../http";

export function registerAuthRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  defineRoute(app, ctx, "check", routes.check, ({ caller }) => {
    const entity = ctx.state.entities[caller.entityId];
    return {
      user: {
        id: caller.user.id,
        email: caller.user.email,
        name: [caller.user.firstName, caller.user.lastName].filter(Boolean).join(" ") || caller.user.email,
        roles: caller.roles,
        permissions: [...caller.permissions],
      },
      activeEntity: { id: entity.id, name: entity.name },
    };
  });
}
