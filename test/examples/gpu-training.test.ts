import { afterAll, afterEach, expect, it } from "vitest";
import { gpuTraining } from "../../examples/gpu-training/program";
import { closeClients } from "../../provider/resources";
import { destroy, RunError, up } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";
import { inventory } from "./helpers";

const stack = await stackOnEmulator();
const [fra, ams] = stack.datacenters;
const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;
const admin = `${stack.emulator.baseUrl.replace(/\/v1$/, "")}/__admin`;

/** Changes what the emulator's GPU inventory offers, as other customers' orders do. */
async function setAvailability(datacenterId: string, gpuCount: number, available: boolean) {
  const response = await fetch(`${admin}/gpu-availability`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ seriesId: a100.id, datacenterId, gpuCount, available }),
  });
  if (!response.ok) throw new Error(`gpu-availability: HTTP ${response.status} ${await response.text()}`);
}

afterEach(() => setAvailability(fra.id, 4, true));
// the inventory lookup runs in this process, with clients of its own
afterAll(() => closeClients());

const options = (config: Record<string, string> = {}) =>
  stack.options({
    project: "gpu-training",
    config: {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:apiKey": { secret: stack.emulator.bootstrap.users.admin.apiKey },
      "cloudinfra:pollIntervalMs": "20",
      ...config,
    },
  });

it("gpu-training: picks the smallest available combination, keeps the box when the inventory changes, and is destroyed", async () => {
  const before = await inventory(stack);
  const opts = options();

  const created = await up(gpuTraining, opts);
  expect(created.outputs.combination).toEqual({ series: a100.name, datacenter: fra.name, gpuCount: 4 });
  const box = await stack.api.getGpuVm({ params: { id: created.outputs.gpuVmId as string } });
  expect(box).toMatchObject({ name: "gpu-training", status: "Running", gpuCount: 4, series: { code: "a100" } });
  expect(box.datacenter.id).toBe(fra.id);
  expect(created.outputs.jupyterLabUrl).toBe(box.jupyterLabUrl);
  // exposePrivateKey: true in the program: the API's key, a secret stack output
  expect(created.secretOutputs).toContain("sshPrivateKey");
  expect(created.outputs.sshPrivateKey).toBe((await stack.api.getGpuSshKey({ params: { id: box.id } })).privateKey);

  // fra-1 no longer offers 4 A100s: the next pick differs, but the running box is left as it is
  await setAvailability(fra.id, 4, false);
  const again = await up(gpuTraining, opts);
  expect(again.step("box").op).toBe("same");
  expect(again.outputs.gpuVmId).toBe(box.id);
  expect(again.outputs.combination).toEqual({ series: a100.name, datacenter: fra.name, gpuCount: 4 });

  await destroy(opts);
  expect(await inventory(stack)).toEqual(before);
});

it("gpu-training: goes where the combination is available, the preferred data center first", async () => {
  await setAvailability(fra.id, 4, false);

  // anywhere: the smallest fitting box, 4 GPUs in ams-1, rather than 8 in fra-1
  const anywhere = options({ gpuCount: "3" });
  const created = await up(gpuTraining, anywhere);
  expect(created.outputs.combination).toEqual({ series: a100.name, datacenter: ams.name, gpuCount: 4 });
  const box = await stack.api.getGpuVm({ params: { id: created.outputs.gpuVmId as string } });
  expect(box.datacenter.id).toBe(ams.id);
  expect(box.gpuCount).toBe(4);
  await destroy(anywhere);

  // preferring fra-1: 8 GPUs there
  const preferring = options({ name: "gpu-fra", preferredDatacenterId: fra.id });
  const inFra = await up(gpuTraining, preferring);
  expect(inFra.outputs.combination).toEqual({ series: a100.name, datacenter: fra.name, gpuCount: 8 });
  const fraBox = await stack.api.getGpuVm({ params: { id: inFra.outputs.gpuVmId as string } });
  expect(fraBox).toMatchObject({ name: "gpu-fra", gpuCount: 8 });
  expect(fraBox.datacenter.id).toBe(fra.id);
  await destroy(preferring);
});

it("gpu-training: when nothing fits, fails before creating anything, naming what is available", async () => {
  const before = await inventory(stack);
  const error = (await up(gpuTraining, options({ gpuSeries: "h100", gpuCount: "8" })).catch(
    (e: unknown) => e,
  )) as RunError;
  expect(error).toBeInstanceOf(RunError);
  expect(error.message).toContain("No h100 GPU VM with at least 8 GPUs can be ordered now");
  expect(error.message).toContain("4x h100 in fra-1");
  expect(await inventory(stack)).toEqual(before);
});
