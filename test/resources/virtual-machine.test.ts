import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { Network, VirtualMachine, type VirtualMachineArgs } from "../../sdk";
import {
  destroy,
  preview,
  readStateFile,
  refresh,
  RunError,
  saveState,
  up,
  type RunOptions,
} from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

// Stalled jobs fail after 2.5 s, so the create-timeout case ends in an Error VM quickly.
const stack = await stackOnEmulator({ stallTimeoutMs: 2500 });
// An API that sends only what the spec documents: the VM detail has neither interfaces nor addresses.
const specOnly = await stackOnEmulator({ specFieldsOnly: true, jobDurationMs: 100 });
const [fra] = stack.datacenters;
const [ubuntu, debian] = stack.emulator.bootstrap.fixtures.images;
const [small, medium, large, xlarge] = stack.emulator.bootstrap.fixtures.configurations;

const getVm = (id: string) => stack.api.getVm({ params: { id } });
const vmsNamed = async (prefix: string) =>
  (await stack.api.listVms({ query: { search: prefix, limit: 100 } })).data.filter((vm) => vm.name.startsWith(prefix));
/** Requests that changed something (job polling, a POST, excepted). */
const mutations = async (since: number) =>
  (await stack.requests(since)).filter((r) => r.method !== "GET" && r.route !== "queryJobs");

function program(args: VirtualMachineArgs) {
  return () => {
    const vm = new VirtualMachine("vm", args);
    return { id: vm.id, cpu: vm.cpu, privateIp: vm.privateIp };
  };
}

/** A VM made outside any stack (e.g. so the provider can learn a configuration's size from it). */
async function vmBehindTheStack(name: string, configurationId: number): Promise<string> {
  const [job] = await stack.api.createVm({
    body: { name, datacenterId: fra.id, imageId: ubuntu.id, configurationId },
  });
  const done = await stack.api.jobs.wait(job.id);
  return done.resourceId!;
}

async function deleteBehindTheStack(id: string): Promise<void> {
  const { jobId } = await stack.api.deleteVm({ params: { id } });
  await stack.api.jobs.wait(jobId);
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function withConfig(options: RunOptions, extra: Record<string, string>): RunOptions {
  return { ...options, config: { ...options.config, ...extra } };
}

// The lifecycle (create, no-op, in place, replace, drift, bad inputs, deleted behind the stack, failed job, destroy)
// is in the table, test/lifecycle/table.ts, played on every host; here what is particular to VMs.
describe("VirtualMachine", () => {
  it("exposePrivateKey: no ssh-key request by default; when set, one at create, a secret output; a change is an update", async () => {
    const options = stack.options();
    const args = { name: "sk-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: small.id };
    const sshKeyReads = async (since: number) =>
      (await stack.requests(since)).filter((r) => r.route === "getVmSshKey").length;

    // default: no ssh-key request at create or refresh, no key in the outputs
    let since = stack.mark();
    const plain = await up(program(args), options);
    const plainRequests = await stack.requests(since);
    expect(plainRequests.filter((r) => r.route === "getVmSshKey")).toEqual([]);
    expect(plainRequests.filter((r) => r.route === "createVm")).toHaveLength(1);
    expect(plain.step("vm").outputs).not.toHaveProperty("sshPrivateKey");
    since = stack.mark();
    expect((await refresh(options)).step("vm").refresh).toBe("same");
    expect(await sshKeyReads(since)).toBe(0);
    await destroy(options);

    // exposePrivateKey: one ssh-key GET at create (one request more than without), the API's key, secret
    const exposed = stack.options();
    since = stack.mark();
    const created = await up(program({ ...args, exposePrivateKey: true }), exposed);
    const exposedRequests = await stack.requests(since);
    expect(exposedRequests.filter((r) => r.route === "getVmSshKey")).toHaveLength(1);
    const { privateKey } = await stack.api.getVmSshKey({ params: { id: created.outputs.id as string } });
    expect(created.step("vm").outputs.sshPrivateKey).toBe(privateKey);
    expect(created.step("vm").secretOutputs).toContain("sshPrivateKey");
    const keyBody = privateKey.split("\n")[1];
    expect(keyBody.length).toBeGreaterThan(20);
    expect(fs.readFileSync(exposed.stateFile, "utf8")).not.toContain(keyBody);
    expect(created.hostLog).not.toContain(keyBody);
    since = stack.mark();
    const refreshed = await refresh(exposed);
    expect(refreshed.step("vm").refresh).toBe("same");
    expect(await sshKeyReads(since)).toBe(0);
    expect(fs.readFileSync(exposed.stateFile, "utf8")).not.toContain(keyBody);
    expect(refreshed.hostLog).not.toContain(keyBody);
    await destroy(exposed);
    // What the key costs a create: its one request (job polls aside, the creates send the same routes otherwise).
    const routesBut = (sent: typeof plainRequests, left: string[]) =>
      sent
        .map((r) => r.route ?? "")
        .filter((r) => !left.includes(r))
        .sort();
    expect(routesBut(exposedRequests, ["queryJobs", "getVmSshKey"])).toEqual(routesBut(plainRequests, ["queryJobs"]));

    // false → true: an update of the same VM (no delete), one ssh-key GET
    const toggled = stack.options();
    const vmId = (await up(program(args), toggled)).outputs.id as string;
    since = stack.mark();
    const on = await up(program({ ...args, exposePrivateKey: true }), toggled);
    expect(on.step("vm").op).toBe("update");
    expect(on.outputs.id).toBe(vmId);
    expect(await sshKeyReads(since)).toBe(1);
    expect((await stack.requests(since)).filter((r) => r.route === "deleteVm")).toEqual([]);
    expect(on.step("vm").outputs.sshPrivateKey).toBe(
      (await stack.api.getVmSshKey({ params: { id: vmId } })).privateKey,
    );
    expect(on.step("vm").secretOutputs).toContain("sshPrivateKey");
    // true → false, and true → removed: an update without an ssh-key request, the key gone from the outputs
    for (const off of [{ ...args, exposePrivateKey: false }, args]) {
      await up(program({ ...args, exposePrivateKey: true }), toggled);
      since = stack.mark();
      const dropped = await up(program(off), toggled);
      expect(dropped.step("vm").op).toBe("update");
      expect(dropped.outputs.id).toBe(vmId);
      expect(dropped.step("vm").outputs).not.toHaveProperty("sshPrivateKey");
      const sent = (await stack.requests(since)).map((r) => r.route);
      expect(sent.filter((r) => r === "getVmSshKey" || r === "deleteVm" || r === "createVm")).toEqual([]);
    }
    expect((await getVm(vmId)).status).toBe("Running");
    await destroy(toggled);
    expect(await vmsNamed("sk-")).toEqual([]);
  });

  it("a key kept in the state by an earlier version (no exposePrivateKey) is dropped by the next refresh, without a request for it", async () => {
    const options = stack.options();
    const args = { name: "ok-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: small.id };
    await up(program({ ...args, exposePrivateKey: true }), options);
    // The state an earlier version wrote: the key, and no exposePrivateKey in the inputs nor the outputs.
    const state = readStateFile(options.stateFile);
    const vm = state.resources.find((r) => r.name === "vm")!;
    delete vm.inputs.exposePrivateKey;
    delete vm.outputs.exposePrivateKey;
    saveState(options.stateFile, state);
    expect((await preview(program(args), options)).step("vm").op).toBe("same");

    const since = stack.mark();
    const refreshed = await refresh(options);
    expect(refreshed.step("vm").refresh).toBe("changed");
    expect(refreshed.step("vm").outputs).not.toHaveProperty("sshPrivateKey");
    expect((await stack.requests(since)).filter((r) => r.route === "getVmSshKey")).toEqual([]);
    expect(readStateFile(options.stateFile).resources.find((r) => r.name === "vm")?.outputs).not.toHaveProperty(
      "sshPrivateKey",
    );
    expect((await up(program(args), options)).step("vm").op).toBe("same");
    await destroy(options);
    expect(await vmsNamed("ok-")).toEqual([]);
  });

  it("connects a VM to a network of the same program: preview with unknown ids, create, no diff, destroy", async () => {
    const options = stack.options();
    const both = () => {
      const net = new Network("net", { name: "nw-net", datacenterId: fra.id, networkType: "standard" });
      const vm = new VirtualMachine("vm", {
        name: "nw-vm",
        datacenterId: fra.id,
        imageId: ubuntu.id,
        configurationId: small.id,
        allocatePublicIp: true,
        networkInterfaces: [{ networkId: net.id }],
      });
      return { netId: net.id, vmId: vm.id };
    };
    const since = stack.mark();
    const planned = await preview(both, options);
    expect(planned.step("vm").op).toBe("create");
    expect(await mutations(since)).toEqual([]);

    const created = await up(both, options);
    const detail = await getVm(created.outputs.vmId as string);
    expect(detail.virtualMachine.networkInterfaces).toEqual([
      expect.objectContaining({ networkId: created.outputs.netId, primary: true, privateIp: "10.0.0.10" }),
    ]);
    expect(detail.virtualMachine.primaryPublicIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(created.step("vm").outputs).toMatchObject({
      allocatePublicIp: true,
      publicIp: detail.virtualMachine.primaryPublicIp,
    });

    const again = await up(both, options);
    expect(again.step("vm").op).toBe("same");
    expect(again.step("net").op).toBe("same");
    expect((await refresh(options)).step("vm").refresh).toBe("same");

    await destroy(options);
    expect(await vmsNamed("nw-")).toEqual([]);
  });

  it("refuses a shrinking configurationId at check unless allowReplaceOnShrink is set, which replaces the VM", async () => {
    const options = stack.options();
    // The API lists no configurations: the provider learns the small size from a VM that has it.
    const witness = await vmBehindTheStack("sh-witness", small.id);
    const base = { name: "sh-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: medium.id };
    const id = (await up(program(base), options)).outputs.id as string;

    const since = stack.mark();
    const refused = (await up(program({ ...base, configurationId: small.id }), options).catch(
      (e: unknown) => e,
    )) as RunError;
    expect(refused).toBeInstanceOf(RunError);
    expect(refused.message).toContain("configurationId: can only grow in place");
    expect(refused.message).toContain(`cpu ${medium.cpu} → ${small.cpu}`);
    expect(refused.message).toContain("allowReplaceOnShrink: true");
    expect(await mutations(since)).toEqual([]);
    expect((await getVm(id)).virtualMachine.configurationId).toBe(medium.id);

    const opted = { ...base, configurationId: small.id, allowReplaceOnShrink: true };
    expect((await preview(program(opted), options)).step("vm").op).toBe("replace");
    const replaced = await up(program(opted), options);
    expect(replaced.step("vm").op).toBe("replace");
    expect(replaced.step("vm").diff?.replaces).toEqual(["configurationId"]);
    const newId = replaced.outputs.id as string;
    expect(newId).not.toBe(id);
    await expect(getVm(id)).rejects.toMatchObject({ status: 404 });
    expect((await getVm(newId)).virtualMachine.configurationId).toBe(small.id);

    // growing again is in place even with the opt-in
    const regrown = await up(program({ ...opted, configurationId: medium.id }), options);
    expect(regrown.step("vm").op).toBe("update");
    expect((await getVm(newId)).virtualMachine.configurationId).toBe(medium.id);

    await destroy(options);
    await deleteBehindTheStack(witness);
    expect(await vmsNamed("sh-")).toEqual([]);
  });

  it("when a shrink cannot be known ahead, the API's refused resize fails the update before anything else changes", async () => {
    const options = stack.options();
    const base = { name: "rl-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: large.id };
    const id = (await up(program(base), options)).outputs.id as string;
    // in place: grow and stop
    const stopped = await up(program({ ...base, configurationId: xlarge.id, powerState: "stopped" }), options);
    expect(stopped.step("vm").op).toBe("update");
    expect(stopped.step("vm").outputs).toMatchObject({ powerState: "stopped", cpu: xlarge.cpu });
    const grown = await getVm(id);
    expect(grown.status).toBe("Stopped");
    expect(grown.virtualMachine.configurationId).toBe(xlarge.id);

    // No VM uses the large configuration any more: its size is unknown. Neither the rename nor the start happens.
    const since = stack.mark();
    const shrink = { ...base, name: "rl-renamed", configurationId: large.id };
    const refused = (await up(program(shrink), options).catch((e: unknown) => e)) as RunError;
    expect(refused).toBeInstanceOf(RunError);
    expect(refused.message).toContain("the API refused to resize");
    expect(refused.message).toContain("allowReplaceOnShrink: true");
    expect((await mutations(since)).map((r) => [r.route, r.status])).toEqual([["resizeVm", 400]]);
    const unchanged = await getVm(id);
    expect(unchanged.status).toBe("Stopped");
    expect(unchanged.virtualMachine).toMatchObject({ name: "rl-vm", configurationId: xlarge.id });

    // opted in, but the shrink was only found by the API: it says how to replace
    const opted = (await up(program({ ...shrink, allowReplaceOnShrink: true }), options).catch(
      (e: unknown) => e,
    )) as RunError;
    expect(opted.message).toContain("pulumi up --replace");

    await destroy(options);
    expect(await vmsNamed("rl-")).toEqual([]);
  });

  it("10b. records a VM whose create job outlives cloudinfra:jobTimeoutMs (found by its job), then replaces it", async () => {
    const options = withConfig(stack.options(), { "cloudinfra:jobTimeoutMs": "1000" });
    const args = { name: "to-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: small.id };
    await stack.faults("job=vm.create,stall,count=1");
    const timedOut = await up(program(args), { ...options, throwOnError: false });
    await stack.faults("");
    expect(timedOut.errors.map((e) => e.message).join("\n")).toContain("did not finish within 1000 ms");
    const partial = timedOut.state.resources.find((r) => r.name === "vm");
    expect(partial?.id).toBeTruthy();
    expect(partial?.initErrors?.length).toBeGreaterThan(0);
    const [onlyOne, ...others] = await vmsNamed("to-");
    expect(others).toEqual([]);
    expect(onlyOne.id).toBe(partial!.id);
    // still Creating when recorded (Error already, if this machine is very slow)
    expect(["Creating", "Error"]).toContain(onlyOne.status);

    // the stalled job fails at last; refresh sees the Error VM and the next up replaces it
    await until(
      () => getVm(partial!.id!),
      (vm) => vm.status === "Error",
      "the stalled create to fail",
    );
    expect((await refresh(options)).step("vm").outputs.status).toBe("Error");
    const retried = await up(program(args), options);
    expect(retried.step("vm").op).toBe("replace");
    expect((await getVm(retried.outputs.id as string)).status).toBe("Running");
    await expect(getVm(partial!.id!)).rejects.toMatchObject({ status: 404 });

    await destroy(options);
    expect(await vmsNamed("to-")).toEqual([]);
  });

  it("a create answered 503 before anything was made: looked up, nothing found, sent once more: one VM", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createVm,status=503,count=1");
    const args = { name: "am-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: small.id };
    const created = await up(program(args), options);
    await stack.faults("");
    const vms = await vmsNamed("am-");
    expect(vms.map((vm) => vm.id)).toEqual([created.outputs.id]);
    // Check verifies the credentials once per run first (GET /auth/check), and preview looks at the stack's own key
    // once per run (GET /auth/api-keys, preflight.ts): not part of the create.
    const routes = (await stack.requests(since))
      .filter((r) => r.route !== "check" && r.route !== "listApiKeys")
      .map((r) => `${r.route} ${r.status}`);
    expect(routes.slice(0, 4)).toEqual(["listVms 200", "createVm 503", "listVms 200", "createVm 202"]);
    expect(routes.filter((r) => r.startsWith("createVm"))).toEqual(["createVm 503", "createVm 202"]);
    expect(created.hostLog).toMatch(
      /the create got no answer \(Injected fault: 503 SERVER_ERROR \(SERVER_ERROR, HTTP 503\)\) and there are no VMs named "am-vm"/,
    );
    await destroy(options);
    expect(await vmsNamed("am-")).toEqual([]);
  });

  it("a create that took effect but whose answer was lost (503 or no answer) is found, not sent again: one VM", async () => {
    for (const fault of ["status=503", "drop"]) {
      const options = stack.options();
      const since = stack.mark();
      await stack.faults(`createVm,${fault},after,count=1`);
      const args = {
        name: `lost-${fault.slice(0, 4)}-vm`,
        datacenterId: fra.id,
        imageId: ubuntu.id,
        configurationId: small.id,
      };
      const created = await up(program(args), options);
      await stack.faults("");
      expect((await vmsNamed(args.name)).map((vm) => vm.id)).toEqual([created.outputs.id]);
      expect((await getVm(created.outputs.id as string)).status).toBe("Running");
      const creates = (await stack.requests(since)).filter((r) => r.route === "createVm").map((r) => r.status);
      expect(creates).toEqual([fault === "drop" ? 0 : 503]);
      await destroy(options);
      expect(await vmsNamed(args.name)).toEqual([]);
    }
  });

  it("a lost answer does not take a VM of the same name made before the request for the new one", async () => {
    const options = stack.options();
    const older = await vmBehindTheStack("twin-vm", small.id);
    await stack.faults("createVm,status=503,count=1");
    const args = { name: "twin-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: small.id };
    const created = await up(program(args), options);
    await stack.faults("");
    expect(created.outputs.id).not.toBe(older);
    expect((await vmsNamed("twin-")).map((vm) => vm.id).sort()).toEqual([older, created.outputs.id].sort());
    await destroy(options);
    expect((await vmsNamed("twin-")).map((vm) => vm.id)).toEqual([older]);
    await deleteBehindTheStack(older);
  });

  it("once a job told the API's clock (the network's, first), a VM create lists nothing before it, and a lost answer still never takes an older namesake", async () => {
    // The network comes first (the VM is on it): its job, polled, tells the client the API's clock.
    const onNetwork = (args: VirtualMachineArgs) => () => {
      const network = new Network("net", { name: "clk-net", datacenterId: fra.id, networkType: "standard" });
      const vm = new VirtualMachine("vm", { ...args, networkInterfaces: [{ networkId: network.id }] });
      return { id: vm.id };
    };
    const args = { name: "clk-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: small.id };
    const older = await vmBehindTheStack("clk-vm", small.id);
    // More than the margin (1 s) before the request: older on the API's own clock.
    await new Promise((resolve) => setTimeout(resolve, 1500));

    // Nothing made, answer lost: looked for once, after the loss; the older namesake is not taken; sent once more.
    const options = stack.options();
    let since = stack.mark();
    await stack.faults("createVm,status=503,count=1");
    const created = await up(onNetwork(args), options);
    await stack.faults("");
    const vmRoutes = (await stack.requests(since))
      .map((r) => `${r.route} ${r.status}`)
      .filter((r) => /^(listVms|createVm) /.test(r));
    expect(vmRoutes).toEqual(["createVm 503", "listVms 200", "createVm 202"]);
    expect(created.outputs.id).not.toBe(older);
    expect((await vmsNamed("clk-")).map((vm) => vm.id).sort()).toEqual([older, created.outputs.id].sort());
    await destroy(options);

    // Made, answer lost: found by its name and the API's clock, not sent again, not the older one.
    const again = stack.options();
    since = stack.mark();
    await stack.faults("createVm,status=503,after,count=1");
    const found = await up(onNetwork(args), again);
    await stack.faults("");
    const creates = (await stack.requests(since)).filter((r) => r.route === "createVm").map((r) => r.status);
    expect(creates).toEqual([503]);
    expect(found.outputs.id).not.toBe(older);
    expect((await vmsNamed("clk-")).map((vm) => vm.id).sort()).toEqual([older, found.outputs.id].sort());
    expect((await getVm(found.outputs.id as string)).status).toBe("Running");
    await destroy(again);
    expect((await vmsNamed("clk-")).map((vm) => vm.id)).toEqual([older]);
    await deleteBehindTheStack(older);
  });

  it("a create whose answer is lost on every send (1 + cloudinfra:maxRetries) with nothing made says so, and records nothing", async () => {
    const options = stack.options();
    await stack.faults("createVm,status=503,count=4");
    const args = { name: "am2-vm", datacenterId: fra.id, imageId: ubuntu.id, configurationId: small.id };
    const failed = await up(program(args), { ...options, throwOnError: false });
    await stack.faults("");
    const message = failed.errors.map((e) => e.message).join("\n");
    expect(message).toContain('Creating VM "am2-vm" failed 4 times without an answer');
    expect(message).toContain("No VM was made");
    expect(message).not.toContain("may have taken effect");
    expect(failed.state.resources.find((r) => r.name === "vm")).toBeUndefined();
    expect(await vmsNamed("am2-")).toEqual([]);
    // The next up creates it.
    const next = await up(program(args), options);
    expect((await vmsNamed("am2-")).map((vm) => vm.id)).toEqual([next.outputs.id]);
    await destroy(options);
  });

  it("adoptId takes over an existing VM by id (name and power converged), and is refused when it cannot", async () => {
    const options = stack.options();
    const existing = await vmBehindTheStack("orphan-vm", small.id);
    const args = {
      name: "adopted-vm",
      datacenterId: fra.id,
      imageId: ubuntu.id,
      configurationId: small.id,
      powerState: "stopped" as const,
    };
    // Refused: no such VM; a VM that differs in what replaces it.
    const missing = await up(program({ ...args, adoptId: "00000000-0000-4000-8000-000000000000" }), {
      ...options,
      throwOnError: false,
    });
    expect(missing.errors.map((e) => e.message).join("\n")).toContain(
      "adoptId: no VM 00000000-0000-4000-8000-000000000000 is visible to these credentials",
    );
    const other = await up(program({ ...args, imageId: debian.id, adoptId: existing }), {
      ...options,
      throwOnError: false,
    });
    expect(other.errors.map((e) => e.message).join("\n")).toContain(
      `adoptId: VM "orphan-vm" (${existing}) differs from the program where only a new VM could follow it (imageId: ${ubuntu.id} ≠ ${debian.id})`,
    );
    expect((await vmsNamed("orphan-")).map((vm) => vm.id)).toEqual([existing]);
    expect(await vmsNamed("adopted-")).toEqual([]);

    const since = stack.mark();
    const adopted = await up(program({ ...args, adoptId: existing }), options);
    expect(adopted.outputs.id).toBe(existing);
    expect((await stack.requests(since)).filter((r) => r.route === "createVm")).toEqual([]);
    const live = await getVm(existing);
    expect(live.virtualMachine.name).toBe("adopted-vm");
    expect(live.status).toBe("Stopped");
    // adoptId is read at creation only: no change afterwards, with it or without it.
    expect((await preview(program({ ...args, adoptId: existing }), options)).step("vm").op).toBe("same");
    expect((await preview(program(args), options)).step("vm").op).toBe("same");
    // A replacement while adoptId names the VM is refused (the new VM would take over the one it replaces).
    const replacing = await up(program({ ...args, imageId: debian.id, adoptId: existing }), {
      ...options,
      throwOnError: false,
    });
    expect(replacing.errors.map((e) => e.message).join("\n")).toContain(
      `VM ${existing} was taken over with \`adoptId\` and must now be replaced (imageId changed): remove \`adoptId\``,
    );
    await destroy(options);
    expect(await vmsNamed("adopted-")).toEqual([]);
  });
});

describe("VirtualMachine against an API that sends only what the spec documents", () => {
  it("the primary interface's privateIp is the API's primaryPrivateIp (documented on the list items), which the detail's interfaces lacked", async () => {
    const options = specOnly.options();
    const [dc] = specOnly.datacenters;
    const program = () => {
      const net = new Network("net", { name: "sf-net", datacenterId: dc!.id, networkType: "standard" });
      const vm = new VirtualMachine("vm", {
        name: "sf-vm",
        datacenterId: dc!.id,
        imageId: ubuntu.id,
        configurationId: small.id,
        networkInterfaces: [{ networkId: net.id }],
      });
      return { netId: net.id, vmId: vm.id, privateIp: vm.privateIp };
    };
    const created = await up(program, options);
    const [item] = (await specOnly.api.listVms({ query: { search: "sf-vm" } })).data;
    expect(item?.id).toBe(created.outputs.vmId);
    expect(item?.primaryPrivateIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const interfaces = [{ networkId: created.outputs.netId, primary: true, privateIp: item?.primaryPrivateIp }];
    expect(created.step("vm").outputs.networkInterfaces).toEqual(interfaces);
    expect(created.outputs.privateIp).toBe(item?.primaryPrivateIp);

    // A refresh reads the same from the API: no drift, the same interfaces.
    expect((await refresh(options)).step("vm").refresh).toBe("same");
    const recorded = readStateFile(options.stateFile).resources.find((r) => r.name === "vm");
    expect(recorded?.outputs.networkInterfaces).toEqual(interfaces);
    expect((await up(program, options)).step("vm").op).toBe("same");
    await destroy(options);
  });
});

describe("VirtualMachine addresses against a spec-only API, gathered", () => {
  it("20 VMs created in one up read their addresses from shared list pages, not one search each; the outputs are each VM's list item's", async () => {
    // Polls 300 ms apart (the creates go out over a few hundred ms): each poll completes several VMs, as a real API's
    // seconds-long jobs and polls do.
    const options = withConfig(specOnly.options(), { "cloudinfra:pollIntervalMs": "300" });
    const [dc] = specOnly.datacenters;
    const count = 20;
    const program = (suffix = "") => {
      const vms = Array.from(
        { length: count },
        (_, i) =>
          new VirtualMachine(`vm${i}`, {
            name: `ga-vm-${i}${suffix}`,
            datacenterId: dc!.id,
            imageId: ubuntu.id,
            configurationId: small.id,
            allocatePublicIp: i % 2 === 0,
          }),
      );
      return Object.fromEntries(vms.map((vm, i) => [`ip${i}`, vm.privateIp]));
    };
    let since = specOnly.mark();
    const created = await up(() => program(), options);
    const lists = (await specOnly.requests(since)).filter((r) => r.route === "listVms");
    // The namesake searches before each create (filtered by configuration) are not the address reads.
    const addressReads = lists.filter((r) => !decodeURIComponent(r.query).includes("filter[configurationId]"));
    // One search per VM before; now shared pages (a few batches, as the jobs complete), at most a quarter of that.
    expect(addressReads.length).toBeGreaterThan(0);
    expect(addressReads.length).toBeLessThanOrEqual(count / 4);
    expect(addressReads.some((r) => new URLSearchParams(r.query).get("sort") === "createdAt:desc")).toBe(true);

    // Each VM's outputs are its own list item's addresses.
    const items = (await specOnly.api.listVms({ query: { search: "ga-vm-", limit: 100 } })).data;
    expect(items).toHaveLength(count);
    for (let i = 0; i < count; i++) {
      const step = created.step(`vm${i}`);
      const item = items.find((vm) => vm.id === step.id);
      expect(item?.name).toBe(`ga-vm-${i}`);
      expect(step.outputs.privateIp).toBe(item?.primaryPrivateIp);
      expect(step.outputs.publicIp).toBe(item?.primaryPublicIp);
      expect(step.outputs.publicIp === null).toBe(i % 2 !== 0);
      expect(step.outputs.allocatePublicIp).toBe(i % 2 === 0);
    }

    // Renamed together: the updates read their addresses from shared pages too (one search each before).
    since = specOnly.mark();
    const renamed = await up(() => program("-r"), options);
    const updateLists = (await specOnly.requests(since)).filter((r) => r.route === "listVms");
    expect(updateLists.length).toBeGreaterThan(0);
    expect(updateLists.length).toBeLessThanOrEqual(count / 4);
    for (let i = 0; i < count; i++) {
      const step = renamed.step(`vm${i}`);
      expect(step.op).toBe("update");
      expect(step.outputs.name).toBe(`ga-vm-${i}-r`);
      expect(step.outputs.privateIp).toBe(created.step(`vm${i}`).outputs.privateIp);
      expect(step.outputs.publicIp).toBe(created.step(`vm${i}`).outputs.publicIp);
    }
    await destroy(options);
    expect((await specOnly.api.listVms({ query: { search: "ga-vm-" } })).data).toEqual([]);
  });
});
