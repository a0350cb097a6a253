import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { deletionWaves, dependencyOrder, loadState, saveState, type StateResource } from "../../../tools/harness/state";
import {
  RESOURCE_SIG,
  SIG_KEY,
  UNKNOWN,
  annotateSecrets,
  changedKeys,
  flattenReferences,
  reveal,
  secret,
  secretPaths,
} from "../../../tools/harness/wire";

function resource(name: string, dependencies: string[] = [], parent = ""): StateResource {
  return {
    urn: `urn:${name}`,
    type: "t",
    name,
    custom: true,
    id: name,
    parent,
    inputs: {},
    outputs: {},
    dependencies,
    propertyDependencies: {},
    options: {},
  };
}

describe("wire values", () => {
  it("carries secrecy from inputs to outputs of the same name, at any depth", () => {
    const ins = { a: secret("x"), nested: { b: secret(1), c: 2 }, list: [secret("s"), "p"] };
    const outs = { a: "x", nested: { b: 1, c: 2 }, list: ["s", "p"], extra: "e" };
    const annotated = annotateSecrets(outs, ins);
    expect(secretPaths(annotated).sort()).toEqual(["a", "list[0]", "nested.b"]);
    expect(reveal(annotated)).toEqual(outs);
  });

  it("turns resource references into ids (or URNs) for providers that accept none", () => {
    const ref = (id?: string) => ({ [SIG_KEY]: RESOURCE_SIG, urn: "urn:x", ...(id === undefined ? {} : { id }) });
    expect(flattenReferences({ a: ref("i-1"), b: [ref()], c: secret(ref("i-2")) })).toEqual({
      a: "i-1",
      b: ["urn:x"],
      c: secret("i-2"),
    });
  });

  it("compares inputs by value, ignoring secrecy and the serialized provider", () => {
    const olds = { a: 1, b: secret("s"), __provider: "old", c: UNKNOWN };
    expect(changedKeys(olds, { a: 1, b: "s", __provider: "new", c: "known" })).toEqual(["c"]);
  });
});

describe("state", () => {
  it("round-trips through the file with secrets obscured", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "harness-state-")), "s.json");
    const r = { ...resource("a"), outputs: { password: secret("hunter2"), size: 1 } };
    const state = { version: 1 as const, project: "p", stack: "s", resources: [r] };
    saveState(file, state);
    expect(fs.readFileSync(file, "utf8")).not.toContain("hunter2");
    expect(loadState(file, "p", "s")).toEqual(state);
    expect(() => loadState(file, "other", "s")).toThrow(/holds stack p\/s/);
    expect(loadState(path.join(path.dirname(file), "missing.json"), "p", "s").resources).toEqual([]);
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  });

  it("deletes dependents and children before what they need, independent ones together", () => {
    const a = resource("a");
    const b = resource("b", ["urn:a"]);
    const c = resource("c", [], "urn:b");
    const d = resource("d");
    expect(deletionWaves([a, b, c, d]).map((wave) => wave.map((r) => r.name))).toEqual([["c", "d"], ["b"], ["a"]]);
    expect(dependencyOrder([c, b, d, a]).map((r) => r.name)).toEqual(["a", "b", "c", "d"]);
  });
});
