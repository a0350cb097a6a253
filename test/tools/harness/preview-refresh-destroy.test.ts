import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { TestRecord } from "./fixtures/test-record";
import { UNKNOWN, destroy, preview, readStateFile, refresh, reveal, up } from "../../../tools/harness";
import { ends, pair, sandbox } from "./sandbox";

describe("preview", () => {
  it("only checks and diffs, sends unknowns to check, and reports the plan", async () => {
    const box = sandbox();
    const planned = await preview(pair(), box.options);
    expect(planned.summary).toEqual({ create: 3 });
    expect(planned.step("b").inputs.ref).toBe(UNKNOWN);
    expect(planned.outputs.aId).toBe(UNKNOWN);
    expect(box.calls().map((c) => c.method)).toEqual(["check", "check"]);
    expect(box.calls().find((c) => c.label === "B")?.news?.ref).toBe(UNKNOWN);
    expect(fs.existsSync(box.stateFile)).toBe(false);
    expect(box.store()).toEqual({});

    await up(pair(), box.options);
    const storeBefore = box.store();
    const stateBefore = fs.readFileSync(box.stateFile, "utf8");
    box.clearCalls();
    const replacing = await preview(pair({ zone: "b" }), box.options);
    expect(replacing.step("a")).toMatchObject({ op: "replace", id: "", deleteBeforeReplace: true });
    // b's reference to a's coming id is unknown during the preview, so its diff sees a change.
    expect(replacing.step("b")).toMatchObject({ op: "update", inputs: expect.objectContaining({ ref: UNKNOWN }) });
    const removing = await preview(() => {
      new TestRecord("a", { label: "A", size: 1 });
    }, box.options);
    expect(removing.step("b").op).toBe("delete");
    expect(new Set(box.calls().map((c) => c.method))).toEqual(new Set(["check", "diff"]));
    expect(box.store()).toEqual(storeBefore);
    expect(fs.readFileSync(box.stateFile, "utf8")).toBe(stateBefore);
  });
});

describe("refresh", () => {
  it("picks up an outside change, drops an outside delete, and the next up repairs both", async () => {
    const box = sandbox();
    const first = await up(pair({ size: 1 }), box.options);
    const [aId, bId] = [first.step("a").id, first.step("b").id];
    const store = box.store();
    store[aId] = { ...store[aId], size: 9 };
    delete store[bId];
    box.writeStore(store);

    const result = await refresh(box.options);
    expect(result.step("a")).toMatchObject({ op: "read", refresh: "changed", diff: { changedKeys: ["size"] } });
    expect(result.step("b")).toMatchObject({ op: "read", refresh: "gone" });
    const state = readStateFile(box.stateFile);
    expect(state.resources.map((r) => r.name)).toEqual(["cloudinfra-test-test", "a"]);
    expect(reveal(state.resources[1]!.outputs.size!)).toBe(9);
    expect(reveal(state.resources[1]!.inputs.size!)).toBe(9);

    const repaired = await up(pair({ size: 1 }), box.options);
    expect(repaired.step("a")).toMatchObject({ op: "update", id: aId });
    expect(repaired.step("b").op).toBe("create");
    expect(box.store()[aId]).toMatchObject({ size: 1 });
  });
});

describe("destroy", () => {
  it("deletes dependents first and leaves nothing", async () => {
    const box = sandbox();
    const first = await up(pair(), box.options);
    box.clearCalls();
    const result = await destroy(box.options);
    expect(result.summary).toEqual({ delete: 3 });
    expect(ends(box.calls())).toEqual([`delete B:${first.step("b").id}`, `delete A:${first.step("a").id}`]);
    expect(box.store()).toEqual({});
    expect(readStateFile(box.stateFile).resources).toEqual([]);
    expect(result.outputs).toEqual({});
  });
});
