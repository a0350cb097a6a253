import { afterAll, describe, expect, it } from "vitest";
import type { ProgressLog } from "../../provider/client/progress";
import {
  checkResource,
  closeClients,
  configuration,
  handlerContext,
  kinds,
  type HandlerContext,
  type Props,
} from "../../provider/resources";
import { stackOnEmulator } from "./helpers";
import { casesOf, committedCases, COUNT, SEED } from "../e2e/preflight-cases";

/**
 * A seeded table of plans, valid and invalid (test/fixtures/preflight-cases.json, regenerated from its seed by
 * `casesOf`, test/e2e/preflight-cases.ts, and compared): for each, the preview's verdict (checkResource, as both hosts
 * run it) and the outcome of the write `up` would send (the kind's handler, with the preview checks off so the API
 * itself decides) must agree: preview refuses exactly what the API refuses. One emulator, one run per case. The same
 * table runs through the real CLI with both SDKs in test/e2e/preflight-table.test.ts.
 */
const cases = committedCases();

const stack = await stackOnEmulator({ jobDurationMs: 50 });
const { admin, member } = stack.emulator.bootstrap.users;
const { fixtures } = stack.emulator.bootstrap;
const datacenters = stack.datacenters;
const [fra, ams] = datacenters;
afterAll(closeClients);

function run(values: Record<string, string> = {}): HandlerContext {
  const log: ProgressLog = { info: () => undefined, warn: () => undefined };
  const config: Record<string, string> = {
    "cloudinfra:baseUrl": stack.emulator.baseUrl,
    "cloudinfra:apiKey": admin.apiKey,
    "cloudinfra:pollIntervalMs": "20",
    ...values,
  };
  return handlerContext({ configuration: configuration((key) => config[key]), log });
}

async function volumeIn(name: string, datacenterId: string): Promise<string> {
  const catalog = await stack.api.volumeSizes({ params: { id: datacenterId } });
  const size = catalog.volumeTypes.find((t) => t.id === 1)!.availableSizes.find((s) => s.sizeGb === 10)!;
  const job = await stack.api.createVolume({
    body: { name, datacenterId, volumeTypeId: 1, volumeSizeId: size.id, sizeGb: 10 },
  });
  return (await stack.api.waitForJob(job.jobId)).resourceId!;
}

/** Whether `write` succeeded; undone afterwards by `undo` (so the next case meets the same world). */
async function outcome<T>(write: () => Promise<T>, undo: (value: T) => Promise<unknown>): Promise<boolean> {
  let value: T;
  try {
    value = await write();
  } catch {
    return false;
  }
  await undo(value);
  return true;
}

describe("preview's verdict and up's outcome agree (seeded table)", () => {
  it("the table's cases are those of its seed", () => {
    expect(cases.seed).toBe(SEED);
    expect(cases.cases).toEqual(casesOf(SEED, COUNT));
    // Every kind of case occurs.
    expect(new Set(cases.cases.map((c) => c.kind))).toEqual(new Set(["gpu", "volume", "network", "attach", "power"]));
  });

  it("in every case", async () => {
    const vmInputs = (
      await checkResource(
        run(),
        kinds.VirtualMachine,
        {},
        {
          name: "pt-vm",
          datacenterId: fra!.id,
          imageId: fixtures.images[0]!.id,
          configurationId: fixtures.configurations[0]!.id,
        },
      )
    ).inputs;
    const vm = await kinds.VirtualMachine.create(run(), vmInputs);
    const near = await volumeIn("pt-near", fra!.id);
    const far = await volumeIn("pt-far", ams!.id);
    const held = await volumeIn("pt-held", fra!.id);
    const networkJob = await stack.api.createNetwork({
      body: { name: "pt-nheld", datacenterId: fra!.id, networkType: "standard" },
    });
    const heldNetwork = (await stack.api.waitForJob(networkJob.jobId)).resourceId!;
    // A VM holding its maximum of volumes (configuration 1: 4).
    const fullJob = await stack.api.createVm({
      body: { name: "pt-full-vm", datacenterId: fra!.id, imageId: 1, configurationId: 1 },
    });
    const fullVm = (await stack.api.waitForJob(fullJob[0]!.id)).resourceId!;
    for (const n of [1, 2, 3, 4]) {
      const job = await stack.api.attachVolume({
        params: { id: await volumeIn(`pt-on-${n}`, fra!.id) },
        body: { virtualMachineId: fullVm },
      });
      await stack.api.waitForJob(job.jobId);
    }
    // A VM with room (configuration 2: 8 volumes) holding 4 nvme 50 GB volumes, that size's maxVolumesPerVm, and an
    // nvme 50 GB volume to attach to it.
    const nvme50 = (await stack.api.volumeSizes({ params: { id: fra!.id } })).volumeTypes
      .find((t) => t.id === 2)!
      .availableSizes.find((z) => z.sizeGb === 50)!;
    const nvmeIn = async (name: string) => {
      const job = await stack.api.createVolume({
        body: { name, datacenterId: fra!.id, volumeTypeId: 2, volumeSizeId: nvme50.id, sizeGb: 50 },
      });
      return (await stack.api.waitForJob(job.jobId)).resourceId!;
    };
    const sizeJob = await stack.api.createVm({
      body: { name: "pt-size-vm", datacenterId: fra!.id, imageId: 1, configurationId: 2 },
    });
    const sizeVm = (await stack.api.waitForJob(sizeJob[0]!.id)).resourceId!;
    for (const n of [1, 2, 3, 4]) {
      const job = await stack.api.attachVolume({
        params: { id: await nvmeIn(`pt-nvme-on-${n}`) },
        body: { virtualMachineId: sizeVm },
      });
      await stack.api.waitForJob(job.jobId);
    }
    const nvme = await nvmeIn("pt-nvme");
    const rows: string[] = [];
    let index = 0;
    for (const c of cases.cases) {
      index++;
      await closeClients(); // each case is a run of its own
      const preview = run({
        "cloudinfra:apiKey": c.kind === "power" && c.key === "member" ? member.apiKey : admin.apiKey,
      });
      const direct = run({
        "cloudinfra:apiKey": c.kind === "power" && c.key === "member" ? member.apiKey : admin.apiKey,
        "cloudinfra:preflight": "off",
      });
      let verdict: boolean;
      let done: boolean;
      if (c.kind === "gpu") {
        const series = fixtures.gpuSeries.find((s) => s.code === c.series)!;
        const news = {
          name: `pt-gpu-${index}`,
          datacenterId: datacenters[c.datacenter]!.id,
          seriesId: series.id,
          gpuCount: c.gpuCount,
        };
        const checked = await checkResource(preview, kinds.GpuVirtualMachine, {}, news);
        verdict = checked.failures.length === 0;
        done = await outcome(
          () => kinds.GpuVirtualMachine.create(direct, checked.inputs),
          (made) => kinds.GpuVirtualMachine.delete(direct, made.id, made.outs),
        );
      } else if (c.kind === "volume") {
        const news: Props = {
          name: c.held ? "pt-held" : `pt-free-${index}`,
          datacenterId: fra!.id,
          volumeTypeId: 1,
          sizeGb: 10,
          ...(c.adopt ? { adopt: true } : {}),
        };
        const checked = await checkResource(preview, kinds.Volume, {}, news);
        verdict = checked.failures.length === 0;
        done = await outcome(
          () => kinds.Volume.create(direct, checked.inputs),
          // An adopted volume is the held one: kept for the next cases.
          (made) => (made.id === held ? Promise.resolve() : kinds.Volume.delete(direct, made.id, made.outs)),
        );
      } else if (c.kind === "network") {
        const news: Props = {
          name: c.held ? "pt-nheld" : `pt-net-${index}`,
          datacenterId: fra!.id,
          networkType: "standard",
          ...(c.adopt ? { adopt: true } : {}),
        };
        const checked = await checkResource(preview, kinds.Network, {}, news);
        verdict = checked.failures.length === 0;
        done = await outcome(
          () => kinds.Network.create(direct, checked.inputs),
          (made) => (made.id === heldNetwork ? Promise.resolve() : kinds.Network.delete(direct, made.id, made.outs)),
        );
      } else if (c.kind === "attach") {
        const news = c.sizeFull
          ? { volumeId: nvme, virtualMachineId: sizeVm }
          : { volumeId: c.near ? near : far, virtualMachineId: c.full ? fullVm : vm.id };
        const checked = await checkResource(preview, kinds.VolumeAttachment, {}, news);
        verdict = checked.failures.length === 0;
        done = await outcome(
          () => kinds.VolumeAttachment.create(direct, checked.inputs),
          (made) => kinds.VolumeAttachment.delete(direct, made.id, made.outs),
        );
      } else {
        const olds = { ...vmInputs, powerState: "running" };
        const checked = await checkResource(preview, kinds.VirtualMachine, olds, { ...olds, powerState: c.powerState });
        verdict = checked.failures.length === 0;
        const changes = c.powerState !== "running";
        done = await outcome(
          () =>
            changes ? kinds.VirtualMachine.update(direct, vm.id, vm.outs, checked.inputs) : Promise.resolve(vm.outs),
          () => (changes ? stack.api.startVm({ params: { id: vm.id } }) : Promise.resolve()),
        );
      }
      rows.push(
        `${index} ${JSON.stringify(c)}: preview ${verdict ? "passes" : "fails"}, up ${done ? "succeeds" : "fails"}`,
      );
    }
    if (process.env.PREFLIGHT_TABLE) console.log(rows.join("\n"));
    const disagreeing = rows.filter((r) => /passes, up fails|fails, up succeeds/.test(r));
    expect(disagreeing).toEqual([]);
    // Both outcomes are in the table.
    expect(rows.some((r) => r.includes("preview fails"))).toBe(true);
    expect(rows.some((r) => r.includes("preview passes"))).toBe(true);
  });
});
