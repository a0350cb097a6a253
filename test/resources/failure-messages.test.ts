/**
 * Failure messages through Pulumi's real dynamic-provider host (tools/harness). Regressions:
 * - a VM's failed job read `Creating VM "x" failed: <error>`, without the job and the VM (volumes, networks and GPU
 *   VMs named both): every kind's failed create job now reads `<what> failed: <error> (job <id>, <resource> <id>)`;
 * - the host printed every error thrown by check, diff, read and delete with its stack (file paths of the user's
 *   machine and of this package) under the Stack, the message twice, before the engine showed the message with its
 *   resource: the host now prints one line naming the failed operation, and the message reaches the engine alone.
 */
import { afterAll, describe, expect, it } from "vitest";
import { GpuVirtualMachine, Network, Volume, VirtualMachine } from "../../sdk";
import { CodedError } from "../../provider/client/error-codes";
import { dynamicHandlers, HostError } from "../../provider/dynamic";
import { closeClients, configuration, handlerContext, kinds, type KindName } from "../../provider/resources";
import { destroy, preview, refresh, up, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;
const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const STACK_FRAME = /\n\s+at .+:\d+:\d+\)?/;

const messages = (run: RunResult) => run.errors.map((e) => e.message).join("\n");
const recorded = (run: RunResult, name: string) => run.state.resources.find((r) => r.name === name);

describe("a failed create job names the job and the resource, for every kind with jobs", () => {
  const cases = [
    {
      operation: "vm.create",
      noun: "VM",
      what: 'Creating VM "fm-vm"',
      program: () => ({
        id: new VirtualMachine("r", { name: "fm-vm", datacenterId: fra.id, imageId: 1, configurationId: 1 }).id,
      }),
      status: (id: string) => stack.api.getVm({ params: { id } }).then((vm) => vm.status),
    },
    {
      operation: "gpu.create",
      noun: "GPU VM",
      what: 'Creating GPU VM "fm-gpu"',
      program: () => ({
        id: new GpuVirtualMachine("r", { name: "fm-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 }).id,
      }),
      status: (id: string) => stack.api.getGpuVm({ params: { id } }).then((gpu) => gpu.status),
    },
    {
      operation: "network.create",
      noun: "network",
      what: 'Creating network named "fm-net"',
      program: () => ({ id: new Network("r", { name: "fm-net", datacenterId: fra.id, networkType: "standard" }).id }),
      status: (id: string) => stack.api.getNetwork({ params: { id } }).then((net) => net.status),
    },
    {
      operation: "volume.create",
      noun: "volume",
      what: 'Creating volume named "fm-vol"',
      program: () => ({
        id: new Volume("r", { name: "fm-vol", datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 }).id,
      }),
      status: (id: string) => stack.api.getVolume({ params: { id } }).then((vol) => vol.status),
    },
  ];
  for (const { operation, noun, what, program, status } of cases) {
    it(`${operation} (the VM's read "Creating VM "x" failed: <error>")`, async () => {
      const options = stack.options();
      await stack.faults(`job=${operation},fail=Quota exceeded,count=2`);
      const failed = await up(program, { ...options, throwOnError: false }).finally(() => stack.faults(""));
      const id = recorded(failed, "r")?.id;
      expect(id).toBeTruthy();
      const pattern = new RegExp(
        `${what.replace(/[()]/g, "\\$&")} failed: Quota exceeded \\(job (${UUID}), ${noun} ${id}\\)`,
      );
      const [, jobId] = pattern.exec(messages(failed)) ?? [];
      expect(jobId, messages(failed)).toBeDefined();
      expect(recorded(failed, "r")?.initErrors?.join("\n")).toMatch(pattern);
      // Each reason the engine records and prints ends with the failure's code (README's "Error codes").
      for (const reason of recorded(failed, "r")?.initErrors ?? []) expect(reason).toMatch(/ \[JOB_FAILED\]$/);
      // The job named is the one that failed, about that resource, and the resource is in status Error.
      const [job] = (await stack.api.queryJobs({ body: { jobIds: [jobId!] } })).jobs;
      expect(job).toMatchObject({ status: "failed", resourceId: id, error: "Quota exceeded" });
      expect(await status(id!)).toBe("Error");
      await destroy(options);
    });
  }
});

describe("errors of check, read and delete reach the engine as their message, without a stack", () => {
  const program = () => ({
    id: new Network("net", { name: "fm-host", datacenterId: fra.id, networkType: "standard" }).id,
  });

  it("the host's line names the failed operation; the message is the engine's, once", async () => {
    const options = { ...stack.options(), throwOnError: false };
    const created = await up(program, options);
    const id = recorded(created, "net")!.id!;

    // check: credentials refused
    const badKey = { ...options, config: { ...options.config, "cloudinfra:apiKey": { secret: "svc_not-a-key" } } };
    const checked = await preview(program, badKey);
    expect(messages(checked)).toContain("The API refused the cloudinfra credentials");
    expect(checked.hostLog).toContain(
      'cloudinfra: checking Network "fm-host" failed (the error is shown with the resource)',
    );

    // read: the API answers 500
    await stack.faults("getNetwork,status=500,message=Network store unavailable");
    const read = await refresh({ ...options, config: { ...options.config, "cloudinfra:maxRetries": "0" } }).finally(
      () => stack.faults(""),
    );
    expect(messages(read)).toContain("Network store unavailable");
    expect(read.hostLog).toContain(`cloudinfra: reading Network ${id} failed (the error is shown with the resource)`);

    // delete: refused while the network is busy
    await stack.faults("deleteNetwork,status=409,message=Network is busy,count=2");
    const deleted = await destroy(options).finally(() => stack.faults(""));
    expect(messages(deleted)).toContain(`Network ${id} cannot be deleted now (status Active)`);
    // Each message the engine shows ends with its code.
    expect(messages(checked)).toMatch(/The API refused the cloudinfra credentials[^\n]* \[API_KEY_INVALID\]$/m);
    expect(messages(read)).toMatch(/Network store unavailable[^\n]* \[SERVER_ERROR\]$/m);
    expect(messages(deleted)).toMatch(/cannot be deleted now \(status Active\)[^\n]* \[STATE_CONFLICT\]$/m);
    expect(deleted.hostLog).toContain(
      `cloudinfra: deleting Network ${id} failed (the error is shown with the resource)`,
    );
    expect((await stack.api.getNetwork({ params: { id } })).status).toBe("Active");

    for (const run of [checked, read, deleted]) {
      expect(run.ok).toBe(false);
      expect(run.hostLog).not.toMatch(STACK_FRAME);
      for (const error of run.errors) expect(run.hostLog).not.toContain(error.message);
    }
    await destroy({ ...options, throwOnError: true });
  });

  it("every host call that fails rejects with a HostError: diff too, which no program can make fail", async () => {
    const unknownKind = "NoSuchKind" as KindName;
    const calls = {
      "comparing NoSuchKind n-1 with the program": () => dynamicHandlers.diff(unknownKind, "n-1", {}, {}),
      "reading NoSuchKind n-1": () => dynamicHandlers.read(unknownKind, "n-1", {}),
      "deleting NoSuchKind n-1": () => dynamicHandlers.delete(unknownKind, "n-1", {}),
    };
    for (const [what, call] of Object.entries(calls)) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(HostError);
      expect((error as HostError).stack).toBe(`${what} failed (the error is shown with the resource)`);
      expect((error as HostError).message).toBe(((error as HostError).cause as Error).message);
    }
  });

  it("a HostError prints as the host prints errors: the operation that failed, never the message or a frame", () => {
    const cause = new Error("Network store unavailable");
    const error = new HostError(cause.message, "reading Network n-1", cause);
    expect(error.message).toBe("Network store unavailable");
    expect(error.cause).toBe(cause);
    expect(error.code).toBeUndefined();
    // cmd/dynamic-provider/index.js: `console.error(`${e}: ${e.stack}`)`, then the error goes to the engine.
    expect(`${error}: ${error.stack}`).toBe(
      "cloudinfra: reading Network n-1 failed (the error is shown with the resource)",
    );
  });

  it("a HostError keeps the code of the error it reports (README's error codes)", () => {
    const cause = new CodedError("RESOURCE_GONE", "Network n-1 no longer exists");
    expect(new HostError(cause.message, "reading Network n-1", cause).code).toBe("RESOURCE_GONE");
  });
});

describe("the kinds' errors carry their code from the catalogue (README's error codes), whatever their wording", () => {
  afterAll(closeClients);
  const config: Record<string, string> = {
    "cloudinfra:baseUrl": stack.emulator.baseUrl,
    "cloudinfra:pollIntervalMs": "20",
    "cloudinfra:apiKey": stack.emulator.bootstrap.users.admin.apiKey,
  };
  const ctx = handlerContext({ configuration: configuration((key) => config[key]) });
  const volumeInputs = { name: "fm-coded", datacenterId: fra!.id, volumeTypeId: 1, sizeGb: 20 };
  const volumesNamed = async (name: string) =>
    (await stack.api.listVolumes({ query: { search: name } })).data.filter((v) => v.name === name);

  it("INPUT_INVALID for a volume type the data center does not offer, and nothing is created", async () => {
    await expect(
      kinds.Volume.create(ctx, { ...volumeInputs, name: "fm-coded-type", volumeTypeId: 999 }),
    ).rejects.toMatchObject({ code: "INPUT_INVALID", message: expect.stringContaining("volumeTypeId") });
    expect(await volumesNamed("fm-coded-type")).toEqual([]);
  });

  it("CANNOT_SHRINK for a smaller volume, which keeps its size", async () => {
    const { id, outs } = await kinds.Volume.create(ctx, volumeInputs);
    await expect(kinds.Volume.update(ctx, id, outs, { ...volumeInputs, sizeGb: 10 })).rejects.toMatchObject({
      code: "CANNOT_SHRINK",
    });
    expect((await stack.api.getVolume({ params: { id } })).sizeGb).toBe(20);
    await kinds.Volume.delete(ctx, id, outs);
    expect(await volumesNamed("fm-coded")).toEqual([]);
  });

  it("SETTING_INVALID for a configuration that is not usable, before any request", () => {
    const bad = configuration((key) => (key === "cloudinfra:baseUrl" ? "ftp://api.example/v1" : undefined));
    expect(() => handlerContext({ configuration: bad })).toThrow(
      expect.objectContaining({ code: "SETTING_INVALID", name: "ConfigurationError" }),
    );
  });
});
