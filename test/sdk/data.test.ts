import * as pulumi from "@pulumi/pulumi";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import {
  GpuVirtualMachine,
  getGpuInventory,
  getGpuInventoryOutput,
  getVolumeSizes,
  getVolumeSizesOutput,
  type GpuCombination,
} from "../../sdk";
import { closeClients } from "../../provider/resources";
import { destroy, RunError, up } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";

const stack = await stackOnEmulator({ jobDurationMs: 100 });
const [fra, ams, nyc] = stack.datacenters;
const admin = `${stack.emulator.baseUrl.replace(/\/v1$/, "")}/__admin`;
const apiKey = stack.emulator.bootstrap.users.admin.apiKey;

afterAll(() => closeClients());
afterEach(() => {
  vi.unstubAllEnvs();
});

async function setAvailability(seriesId: number, datacenterId: string, gpuCount: number, available: boolean) {
  const response = await fetch(`${admin}/gpu-availability`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ seriesId, datacenterId, gpuCount, available }),
  });
  if (!response.ok) throw new Error(`gpu-availability: HTTP ${response.status} ${await response.text()}`);
}

/** What the emulator offers now, flattened as `available` should be. */
async function expectedCombinations(query: { count?: 1 | 2 | 4 | 8 } = {}): Promise<GpuCombination[]> {
  const inventory = await stack.api.gpuInventory({ query });
  return inventory.flatMap((s) =>
    s.availability.flatMap((a) =>
      ([1, 2, 4, 8] as const)
        .filter((n) => a.gpuCounts[String(n) as "1" | "2" | "4" | "8"].available)
        .map((gpuCount) => ({
          seriesId: s.seriesId,
          seriesName: s.seriesName,
          seriesCode: s.seriesCode,
          datacenterId: a.datacenterId,
          datacenterName: a.datacenterName,
          gpuCount,
        })),
    ),
  );
}

/** Neither config nor environment credentials, except those a test sets. */
function clearEnvironment(): void {
  for (const name of ["BASE_URL", "API_KEY", "SESSION_TOKEN", "EMAIL", "PASSWORD", "TOTP_SECRET", "ENTITY_ID"]) {
    vi.stubEnv(`CLOUDINFRA_${name}`, "");
  }
}

describe("data functions", () => {
  it("an inventory lookup picks an available combination and the GPU VM is created with it", async () => {
    clearEnvironment();
    const options = stack.options();
    const result = await up(async () => {
      const inventory = await getGpuInventory({ count: 4 });
      const choice = inventory.available.find((c) => c.gpuCount === 4)!;
      const gpu = new GpuVirtualMachine("gpu", {
        name: "data-gpu",
        datacenterId: choice.datacenterId,
        seriesId: choice.seriesId,
        gpuCount: choice.gpuCount,
      });
      // an Output argument: the GPU VM's data center, known once it is created
      const sizes = getVolumeSizesOutput({ datacenterId: gpu.datacenterId });
      return { inventory, choice, gpuId: gpu.id, sizes };
    }, options);

    const inventory = result.outputs.inventory as Awaited<ReturnType<typeof getGpuInventory>>;
    expect(inventory.series).toEqual(await stack.api.gpuInventory({ query: { count: 4 } }));
    expect(inventory.available).toEqual(await expectedCombinations({ count: 4 }));
    // nyc-1 has nothing above 2 GPUs, H100 has no 8-GPU boxes: neither is offered for 4 GPUs in nyc-1
    expect(inventory.available.some((c) => c.datacenterId === nyc.id)).toBe(false);
    expect(inventory.series.every((s) => s.availability.every((a) => a.gpuCounts["4"].available))).toBe(true);

    const choice = result.outputs.choice as GpuCombination;
    const gpu = await stack.api.getGpuVm({ params: { id: result.outputs.gpuId as string } });
    expect(gpu).toMatchObject({ gpuCount: choice.gpuCount, status: "Running" });
    expect(gpu.series.id).toBe(choice.seriesId);
    expect(gpu.datacenter.id).toBe(choice.datacenterId);
    expect(result.outputs.sizes).toEqual(await stack.api.volumeSizes({ params: { id: choice.datacenterId } }));

    await destroy(options);
    expect((await stack.api.listGpuVms({ query: { search: "data-" } })).data).toEqual([]);
  });

  it("reads the inventory fresh at each call and takes Input arguments in the Output variants", async () => {
    clearEnvironment();
    const a100 = stack.emulator.bootstrap.fixtures.gpuSeries.find((s) => s.code === "a100")!;
    const options = stack.options();
    try {
      const result = await up(async () => {
        const before = await getGpuInventory({ code: "A100", datacenterId: ams.id });
        await setAvailability(a100.id, ams.id, 8, false);
        const after = getGpuInventoryOutput({ code: pulumi.output("a100"), datacenterId: pulumi.output(ams.id) });
        const sizes = await getVolumeSizes({ datacenterId: fra.id });
        return { before, after, sizes };
      }, options);
      const before = result.outputs.before as Awaited<ReturnType<typeof getGpuInventory>>;
      const after = result.outputs.after as Awaited<ReturnType<typeof getGpuInventory>>;
      expect(before.available.map((c) => c.gpuCount)).toEqual([1, 2, 4, 8]);
      expect(after.available.map((c) => c.gpuCount)).toEqual([1, 2, 4]);
      expect(after.series).toEqual(await stack.api.gpuInventory({ query: { code: "a100", datacenterId: ams.id } }));
      expect(after.series[0].availability[0].gpuCounts["8"].available).toBe(false);
      expect(result.outputs.sizes).toEqual(await stack.api.volumeSizes({ params: { id: fra.id } }));
    } finally {
      await setAvailability(a100.id, ams.id, 8, true);
    }
  });

  it("falls back to the CLOUDINFRA_* environment when the stack config has no cloudinfra settings", async () => {
    clearEnvironment();
    vi.stubEnv("CLOUDINFRA_BASE_URL", stack.emulator.baseUrl);
    vi.stubEnv("CLOUDINFRA_API_KEY", apiKey);
    const result = await up(async () => ({ sizes: await getVolumeSizes({ datacenterId: ams.id }) }), {
      ...stack.options(),
      config: {},
    });
    expect(result.outputs.sizes).toEqual(await stack.api.volumeSizes({ params: { id: ams.id } }));
  });

  it("without credentials fails with the one error that lists the options, sending nothing", async () => {
    clearEnvironment();
    const since = stack.mark();
    const error = (await up(async () => ({ sizes: await getVolumeSizes({ datacenterId: ams.id }) }), {
      ...stack.options(),
      config: { "cloudinfra:baseUrl": stack.emulator.baseUrl },
    }).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    expect(error.message).toContain("No cloudinfra credentials are configured");
    // As the CLI prints it: the function, the message, its code (README's "Error codes").
    expect(error.message).toMatch(/getVolumeSizes: No cloudinfra credentials are configured[^]* \[SETTING_INVALID\]/);
    for (const option of [
      "cloudinfra:apiKey",
      "cloudinfra:sessionToken",
      "CLOUDINFRA_API_KEY",
      "cloudinfra:totpSecret",
    ]) {
      expect(error.message).toContain(option);
    }
    expect(await stack.requests(since)).toEqual([]);
  });

  it("refuses bad arguments naming them, before any request", async () => {
    clearEnvironment();
    const since = stack.mark();
    const error = (await up(async () => ({ inv: await getGpuInventory({ count: 3 as never, datacenterId: "x" }) }), {
      ...stack.options(),
    }).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    expect(error.message).toContain("query.count");
    expect(error.message).toContain("query.datacenterId");
    expect(error.message).toContain("not sent");
    expect(await stack.requests(since)).toEqual([]);
  });
});
