/**
 * A `pulumi up` killed hard mid-way, through the real CLI, as when a CI runner is killed (job timeout → SIGKILL, or a
 * second Ctrl-C): the CLI and every process it started (language host, program, providers) get SIGKILL while a
 * Network and a VirtualMachine are being created. What the state and the API hold then, what the next runs of the
 * CLI do with the pending creates (v3.259.0: `up` warns and keeps them, `--import-pending-creates` drops them without
 * importing anything), and the recovery that works, per resource family: the dynamic resources (the VM taken over by
 * the next up through `adoptId`, no state edited) and the plugin (`pulumi import` of the VM); the network is adopted
 * by the next up.
 * The recovery scripts are the README's ("A `pulumi up` killed mid-way"), run as written.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { describe, expect, it } from "vitest";
import { cliWorld, describeCli } from "./helpers";
import { TOKEN, useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld({ jobDurationMs: 3000 });
const [fra] = world.datacenters;

const families = {
  dynamic: { sdk: "@cloudinfra/pulumi", token: "pulumi-nodejs:dynamic/cloudinfra:", provider: "dynamic-provider" },
  plugin: { sdk: "@cloudinfra/pulumi/plugin", token: TOKEN, provider: "provider/plugin/main.js" },
} as const;
type Family = keyof typeof families;

/** The user's project: a network (unique name, `adopt: true`) and a VM (names not unique), neither using the other. */
const project = path.join(world.work, "hard-kill");
fs.mkdirSync(project);
fs.writeFileSync(path.join(project, "Pulumi.yaml"), "name: hard-kill\nruntime: nodejs\n");
fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "hard-kill", main: "index.ts" }));
fs.writeFileSync(
  path.join(project, "index.ts"),
  `import * as pulumi from "@pulumi/pulumi";
import * as dynamic from "${families.dynamic.sdk}";
import * as plugin from "${families.plugin.sdk}";

const config = new pulumi.Config("app");
const prefix = config.require("prefix");
const datacenterId = config.require("datacenterId");
const cloudinfra = config.require("family") === "plugin" ? (plugin as unknown as typeof dynamic) : dynamic;

const net = new cloudinfra.Network("net", {
  name: prefix + "-net",
  datacenterId,
  networkType: "standard",
  adopt: true,
});
const vm = new cloudinfra.VirtualMachine("vm", {
  name: prefix + "-vm",
  datacenterId,
  imageId: 1,
  configurationId: 1,
  adoptId: config.get("vmAdoptId"),
});
export const networkId = net.id;
export const vmId = vm.id;
`,
);

/** Runs a shell script in the stack's project directory, with the stack's CLI environment (its stack selected). */
async function shell(stack: Stack, script: string, env: Record<string, string> = {}) {
  const child = spawn("bash", ["-c", `set -euo pipefail\n${script}`], {
    cwd: stack.workspace.workDir,
    env: { ...process.env, ...(stack.workspace as unknown as { envVars: Record<string, string> }).envVars, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
  return { code, output };
}

/** `pulumi <args>` on the stack: exit code and output (stdout and stderr). */
const pulumi = (stack: Stack, ...args: string[]) =>
  shell(stack, ["pulumi", ...args, "--color", "never", "--non-interactive"].map((a) => `'${a}'`).join(" "));

/** The live processes below `pid` (from /proc): what a killed CI runner takes down with the CLI. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e))) {
    const stat = readProc(Number(entry), "stat");
    if (stat === undefined) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
  }
  const below = (p: number): number[] => (children.get(p) ?? []).flatMap((c) => [c, ...below(c)]);
  return below(pid);
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return undefined;
  }
}

/** Alive: present in /proc and not a zombie (a killed process whose parent died is reaped by init, or not at all). */
function alive(pid: number): boolean {
  const stat = readProc(pid, "stat");
  return stat !== undefined && stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
}

/**
 * SIGKILL of the CLI's process group and of every process it started (the engine starts plugins in process groups of
 * their own): the tree is frozen with SIGSTOP first, so no process escapes by being started during the kill. Resolves
 * with the command lines killed once every one of them is dead.
 */
async function killRunner(cli: ChildProcess): Promise<string[]> {
  const root = cli.pid!;
  const frozen = new Map<number, string>();
  for (let fresh = [root]; fresh.length > 0; fresh = [root, ...descendants(root)].filter((p) => !frozen.has(p))) {
    for (const pid of fresh) {
      frozen.set(pid, (readProc(pid, "cmdline") ?? "").replace(/\0/g, " "));
      signal(pid, "SIGSTOP");
    }
  }
  const exited = new Promise((resolve) => cli.once("exit", resolve));
  process.kill(-root, "SIGKILL");
  for (const pid of frozen.keys()) signal(pid, "SIGKILL");
  await exited;
  await until(() => ![...frozen.keys()].some(alive), "the killed processes to die");
  return [...frozen.values()];
}

/** Sends a signal to a process that may have exited meanwhile (a short-lived child, or gone with its group). */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
}

async function until(done: () => boolean | Promise<boolean>, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** The networks and VMs of the stack's names in the API: `id status` each. */
async function inApi(prefix: string): Promise<{ networks: string[]; vms: string[] }> {
  const networks = await world.api.listNetworks({ query: { search: prefix, limit: 100 } });
  const vms = await world.api.listVms({ query: { search: prefix, limit: 100 } });
  return {
    networks: networks.data.filter((n) => n.name === `${prefix}-net`).map((n) => `${n.id} ${n.status}`),
    vms: vms.data
      .filter((v) => v.name === `${prefix}-vm`)
      .map((v) => `${v.id} ${v.status}`)
      .sort(),
  };
}

interface Deployment {
  resources?: { urn: string; type: string; id?: string }[];
  pending_operations?: { type: string; resource: { urn: string; id?: string } }[];
}

/** The stack's state (`pulumi stack export`): its cloudinfra resources (`urn id`), pending operations (`type urn`). */
async function inState(stack: Stack): Promise<{ resources: string[]; pending: string[] }> {
  const deployment = (await stack.exportStack()).deployment as Deployment;
  const ours = (type: string) => Object.values(families).some((f) => type.startsWith(f.token));
  return {
    resources: (deployment.resources ?? []).filter((r) => ours(r.type)).map((r) => `${r.urn} ${r.id}`),
    pending: (deployment.pending_operations ?? []).map((op) =>
      [op.type, op.resource.urn, op.resource.id].filter(Boolean).join(" "),
    ),
  };
}

/** Moves the emulator's clock: the jobs the killed run started finish, as they do in the cloud while CI restarts. */
async function advanceClock(ms: number): Promise<void> {
  const admin = world.emulator.baseUrl.replace(/\/v1$/, "/__admin");
  const response = await fetch(`${admin}/clock`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ advanceMs: ms }),
  });
  expect(response.status).toBe(200);
}

interface Killed {
  stack: Stack;
  prefix: string;
  urn: { net: string; vm: string };
  /** What the killed run created in the API. */
  networkId: string;
  vmId: string;
}

/**
 * A stack of the project whose `pulumi up` (the CLI as a child process, as CI runs it) is killed hard while the
 * network's and the VM's create jobs run. Checks what the state and the API hold then; the jobs are then let finish.
 */
async function killedUp(family: Family, prefix: string): Promise<Killed> {
  const stack = await world.stack(project, undefined, {
    ...world.config,
    "app:family": family,
    "app:prefix": prefix,
    "app:datacenterId": fra!.id,
  });
  const token = families[family].token;
  const urn = {
    net: `urn:pulumi:${stack.name}::hard-kill::${token}Network::net`,
    vm: `urn:pulumi:${stack.name}::hard-kill::${token}VirtualMachine::vm`,
  };

  // Slow jobs while the run is killed (a network create lasts 5 s, a VM create 30 s), so that both are in flight.
  const jobScale = world.emulator.ctx.options.jobDurationMs;
  world.emulator.ctx.options.jobDurationMs = 60_000;
  let killed: string[];
  let output = "";
  try {
    const mark = world.mark();
    const cli = spawn("pulumi", ["up", "--yes", "--skip-preview", "--color", "never", "--non-interactive"], {
      cwd: stack.workspace.workDir,
      env: { ...process.env, ...(stack.workspace as unknown as { envVars: Record<string, string> }).envVars },
      detached: true, // its own process group, as a CI job's shell
      stdio: ["ignore", "pipe", "pipe"],
    });
    cli.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    cli.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    // Both creates accepted by the API, and their jobs named in the run's log (what the CI log keeps of the run).
    await until(async () => {
      if (cli.exitCode !== null) throw new Error(`pulumi up ended before it was killed:\n${output}`);
      const creates = (await world.requests(mark)).filter(
        (r) => (r.route === "createNetwork" || r.route === "createVm") && r.status === 202,
      );
      return (
        creates.length === 2 &&
        /Creating VM .*job \S+ started/.test(output) &&
        /Creating network named .*job \S+ started/.test(output)
      );
    }, "both creates in flight");
    killed = await killRunner(cli);
  } finally {
    world.emulator.ctx.options.jobDurationMs = jobScale;
  }
  // The CLI, the language host, the program and the provider: all dead, as on a killed runner.
  for (const part of ["pulumi up", "pulumi-language-nodejs", "cmd/run/index.js", families[family].provider]) {
    expect(
      killed.some((cmd) => cmd.includes(part)),
      part,
    ).toBe(true);
  }

  // The state: no cloudinfra resource (only the stack and its default provider), and two pending creates without an
  // id (the engine never heard back).
  const state = await inState(stack);
  expect(state.resources).toEqual([]);
  expect(state.pending.sort()).toEqual([`creating ${urn.net}`, `creating ${urn.vm}`]);
  // The API: both being created.
  const api = await inApi(prefix);
  expect(api.networks).toEqual([expect.stringMatching(/ Creating$/)]);
  expect(api.vms).toEqual([expect.stringMatching(/ Creating$/)]);

  await advanceClock(60_000);
  const networkId = api.networks[0]!.split(" ")[0]!;
  // The VM's id, as its owner finds it: the killed run's log names the create job, whose record names the VM once done.
  const job = /Creating VM "[^"]+": job (\S+) started/.exec(output)![1]!;
  const { jobs } = await world.api.queryJobs({ body: { jobIds: [job] } });
  const vmId = jobs[0]!.resourceId!;
  expect(await inApi(prefix)).toEqual({ networks: [`${networkId} Active`], vms: [`${vmId} Running`] });
  return { stack, prefix, urn, networkId, vmId };
}

/** Converged: exactly the killed run's network and VM in the API, both in the state, nothing pending, up a no-op. */
async function expectRecovered({ stack, prefix, urn, networkId, vmId }: Killed): Promise<void> {
  expect(await inApi(prefix)).toEqual({ networks: [`${networkId} Active`], vms: [`${vmId} Running`] });
  const state = await inState(stack);
  expect(state.resources.sort()).toEqual([`${urn.net} ${networkId}`, `${urn.vm} ${vmId}`]);
  expect(state.pending).toEqual([]);
  const mark = world.mark();
  const again = await pulumi(stack, "up", "--yes", "--expect-no-changes");
  expect(again.code, again.output).toBe(0);
  expect((await world.requests(mark)).filter((r) => r.method !== "GET" && r.route !== "queryJobs")).toEqual([]);

  const destroyed = await pulumi(stack, "destroy", "--yes", "--skip-preview");
  expect(destroyed.code, destroyed.output).toBe(0);
  expect(await inApi(prefix)).toEqual({ networks: [], vms: [] });
}

describeCli("a `pulumi up` killed hard mid-way (SIGKILL of the CLI and its plugins), then the next runs", () => {
  describe.each(["dynamic", "plugin"] as const)("%s resources", (family) => {
    it("the next runs: the stack is locked; up warns, keeps the pending creates, adopts the network and creates a second VM; --import-pending-creates drops the VM's create without reading it", async () => {
      const killed = await killedUp(family, `hk-${family}-next`);
      const { stack, urn, vmId, networkId } = killed;

      const locked = await pulumi(stack, "up", "--yes", "--skip-preview");
      expect(locked.code).not.toBe(0);
      expect(locked.output).toContain("error: the stack is currently locked by 1 lock(s)");
      expect(locked.output).toContain("delete the lock file with `pulumi cancel`");
      const cancelled = await pulumi(stack, "cancel", "--yes");
      expect(cancelled.output).toContain("has been canceled");

      let mark = world.mark();
      const next = await pulumi(stack, "up", "--yes", "--skip-preview");
      expect(next.code, next.output).toBe(0);
      expect(next.output).toContain(
        "warning: Attempting to deploy or update resources with 2 pending operations from previous deployment.",
      );
      expect(next.output).toContain(`* ${urn.net}, interrupted while creating`);
      expect(next.output).toContain(`* ${urn.vm}, interrupted while creating`);
      // The network is adopted (its name is taken: 409, then taken over), no second one; the VM is created again, and
      // the killed run's VM is left outside the stack.
      const creates = (await world.requests(mark)).filter((r) => r.route === "createNetwork" || r.route === "createVm");
      expect(creates.map((r) => `${r.route} ${r.status}`).sort()).toEqual(["createNetwork 409", "createVm 202"]);
      const api = await inApi(killed.prefix);
      expect(api.networks).toEqual([`${networkId} Active`]);
      expect(api.vms).toHaveLength(2);
      const second = api.vms.map((v) => v.split(" ")[0]!).find((id) => id !== vmId)!;
      // The pending creates stay after a successful up.
      const afterUp = await inState(stack);
      expect(afterUp.resources.sort()).toEqual([`${urn.net} ${networkId}`, `${urn.vm} ${second}`]);
      expect(afterUp.pending.sort()).toEqual([`creating ${urn.net}`, `creating ${urn.vm}`]);

      // One `URN=ID` value is refused; the pair goes as two values of the flag. The VM's pending create is then
      // dropped, and the killed run's VM is not even read: nothing is imported.
      const joined = await pulumi(stack, "refresh", "--yes", "--import-pending-creates", `${urn.vm}=${vmId}`);
      expect(joined.code).not.toBe(0);
      expect(joined.output).toContain("each URN must be followed by an ID: found an odd number of entries");
      mark = world.mark();
      const imported = await pulumi(
        stack,
        ...["refresh", "--yes", "--skip-preview"],
        ...["--import-pending-creates", urn.vm, "--import-pending-creates", vmId],
      );
      expect(imported.code, imported.output).toBe(0);
      expect(await inState(stack)).toEqual({ resources: afterUp.resources, pending: [`creating ${urn.net}`] });
      expect((await world.requests(mark)).filter((r) => r.path.includes(vmId))).toEqual([]);
      // --clear-pending-creates drops the rest.
      const cleared = await pulumi(stack, "refresh", "--yes", "--skip-preview", "--clear-pending-creates");
      expect(cleared.code, cleared.output).toBe(0);
      expect((await inState(stack)).pending).toEqual([]);

      expect((await pulumi(stack, "destroy", "--yes", "--skip-preview")).code).toBe(0);
      const leaked = await world.api.deleteVm({ params: { id: vmId } });
      await world.api.jobs.wait(leaked.jobId);
      expect(await inApi(killed.prefix)).toEqual({ networks: [], vms: [] });
    });
  });

  it("dynamic resources, recovered without editing the state: the next up takes the VM over by adoptId and adopts the network; pending creates cleared", async () => {
    const killed = await killedUp("dynamic", "hk-dynamic");
    const { stack, vmId } = killed;
    const mark = world.mark();
    const recovery = await shell(
      stack,
      `pulumi cancel --yes
pulumi config set app:vmAdoptId "$VM_ID"
pulumi up --yes
pulumi refresh --yes --clear-pending-creates`,
      { VM_ID: vmId },
    );
    expect(recovery.code, recovery.output).toBe(0);
    expect(recovery.output).toContain(`taking over VM "hk-dynamic-vm" (${vmId}) (adoptId) instead of creating a VM`);
    // Nothing created: the network's name is taken (409, then taken over), the VM is read, not created.
    const creates = (await world.requests(mark)).filter((r) => r.route === "createNetwork" || r.route === "createVm");
    expect(creates.map((r) => `${r.route} ${r.status}`)).toEqual(["createNetwork 409"]);
    await expectRecovered(killed);
  });

  it("plugin resources, recovered: pending creates cleared, `pulumi import` of the VM, up adopts the network", async () => {
    const killed = await killedUp("plugin", "hk-plugin");
    const { stack, vmId } = killed;
    const recovery = await shell(
      stack,
      `pulumi cancel --yes
pulumi refresh --yes --clear-pending-creates
pulumi import cloudinfra:index:VirtualMachine vm "$VM_ID" --yes --protect=false
pulumi up --yes`,
      { VM_ID: vmId },
    );
    expect(recovery.code, recovery.output).toBe(0);
    await expectRecovered(killed);
  });
});
