import * as fs from "node:fs";
import { afterAll, describe, expect, it, vi } from "vitest";
import { GpuVirtualMachine, type GpuVirtualMachineArgs } from "../../sdk";
import { ApiError, CloudClient } from "../../provider/client";
import { closeClients, configuration, handlerContext, kinds } from "../../provider/resources";
import { destroy, preview, refresh, RunError, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator({ jobDurationMs: 100 });
const [fra, , nyc] = stack.datacenters;
const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;
const h100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "h100")!;
const admin = `${stack.emulator.baseUrl.replace(/\/v1$/, "")}/__admin`;

const getGpu = (id: string) => stack.api.getGpuVm({ params: { id } });
const gpusNamed = async (prefix: string) =>
  (await stack.api.listGpuVms({ query: { search: prefix, limit: 100 } })).data.filter((g) => g.name.startsWith(prefix));

async function setAvailability(seriesId: number, datacenterId: string, gpuCount: number, available: boolean) {
  const response = await fetch(`${admin}/gpu-availability`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ seriesId, datacenterId, gpuCount, available }),
  });
  if (!response.ok) throw new Error(`gpu-availability: HTTP ${response.status} ${await response.text()}`);
}

function program(args: GpuVirtualMachineArgs) {
  return () => {
    const gpu = new GpuVirtualMachine("gpu", args);
    return { id: gpu.id, publicIp: gpu.publicIp, status: gpu.status };
  };
}

const failureOf = async (run: Promise<unknown>) => (await run.catch((e: unknown) => e)) as RunError;

// The lifecycle (create, no-op, in place, replace, drift, bad inputs, deleted behind the stack, failed job, destroy)
// is in the table, test/lifecycle/table.ts, played on every host; here what is particular to GPU VMs.
describe("GpuVirtualMachine", () => {
  it("in place: a GPU VM taken out of its group (teamId removed) and stopped keeps its id", async () => {
    const options = stack.options();
    const { teamId } = await stack.api.createTeam({ body: { name: "ip-gpu-team" } });
    const base = { name: "ip-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 as const };
    const id = (await up(program({ ...base, teamId: String(teamId) }), options)).outputs.id as string;
    expect(await getGpu(id)).toMatchObject({ teamId, status: "Running" });
    const stopped = await up(program({ ...base, powerState: "stopped" }), options);
    expect(stopped.step("gpu").op).toBe("update");
    expect(stopped.outputs.id).toBe(id);
    expect(await getGpu(id)).toMatchObject({ teamId: null, status: "Stopped" });
    await destroy(options);
    expect(await gpusNamed("ip-")).toEqual([]);
    await stack.api.deleteTeam({ params: { id: teamId } });
  });

  it("exposePrivateKey: no ssh-key request by default; when set, one at create, a secret output; a change is an update", async () => {
    const options = stack.options();
    const args = { name: "sk-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 as const };
    const sshKeyReads = async (since: number) =>
      (await stack.requests(since)).filter((r) => r.route === "getGpuSshKey").length;

    // default: none at create, refresh or an update; no key in the outputs
    let since = stack.mark();
    const created = await up(program(args), options);
    const id = created.outputs.id as string;
    expect(created.step("gpu").outputs).not.toHaveProperty("sshPrivateKey");
    expect((await refresh(options)).step("gpu").refresh).toBe("same");
    expect((await up(program({ ...args, name: "sk-gpu-renamed" }), options)).step("gpu").op).toBe("update");
    expect(await sshKeyReads(since)).toBe(0);

    // false → true: an update of the same GPU VM (no delete), one ssh-key GET; refresh keeps the key without a read
    since = stack.mark();
    const on = await up(program({ ...args, exposePrivateKey: true }), options);
    expect(on.step("gpu").op).toBe("update");
    expect(on.outputs.id).toBe(id);
    expect(await sshKeyReads(since)).toBe(1);
    expect((await stack.requests(since)).filter((r) => r.route === "deleteGpuVm")).toEqual([]);
    const { privateKey } = await stack.api.getGpuSshKey({ params: { id } });
    expect(on.step("gpu").outputs.sshPrivateKey).toBe(privateKey);
    expect(on.step("gpu").secretOutputs).toContain("sshPrivateKey");
    expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain(privateKey.split("\n")[1]);
    since = stack.mark();
    const refreshed = await refresh(options);
    expect(refreshed.step("gpu").refresh).toBe("same");
    expect(refreshed.step("gpu").outputs.sshPrivateKey).toBe(privateKey);
    expect(await sshKeyReads(since)).toBe(0);

    // true → removed: an update without an ssh-key request, the key gone from the outputs
    since = stack.mark();
    const off = await up(program(args), options);
    expect(off.step("gpu").op).toBe("update");
    expect(off.outputs.id).toBe(id);
    expect(off.step("gpu").outputs).not.toHaveProperty("sshPrivateKey");
    const sent = (await stack.requests(since)).map((r) => r.route);
    expect(sent.filter((r) => r === "getGpuSshKey" || r === "deleteGpuVm" || r === "createGpuVm")).toEqual([]);
    await destroy(options);

    // set at create: exactly one ssh-key GET
    const exposed = stack.options();
    since = stack.mark();
    const withKey = await up(program({ ...args, exposePrivateKey: true }), exposed);
    expect(await sshKeyReads(since)).toBe(1);
    const key = (await stack.api.getGpuSshKey({ params: { id: withKey.outputs.id as string } })).privateKey;
    expect(withKey.step("gpu").outputs.sshPrivateKey).toBe(key);
    await destroy(exposed);
    expect(await gpusNamed("sk-")).toEqual([]);
  });

  it("preview changes nothing", async () => {
    const options = stack.options();
    const since = stack.mark();
    const planned = await preview(
      program({ name: "pv-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 }),
      options,
    );
    expect(planned.step("gpu").op).toBe("create");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);
    expect(await gpusNamed("pv-")).toEqual([]);
  });

  it("409: an unavailable combination fails with the combinations available now (H100 × 8)", async () => {
    // The preview check (preflight.ts, test/resources/preflight.test.ts) would refuse it first: off, `up` meets the 409.
    const options = stack.options();
    options.config = { ...options.config, "cloudinfra:preflight": "off" };
    const error = await failureOf(
      up(program({ name: "na-gpu", datacenterId: fra.id, seriesId: h100.id, gpuCount: 8 }), options),
    );
    expect(error).toBeInstanceOf(RunError);
    const text = error.message;
    expect(text).toContain("NVIDIA H100 with 8 GPU(s) is not available in fra-1");
    expect(text).toMatch(/Available now for NVIDIA H100: .*fra-1 × 1, fra-1 × 2, fra-1 × 4/);
    expect(text).toContain("nyc-1 × 2");
    expect(text).not.toMatch(/× 8/);
    expect(error.result.state.resources.filter((r) => r.name === "gpu")).toEqual([]);
    expect(await gpusNamed("na-")).toEqual([]);
  });

  it("409: availability is read fresh; once the combination is available the same program goes up", async () => {
    const options = stack.options();
    const args = { name: "av-gpu", datacenterId: nyc.id, seriesId: a100.id, gpuCount: 4 as const };
    await setAvailability(a100.id, fra.id, 4, false);
    try {
      const text = (await failureOf(up(program(args), options))).message;
      expect(text).toContain("not available in nyc-1");
      expect(text).toContain("ams-1 × 4");
      // made unavailable a moment ago: not offered
      expect(text).not.toContain("fra-1 × 4");
      expect(await gpusNamed("av-")).toEqual([]);

      await setAvailability(a100.id, nyc.id, 4, true);
      const created = await up(program(args), options);
      expect(await getGpu(created.outputs.id as string)).toMatchObject({ gpuCount: 4, status: "Running" });
      await destroy(options);
      expect(await gpusNamed("av-")).toEqual([]);
    } finally {
      await setAvailability(a100.id, fra.id, 4, true);
      await setAvailability(a100.id, nyc.id, 4, false);
    }
  });

  it("501: a series the provider cannot start fails powerState running with a clear error", async () => {
    const options = stack.options();
    const args = {
      name: "ns-gpu",
      datacenterId: fra.id,
      seriesId: h100.id,
      gpuCount: 1 as const,
      imageName: "debian-12",
      exposePrivateKey: true,
    };
    // created stopped, from a named image
    const created = await up(program({ ...args, powerState: "stopped" }), options);
    const id = created.outputs.id as string;
    expect(await getGpu(id)).toMatchObject({ status: "Stopped", imageName: "debian-12" });
    // sshPrivateKey: the API's key, a secret output, never in clear in the state file or the host log
    const { privateKey } = await stack.api.getGpuSshKey({ params: { id } });
    const keyBody = privateKey.split("\n")[1];
    expect(created.step("gpu").outputs.sshPrivateKey).toBe(privateKey);
    expect(created.step("gpu").secretOutputs).toContain("sshPrivateKey");
    expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain(keyBody);
    expect(created.hostLog).not.toContain(keyBody);

    const failed = await failureOf(up(program({ ...args, powerState: "running" }), options));
    expect(failed).toBeInstanceOf(RunError);
    expect(failed.message).toContain("cannot start NVIDIA H100 GPU VMs");
    expect(failed.message).toContain('powerState "running" cannot be converged');
    expect(failed.message).not.toContain("BEGIN");
    const recorded = failed.result.state.resources.find((r) => r.name === "gpu");
    expect(recorded?.id).toBe(id);
    // the state recorded with the failure keeps the SSH key secret
    expect(failed.result.step("gpu").secretOutputs).toContain("sshPrivateKey");
    expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain(keyBody);
    expect((await getGpu(id)).status).toBe("Stopped");

    // accepting the stopped state converges (the failed update is retried without start)
    const accepted = await up(program({ ...args, powerState: "stopped" }), options);
    expect(accepted.step("gpu").op).toBe("update");
    expect(accepted.step("gpu").initErrors).toBeUndefined();
    expect(accepted.state.resources.find((r) => r.name === "gpu")?.initErrors).toBeUndefined();
    await destroy(options);
    expect(await gpusNamed("ns-")).toEqual([]);
  });

  it("a create answered 503 before anything was made is sent once more (one GPU VM); twice, it fails saying so", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createGpuVm,status=503,count=1");
    const args = { name: "rf-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 as const };
    const created = await up(program(args), options);
    await stack.faults("");
    expect((await gpusNamed("rf-")).map((g) => g.id)).toEqual([created.outputs.id]);
    const creates = (await stack.requests(since)).filter((r) => r.route === "createGpuVm").map((r) => r.status);
    expect(creates).toEqual([503, 202]);
    await destroy(options);

    // Resent up to cloudinfra:maxRetries (3) times, each after looking: four lost answers, the clear error.
    const lost = stack.mark();
    await stack.faults("createGpuVm,status=503,count=4");
    const failed = await failureOf(up(program({ ...args, name: "rf2-gpu" }), options));
    await stack.faults("");
    expect(failed.message).toContain('Creating GPU VM "rf2-gpu" failed 4 times without an answer');
    expect((await stack.requests(lost)).filter((r) => r.route === "createGpuVm").map((r) => r.status)).toEqual([
      503, 503, 503, 503,
    ]);
    expect(failed.message).toContain("No GPU VM was made");
    expect(failed.message).not.toContain("may have taken effect");
    expect(failed.result.state.resources.filter((r) => r.name === "gpu")).toEqual([]);
    expect(await gpusNamed("rf2-")).toEqual([]);
  });

  it("a create that took effect but whose answer was lost is found, not sent again: one GPU VM", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createGpuVm,drop,after,count=1");
    const created = await up(
      program({ name: "lost-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 }),
      options,
    );
    await stack.faults("");
    expect((await gpusNamed("lost-")).map((g) => g.id)).toEqual([created.outputs.id]);
    expect((await stack.requests(since)).filter((r) => r.route === "createGpuVm").map((r) => r.status)).toEqual([0]);
    await destroy(options);
    expect(await gpusNamed("lost-")).toEqual([]);
  });

  // 11. Adoption does not apply: GPU VM names are not unique, so a name cannot identify an existing GPU VM. A GPU VM
  // of the same name made elsewhere is left alone; the stack creates and destroys its own.
});

describe("GpuVirtualMachine create with an ambiguous answer (in process)", () => {
  afterAll(async () => {
    vi.restoreAllMocks();
    await closeClients();
  });

  it("finds the one new GPU VM of its name, not an older one, and manages it", async () => {
    const config: Record<string, string> = {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:apiKey": stack.emulator.bootstrap.users.admin.apiKey,
      "cloudinfra:pollIntervalMs": "20",
    };
    const ctx = handlerContext({ configuration: configuration((key) => config[key]) });
    const older = await stack.api.createGpuVm({
      body: { name: "amb-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 },
    });
    await stack.api.jobs.wait(older.jobId);
    type Create = CloudClient["createGpuVm"];
    const prototype = CloudClient.prototype as unknown as { createGpuVm: Create };
    const real = prototype.createGpuVm;
    vi.spyOn(prototype, "createGpuVm").mockImplementationOnce(async function (
      this: CloudClient,
      ...args: Parameters<Create>
    ) {
      await real.apply(this, args);
      throw new ApiError({
        status: 502,
        code: "BAD_GATEWAY",
        message: "upstream connection reset",
        method: "POST",
        path: "/resource/gpu",
        mayHaveSucceeded: true,
      });
    });
    const inputs = { name: "amb-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 };
    const { id, outs } = await kinds.GpuVirtualMachine.create(ctx, inputs);
    expect(id).not.toBe(older.id);
    expect(outs).toMatchObject({ status: "Running", name: "amb-gpu" });
    expect((await gpusNamed("amb-")).map((g) => g.id).sort()).toEqual([older.id, id].sort());
    await kinds.GpuVirtualMachine.delete(ctx, id, outs);
    await kinds.GpuVirtualMachine.delete(ctx, older.id, {});
    expect(await gpusNamed("amb-")).toEqual([]);
  });
});
