/**
 * Every `up` repairs the last one's failures (issue 30): a create whose answer was lost again after the first resend
 * is sent again up to `cloudinfra:maxRetries` times, each time only after looking for what it may have made (never a
 * duplicate, never an older namesake taken over); a key rotation whose answer was lost reads the key's `start` first
 * and says whether the rotation took effect. Through the emulator's lost-answer faults, asserting on what it holds.
 */
import { expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { ApiKey, Network, VirtualMachine } from "../../sdk";
import { destroy, up, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const [fra] = stack.datacenters;

const statusesOf = async (mark: number, route: string) =>
  (await stack.requests(mark)).filter((r) => r.route === route).map((r) => r.status);
const errorsOf = (run: RunResult) => run.errors.map((e) => e.message).join("\n");
const networksNamed = async (name: string) =>
  (await stack.api.listNetworks({ query: { search: name, limit: 100 } })).data.filter((n) => n.name === name);
const vmsNamed = async (name: string) =>
  (await stack.api.listVms({ query: { search: name, limit: 100 } })).data.filter((v) => v.name === name);

const network = (name: string) => () => {
  const net = new Network("net", { name, datacenterId: fra.id, networkType: "standard" });
  return { id: net.id };
};

it("a create whose answer is lost three times, nothing made each time, is sent a fourth time (maxRetries 3): one network", async () => {
  const options = stack.options();
  await stack.faults("createNetwork,status=503,count=3");
  const mark = stack.mark();
  const created = await up(network("rr-net"), options);
  await stack.faults("");
  expect(await statusesOf(mark, "createNetwork")).toEqual([503, 503, 503, 202]);
  expect((await networksNamed("rr-net")).map((n) => n.id)).toEqual([created.outputs.id]);
  expect(created.hostLog).toContain("no resource of that name exists: sending it again (resend 3 of at most 3");
  await destroy(options);
  expect(await networksNamed("rr-net")).toEqual([]);
});

it("cloudinfra:maxRetries bounds the resends: with 1, two lost answers are the clear error and nothing is left", async () => {
  const base = stack.options();
  const options = { ...base, config: { ...base.config, "cloudinfra:maxRetries": "1" } };
  await stack.faults("createNetwork,status=503,count=2");
  const mark = stack.mark();
  const failed = await up(network("r1-net"), { ...options, throwOnError: false });
  await stack.faults("");
  expect(await statusesOf(mark, "createNetwork")).toEqual([503, 503]);
  expect(errorsOf(failed)).toContain("(sent twice, no answer each time). No resource of that name exists");
  expect(failed.state.resources.filter((r) => r.name === "net")).toEqual([]);
  expect(await networksNamed("r1-net")).toEqual([]);
});

it("a resend that took effect and lost its answer too is found and kept: no third send, no duplicate", async () => {
  const options = stack.options();
  // The first send is refused before anything happens; the resend creates the network and its answer is lost.
  await stack.faults("createNetwork,status=503,count=1;createNetwork,status=503,after,count=1");
  const mark = stack.mark();
  const created = await up(network("rt-net"), options);
  await stack.faults("");
  expect(await statusesOf(mark, "createNetwork")).toEqual([503, 503]);
  expect((await networksNamed("rt-net")).map((n) => n.id)).toEqual([created.outputs.id]);
  await destroy(options);
});

it("an older namesake found after a lost answer is never taken over: the error asks for adopt, it is left as it was", async () => {
  const options = stack.options();
  // Made ten minutes before the create (the emulator's clock set back while it is made): not what our request made.
  const ctx = stack.emulator.ctx;
  ctx.clockOffsetMs -= 10 * 60_000;
  let older: string;
  try {
    const made = await stack.api.createNetwork({
      body: { name: "ro-net", datacenterId: fra.id, networkType: "standard" },
    });
    older = made.id;
  } finally {
    ctx.clockOffsetMs += 10 * 60_000;
  }
  await stack.faults("createNetwork,status=503,count=3");
  // The preview check (preflight.ts) would refuse the held name first: off, the create path meets the namesake.
  const unchecked = { ...options, config: { ...options.config, "cloudinfra:preflight": "off" } };
  const failed = await up(network("ro-net"), { ...unchecked, throwOnError: false });
  await stack.faults("");
  expect(errorsOf(failed)).toContain(`A network named "ro-net" already exists (${older}). Set \`adopt: true\``);
  expect(failed.state.resources.filter((r) => r.name === "net")).toEqual([]);
  expect((await networksNamed("ro-net")).map((n) => n.id)).toEqual([older]);
  await stack.api.deleteNetwork({ params: { id: older } });
});

it("a VM create whose answer is lost three times is sent a fourth time, each after looking: one VM", async () => {
  const options = stack.options();
  const vm = () => {
    const machine = new VirtualMachine("vm", { name: "rv-vm", datacenterId: fra.id, imageId: 1, configurationId: 1 });
    return { id: machine.id };
  };
  await stack.faults("createVm,drop,count=3");
  const mark = stack.mark();
  const created = await up(vm, options);
  await stack.faults("");
  expect((await statusesOf(mark, "createVm")).filter((s) => s === 202)).toEqual([202]);
  expect((await vmsNamed("rv-vm")).map((v) => v.id)).toEqual([created.outputs.id]);
  expect(created.hostLog).toContain("sending it again (resend 3 of at most 3: cloudinfra:maxRetries)");
  await destroy(options);
  expect(await vmsNamed("rv-vm")).toEqual([]);
});

it("a key rotation whose answer was lost reads the key first: taken effect or not, one more rotation, the secret works", async () => {
  const user = stack.emulator.bootstrap.users.admin;
  const options = stack.options({
    config: {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:email": { secret: user.email },
      "cloudinfra:password": { secret: user.password },
      "cloudinfra:totpSecret": { secret: user.totpSecret },
      "cloudinfra:pollIntervalMs": "20",
    },
  });
  const key = (rotation: string) => () => {
    const made = new ApiKey("key", { name: "rk-key", rotation });
    return { id: made.id, key: made.key };
  };
  const signsIn = async (secret: string) => {
    const probe = new CloudClient({ baseUrl: stack.emulator.baseUrl, auth: { apiKey: secret }, retry: { retries: 0 } });
    await probe.check().finally(() => probe.close());
  };
  const startOf = async (id: string) =>
    (await stack.api.listApiKeys({ query: { search: "rk-key", limit: 100 } })).data.find((k) => k.id === id)!.start;
  const created = await up(key("0"), options);
  const id = created.outputs.id as string;

  // Not carried out (503 before the handler): the key still shows its start, so the rotation is sent once more.
  const startBefore = await startOf(id);
  await stack.faults("rotateApiKey,status=503,count=1");
  let mark = stack.mark();
  const resent = await up(key("1"), options);
  await stack.faults("");
  expect(await statusesOf(mark, "rotateApiKey")).toEqual([503, 200]);
  expect(resent.hostLog).toContain(
    `the key still shows its start (${startBefore}...): the rotation was not carried out, sending it once more`,
  );
  const secret1 = resent.step("key").outputs.key as string;
  expect(await startOf(id)).toBe(secret1.slice(0, startBefore.length));
  await signsIn(secret1);

  // Carried out, its answer lost: the key shows a new start; the old secret is void, one more rotation gives one.
  await stack.faults("rotateApiKey,drop,after,count=1");
  mark = stack.mark();
  const rotated = await up(key("2"), options);
  await stack.faults("");
  expect((await statusesOf(mark, "rotateApiKey")).filter((s) => s === 200)).toHaveLength(1);
  expect(rotated.hostLog).toContain("so the rotation took effect, but its new secret was only in the lost answer");
  const secret2 = rotated.step("key").outputs.key as string;
  expect(secret2).not.toBe(secret1);
  await signsIn(secret2);
  await expect(signsIn(secret1)).rejects.toThrow();
  expect(rotated.hostLog).not.toContain(secret2);

  // The key deleted behind the stack while the rotation's answer is lost: the error says it is gone; nothing resent.
  await stack.faults("rotateApiKey,status=503,count=1");
  await stack.api.deleteApiKey({ params: { keyId: id } });
  mark = stack.mark();
  const gone = await up(key("3"), { ...options, throwOnError: false });
  await stack.faults("");
  expect(await statusesOf(mark, "rotateApiKey")).toEqual([503]);
  expect(errorsOf(gone)).toContain("and the key no longer exists: run `pulumi refresh`");
  await destroy(options);
});
