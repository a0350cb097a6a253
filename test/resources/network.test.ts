import { describe, expect, it } from "vitest";
import { Network, VirtualMachine, type NetworkArgs } from "../../sdk";
import { destroy, preview, refresh, RunError, up } from "../harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra, ams] = stack.datacenters;

const getNetwork = (id: string) => stack.api.getNetwork({ params: { id } });
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

describe("Network lifecycle", () => {
  it("creates, stays unchanged, updates in place, replaces, survives drift and deletion, and is destroyed", async () => {
    const options = stack.options();
    const base = { name: "lc-net", datacenterId: fra.id, networkType: "standard" as const };

    // 1. create with minimal inputs: the API holds the declared network
    const created = await up(program(base), options);
    const id = created.outputs.id as string;
    expect(created.step("net").op).toBe("create");
    const live = await getNetwork(id);
    expect(live).toMatchObject({ name: "lc-net", networkType: "standard", status: "Active", cidrBlock: "10.0.0.0/24" });
    expect(live.datacenter.id).toBe(fra.id);
    expect(created.outputs.gateway).toBe(live.gateway);

    // 2. a second up: no changes; 3. refresh without drift: no changes
    expect((await up(program(base), options)).step("net").op).toBe("same");
    expect((await refresh(options)).step("net").refresh).toBe("same");

    // 4. in-place change keeps the id
    const changed = { ...base, description: "app tier", dnsServers: ["1.1.1.1"], serveDNSServersEnabled: true };
    const updated = await up(program(changed), options);
    expect(updated.step("net").op).toBe("update");
    expect(updated.outputs.id).toBe(id);
    expect(await getNetwork(id)).toMatchObject({ description: "app tier", dnsServers: ["1.1.1.1"] });

    // 6. drift behind the stack's back: refresh sees it, up repairs it
    await stack.api.updateNetwork({ params: { id }, body: { description: "changed by hand" } });
    const refreshed = await refresh(options);
    expect(refreshed.step("net").refresh).toBe("changed");
    expect(refreshed.step("net").outputs?.description).toBe("changed by hand");
    expect((await up(program(changed), options)).step("net").op).toBe("update");
    expect((await getNetwork(id)).description).toBe("app tier");

    // 5. replacement (data center) yields a new id; the old network is gone (same name: deleted first)
    const moved = await up(program({ ...changed, datacenterId: ams.id }), options);
    expect(moved.step("net").op).toBe("replace");
    expect(moved.step("net").diff?.deleteBeforeReplace).toBe(true);
    const newId = moved.outputs.id as string;
    expect(newId).not.toBe(id);
    await expect(getNetwork(id)).rejects.toMatchObject({ status: 404 });
    expect((await getNetwork(newId)).datacenter.id).toBe(ams.id);

    // 7. deleted behind the stack's back: refresh drops it, up recreates it
    await stack.api.deleteNetwork({ params: { id: newId } });
    expect((await refresh(options)).step("net").refresh).toBe("gone");
    const recreated = await up(program({ ...changed, datacenterId: ams.id }), options);
    expect(recreated.step("net").op).toBe("create");
    const recreatedId = recreated.outputs.id as string;
    expect((await getNetwork(recreatedId)).name).toBe("lc-net");

    // 8. destroy leaves nothing of the stack
    await destroy(options);
    expect(await networksNamed("lc-")).toEqual([]);
  });

  it("preview changes nothing", async () => {
    const options = stack.options();
    const since = stack.mark();
    const planned = await preview(program({ name: "pv-net", datacenterId: fra.id, networkType: "standard" }), options);
    expect(planned.step("net").op).toBe("create");
    expect((await stack.requests(since)).filter((r) => r.method !== "GET")).toEqual([]);
    expect(await networksNamed("pv-")).toEqual([]);
  });

  it("9. refuses bad inputs at check, naming each property, before any request", async () => {
    const options = stack.options();
    const since = stack.mark();
    const bad = {
      name: "",
      datacenterId: "not-a-uuid",
      networkType: "custom",
      snatEnabled: true,
      cidrBlock: "10.0.0.0/24",
      dhcpStartAddress: "10.0.1.5",
    } as unknown as NetworkArgs;
    const error = (await up(program(bad), options).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    const text = error.message;
    for (const property of ["name", "datacenterId", "snatEnabled", "dhcpStartAddress"])
      expect(text).toContain(property);
    expect(text).toContain("UUID");
    expect(await stack.requests(since)).toEqual([]);
  });

  it("10. records a network whose create job failed, with the job's error, and cleans it up later", async () => {
    const options = stack.options();
    await stack.faults("job=network.create,fail=Provider quota exceeded,count=1");
    const failed = await up(program({ name: "jf-net", datacenterId: fra.id, networkType: "standard" }), {
      ...options,
      throwOnError: false,
    });
    await stack.faults("");
    expect(failed.errors.map((e) => e.message).join("\n")).toContain("Provider quota exceeded");
    const partial = failed.state.resources.find((r) => r.name === "net");
    expect(partial?.id).toBeTruthy();
    expect(partial?.initErrors?.join(" ")).toContain("Provider quota exceeded");
    expect((await getNetwork(partial!.id!)).status).toBe("Error");
    await destroy(options);
    expect(await networksNamed("jf-")).toEqual([]);
  });

  it("an ambiguous create (5xx) that created nothing reported the raw 'may have taken effect' error: retried once; twice says nothing was created", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createNetwork,status=500,count=1");
    const created = await up(program({ name: "amb-net", datacenterId: fra.id, networkType: "standard" }), options);
    await stack.faults("");
    const posts = (await stack.requests(since)).filter((r) => r.route === "createNetwork");
    expect(posts.map((r) => r.status)).toEqual([500, 202]);
    expect((await networksNamed("amb-")).map((n) => n.id)).toEqual([created.outputs.id]);
    await destroy(options);

    await stack.faults("createNetwork,status=503,count=2");
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

  it("11. adopts an existing network by name and aligns it; without adopt it explains the conflict", async () => {
    const options = stack.options();
    const existing = await stack.api.createNetwork({
      body: { name: "ad-net", datacenterId: fra.id, networkType: "standard", description: "made elsewhere" },
    });
    await stack.api.jobs.wait(existing.jobId);

    const refused = (await up(
      program({ name: "ad-net", datacenterId: fra.id, networkType: "standard" }),
      options,
    ).catch((e: unknown) => e)) as RunError;
    expect(refused.message).toContain("adopt: true");

    const adopted = await up(
      program({ name: "ad-net", datacenterId: fra.id, networkType: "standard", description: "managed", adopt: true }),
      options,
    );
    expect(adopted.outputs.id).toBe(existing.id);
    expect((await getNetwork(existing.id)).description).toBe("managed");
    await destroy(options);
    expect(await networksNamed("ad-")).toEqual([]);
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
