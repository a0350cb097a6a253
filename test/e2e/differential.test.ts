/**
 * Keeps the test host honest: one multi-resource scenario (create, no-op, in-place update, replacement with its
 * dependents, drift found by refresh, repair, destroy) run through the test host (tools/harness) and through the
 * real CLI, on one emulator, asserting the same operation per resource at every step and the same outputs.
 */
import * as pulumi from "@pulumi/pulumi";
import type { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import * as harness from "../../tools/harness";
import { cliWorld, describeCli, stateResources } from "./helpers";

const world = await cliWorld();
const [fra] = world.datacenters;

/** A network, a VM on it, a volume attached to the VM; `app:description` and `app:imageId` steer the changes. */
async function program() {
  const config = new pulumi.Config("app");
  const prefix = config.require("prefix");
  const network = new cloudinfra.Network("net", {
    name: `${prefix}-net`,
    datacenterId: fra.id,
    networkType: "custom",
    cidrBlock: "10.60.0.0/24",
    description: config.get("description") ?? "first",
  });
  const vm = new cloudinfra.VirtualMachine("vm", {
    name: `${prefix}-vm`,
    datacenterId: fra.id,
    imageId: config.getNumber("imageId") ?? 1,
    configurationId: 1,
    networkInterfaces: [{ networkId: network.id, primary: true }],
  });
  const volume = new cloudinfra.Volume("data", {
    name: `${prefix}-data`,
    datacenterId: fra.id,
    volumeTypeId: 1,
    sizeGb: 10,
  });
  const attachment = new cloudinfra.VolumeAttachment("data-on-vm", {
    volumeId: volume.id,
    virtualMachineId: vm.id,
  });
  return { networkId: network.id, vmId: vm.id, attachmentId: attachment.id };
}

type Ops = Record<string, string>;
/** What one run did: the operation per resource (by name) and each resource's outputs after it. */
interface Outcome {
  ops: Ops;
  outputs: Record<string, Record<string, unknown>>;
}

/** The engine's steps of a run as one operation per resource: a replacement's three steps count as `replace`. */
function opsRecorder(): { onEvent: (event: EngineEvent) => void; ops: Ops } {
  const ops: Ops = {};
  return {
    ops,
    onEvent(event) {
      const meta = event.resourcePreEvent?.metadata ?? event.resOutputsEvent?.metadata;
      if (meta === undefined || !meta.type.startsWith("pulumi-nodejs:dynamic/")) return;
      const name = meta.urn.split("::").pop()!;
      if (event.resourcePreEvent !== undefined) {
        // a replacement's three steps are one `replace`, marked delete-first when the old one goes first
        if (meta.op === "delete-replaced" && ops[name] === undefined) ops[name] = "replace (delete first)";
        else if (["create-replacement", "replace", "delete-replaced"].includes(meta.op)) ops[name] ??= "replace";
        else ops[name] = meta.op;
      } else if (ops[name] === "refresh") {
        // a refresh's outcome is the op of its outputs event: same, update (drifted) or delete (gone)
        ops[name] =
          { same: "refresh", update: "refresh:changed", delete: "refresh:gone" }[meta.op as string] ?? meta.op;
      }
    },
  };
}

const SECRET_SIG = "4dabf18193072939515e22adb298388d";
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * A run's outputs made comparable across the two stacks: the resources' ids and the name prefix replaced by labels,
 * other ids the API made (interfaces) by `<uuid>`, a secret by `<secret>` (the two states spell secrets differently,
 * and generated keys differ), timestamps left out.
 */
function normalize(outputs: Record<string, Record<string, unknown>>, prefix: string): Record<string, unknown> {
  const ids = new Map<string, string>();
  for (const [name, out] of Object.entries(outputs)) if (typeof out.id === "string") ids.set(out.id, `<${name}.id>`);
  const text = JSON.stringify(outputs, (key, value: unknown) => {
    if (key === "createdAt" || key === "updatedAt") return undefined;
    if (typeof value === "object" && value !== null && SECRET_SIG in value) return "<secret>";
    if (typeof value !== "string") return value;
    let replaced = value.replaceAll(`${prefix}-`, "<prefix>-");
    for (const [id, label] of ids) replaced = replaced.replaceAll(id, label);
    return replaced.replace(UUID, "<uuid>");
  });
  return JSON.parse(text) as Record<string, unknown>;
}

describeCli("the test host against the real CLI", () => {
  it("the same scenario gives the same operations per resource and the same outputs", async () => {
    // the test host: its own state file, names prefixed viahost- (not hex: the prefix is replaced in every output)
    const stateFile = world.options().stateFile;
    const config: Record<string, string> = { "app:prefix": "viahost" };
    const hostOptions = () => world.options({ stateFile, config: { ...world.options().config, ...config } });
    const viaHost = (result: harness.RunResult): Outcome => ({
      ops: Object.fromEntries(
        result.steps
          .filter((s) => s.custom)
          .map((s) => [
            s.name,
            s.refresh !== undefined
              ? `refresh${s.refresh === "same" ? "" : `:${s.refresh}`}`
              : s.op === "replace" && s.deleteBeforeReplace
                ? "replace (delete first)"
                : s.op,
          ]),
      ),
      outputs: Object.fromEntries(
        harness
          .readStateFile(stateFile)
          .resources.filter((r) => r.custom && r.type.startsWith("pulumi-nodejs:dynamic"))
          .map((r) => [r.name, { id: r.id, ...(r.outputs as Record<string, unknown>) }]),
      ),
    });

    // the real CLI: names prefixed viacli-
    const stack: Stack = await world.stack("quickstart", program, { ...world.config, "app:prefix": "viacli" });
    const viaCli = async (run: (onEvent: (event: EngineEvent) => void) => Promise<unknown>): Promise<Outcome> => {
      const recorder = opsRecorder();
      await run(recorder.onEvent);
      const resources = await stateResources(stack);
      return {
        ops: recorder.ops,
        outputs: Object.fromEntries(resources.map((r) => [r.urn.split("::").pop()!, { id: r.id, ...r.outputs }])),
      };
    };
    const up = (onEvent: (event: EngineEvent) => void) => stack.up({ color: "never", onEvent });

    /** Sets a config value on both stacks. */
    async function set(key: string, value: string): Promise<void> {
      config[key] = value;
      await stack.setConfig(key, { value });
    }

    let last: { host: Outcome; cli: Outcome } | undefined;
    async function step(name: string, host: () => Promise<harness.RunResult>, cli: () => Promise<Outcome>) {
      last = { host: viaHost(await host()), cli: await cli() };
      expect({ step: name, ops: last.host.ops }).toEqual({ step: name, ops: last.cli.ops });
      expect({ step: name, outputs: normalize(last.host.outputs, "viahost") }).toEqual({
        step: name,
        outputs: normalize(last.cli.outputs, "viacli"),
      });
    }

    const upBoth = (name: string) =>
      step(
        name,
        () => harness.up(program, hostOptions()),
        () => viaCli(up),
      );

    await upBoth("create");
    await upBoth("no-op");
    await set("app:description", "second");
    await upBoth("in-place update");
    await set("app:imageId", "2");
    await upBoth("replacement with a dependent");
    expect(last!.cli.ops).toMatchObject({ vm: "replace", "data-on-vm": "replace (delete first)" });

    // behind both stacks' backs: the network's description changed, the volume detached
    for (const { outputs } of [last!.host, last!.cli]) {
      await world.api.updateNetwork({ params: { id: outputs.net.id as string }, body: { description: "by hand" } });
      await world.api.jobs.wait((await world.api.detachVolume({ params: { id: outputs.data.id as string } })).jobId);
    }
    const refresh = (onEvent: (event: EngineEvent) => void) => stack.refresh({ color: "never", onEvent });
    await step(
      "refresh: drift and a deletion",
      () => harness.refresh(hostOptions()),
      () => viaCli(refresh),
    );
    expect(last!.cli.ops).toEqual({
      net: "refresh:changed",
      vm: "refresh",
      data: "refresh",
      "data-on-vm": "refresh:gone",
    });
    await upBoth("repair");

    const destroy = (onEvent: (event: EngineEvent) => void) => stack.destroy({ color: "never", onEvent });
    await step(
      "destroy",
      () => harness.destroy(hostOptions()),
      () => viaCli(destroy),
    );
    expect(last!.cli.outputs).toEqual({});
  });
});
