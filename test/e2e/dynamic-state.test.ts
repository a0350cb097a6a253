/**
 * The dynamic resources' serialized provider (`__provider`, stored twice per resource) in a program that installed
 * the package from the registry (a copy under node_modules): `require("@cloudinfra/pulumi/dynamic/<kind>")`, not the
 * provider's methods by value. A stack written by the by-value forms (the one a linked install still writes, whose
 * methods require `@cloudinfra/pulumi/dynamic/host`, and the one every version before wrote, requiring
 * `@cloudinfra/pulumi/provider`) is served by the new install: the next preview plans no change, `up` rewrites the
 * state in the short form and deletes a resource through the earlier form's provider, refresh finds no drift, an
 * in-place change and destroy work. Checked against the API.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { beforeAll, expect, it } from "vitest";
import { cliStack, prepareProject } from "../../tools/pulumi-cli";
import { cliWorld, describeCli, DYNAMIC_TYPE, gone, recordRuns, stateResources, type StateResource } from "./helpers";

const world = await cliWorld();
const [fra] = world.datacenters;
const volumeType = (await world.api.volumeSizes({ params: { id: fra.id } })).volumeTypes[0]!;
const [small, large] = volumeType.availableSizes.map((s) => s.sizeGb).sort((a, b) => a - b);

const program = `import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

const config = new pulumi.Config("app");
const datacenterId = config.require("datacenterId");
const net = new cloudinfra.Network("net", { name: "state-net", datacenterId, networkType: "standard" });
if (config.getBoolean("spare") !== false) {
  new cloudinfra.Network("spare", { name: "state-spare", datacenterId, networkType: "standard" });
}
const data = new cloudinfra.Volume("data", {
  name: "state-data",
  datacenterId,
  volumeTypeId: ${volumeType.id},
  sizeGb: config.requireNumber("sizeGb"),
});
export const networkId = net.id;
export const volumeId = data.id;
`;

/** The project's source: Pulumi.yaml, package.json and the program above. */
function projectSource(): string {
  const dir = path.join(world.work, "dynamic-state");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "Pulumi.yaml"), "name: dynamic-state\nruntime: nodejs\n");
  fs.writeFileSync(
    path.join(dir, "package.json"),
    JSON.stringify({ name: "dynamic-state", private: true, main: "index.ts" }, null, 2),
  );
  fs.writeFileSync(path.join(dir, "index.ts"), program);
  return dir;
}

/** The stack's dynamic resources: name → its serialized provider, the inputs' copy and the outputs'. */
async function providers(stack: Stack): Promise<Map<string, { inputs: string; outputs: string }>> {
  const byName = new Map<string, { inputs: string; outputs: string }>();
  for (const r of await stateResources(stack)) {
    if (!r.type.startsWith(DYNAMIC_TYPE)) continue;
    byName.set(r.urn.split("::").pop()!, {
      inputs: r.inputs!.__provider as string,
      outputs: r.outputs!.__provider as string,
    });
  }
  return byName;
}

const SHORT = (file: string) => `require("@cloudinfra/pulumi/dynamic/${file}")`;
const BY_VALUE = 'require("@cloudinfra/pulumi/dynamic/host").dynamicHandlers';
/** What the by-value form required before `@cloudinfra/pulumi/dynamic/host` existed (the same methods otherwise). */
const EARLIER = 'require("@cloudinfra/pulumi/provider").dynamicHandlers';

/** Rewrites the by-value provider of the resources `names` in the stack's state into the earlier versions' text. */
async function writtenByEarlierVersion(stack: Stack, names: string[]): Promise<void> {
  const state = await stack.exportStack();
  const { resources } = state.deployment as { resources: StateResource[] };
  for (const r of resources) {
    if (!names.includes(r.urn.split("::").pop()!)) continue;
    for (const props of [r.inputs!, r.outputs!]) {
      props.__provider = (props.__provider as string).replaceAll(BY_VALUE, EARLIER);
    }
  }
  await stack.importStack(state);
}

/** Bytes of the exported deployment per dynamic resource. */
async function stateBytesPerResource(stack: Stack): Promise<number> {
  const deployment = (await stack.exportStack()).deployment as { resources: { type: string }[] };
  const count = deployment.resources.filter((r) => r.type.startsWith(DYNAMIC_TYPE)).length;
  return JSON.stringify(deployment).length / count;
}

describeCli("the serialized provider of a dynamic resource, installed from the registry", () => {
  let stack: Stack;
  let linkedBytes: number;
  const source = projectSource();
  const linked = prepareProject(source, fs.mkdtempSync(path.join(world.work, "linked-")));
  const copied = prepareProject(source, fs.mkdtempSync(path.join(world.work, "copied-")), undefined, {
    install: "copy",
  });
  const config = { ...world.config, "app:datacenterId": fra.id, "app:sizeGb": String(small) };
  const open = (projectDir: string, stackName: string) =>
    cliStack({ projectDir, backendDir: path.join(world.work, "backend"), stackName, config }).then((s) => {
      recordRuns(s);
      return s;
    });

  beforeAll(async () => {
    // The earlier form: a linked install's program serializes the provider's methods by value.
    stack = await open(linked, "state");
    await stack.up({ color: "never" });
    linkedBytes = await stateBytesPerResource(stack);
  });

  it("a linked install writes the provider's methods by value, requiring the package's host module", async () => {
    const written = await providers(stack);
    expect([...written.keys()].sort()).toEqual(["data", "net", "spare"]);
    for (const { inputs, outputs } of written.values()) {
      expect(inputs).toContain(BY_VALUE);
      expect(inputs.length).toBeGreaterThan(1500);
      expect(outputs).toBe(inputs);
    }
  });

  it("the registry install serves that stack: no change planned, up writes the short form and deletes through the old one", async () => {
    // Two of its resources as every version before this one wrote them; the volume keeps the linked install's form.
    await writtenByEarlierVersion(stack, ["net", "spare"]);
    stack = await open(copied, "state"); // the same stack, its program now run from the copied install
    await stack.preview({ color: "never", expectNoChanges: true });

    // The spare network leaves the program: its delete runs the provider its state holds (the earlier form).
    const spareId = (await stateResources(stack)).find((r) => r.urn.endsWith("::spare"))!.id!;
    await stack.setConfig("app:spare", { value: "false" });
    const result = await stack.up({ color: "never" });
    expect(result.summary.resourceChanges).toMatchObject({ delete: 1, same: 3 });
    expect(await gone(() => world.api.getNetwork({ params: { id: spareId } }))).toBe(true);

    // The program's copy is the short form; the engine keeps a resource's outputs on a step without changes, so the
    // outputs' copy stays in the earlier form (what reads and deletes use) until the resource's next update.
    const written = await providers(stack);
    expect(written.get("net")!.inputs).toContain(SHORT("network"));
    expect(written.get("data")!.inputs).toContain(SHORT("volume"));
    for (const { inputs } of written.values()) expect(inputs.length).toBeLessThan(400);
    expect(written.get("net")!.outputs).toContain(EARLIER);
    expect(written.get("data")!.outputs).toContain(BY_VALUE);
  });

  it("refresh finds no drift through the earlier form; an update rewrites the outputs' copy; destroy", async () => {
    const refreshed = await stack.refresh({ color: "never" });
    expect(refreshed.summary.resourceChanges).not.toHaveProperty("update");
    const { volumeId, networkId } = await stack.outputs();
    await stack.setConfig("app:sizeGb", { value: String(large) });
    const resized = await stack.up({ color: "never" });
    expect(resized.summary.resourceChanges).toMatchObject({ update: 1 });
    expect((await world.api.getVolume({ params: { id: volumeId!.value as string } })).sizeGb).toBe(large);
    expect((await providers(stack)).get("data")!.outputs).toContain(SHORT("volume"));

    await stack.destroy({ color: "never" });
    expect(await gone(() => world.api.getVolume({ params: { id: volumeId!.value as string } }))).toBe(true);
    expect(await gone(() => world.api.getNetwork({ params: { id: networkId!.value as string } }))).toBe(true);
  });

  it("a stack made from the registry install holds the short form only: its state per resource is that much smaller", async () => {
    const fresh = await open(copied, "fresh");
    await fresh.setConfig("app:spare", { value: "true" });
    await fresh.up({ color: "never" });
    for (const { inputs, outputs } of (await providers(fresh)).values()) {
      expect(inputs.length).toBeLessThan(400);
      expect(outputs).toBe(inputs);
    }
    const copiedBytes = await stateBytesPerResource(fresh);
    console.log(
      `dynamic state per resource (network, network, volume): linked install ${(linkedBytes / 1024).toFixed(1)} KB, ` +
        `registry install ${(copiedBytes / 1024).toFixed(1)} KB`,
    );
    expect(copiedBytes).toBeLessThan(linkedBytes - 4000);
    await fresh.destroy({ color: "never" });
    expect(await world.namesInApi("state-")).toMatchObject({ networks: [], volumes: [] });
  });
});
