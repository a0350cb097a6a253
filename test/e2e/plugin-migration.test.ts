/**
 * Moving a stack from the dynamic resources to the provider plugin, through the real CLI, as the README describes:
 * first `retainOnDelete` on the dynamic resource, then the plugin resource with `import` of the same id in its place.
 * The network in the API is never deleted nor recreated, and the stack ends up managing it through the plugin.
 */
import * as pulumi from "@pulumi/pulumi";
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { pluginResources, resource, useLauncher } from "../plugin/launcher";
import { cliWorld, describeCli, stateResources } from "./helpers";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
const args = { name: "mig-net", datacenterId: fra.id, networkType: "standard", description: "moved" } as const;

describeCli("moving a stack from the dynamic resources to the plugin", () => {
  it("retainOnDelete, then import into the plugin: the same network, never recreated, managed by the plugin", async () => {
    const step = () => new pulumi.Config("app").require("step");
    const stack = await world.stack(
      "quickstart",
      async () => {
        if (step() === "dynamic" || step() === "retain") {
          const net = new cloudinfra.Network("net", args, { retainOnDelete: step() === "retain" });
          return { id: net.id };
        }
        const id = new pulumi.Config("app").require("id");
        const net = resource("Network", "net-plugin", args, [], { import: id });
        return { id: net.id };
      },
      { ...world.config, "app:step": "dynamic" },
    );

    const created = await stack.up({ color: "never" });
    const id = created.outputs.id.value as string;
    await stack.setConfig("app:step", { value: "retain" });
    await stack.up({ color: "never" });

    const since = world.mark();
    await stack.setAllConfig({ "app:step": { value: "plugin" }, "app:id": { value: id } });
    const moved = await stack.up({ color: "never" });
    expect(moved.summary.resourceChanges).toMatchObject({ import: 1, delete: 1 });
    expect(moved.outputs.id.value).toBe(id);
    // the dynamic resource left the state without a DELETE reaching the API; the plugin holds the same network
    expect((await world.requests(since)).filter((r) => r.method === "DELETE" || r.method === "POST")).toEqual([]);
    expect(await stateResources(stack)).toEqual([]);
    const managed = (await pluginResources(stack)).filter((r) => r.type === "cloudinfra:index:Network");
    expect(managed.map((r) => r.id)).toEqual([id]);
    expect((await world.api.getNetwork({ params: { id } })).description).toBe("moved");
    await stack.preview({ color: "never", expectNoChanges: true });

    await stack.destroy({ color: "never" });
    await expect(world.api.getNetwork({ params: { id } })).rejects.toMatchObject({ status: 404 });
  });
});
