/**
 * The plugin wired as a user wires an installed package, through the real CLI: a Pulumi.yaml naming the package's
 * directory under `plugins: providers:` (no launcher on PATH, ambient plugins ignored). The engine runs the package's
 * `pulumi-resource-cloudinfra` from that directory.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { expect, it } from "vitest";
import { cliWorld, describeCli } from "./helpers";
import { pluginResources, resource, root } from "../plugin/launcher";

// Only the project's plugin may serve cloudinfra: no launcher on PATH, and the CLI told to ignore ambient plugins.
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
const world = await cliWorld();
const [fra] = world.datacenters;

describeCli("the provider plugin from a Pulumi.yaml `plugins: providers:` entry (real CLI)", () => {
  it("up and destroy through the package directory's plugin", async () => {
    const project = fs.mkdtempSync(path.join(world.work, "project-"));
    fs.writeFileSync(
      path.join(project, "Pulumi.yaml"),
      [
        "name: plugin-project",
        "runtime: nodejs",
        "plugins:",
        "  providers:",
        "    - name: cloudinfra",
        `      path: ${root}`,
        "",
      ].join("\n"),
    );
    const stack = await world.stack(project, async () => {
      const net = resource("Network", "net", { name: "pp-net", datacenterId: fra!.id, networkType: "standard" });
      return { id: net.id };
    });
    const up = await stack.up({ color: "never" });
    const id = up.outputs.id!.value as string;
    expect((await world.api.getNetwork({ params: { id } })).name).toBe("pp-net");
    expect((await pluginResources(stack)).map((r) => r.type)).toContain("cloudinfra:index:Network");
    await stack.destroy({ color: "never" });
    const status = await world.api.getNetwork({ params: { id } }).then(
      () => 200,
      (e: { status?: number }) => e.status,
    );
    expect(status).toBe(404);
  });

  it("a program's invoke of cloudinfra:index:getVolumeSizes and getGpuInventory is answered by the plugin", async () => {
    const project = fs.mkdtempSync(path.join(world.work, "invoke-"));
    fs.writeFileSync(
      path.join(project, "Pulumi.yaml"),
      `name: plugin-invoke\nruntime: nodejs\nplugins:\n  providers:\n    - name: cloudinfra\n      path: ${root}\n`,
    );
    const stack = await world.stack(project, async () => {
      const sizes = await pulumi.runtime.invoke("cloudinfra:index:getVolumeSizes", { datacenterId: fra!.id });
      const gpus = await pulumi.runtime.invoke("cloudinfra:index:getGpuInventory", {});
      return { sizes: JSON.stringify(sizes), available: (gpus.available as unknown[]).length };
    });
    const up = await stack.up({ color: "never" });
    const expected = await world.api.volumeSizes({ params: { id: fra!.id } });
    expect(JSON.parse(up.outputs.sizes!.value as string)).toEqual(JSON.parse(JSON.stringify(expected)));
    const inventory = await world.api.gpuInventory({ query: {} });
    const offers = inventory.flatMap((s) =>
      s.availability.flatMap((a) => ([1, 2, 4, 8] as const).filter((n) => a.gpuCounts[n].available)),
    );
    expect(up.outputs.available!.value).toBe(offers.length);
  });

  it("the CLI loads the plugin's schema (`pulumi package get-schema`): the committed schema.json", () => {
    const result = spawnSync("pulumi", ["package", "get-schema", path.join(root, "pulumi-resource-cloudinfra")], {
      encoding: "utf8",
      env: { ...process.env, PULUMI_HOME: path.join(world.work, "schema-home"), PULUMI_SKIP_UPDATE_CHECK: "true" },
      timeout: 120_000,
    });
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const committed = JSON.parse(fs.readFileSync(path.join(root, "provider/plugin/schema.json"), "utf8")) as object;
    expect(JSON.parse(result.stdout)).toEqual(committed);
  });
});
