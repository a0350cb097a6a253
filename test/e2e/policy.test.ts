/**
 * The policy pack of examples/policy-pack through the real CLI (`pulumi up --policy-pack`): a clean stack passes, a
 * mandatory violation blocks the up before anything is created, and a remediation's change is what the API receives.
 */
import * as pulumi from "@pulumi/pulumi";
import { CommandError } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import { quickstart } from "../../examples/quickstart/program";
import * as cloudinfra from "../../sdk";
import { inventory } from "../examples/helpers";
import { cliWorld, describeCli, policyPack, policyRecorder, stateResources } from "./helpers";

const world = await cliWorld();
const [fra] = world.datacenters;
const nyc = world.datacenters.find((d) => d.name.startsWith("nyc"))!;
const { member } = world.emulator.bootstrap.users;
const h100 = world.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "h100")!;
const pack = policyPack(world);
const DAY = 24 * 60 * 60 * 1000;

describeCli("the policy pack through the real CLI", () => {
  it("passes a clean stack (quickstart): everything is created", async () => {
    const stack = await world.stack("quickstart", async () => quickstart(), { ...world.config, name: "pp-clean" });
    const recorder = policyRecorder();
    const result = await stack.up({ color: "never", policyPacks: [pack], onEvent: recorder.onEvent });
    expect(result.summary.result).toBe("succeeded");
    expect(recorder.events.filter((e) => e.startsWith("mandatory"))).toEqual([]);
    expect((await world.api.getVm({ params: { id: result.outputs.vmId.value as string } })).status).toBe("Running");
    await stack.destroy({ color: "never" });
  });

  // `pulumi up` previews before it changes anything, and the pack runs in that preview. The Automation API's `up`
  // always passes --skip-preview, so the preview is run here as its own step, as `pulumi up --yes` runs it.
  it("blocks a mandatory violation (a VM above the size limit) in up's preview: nothing is created", async () => {
    const before = await inventory(world);
    const since = world.mark();
    const stack = await world.stack("quickstart", async () => {
      const network = new cloudinfra.Network("net", {
        name: "pp-big-net",
        datacenterId: fra.id,
        networkType: "standard",
      });
      const vm = new cloudinfra.VirtualMachine("vm", {
        name: "pp-big-vm",
        datacenterId: fra.id,
        imageId: 1,
        configurationId: 4, // xl: 16 vCPU, above the pack's 8
        networkInterfaces: [{ networkId: network.id, primary: true }],
      });
      return { vmId: vm.id };
    });
    const recorder = policyRecorder();
    const blocked = await stack
      .preview({ color: "never", policyPacks: [pack], onEvent: recorder.onEvent })
      .catch((e: unknown) => e);
    expect(blocked).toBeInstanceOf(CommandError);
    expect(String(blocked)).toContain("max-vm-size");
    expect(recorder.events).toContain("mandatory max-vm-size");
    expect(await stateResources(stack)).toEqual([]);
    expect(await inventory(world)).toEqual(before);
    const writes = (await world.requests(since)).filter((r) => r.method === "POST" && !r.path.endsWith("/jobs"));
    expect(writes).toEqual([]);
  });

  // The policies that read the API, advisory in the example pack: a GPU VM of a count nyc-1 has no capacity for, and
  // a VM stopped by a key whose role lacks vm:operate. The provider's own preview checks are off here
  // (`cloudinfra:preflight off`), as a team relying on the pack would have them; the pack reads with the stack's
  // credentials, which the CLI hands to it.
  it("reports GPU capacity and the deploying key's permissions at preview, read from the API; the fixed plan passes", async () => {
    const program = (gpuCount: 2 | 4) => async () => {
      const network = new cloudinfra.Network("net", {
        name: "pp-api-net",
        datacenterId: fra.id,
        networkType: "standard",
      });
      new cloudinfra.VirtualMachine("web", {
        name: "pp-api-vm",
        datacenterId: fra.id,
        imageId: 1,
        configurationId: 1,
        powerState: "stopped",
        networkInterfaces: [{ networkId: network.id, primary: true }],
      });
      new cloudinfra.GpuVirtualMachine("train", {
        name: "pp-api-gpu",
        datacenterId: nyc.id,
        seriesId: h100.id,
        gpuCount,
      });
      return {};
    };
    const asMember = {
      ...world.config,
      "cloudinfra:apiKey": { secret: member.apiKey },
      "cloudinfra:preflight": "off",
    };
    const preview = async (gpuCount: 2 | 4, config: typeof world.config) => {
      const stack = await world.stack("quickstart", program(gpuCount), config);
      const since = world.mark();
      const messages: string[] = [];
      const recorder = policyRecorder();
      const result = await stack.preview({
        color: "never",
        policyPacks: [pack],
        onEvent: (event) => {
          recorder.onEvent(event);
          const found = event.policyEvent;
          if (found !== undefined) messages.push(`${found.policyName}: ${found.message}`);
        },
      });
      const log = await world.requests(since);
      return { result, events: recorder.events, messages, log };
    };

    const refused = await preview(4, asMember);
    expect(refused.events).toEqual(
      expect.arrayContaining(["advisory gpu-capacity", "advisory deploying-key-permissions"]),
    );
    expect(refused.messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          new RegExp(
            `^gpu-capacity: .*GPU VM train: ${h100.name} with 4 GPU\\(s\\) is not available in ${nyc.name}`,
            "s",
          ),
        ),
        expect.stringMatching(
          new RegExp(
            `^deploying-key-permissions: .*VirtualMachine web: powerState "stopped" .* needs the permission vm:operate or vm:write, which the credentials of this stack lack: they act as ${member.email}`,
            "s",
          ),
        ),
      ]),
    );
    // Read once for the run, by the pack (the provider's checks are off); nothing written; no secret printed.
    expect(refused.log.filter((r) => r.path.endsWith("/resource/gpu/inventory"))).toHaveLength(1);
    expect(refused.log.filter((r) => r.method !== "GET")).toEqual([]);
    expect(refused.result.stdout + refused.result.stderr).not.toContain(member.apiKey);

    // The same plan with the causes removed (a count nyc-1 has, the admin's key) passes both policies.
    const fixed = await preview(2, { ...world.config, "cloudinfra:preflight": "off" });
    expect(fixed.events.filter((e) => /gpu-capacity|deploying-key-permissions/.test(e))).toEqual([]);
    expect(fixed.log.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("applies a remediation: an API key asking for 365 days is created with the pack's 90", async () => {
    const stack = await world.stack(
      "team-onboarding",
      async () => {
        const key = new cloudinfra.ApiKey("ci", { name: "pp-remediated", expiresInDays: 365 });
        return { keyId: key.id, expiresInDays: key.expiresInDays, key: pulumi.secret(key.key) };
      },
      world.signIn,
    );
    const recorder = policyRecorder();
    const result = await stack.up({ color: "never", policyPacks: [pack], onEvent: recorder.onEvent });
    expect(recorder.events).toContain("remediated max-api-key-lifetime");
    expect(result.outputs.expiresInDays.value).toBe(90);
    const key = (await world.api.listApiKeys({ query: { search: "pp-remediated" } })).data[0];
    expect(key.id).toBe(result.outputs.keyId.value);
    const days = (Date.parse(key.expiresAt!) - world.emulator.ctx.now()) / DAY;
    expect(days).toBeGreaterThan(89);
    expect(days).toBeLessThanOrEqual(90);
    await stack.destroy({ color: "never" });
  });
});
