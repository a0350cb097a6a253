import { describe, expect, it } from "vitest";
import { Network, VirtualMachine, type NetworkArgs } from "../../sdk";
import { destroy, preview, RunError, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;

const networksNamed = async (prefix: string) =>
  (await stack.api.listNetworks({ query: { search: prefix, limit: 100 } })).data.filter((n) =>
    n.name.startsWith(prefix),
  );

function program(args: NetworkArgs) {
  return () => {
    const net = new Network("net", args);
    return { id: net.id, gateway: net.gateway };
  };
}

// The lifecycle contract (create, no-op, in place, replace, drift, deleted behind the stack, bad input, failed job,
// adopt, destroy) is the lifecycle table's (test/lifecycle/table.ts); here, what is particular to networks.
describe("Network", () => {
  it("preview changes nothing", async () => {
    const options = stack.options();
    const since = stack.mark();
    const planned = await preview(program({ name: "pv-net", datacenterId: fra.id, networkType: "standard" }), options);
    expect(planned.step("net").op).toBe("create");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);
    expect(await networksNamed("pv-")).toEqual([]);
  });

  it("an ambiguous create (5xx) that created nothing reported the raw 'may have taken effect' error: resent; lost on every send (1 + maxRetries) says nothing was created", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createNetwork,status=500,count=1");
    const created = await up(program({ name: "amb-net", datacenterId: fra.id, networkType: "standard" }), options);
    await stack.faults("");
    const posts = (await stack.requests(since)).filter((r) => r.route === "createNetwork");
    expect(posts.map((r) => r.status)).toEqual([500, 202]);
    expect((await networksNamed("amb-")).map((n) => n.id)).toEqual([created.outputs.id]);
    await destroy(options);

    await stack.faults("createNetwork,status=503,count=4");
    const failed = await up(program({ name: "amb-net", datacenterId: fra.id, networkType: "standard" }), {
      ...options,
      throwOnError: false,
    });
    await stack.faults("");
    const message = failed.errors.map((e) => e.message).join("\n");
    expect(message).toContain("nothing was created; the next `pulumi up` creates it");
    expect(message).not.toContain("may have taken effect");
    expect(failed.state.resources.filter((r) => r.name === "net")).toEqual([]);
    expect(await networksNamed("amb-")).toEqual([]);
    // ... and the next up does.
    const next = await up(program({ name: "amb-net", datacenterId: fra.id, networkType: "standard" }), options);
    expect(next.step("net").op).toBe("create");
    await destroy(options);
    expect(await networksNamed("amb-")).toEqual([]);
  });

  it("adopting a network still being created (a killed run's) waits for its job: a VM on it is created in the same up", async () => {
    const options = stack.options();
    // This network's create job lasts 8 s; the jobs after it are fast again.
    const scale = stack.emulator.ctx.options.jobDurationMs;
    stack.emulator.ctx.options.jobDurationMs = 90_000;
    const existing = await stack.api
      .createNetwork({ body: { name: "ac-net", datacenterId: fra.id, networkType: "standard" } })
      .finally(() => (stack.emulator.ctx.options.jobDurationMs = scale));
    const mark = stack.mark();
    let ended = false;
    const outcome = up(() => {
      const net = new Network("net", { name: "ac-net", datacenterId: fra.id, networkType: "standard", adopt: true });
      const vm = new VirtualMachine("vm", {
        name: "ac-vm",
        datacenterId: fra.id,
        imageId: 1,
        configurationId: 1,
        networkInterfaces: [{ networkId: net.id }],
      });
      return { id: net.id, status: net.status, vmId: vm.id };
    }, options).then(
      (result) => result,
      (error: unknown) => error as RunError,
    );
    void outcome.finally(() => (ended = true));
    // The provider reads the network while it waits (the VM's create used to be refused at once: network Creating)…
    while (!ended && (await stack.requests(mark)).filter((r) => r.path.endsWith(existing.id)).length < 3) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // … until the job ends.
    const admin = stack.emulator.baseUrl.replace(/\/v1$/, "/__admin");
    await fetch(`${admin}/clock`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ advanceMs: 10_000 }),
    });
    const adopted = await outcome;
    if (adopted instanceof Error) throw adopted;
    expect(adopted.outputs).toMatchObject({ id: existing.id, status: "Active" });
    const vm = await stack.api.getVm({ params: { id: adopted.outputs.vmId as string } });
    expect(vm.virtualMachine.networkInterfaces?.map((nic) => nic.networkId)).toEqual([existing.id]);
    await destroy(options);
    expect(await networksNamed("ac-")).toEqual([]);
  });
});
