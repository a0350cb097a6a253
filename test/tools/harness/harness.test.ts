import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { TestRecord } from "./fixtures/test-record";
import { isSecret, providerOf, readStateFile, reveal, up } from "../../../tools/harness";
import { ends, pair, sandbox } from "./sandbox";

const TYPE = "pulumi-nodejs:dynamic/cloudinfra:TestRecord";

describe("up", () => {
  it("creates every resource, then a second up is all same and calls only check and diff", async () => {
    const box = sandbox();
    const first = await up(pair(), box.options);
    expect(first.summary).toEqual({ create: 3 });
    const a = first.step("a");
    const b = first.step("b");
    expect(a.type).toBe(TYPE);
    expect(a.urn).toBe(`urn:pulumi:test::cloudinfra-test::${TYPE}::a`);
    expect(first.outputs).toEqual({ aId: a.id, bRef: a.id });
    expect(box.store()).toEqual({
      [a.id]: expect.objectContaining({ label: "A", size: 1, zone: "a", revision: 1 }),
      [b.id]: expect.objectContaining({ label: "B", size: 2, ref: a.id }),
    });
    // Required by package name inside the host process, as an installed package would be.
    expect(a.outputs.hostPackage).toBe("@cloudinfra/pulumi");

    const state = readStateFile(box.stateFile);
    expect(state.resources.map((r) => r.name)).toEqual(["cloudinfra-test-test", "a", "b"]);
    const recordB = state.resources.find((r) => r.name === "b")!;
    expect(recordB).toMatchObject({ id: b.id, type: TYPE, custom: true, parent: state.resources[0]!.urn });
    expect(recordB.dependencies).toContain(a.urn);
    expect(providerOf(recordB)).toMatch(/^exports\.handler = /);

    const storeBefore = box.store();
    box.clearCalls();
    const second = await up(pair(), box.options);
    expect(second.summary).toEqual({ same: 3 });
    expect([second.step("a").id, second.step("b").id]).toEqual([a.id, b.id]);
    expect(box.calls().map((c) => c.method)).toEqual(["check", "diff", "check", "diff"]);
    expect(box.store()).toEqual(storeBefore);
  });

  it("runs a minimal provider: default type token, the engine's own diff, outputs lost without update", async () => {
    const box = sandbox();
    const minimal: pulumi.dynamic.ResourceProvider = {
      async create(inputs) {
        return { id: `m-${inputs.n}`, outs: { n: inputs.n, extra: "x" } };
      },
    };
    class Minimal extends pulumi.dynamic.Resource {
      constructor(name: string, n: number) {
        super(minimal, name, { n, extra: undefined });
      }
    }
    const first = await up(() => void new Minimal("m", 1), box.options);
    expect(first.step("m")).toMatchObject({ type: "pulumi-nodejs:dynamic:Resource", id: "m-1", outputs: { n: 1 } });
    // No diff method: the engine compares old and new inputs itself.
    expect((await up(() => void new Minimal("m", 1), box.options)).step("m").op).toBe("same");
    const changed = await up(() => void new Minimal("m", 2), box.options);
    // No update method: the host answers with nothing but __provider, so the outputs are gone.
    expect(changed.step("m")).toMatchObject({ op: "update", id: "m-1", diff: { changedKeys: ["n"] }, outputs: {} });
  });

  it("waits for dependencies but runs independent resources concurrently", async () => {
    const box = sandbox();
    await up(() => {
      const x = new TestRecord("x", { label: "X", size: 1, delayMs: 300 });
      new TestRecord("y", { label: "Y", size: 1, delayMs: 300 });
      new TestRecord("z", { label: "Z", size: 1, ref: x.id });
    }, box.options);
    const calls = box.calls().filter((c) => c.method === "create");
    const at = (label: string, phase: string) => calls.find((c) => c.label === label && c.phase === phase)!.at;
    expect(at("X", "start")).toBeLessThan(at("Y", "end"));
    expect(at("Y", "start")).toBeLessThan(at("X", "end"));
    expect(at("Z", "start")).toBeGreaterThanOrEqual(at("X", "end"));
  });

  it("keeps secrets secret: secret inputs, additionalSecretOutputs, secret config, and the state file", async () => {
    const box = sandbox();
    const program = () => {
      const record = new TestRecord("s", { label: "S", size: 1, token: pulumi.secret("tok-123") });
      return { password: record.password, label: record.label };
    };
    const result = await up(program, box.options);
    const step = result.step("s");
    expect(step.secretOutputs.sort()).toEqual(["configToken", "password", "token"]);
    expect(step.outputs).toMatchObject({ token: "tok-123", configToken: "cfg-secret" });
    expect(result.secretOutputs).toEqual(["password"]);
    expect(result.outputs).toEqual({ password: step.outputs.password, label: "S" });
    // The provider got plain values: the host does not accept secrets.
    const check = box.calls().find((c) => c.method === "check")!;
    expect(check.news?.token).toBe("tok-123");

    const text = fs.readFileSync(box.stateFile, "utf8");
    for (const secretValue of ["tok-123", "cfg-secret", step.outputs.password as string]) {
      expect(text).not.toContain(secretValue);
    }
    const record = readStateFile(box.stateFile).resources.find((r) => r.name === "s")!;
    expect(isSecret(record.outputs.password)).toBe(true);
    expect(isSecret(record.inputs.token)).toBe(true);
    expect(reveal(record.outputs.password!)).toBe(step.outputs.password);

    const again = await up(program, box.options);
    expect(again.step("s")).toMatchObject({ op: "same", secretOutputs: step.secretOutputs });
  });

  it("updates in place and keeps the id", async () => {
    const box = sandbox();
    const id = (await up(pair({ size: 1 }), box.options)).step("a").id;
    const result = await up(pair({ size: 5 }), box.options);
    expect(result.summary).toEqual({ same: 2, update: 1 });
    expect(result.step("a")).toMatchObject({
      op: "update",
      id,
      diff: { changes: "some", changedKeys: ["size"], replaces: [] },
      outputs: expect.objectContaining({ size: 5, revision: 2 }),
    });
    expect(box.store()[id]).toMatchObject({ size: 5, revision: 2 });
    expect(readStateFile(box.stateFile).resources.find((r) => r.id === id)?.outputs).toMatchObject({ size: 5 });
  });

  it("replaces create-first: new record, dependents updated, then the old record deleted", async () => {
    const box = sandbox();
    const oldId = (await up(pair(), box.options)).step("a").id;
    box.clearCalls();
    const result = await up(pair({ label: "A2" }), box.options);
    const a = result.step("a");
    expect(a).toMatchObject({ op: "replace", oldId, deleteBeforeReplace: false, diff: { replaces: ["label"] } });
    expect(a.id).not.toBe(oldId);
    expect(result.step("b")).toMatchObject({ op: "update", outputs: expect.objectContaining({ ref: a.id }) });
    expect(Object.keys(box.store()).sort()).toEqual([a.id, result.step("b").id].sort());
    const bId = result.step("b").id;
    expect(ends(box.calls())).toEqual([`create A2:${a.id}`, `update B:${bId}`, `delete A:${oldId}`]);
    expect(
      readStateFile(box.stateFile)
        .resources.filter((r) => r.name === "a")
        .map((r) => r.id),
    ).toEqual([a.id]);
  });

  it("replaces delete-first when the provider's diff asks for deleteBeforeReplace", async () => {
    const box = sandbox();
    const oldId = (await up(pair(), box.options)).step("a").id;
    box.clearCalls();
    const result = await up(pair({ zone: "b" }), box.options);
    const a = result.step("a");
    expect(a).toMatchObject({ op: "replace", oldId, deleteBeforeReplace: true, diff: { replaces: ["zone"] } });
    const order = ends(box.calls());
    expect(order.indexOf(`delete A:${oldId}`)).toBeLessThan(order.findIndex((c) => c.startsWith("create A")));
    expect(box.store()[oldId]).toBeUndefined();
    expect(box.store()[a.id]).toMatchObject({ zone: "b" });
  });

  it("deletes a resource the program no longer declares", async () => {
    const box = sandbox();
    const first = await up(pair(), box.options);
    const result = await up(() => {
      new TestRecord("a", { label: "A", size: 1 });
    }, box.options);
    expect(result.step("b")).toMatchObject({ op: "delete", id: first.step("b").id });
    expect(Object.keys(box.store())).toEqual([first.step("a").id]);
    expect(readStateFile(box.stateFile).resources.map((r) => r.name)).toEqual(["cloudinfra-test-test", "a"]);
  });

  it("deletes nothing when the program fails", async () => {
    const box = sandbox();
    await up(pair(), box.options);
    const failing = () => {
      throw new Error("the program broke");
    };
    await expect(up(failing, box.options)).rejects.toThrow(/the program broke/);
    expect(Object.keys(box.store())).toHaveLength(2);
    expect(readStateFile(box.stateFile).resources.map((r) => r.name)).toEqual(["cloudinfra-test-test", "a", "b"]);
  });
});
