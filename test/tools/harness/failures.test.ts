import { describe, expect, it } from "vitest";
import { TestRecord } from "./fixtures/test-record";
import { RunError, destroy, readStateFile, up } from "../../../tools/harness";
import { sandbox } from "./sandbox";

describe("failures", () => {
  it("records a create that failed with an id as partially created; the next up updates it", async () => {
    const box = sandbox();
    const failing = () => {
      new TestRecord("p", { label: "P", size: 1, failCreate: "the record did not boot" });
    };
    const result = await up(failing, { ...box.options, throwOnError: false });
    const step = result.step("p");
    expect(result.ok).toBe(false);
    expect(result.errors).toEqual([{ urn: step.urn, message: "the record did not boot" }]);
    expect(step).toMatchObject({ op: "create", initErrors: ["the record did not boot"] });
    expect(step.id).toMatch(/^rec-/);
    const recorded = readStateFile(box.stateFile).resources.find((r) => r.name === "p");
    expect(recorded).toMatchObject({ id: step.id, initErrors: ["the record did not boot"] });
    expect(Object.keys(box.store())).toEqual([step.id]);

    const fixed = await up(() => {
      new TestRecord("p", { label: "P", size: 1 });
    }, box.options);
    // Nothing changed, but a resource that failed to initialise is updated, as the engine does.
    expect(fixed.step("p")).toMatchObject({ op: "update", id: step.id, diff: { changes: "none" } });
    expect(readStateFile(box.stateFile).resources.find((r) => r.name === "p")?.initErrors).toBeUndefined();
    await destroy(box.options);
    expect(box.store()).toEqual({});
  });

  it("keeps a replaced resource pending deletion when its replacement fails to initialise; the next up deletes it", async () => {
    const box = sandbox();
    const oldId = (await up(() => void new TestRecord("r", { label: "R1", size: 1 }), box.options)).step("r").id;
    const failed = await up(() => void new TestRecord("r", { label: "R2", size: 1, failCreate: "no boot" }), {
      ...box.options,
      throwOnError: false,
    });
    const newId = failed.step("r").id;
    expect(failed.step("r")).toMatchObject({ op: "replace", oldId, initErrors: ["no boot"] });
    const recorded = readStateFile(box.stateFile).resources.filter((r) => r.name === "r");
    expect(recorded.map((r) => [r.id, r.pendingDelete === true])).toEqual([
      [newId, false],
      [oldId, true],
    ]);
    expect(Object.keys(box.store()).sort()).toEqual([newId, oldId].sort());

    const next = await up(() => void new TestRecord("r", { label: "R2", size: 1 }), box.options);
    expect(next.steps.filter((s) => s.name === "r").map((s) => [s.op, s.id])).toEqual([
      ["delete", oldId],
      ["update", newId],
    ]);
    expect(Object.keys(box.store())).toEqual([newId]);
    expect(
      readStateFile(box.stateFile)
        .resources.filter((r) => r.name === "r")
        .map((r) => r.id),
    ).toEqual([newId]);
  });

  it("reproduces the engine: an init failure without __provider in its properties breaks a later delete", async () => {
    const box = sandbox();
    const result = await up(
      () => {
        new TestRecord("q", { label: "Q", size: 1, failCreate: "no boot", failCreateWithoutProvider: true });
      },
      { ...box.options, throwOnError: false },
    );
    expect(result.warnings).toEqual([expect.stringContaining("carry no __provider")]);
    const destroyed = await destroy({ ...box.options, throwOnError: false });
    expect(destroyed.ok).toBe(false);
    expect(destroyed.step("q").error).toMatch(/carry no __provider/);
    expect(Object.keys(box.store())).toHaveLength(1);
    expect(readStateFile(box.stateFile).resources.map((r) => r.name)).toContain("q");
  });

  it("fails the run on check failures and creates nothing", async () => {
    const box = sandbox();
    const run = up(() => {
      new TestRecord("bad", { label: "", size: -1 });
    }, box.options);
    await expect(run).rejects.toThrow(/size: size must be a non-negative integer, not -1; label: label is required/);
    expect(box.store()).toEqual({});
    expect(readStateFile(box.stateFile).resources.map((r) => r.name)).toEqual(["cloudinfra-test-test"]);
  });

  it("stops when a dependency fails: its dependents are never sent to the provider", async () => {
    const box = sandbox();
    const result = await up(
      () => {
        const broken = new TestRecord("broken", { label: "B", size: -1 });
        new TestRecord("dependent", { label: "D", size: 1, ref: broken.id });
      },
      { ...box.options, throwOnError: false },
    );
    expect(result.errors.map((e) => e.urn?.split("::").pop())).toEqual(["broken"]);
    expect(result.steps.map((s) => s.name)).not.toContain("dependent");
    expect(box.calls().map((c) => c.label)).toEqual(["B"]);
  });

  it("refuses to delete a protected resource", async () => {
    const box = sandbox();
    const first = await up(() => {
      new TestRecord("kept", { label: "K", size: 1 }, { protect: true });
    }, box.options);
    const result = await up(() => undefined, { ...box.options, throwOnError: false });
    expect(result.errors).toEqual([{ urn: first.step("kept").urn, message: expect.stringContaining("protected") }]);
    expect(Object.keys(box.store())).toEqual([first.step("kept").id]);
    expect(readStateFile(box.stateFile).resources.map((r) => r.name)).toContain("kept");
  });

  it("reports a provider error with the host's log", async () => {
    const box = sandbox({ config: {} });
    const error = await up(() => {
      new TestRecord("r", { label: "R", size: 1 });
    }, box.options).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(RunError);
    expect((error as RunError).message).toMatch(/Missing required configuration key: harness:storeFile/);
    expect((error as RunError).result.hostLog).toMatch(/Missing required configuration key/);
  });
});
