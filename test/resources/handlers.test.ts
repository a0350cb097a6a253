import { afterAll, describe, expect, it } from "vitest";
import type { ProgressLog } from "../../provider/client/progress";
import {
  closeClients,
  configuration,
  handlerContext,
  kinds,
  type HandlerContext,
  type Props,
} from "../../provider/resources";
import { stackOnEmulator } from "./helpers";

// The kinds' handlers called directly with a context against the in-process emulator: no configure, no Pulumi
// runtime, no host. What they report is compared with what the emulator holds (read with the stack's own client).
const stack = await stackOnEmulator({ jobDurationMs: 50 });
const { admin } = stack.emulator.bootstrap.users;
const [fra] = stack.datacenters;
const [ubuntu] = stack.emulator.bootstrap.fixtures.images;
const [small, medium] = stack.emulator.bootstrap.fixtures.configurations;
const SSD = 1;
afterAll(closeClients);

/** A context of these `cloudinfra:*` values, its progress lines kept in `lines`. */
function contextWith(values: Record<string, string>): HandlerContext & { lines: string[] } {
  const lines: string[] = [];
  const log: ProgressLog = {
    info: (message, at) => lines.push(`${at?.resource ?? ""}: ${message}`),
    warn: (message, at) => lines.push(`warning ${at?.resource ?? ""}: ${message}`),
  };
  const config = { "cloudinfra:baseUrl": stack.emulator.baseUrl, "cloudinfra:pollIntervalMs": "20", ...values };
  const ctx = handlerContext({ configuration: configuration((key) => config[key as keyof typeof config]), log });
  return { ...ctx, lines };
}
const ctx = contextWith({ "cloudinfra:apiKey": admin.apiKey });

/** Checks inputs as a host does, then returns them (a failure fails the test with its reasons). */
async function checked(kind: keyof typeof kinds, inputs: Props): Promise<Props> {
  const result = await kinds[kind].check({}, inputs, ctx);
  expect(result.failures).toEqual([]);
  return result.inputs;
}

describe("kind handlers with an explicit context", () => {
  it("Volume: create, read, grow in place, delete", async () => {
    const inputs = await checked("Volume", { name: "h-vol", datacenterId: fra!.id, volumeTypeId: SSD, sizeGb: 10 });
    const { id, outs } = await kinds.Volume.create(ctx, inputs);
    expect(await stack.api.getVolume({ params: { id } })).toMatchObject({ name: "h-vol", sizeGb: 10 });
    expect(outs).toMatchObject({ name: "h-vol", sizeGb: 10 });
    expect(ctx.lines.some((l) => /job \S+ completed/.test(l))).toBe(true);

    const read = await kinds.Volume.read(ctx, id, outs);
    expect(read?.props).toMatchObject({ name: "h-vol", sizeGb: 10 });

    const news = { ...inputs, sizeGb: 20 };
    expect(kinds.Volume.diff(id, outs, news)).toMatchObject({ changes: true, replaces: [] });
    const grown = await kinds.Volume.update(ctx, id, outs, news);
    expect(grown).toMatchObject({ sizeGb: 20 });
    expect((await stack.api.getVolume({ params: { id } })).sizeGb).toBe(20);

    await kinds.Volume.delete(ctx, id, grown);
    expect(await kinds.Volume.read(ctx, id, grown)).toBeNull();
  });

  it("Network: create, read, update in place, delete", async () => {
    const inputs = await checked("Network", { name: "h-net", datacenterId: fra!.id, networkType: "standard" });
    const { id, outs } = await kinds.Network.create(ctx, inputs);
    expect(await stack.api.getNetwork({ params: { id } })).toMatchObject({ name: "h-net" });

    const news = { ...inputs, description: "from the handler test" };
    const updated = await kinds.Network.update(ctx, id, outs, news);
    expect(updated).toMatchObject({ description: "from the handler test" });
    expect((await stack.api.getNetwork({ params: { id } })).description).toBe("from the handler test");
    expect((await kinds.Network.read(ctx, id, updated))?.props).toMatchObject({ description: "from the handler test" });

    await kinds.Network.delete(ctx, id, updated);
    expect(await kinds.Network.read(ctx, id, updated)).toBeNull();
  });

  it("VirtualMachine: create, read, rename and resize in place, delete", async () => {
    const inputs = await checked("VirtualMachine", {
      name: "h-vm",
      datacenterId: fra!.id,
      imageId: ubuntu!.id,
      configurationId: small!.id,
    });
    const { id, outs } = await kinds.VirtualMachine.create(ctx, inputs);
    expect(await stack.api.getVm({ params: { id } })).toMatchObject({
      virtualMachine: { name: "h-vm", configurationId: small!.id },
    });
    expect(outs).toMatchObject({ name: "h-vm", configurationId: small!.id });

    const news = await kinds.VirtualMachine.check(
      outs,
      { ...inputs, name: "h-vm-2", configurationId: medium!.id },
      ctx,
    );
    expect(news.failures).toEqual([]);
    expect(kinds.VirtualMachine.diff(id, outs, news.inputs)).toMatchObject({ changes: true, replaces: [] });
    const updated = await kinds.VirtualMachine.update(ctx, id, outs, news.inputs);
    expect(updated).toMatchObject({ name: "h-vm-2", configurationId: medium!.id });
    expect((await stack.api.getVm({ params: { id } })).virtualMachine).toMatchObject({
      name: "h-vm-2",
      configurationId: medium!.id,
    });

    await kinds.VirtualMachine.delete(ctx, id, updated);
    expect(await kinds.VirtualMachine.read(ctx, id, updated)).toBeNull();
  });

  it("ApiKey: created by the signed-in session of the context's configuration, disabled in place, deleted", async () => {
    const session = contextWith({
      "cloudinfra:email": admin.email,
      "cloudinfra:password": admin.password,
      "cloudinfra:totpSecret": admin.totpSecret,
    });
    const inputs = await checked("ApiKey", { name: "h-key", enabled: true });
    const { id, outs } = await kinds.ApiKey.create(session, inputs);
    expect(outs.key).toMatch(/^svc_/);
    const held = async () =>
      (await stack.api.listApiKeys({ query: { search: "h-key" } })).data.find((k) => k.id === id);
    expect(await held()).toMatchObject({ name: "h-key", enabled: true });

    const updated = await kinds.ApiKey.update(session, id, outs, { ...inputs, enabled: false });
    expect(updated).toMatchObject({ enabled: false });
    expect(await held()).toMatchObject({ enabled: false });

    await kinds.ApiKey.delete(session, id, updated);
    expect(await held()).toBeUndefined();
    expect(await kinds.ApiKey.read(session, id, updated)).toBeNull();
  });

  it("a context whose configuration is not usable is refused with every problem, before any request", () => {
    const bad = configuration((key) => (key === "cloudinfra:baseUrl" ? "ftp://api.example/v1" : undefined));
    expect(() => handlerContext({ configuration: bad })).toThrow(
      /cloudinfra:baseUrl \(stack config\) is not an http\(s\) URL/,
    );
  });
});
