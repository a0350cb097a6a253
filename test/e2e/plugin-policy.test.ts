/**
 * The policy pack of examples/policy-pack on the provider plugin's resources (`cloudinfra:index:<Kind>`), through the
 * real CLI: a mandatory violation blocks the preview with nothing created, and a remediation's change is what the API
 * receives.
 */
import { CommandError } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import { cliWorld, describeCli, policyPack, policyRecorder } from "./helpers";
import { pluginResources, resource, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
const nyc = world.datacenters.find((d) => d.name.startsWith("nyc"))!;
const { member } = world.emulator.bootstrap.users;
const h100 = world.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "h100")!;
const pack = policyPack(world);
const DAY = 24 * 60 * 60 * 1000;

describeCli("the policy pack on the plugin's resources (real CLI)", () => {
  it("blocks a plugin VM above the size limit in preview: nothing is created", async () => {
    const since = world.mark();
    const stack = await world.stack("quickstart", async () => {
      resource("VirtualMachine", "big", {
        name: "ppp-big-vm",
        datacenterId: fra!.id,
        imageId: 1,
        configurationId: 4, // xl: 16 vCPU, above the pack's 8
      });
    });
    const recorder = policyRecorder();
    const blocked = await stack
      .preview({ color: "never", policyPacks: [pack], onEvent: recorder.onEvent })
      .catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(CommandError);
    expect(recorder.events).toContain("mandatory max-vm-size");
    expect((await pluginResources(stack)).filter((r) => r.type.startsWith("cloudinfra:index:"))).toEqual([]);
    const writes = (await world.requests(since)).filter((r) => r.method === "POST" && !r.path.endsWith("/jobs"));
    expect(writes).toEqual([]);
  });

  it("reports GPU capacity and the deploying key's permissions on plugin resources at preview, read from the API", async () => {
    const stack = await world.stack(
      "quickstart",
      async () => {
        resource("VirtualMachine", "web", {
          name: "ppp-api-vm",
          datacenterId: fra!.id,
          imageId: 1,
          configurationId: 1,
          shutdownBeforeDelete: true,
        });
        resource("GpuVirtualMachine", "train", {
          name: "ppp-api-gpu",
          datacenterId: nyc.id,
          seriesId: h100.id,
          gpuCount: 4,
        });
      },
      { ...world.config, "cloudinfra:apiKey": { secret: member.apiKey }, "cloudinfra:preflight": "off" },
    );
    const since = world.mark();
    const messages: string[] = [];
    await stack.preview({
      color: "never",
      policyPacks: [pack],
      onEvent: (event) => {
        const found = event.policyEvent;
        if (found !== undefined) messages.push(`${found.enforcementLevel} ${found.policyName}: ${found.message}`);
      },
    });
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^advisory gpu-capacity: .*GPU VM train: .* with 4 GPU\(s\) is not available in nyc-1/s),
        expect.stringMatching(
          /^advisory deploying-key-permissions: .*VirtualMachine web: shutdownBeforeDelete .* needs the permission vm:operate/s,
        ),
      ]),
    );
    const log = await world.requests(since);
    expect(log.filter((r) => r.path.endsWith("/resource/gpu/inventory"))).toHaveLength(1);
    expect(log.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("remediates a plugin API key asking for 365 days: the API creates it with the pack's 90", async () => {
    const stack = await world.stack(
      "quickstart",
      async () => {
        const key = resource("ApiKey", "ci", { name: "ppp-remediated", expiresInDays: 365 }, ["expiresInDays"]);
        return { keyId: key.id, expiresInDays: key.expiresInDays };
      },
      world.signIn,
    );
    const recorder = policyRecorder();
    const result = await stack.up({ color: "never", policyPacks: [pack], onEvent: recorder.onEvent });
    expect(recorder.events).toContain("remediated max-api-key-lifetime");
    expect(result.outputs.expiresInDays!.value).toBe(90);
    const key = (await world.api.listApiKeys({ query: { search: "ppp-remediated" } })).data[0]!;
    expect(key.id).toBe(result.outputs.keyId!.value);
    const days = (Date.parse(key.expiresAt!) - world.emulator.ctx.now()) / DAY;
    expect(days).toBeGreaterThan(89);
    expect(days).toBeLessThanOrEqual(90);
    await stack.destroy({ color: "never" });
  });
});
