/**
 * The real `pulumi` CLI, through the Automation API (LocalWorkspace, local file backend, passphrase secrets
 * provider), running examples/quickstart against the emulator: up, preview with no changes, refresh, a mandatory
 * policy violation (the pack of examples/policy-pack) blocking an up, destroy. Runs whenever a `pulumi` CLI is on
 * PATH; otherwise the suite is skipped and says why.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { CommandError, LocalWorkspace, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmulator, type RunningEmulator } from "../../emulator/server";
import { ApiError, CloudClient } from "../../provider/client";
import { cliEnvironment, prepareProject, pulumiCliVersion } from "../../tools/pulumi-cli";

const root = path.resolve(__dirname, "../..");
const version = pulumiCliVersion();
const hasPulumiCli = version !== undefined;
const skipReason =
  "no `pulumi` CLI on PATH (the Automation API drives the CLI; install it from https://www.pulumi.com/docs/install/ " +
  "to run this suite — the test host suites cover the provider without it)";
const TYPE_PREFIX = "pulumi-nodejs:dynamic/cloudinfra:";

/** A resource of an exported deployment (the parts read here). */
interface StateResource {
  urn: string;
  type: string;
  id?: string;
  outputs?: Record<string, unknown>;
}

if (!hasPulumiCli) console.log(`CLI end-to-end suite skipped: ${skipReason}`);

describe.skipIf(!hasPulumiCli)(
  hasPulumiCli
    ? `the pulumi CLI (${version}) runs examples/quickstart`
    : `the pulumi CLI suite — skipped: ${skipReason}`,
  () => {
    let emulator: RunningEmulator;
    let api: CloudClient;
    let stack: Stack;
    let work: string;
    let packDir: string;

    beforeAll(async () => {
      emulator = await startEmulator({ port: 0, jobDurationMs: 300, rateLimit: 0 });
      api = new CloudClient({ baseUrl: emulator.baseUrl, auth: { apiKey: emulator.bootstrap.users.admin.apiKey } });
      work = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-e2e-"));
      const projectDir = prepareProject(path.join(root, "examples", "quickstart"), work, root);
      packDir = prepareProject(path.join(root, "examples", "policy-pack"), work, root);
      stack = await LocalWorkspace.createOrSelectStack(
        { stackName: "e2e", workDir: projectDir },
        { envVars: cliEnvironment(path.join(work, "backend"), projectDir), secretsProvider: "passphrase" },
      );
      await stack.setAllConfig({
        "cloudinfra:baseUrl": { value: emulator.baseUrl },
        "cloudinfra:apiKey": { value: emulator.bootstrap.users.admin.apiKey, secret: true },
        "cloudinfra:pollIntervalMs": { value: "50" },
        "quickstart:name": { value: "e2e" },
      });
    });

    afterAll(async () => {
      await stack?.workspace.removeStack("e2e", { force: true }).catch(() => undefined);
      await api?.close();
      await emulator?.close();
      if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
    });

    /** Writes a policy pack config file (policy name → { enforcementLevel, ...config }) and returns its path. */
    function packConfig(config: Record<string, unknown>): string {
      const file = path.join(work, `policy-config-${Object.keys(config).join("-")}.json`);
      fs.writeFileSync(file, JSON.stringify(config));
      return file;
    }

    /** The stack's cloudinfra resources, as the CLI's state holds them. */
    async function dynamicResources(): Promise<StateResource[]> {
      const deployment = (await stack.exportStack()).deployment as { resources?: StateResource[] };
      return (deployment.resources ?? []).filter((r) => r.type.startsWith(TYPE_PREFIX));
    }

    let outputs: { networkId: string; vmId: string; volumeId: string };

    it("up creates the quickstart, the policy pack passing it, and the API holds it", async () => {
      const result = await stack.up({ color: "never", policyPacks: [packDir] });
      expect(result.summary.result).toBe("succeeded");
      expect(Object.keys(result.summary.resourceChanges ?? {})).toEqual(["create"]);
      expect((await dynamicResources()).map((r) => r.type).sort()).toEqual(
        ["Network", "VirtualMachine", "Volume", "VolumeAttachment"].map((kind) => `${TYPE_PREFIX}${kind}`),
      );
      outputs = {
        networkId: result.outputs.networkId.value as string,
        vmId: result.outputs.vmId.value as string,
        volumeId: result.outputs.volumeId.value as string,
      };
      expect((await api.getNetwork({ params: { id: outputs.networkId } })).name).toBe("e2e-net");
      expect((await api.getVm({ params: { id: outputs.vmId } })).status).toBe("Running");
      expect(await api.getVolume({ params: { id: outputs.volumeId } })).toMatchObject({
        sizeGb: 20,
        status: "In-use",
        virtualMachineId: outputs.vmId,
      });
    });

    it("preview of the unchanged program plans no changes", async () => {
      const planned = await stack.preview({ color: "never", expectNoChanges: true });
      expect(Object.keys(planned.changeSummary)).toEqual(["same"]);
      expect(planned.changeSummary.same).toBeGreaterThanOrEqual(5); // four resources and the stack
    });

    it("refresh reads everything back: nothing drifted, then a change made behind the stack's back", async () => {
      const clean = await stack.refresh({ color: "never", expectNoChanges: true });
      expect(clean.summary.result).toBe("succeeded");

      await api.updateNetwork({ params: { id: outputs.networkId }, body: { description: "edited by hand" } });
      const drifted = await stack.refresh({ color: "never" });
      expect(drifted.summary.resourceChanges?.update).toBe(1);
      const network = (await dynamicResources()).find((r) => r.id === outputs.networkId);
      expect(network?.outputs).toMatchObject({ description: "edited by hand" });

      const repaired = await stack.up({ color: "never" });
      expect(repaired.summary.resourceChanges?.update).toBe(1);
      expect((await api.getNetwork({ params: { id: outputs.networkId } })).description).toBe(
        "quickstart network, managed by Pulumi",
      );
    });

    it("a mandatory policy violation blocks the up: nothing is changed", async () => {
      await stack.setConfig("quickstart:volumeSizeGb", { value: "50" });
      const config = packConfig({ "max-volume-size": { enforcementLevel: "mandatory", maxSizeGb: 30 } });
      const blocked = await stack
        .up({ color: "never", policyPacks: [packDir], policyPackConfigs: [config] })
        .catch((error: unknown) => error);
      expect(blocked).toBeInstanceOf(CommandError);
      expect(String(blocked)).toContain("max-volume-size");
      expect((await api.getVolume({ params: { id: outputs.volumeId } })).sizeGb).toBe(20);
      await stack.removeConfig("quickstart:volumeSizeGb");
    });

    it("destroy deletes everything: the stack is empty and the API answers 404", async () => {
      const result = await stack.destroy({ color: "never" });
      expect(Object.keys(result.summary.resourceChanges ?? {})).toEqual(["delete"]);
      expect(await dynamicResources()).toEqual([]);
      for (const read of [
        () => api.getNetwork({ params: { id: outputs.networkId } }),
        () => api.getVm({ params: { id: outputs.vmId } }),
        () => api.getVolume({ params: { id: outputs.volumeId } }),
      ]) {
        const error = await read().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(ApiError);
        expect((error as ApiError).status).toBe(404);
      }
    });
  },
);
