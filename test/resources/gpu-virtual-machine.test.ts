import * as fs from "node:fs";
import { afterAll, describe, expect, it, vi } from "vitest";
import { GpuVirtualMachine, type GpuVirtualMachineArgs } from "../../sdk";
import { ApiError, CloudClient } from "../../provider/client";
import { closeClients, configuration, handlerContext, kinds } from "../../provider/resources";
import { destroy, preview, refresh, RunError, up } from "../harness";
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

describe("GpuVirtualMachine lifecycle", () => {
  it("creates, stays unchanged, updates in place, survives drift, replaces, is recreated and destroyed", async () => {
    const options = stack.options();
    const base = { name: "lc-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 as const };

    // 1. create with minimal inputs: the API holds a running A100 × 1 in fra-1
    const created = await up(program(base), options);
    expect(created.step("gpu").op).toBe("create");
    const id = created.outputs.id as string;
    const live = await getGpu(id);
    expect(live).toMatchObject({ name: "lc-gpu", status: "Running", gpuCount: 1, teamId: null });
    expect(live.series.id).toBe(a100.id);
    expect(live.datacenter.id).toBe(fra.id);
    expect(live.publicIp).toBeTruthy();
    const outputs = created.step("gpu").outputs;
    expect(outputs).toMatchObject({
      publicIp: live.publicIp,
      jupyterLabUrl: live.jupyterLabUrl,
      status: "Running",
      powerState: "running",
      series: live.series,
      datacenter: live.datacenter,
    });
    // sshPrivateKey: the API's key, a secret output, never in clear in the state file
    const { privateKey } = await stack.api.getGpuSshKey({ params: { id } });
    expect(outputs.sshPrivateKey).toBe(privateKey);
    expect(created.step("gpu").secretOutputs).toContain("sshPrivateKey");
    const keyBody = privateKey.split("\n")[1];
    expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain(keyBody);
    expect(created.hostLog).not.toContain(keyBody);

    // 2. a second up: no changes; 3. refresh without drift: no changes
    expect((await up(program(base), options)).step("gpu").op).toBe("same");
    expect((await refresh(options)).step("gpu").refresh).toBe("same");

    // 4. in place: rename and put in a resource group; the id stays
    const { teamId } = await stack.api.createTeam({ body: { name: "lc-gpu-team" } });
    // teamId as a ResourceGroup's id would give it: the number as a string
    const running = { ...base, name: "lc-gpu-renamed", teamId: String(teamId), powerState: "running" as const };
    const updated = await up(program(running), options);
    expect(updated.step("gpu").op).toBe("update");
    expect(updated.outputs.id).toBe(id);
    expect(await getGpu(id)).toMatchObject({ name: "lc-gpu-renamed", teamId, status: "Running" });

    // 6. drift behind the stack's back (stopped, renamed, out of its group): refresh sees it, up repairs it
    await stack.api.stopGpuVm({ params: { id } });
    await stack.api.updateGpuVm({ params: { id }, body: { name: "by-hand", teamId: null } });
    const refreshed = await refresh(options);
    expect(refreshed.step("gpu").refresh).toBe("changed");
    expect(refreshed.step("gpu").outputs).toMatchObject({ status: "Stopped", powerState: "stopped", name: "by-hand" });
    const repaired = await up(program(running), options);
    expect(repaired.step("gpu").op).toBe("update");
    expect(await getGpu(id)).toMatchObject({ name: "lc-gpu-renamed", teamId, status: "Running" });

    // in place again: teamId removed from the program (the GPU VM leaves its group) and powerState stopped
    const stopped = { ...base, name: "lc-gpu-renamed", powerState: "stopped" as const };
    expect((await up(program(stopped), options)).step("gpu").op).toBe("update");
    expect(await getGpu(id)).toMatchObject({ teamId: null, status: "Stopped" });

    // 5. replacement (gpuCount) yields a new id, created before the old one is deleted; the old one is gone
    const bigger = await up(program({ ...stopped, gpuCount: 2 }), options);
    expect(bigger.step("gpu").op).toBe("replace");
    expect(bigger.step("gpu").diff?.replaces).toEqual(["gpuCount"]);
    expect(bigger.step("gpu").diff?.deleteBeforeReplace).toBe(false);
    const newId = bigger.outputs.id as string;
    expect(newId).not.toBe(id);
    await expect(getGpu(id)).rejects.toMatchObject({ status: 404 });
    expect(await getGpu(newId)).toMatchObject({ gpuCount: 2, status: "Stopped", name: "lc-gpu-renamed" });

    // 7. deleted behind the stack's back: refresh drops it, up recreates it
    const deletion = await stack.api.deleteGpuVm({ params: { id: newId } });
    await stack.api.jobs.wait(deletion.jobId);
    expect((await refresh(options)).step("gpu").refresh).toBe("gone");
    const recreated = await up(program({ ...stopped, gpuCount: 2 }), options);
    expect(recreated.step("gpu").op).toBe("create");
    const recreatedId = recreated.outputs.id as string;
    expect(await getGpu(recreatedId)).toMatchObject({ name: "lc-gpu-renamed", gpuCount: 2, status: "Stopped" });

    // 8. destroy leaves nothing of the stack
    await destroy(options);
    expect(await gpusNamed("lc-")).toEqual([]);
    await stack.api.deleteTeam({ params: { id: teamId } });
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
    const options = stack.options();
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
    };
    // created stopped, from a named image
    const created = await up(program({ ...args, powerState: "stopped" }), options);
    const id = created.outputs.id as string;
    expect(await getGpu(id)).toMatchObject({ status: "Stopped", imageName: "debian-12" });

    const failed = await failureOf(up(program({ ...args, powerState: "running" }), options));
    expect(failed).toBeInstanceOf(RunError);
    expect(failed.message).toContain("cannot start NVIDIA H100 GPU VMs");
    expect(failed.message).toContain('powerState "running" cannot be converged');
    expect(failed.message).not.toContain("BEGIN");
    const recorded = failed.result.state.resources.find((r) => r.name === "gpu");
    expect(recorded?.id).toBe(id);
    // the state recorded with the failure keeps the SSH key secret
    const keyBody = (await stack.api.getGpuSshKey({ params: { id } })).privateKey.split("\n")[1];
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

  it("10. records a GPU VM whose create job failed, with the job's error; the next up replaces it", async () => {
    const options = stack.options();
    const args = { name: "jf-gpu", datacenterId: fra.id, seriesId: a100.id, gpuCount: 1 as const };
    await stack.faults("job=gpu.create,fail=No GPU capacity left,count=1");
    const failed = await up(program(args), { ...options, throwOnError: false });
    await stack.faults("");
    expect(failed.errors.map((e) => e.message).join("\n")).toContain("No GPU capacity left");
    const partial = failed.state.resources.find((r) => r.name === "gpu");
    expect(partial?.id).toBeTruthy();
    expect(partial?.initErrors?.join(" ")).toContain("No GPU capacity left");
    expect((await getGpu(partial!.id!)).status).toBe("Error");

    const replaced = await up(program(args), options);
    expect(replaced.step("gpu").op).toBe("replace");
    const newId = replaced.outputs.id as string;
    expect(newId).not.toBe(partial!.id);
    await expect(getGpu(partial!.id!)).rejects.toMatchObject({ status: 404 });
    expect((await getGpu(newId)).status).toBe("Running");
    await destroy(options);
    expect(await gpusNamed("jf-")).toEqual([]);
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

    await stack.faults("createGpuVm,status=503,count=2");
    const failed = await failureOf(up(program({ ...args, name: "rf2-gpu" }), options));
    await stack.faults("");
    expect(failed.message).toContain('Creating GPU VM "rf2-gpu" failed twice without an answer');
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
