/**
 * The seeded table of test/fixtures/preflight-cases.json (test/e2e/preflight-cases.ts) through the real CLI, with both
 * SDKs: all 30 cases as independent resources of one plan (a second stack holds the cases whose key is the member's:
 * a stack has one key), one `pulumi preview` with `cloudinfra:preflight: warn` (a case's verdict: whether a warning
 * names it), then one `pulumi up --continue-on-error` with `cloudinfra:preflight: off` (a case's outcome: whether the
 * API holds what the case's write asked for, read from the API). Verdict and outcome agree in every case, both occur,
 * and in `error` mode the preview fails naming a failing case, having written nothing.
 */
import { CommandError, type EngineEvent, type Stack } from "@pulumi/pulumi/automation";
import { expect, it } from "vitest";
import { cliWorld, describeCli } from "./helpers";
import { committedCases, type Case } from "./preflight-cases";
import { attach, nvmeIn, programOf, vmIn, volumeIn, type Plan, type Sdk } from "./preflight-scenarios";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld({ jobDurationMs: 50 });
const { member: memberUser } = world.emulator.bootstrap.users;
const { gpuSeries } = world.emulator.bootstrap.fixtures;
const [fra, ams] = world.datacenters;
const { cases } = committedCases();

/** A case made ready: its resources in the plan, and how to tell, from the API, whether its write succeeded. */
interface Ready {
  c: Case;
  /** Its key: the member's cases are in the member's stack. */
  member: boolean;
  /** What a warning about this case names (its name in quotes, or its volume's id). */
  named: string;
  /** Its resource, as the base plan holds it (the power cases' VMs exist before the table's run). */
  base?: Plan[string];
  plan: Plan[string];
  /** Whether the API holds what the case's write asked for, given the stack's state (logical name → id). */
  succeeded(ids: Map<string, string>): Promise<boolean>;
}

const found = <T>(read: () => Promise<T>) => read().catch(() => undefined);

/** The API's objects of one case, made behind the stack (its own: no case meets another's). */
async function ready(sdk: Sdk, c: Case, i: number): Promise<Ready> {
  const p = `t${sdk[0]}`;
  const name = `${p}-${c.kind}-${i}`;
  const member = c.kind === "power" && c.key === "member";
  switch (c.kind) {
    case "gpu": {
      const series = gpuSeries.find((s) => s.code === c.series)!;
      const datacenterId = world.datacenters[c.datacenter]!.id;
      return {
        c,
        member,
        named: `"${name}"`,
        plan: { kind: "GpuVirtualMachine", props: { name, datacenterId, seriesId: series.id, gpuCount: c.gpuCount } },
        async succeeded(ids) {
          const id = ids.get(`c${i}`);
          const made = id && (await found(() => world.api.getGpuVm({ params: { id } })));
          return !!made && made.name === name && made.gpuCount === c.gpuCount && made.status !== "Error";
        },
      };
    }
    case "volume": {
      const held = c.held ? await volumeIn(world, name, fra!.id) : undefined;
      const props = { name, datacenterId: fra!.id, volumeTypeId: 1, sizeGb: 10, ...(c.adopt ? { adopt: true } : {}) };
      return {
        c,
        member,
        named: `"${name}"`,
        plan: { kind: "Volume", props },
        async succeeded(ids) {
          const id = ids.get(`c${i}`);
          const made = id && (await found(() => world.api.getVolume({ params: { id } })));
          return !!made && made.name === name && (!c.adopt || !held || id === held);
        },
      };
    }
    case "network": {
      let held: string | undefined;
      if (c.held) {
        const job = await world.api.createNetwork({ body: { name, datacenterId: fra!.id, networkType: "standard" } });
        held = (await world.api.waitForJob(job.jobId)).resourceId!;
      }
      const props = { name, datacenterId: fra!.id, networkType: "standard", ...(c.adopt ? { adopt: true } : {}) };
      return {
        c,
        member,
        named: `"${name}"`,
        plan: { kind: "Network", props },
        async succeeded(ids) {
          const id = ids.get(`c${i}`);
          const made = id && (await found(() => world.api.getNetwork({ params: { id } })));
          return !!made && made.name === name && (!c.adopt || !held || id === held);
        },
      };
    }
    case "attach": {
      // sizeFull: a VM with room for 8 volumes (configuration 2) holding 4 nvme 50 GB ones, that size's maximum.
      const vm = await vmIn(world, `${name}-vm`, fra!.id, c.sizeFull ? 2 : 1);
      const onIt = (n: number) =>
        c.sizeFull ? nvmeIn(world, `${name}-on${n}`, fra!.id) : volumeIn(world, `${name}-on${n}`, fra!.id);
      if (c.full || c.sizeFull) for (const n of [1, 2, 3, 4]) await attach(world, await onIt(n), vm);
      const volume = c.sizeFull
        ? await nvmeIn(world, name, fra!.id)
        : await volumeIn(world, name, (c.near ? fra : ams)!.id);
      return {
        c,
        member,
        named: volume,
        plan: { kind: "VolumeAttachment", props: { volumeId: volume, virtualMachineId: vm } },
        async succeeded() {
          return (await world.api.getVolume({ params: { id: volume } })).virtualMachineId === vm;
        },
      };
    }
    case "power": {
      const props = { name, datacenterId: fra!.id, imageId: 1, configurationId: 1, powerState: "running" };
      return {
        c,
        member,
        named: `"${name}"`,
        base: { kind: "VirtualMachine", props },
        plan: { kind: "VirtualMachine", props: { ...props, powerState: c.powerState } },
        async succeeded(ids) {
          const id = ids.get(`c${i}`);
          const made = id && (await found(() => world.api.getVm({ params: { id } })));
          return !!made && made.status === (c.powerState === "stopped" ? "Stopped" : "Running");
        },
      };
    }
  }
}

/**
 * The preview checks' warnings of a preview (`cloudinfra:preflight` "warn"): its diagnostics, as the plugin sends them,
 * and its output's lines, where the dynamic provider's host prints them.
 */
async function warnings(stack: Stack): Promise<string[]> {
  const messages: string[] = [];
  const onEvent = (event: EngineEvent) => {
    if (event.diagnosticEvent) messages.push(event.diagnosticEvent.message);
  };
  const { stdout, stderr } = await stack.preview({ color: "never", onEvent });
  return [...messages, stdout, stderr]
    .flatMap((text) => text.split("\n"))
    .filter((line) => line.includes('(a warning: cloudinfra:preflight is "warn")'));
}

/** The ids the stack's state holds, by logical name. */
async function stateIds(stack: Stack): Promise<Map<string, string>> {
  const deployment = (await stack.exportStack()).deployment as { resources?: { urn: string; id?: string }[] };
  return new Map(
    (deployment.resources ?? []).filter((r) => r.id).map((r) => [r.urn.slice(r.urn.lastIndexOf("::") + 2), r.id!]),
  );
}

const writesSince = async (mark: number) =>
  (await world.requests(mark)).filter((r) => r.method !== "GET").map((r) => `${r.method} ${r.path}`);

describeCli("preview's verdict and up's outcome agree: the seeded table through the real CLI", () => {
  it.each(["dynamic", "plugin"] as const)("%s SDK: 30 cases", { timeout: 300_000 }, async (sdk) => {
    const all = await Promise.all(cases.map((c, i) => ready(sdk, c, i + 1)));
    const rows: string[] = [];
    /** Whether the error-mode preview's failure names a case whose write the API refused. */
    let refusalNamesAFailingCase = false;
    for (const member of [false, true]) {
      const mine = all.flatMap((r, i) => (r.member === member ? [{ r, i, logical: `c${i + 1}` }] : []));
      if (mine.length === 0) continue;
      let table = false;
      const plan = () =>
        Object.fromEntries(
          mine.flatMap(({ r, logical }) => {
            const resource = table ? r.plan : r.base;
            return resource ? [[logical, resource]] : [];
          }),
        );
      const stack = await world.stack("quickstart", programOf(sdk, plan));
      // The power cases' VMs exist before (made by the admin): the table's run changes them.
      if (mine.some(({ r }) => r.base)) await stack.up({ color: "never" });
      if (member) await stack.setConfig("cloudinfra:apiKey", { value: memberUser.apiKey, secret: true });
      table = true;

      // error mode (the default, the admin's stack): the preview fails, and writes nothing.
      let refusal: string | undefined;
      if (!member) {
        const mark = world.mark();
        const error = await stack.preview({ color: "never" }).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(CommandError);
        refusal = String(error);
        expect(await writesSince(mark)).toEqual([]);
      }

      await stack.setConfig("cloudinfra:preflight", { value: "warn" });
      const mark = world.mark();
      const warned = await warnings(stack);
      expect(await writesSince(mark)).toEqual([]);

      await stack.setConfig("cloudinfra:preflight", { value: "off" });
      await stack.up({ color: "never", continueOnError: true }).catch((e: unknown) => {
        expect(e).toBeInstanceOf(CommandError);
      });
      const ids = await stateIds(stack);
      for (const { r, i, logical } of mine) {
        const verdict = !warned.some((w) => w.includes(r.named));
        const outcome = await r.succeeded(ids);
        const row = `${logical} ${JSON.stringify(r.c)}: preview ${verdict ? "passes" : "warns"}`;
        rows[i] = `${row}, up ${outcome ? "succeeds" : "fails"}`;
        if (!outcome && refusal?.includes(r.named)) refusalNamesAFailingCase = true;
      }
    }
    if (process.env.PREFLIGHT_TABLE) console.log(`${sdk}:\n${rows.join("\n")}`);
    // Every case has its row (a hole would be a case left out).
    expect([...rows].filter((r) => typeof r === "string")).toHaveLength(cases.length);
    expect(rows.filter((r) => /passes, up fails|warns, up succeeds/.test(r))).toEqual([]);
    expect(rows.some((r) => r.includes("preview warns")) && rows.some((r) => r.includes("preview passes"))).toBe(true);
    expect(refusalNamesAFailingCase).toBe(true);
  });
});
