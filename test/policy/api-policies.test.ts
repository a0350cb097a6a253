/**
 * The policies that read the API (gpu-capacity, deploying-key-permissions), served from dist/ as a pack project runs
 * them, against the in-process emulator: what they report, where they get their credentials (the stack config the CLI
 * hands over, the CLOUDINFRA_* environment, the policy's `apiKeyVariable`), and what they cost in requests (one
 * inventory read and one credentials check per run, no write). Each test starts its own pack process: one run.
 */
import { afterAll, describe, expect, it } from "vitest";
import { typeToken, type Kind } from "../../policy";
import { toWire, UNKNOWN, type WireMap } from "../../tools/harness/wire";
import { stackOnEmulator, type LogEntry } from "../resources/helpers";
import { guardProject, PolicyEngine, type PolicyConfigFile, type PolicyResource } from "./engine";

const stack = await stackOnEmulator({ jobDurationMs: 50 });
const { admin, member } = stack.emulator.bootstrap.users;
const { fixtures } = stack.emulator.bootstrap;
const [fra] = stack.datacenters;
const nyc = stack.datacenters.find((d) => d.name.startsWith("nyc"))!;
const a100 = fixtures.gpuSeries.find((s) => s.code === "a100")!;
const h100 = fixtures.gpuSeries.find((s) => s.code === "h100")!;

const project = guardProject();
afterAll(() => project.remove());

/** A pack process of its own (one run), with `env` as the CLI would give it, configured with `config`. */
async function pack(env: Record<string, string>, config: PolicyConfigFile = {}): Promise<PolicyEngine> {
  const engine = await PolicyEngine.start(project.dir, { env });
  await engine.configure(config);
  return engine;
}

/** The stack config the CLI hands to the pack (`PULUMI_CONFIG`), with these `cloudinfra:*` values. */
const stackConfig = (values: Record<string, string>) => ({
  PULUMI_CONFIG: JSON.stringify({ "cloudinfra:baseUrl": stack.emulator.baseUrl, ...values }),
});

function resource(kind: Kind, name: string, properties: object): PolicyResource {
  return {
    urn: `urn:pulumi:test::test::${typeToken(kind)}::${name}`,
    type: typeToken(kind),
    name,
    properties: toWire(properties) as WireMap,
  };
}

/** The diagnostics and not-applicable reasons of `policy` for one resource. */
async function judge(engine: PolicyEngine, policy: string, kind: Kind, name: string, props: object) {
  const { diagnostics, notApplicable } = await engine.analyze(resource(kind, name, props));
  return {
    // The policy host puts the policy's description on the first line of each message.
    messages: diagnostics
      .filter((d) => d.policyName === policy)
      .map((d) => `${d.enforcementLevel}: ${d.message.replace(`${d.description}\n`, "")}`),
    notApplicable: notApplicable.filter((n) => n.policyName === policy).map((n) => n.reason),
  };
}

const writes = (log: LogEntry[]) => log.filter((r) => r.method !== "GET");
const calls = (log: LogEntry[], path: RegExp) => log.filter((r) => path.test(r.path)).length;

const gpu = (name: string, seriesId: number, gpuCount: number | typeof UNKNOWN, datacenterId = fra!.id) => ({
  name,
  datacenterId,
  seriesId,
  gpuCount,
});
const vm = (extra: object = {}) => ({
  name: "app",
  datacenterId: fra!.id,
  imageId: fixtures.images[0]!.id,
  configurationId: 1,
  ...extra,
});

describe("gpu-capacity", () => {
  it("reports a GPU VM the inventory has no capacity for (advisory), with one inventory read for the run", async () => {
    const engine = await pack(stackConfig({ "cloudinfra:apiKey": admin.apiKey }));
    try {
      const mark = stack.mark();
      const big = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "big", gpu("big", h100.id, 8));
      expect(big.messages).toEqual([
        expect.stringContaining(
          `advisory: GPU VM big: ${h100.name} with 8 GPU(s) is not available in ${fra!.name} (${fra!.id}) ` +
            "(GET /resource/gpu/inventory at ",
        ),
      ]);
      expect(big.messages[0]).toContain(`Available now for ${h100.name}: ${fra!.name} × 1`);
      expect(big.messages[0]).toContain("capacity can change before the deployment, which still reports the API's 409");
      const nyc4 = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "n4", gpu("n4", a100.id, 4, nyc.id));
      expect(nyc4.messages).toEqual([expect.stringContaining(`with 4 GPU(s) is not available in ${nyc.name}`)]);
      const fine = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "n1", gpu("n1", a100.id, 1, nyc.id));
      expect(fine).toEqual({ messages: [], notApplicable: [] });
      const series = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "s", gpu("s", 999, 1));
      expect(series.messages).toEqual([expect.stringContaining("the inventory has no GPU series 999")]);
      // A count not known yet (a preview) is not judged, and fails nothing.
      const later = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "u", gpu("u", a100.id, UNKNOWN));
      expect(later).toEqual({ messages: [], notApplicable: [] });
      const log = await stack.requests(mark);
      expect(writes(log)).toEqual([]);
      expect(calls(log, /\/resource\/gpu\/inventory$/)).toBe(1);
      // GPU VMs asking for no operation: the permissions policy reads nothing.
      expect(calls(log, /\/auth\/check$/)).toBe(0);
      expect(engine.log).not.toContain(admin.apiKey);
    } finally {
      await engine.close();
    }
  });

  it("a failing inventory read reports nothing but a note (not applicable, and on stderr); the pack goes on", async () => {
    const engine = await pack(stackConfig({ "cloudinfra:apiKey": admin.apiKey, "cloudinfra:maxRetries": "0" }));
    try {
      await stack.faults("gpuInventory,status=503");
      let failed;
      try {
        failed = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "big", gpu("big", h100.id, 8));
      } finally {
        await stack.faults("");
      }
      expect(failed.messages).toEqual([]);
      expect(failed.notApplicable).toEqual([
        expect.stringMatching(/^gpu-capacity: not checked: GET \/resource\/gpu\/inventory failed: .*503/),
      ]);
      expect(engine.log).toContain("gpu-capacity: not checked: GET /resource/gpu/inventory failed");
      // The next resource of the run reads again (a failed read is not kept), and is judged.
      const again = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "big2", gpu("big2", h100.id, 8));
      expect(again.messages).toHaveLength(1);
      expect(engine.log).not.toContain(admin.apiKey);
    } finally {
      await engine.close();
    }
  });

  it("without usable settings, says which setting is missing", async () => {
    const engine = await pack({ PULUMI_CONFIG: "{}", CLOUDINFRA_BASE_URL: "", CLOUDINFRA_API_KEY: "" });
    try {
      const found = await judge(engine, "gpu-capacity", "GpuVirtualMachine", "g", gpu("g", a100.id, 1));
      expect(found.messages).toEqual([]);
      expect(found.notApplicable).toEqual([
        expect.stringContaining("not checked: the cloudinfra settings are not usable: "),
      ]);
      expect(found.notApplicable[0]).toContain("cloudinfra:baseUrl is not set");
    } finally {
      await engine.close();
    }
  });
});

describe("deploying-key-permissions", () => {
  it("reports operations the deploying key (CLOUDINFRA_*) lacks the permission of, with one credentials check", async () => {
    // No stack config: the CLOUDINFRA_* environment the provider reads too.
    const engine = await pack({ CLOUDINFRA_BASE_URL: stack.emulator.baseUrl, CLOUDINFRA_API_KEY: member.apiKey });
    try {
      const mark = stack.mark();
      const stopped = await judge(
        engine,
        "deploying-key-permissions",
        "VirtualMachine",
        "web",
        vm({ powerState: "stopped" }),
      );
      expect(stopped.messages).toEqual([
        expect.stringContaining(
          'advisory: VirtualMachine web: powerState "stopped" (POST /resource/virtual-machines/{id}/stop) needs the ' +
            `permission vm:operate or vm:write, which the credentials of this stack lack: they act as ${member.email} ` +
            "with the role(s) tenant-user",
        ),
      ]);
      expect(stopped.messages[0]).toContain("(GET /auth/check at ");
      const ops = await judge(
        engine,
        "deploying-key-permissions",
        "VirtualMachine",
        "ops",
        vm({ shutdownBeforeDelete: true, resetTrigger: "1" }),
      );
      expect(ops.messages).toEqual([
        expect.stringContaining("the reset a resetTrigger asks for (POST /resource/virtual-machines/{id}/reset)"),
        expect.stringContaining("shutdownBeforeDelete (the VM's delete stops it first"),
      ]);
      const gpuOps = await judge(engine, "deploying-key-permissions", "GpuVirtualMachine", "g", {
        ...gpu("g", a100.id, 1),
        powerState: "stopped",
      });
      expect(gpuOps.messages).toEqual([expect.stringContaining("POST /resource/gpu/{id}/stop")]);
      // Nothing asked beyond create (running is the API's default): nothing to judge.
      expect(
        await judge(engine, "deploying-key-permissions", "VirtualMachine", "plain", vm({ powerState: "running" })),
      ).toEqual({
        messages: [],
        notApplicable: [],
      });
      // A power state not known yet is not judged.
      expect(
        (await judge(engine, "deploying-key-permissions", "VirtualMachine", "u", vm({ powerState: UNKNOWN }))).messages,
      ).toEqual([]);
      // An ApiKey is created by a signed-in session, which an API key alone is not: a note says what to configure.
      const key = await judge(engine, "deploying-key-permissions", "ApiKey", "ci", { name: "ci" });
      expect(key.messages).toEqual([]);
      expect(key.notApplicable).toEqual([expect.stringContaining("needs a signed-in session with two-factor")]);
      const log = await stack.requests(mark);
      expect(writes(log)).toEqual([]);
      expect(calls(log, /\/auth\/check$/)).toBe(1);
      expect(engine.log).not.toContain(member.apiKey);
    } finally {
      await engine.close();
    }
  });

  it("passes the same plan for a key that has the permissions (apiKeyVariable over the stack's key)", async () => {
    const engine = await pack(
      { ...stackConfig({ "cloudinfra:apiKey": member.apiKey }), POLICY_ADMIN_KEY: admin.apiKey },
      { "deploying-key-permissions": { enforcementLevel: "mandatory", apiKeyVariable: "POLICY_ADMIN_KEY" } },
    );
    try {
      const mark = stack.mark();
      const stopped = await judge(
        engine,
        "deploying-key-permissions",
        "VirtualMachine",
        "web",
        vm({ powerState: "stopped" }),
      );
      expect(stopped).toEqual({ messages: [], notApplicable: [] });
      const log = await stack.requests(mark);
      expect(calls(log, /\/auth\/check$/)).toBe(1);
      expect(log.find((r) => r.path.endsWith("/auth/check"))).toBeDefined();
    } finally {
      await engine.close();
    }
    // A variable that is not set is a note, not a crash.
    const unset = await pack(stackConfig({ "cloudinfra:apiKey": member.apiKey }), {
      "deploying-key-permissions": { enforcementLevel: "mandatory", apiKeyVariable: "POLICY_NOT_SET" },
    });
    try {
      const found = await judge(
        unset,
        "deploying-key-permissions",
        "VirtualMachine",
        "web",
        vm({ powerState: "stopped" }),
      );
      expect(found).toEqual({
        messages: [],
        notApplicable: [
          "deploying-key-permissions: not checked: apiKeyVariable names POLICY_NOT_SET, which is not set in the " +
            "policy pack's environment",
        ],
      });
    } finally {
      await unset.close();
    }
  });
});
