/**
 * Issue 8, item 6: the SDK's types. `teamId: group.id` did not compile on a VirtualMachine (teamId was
 * `number | null` there, `number` on Volume, `number | string` elsewhere); Network documented 1 of its 19 outputs;
 * GpuVirtualMachine accepted `imageName` and `imageId` together.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(__dirname, "../..");
const sdkDir = path.join(root, "sdk");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-sdk-types-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Type-checks one program against the SDK's sources; returns the diagnostics of the program's own file. */
function typeCheck(source: string): string[] {
  const file = path.join(dir, `program-${Math.random().toString(36).slice(2)}.ts`);
  fs.writeFileSync(file, source.replaceAll("SDK", JSON.stringify(path.join(sdkDir, "index"))));
  const program = ts.createProgram([file], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2020,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    esModuleInterop: true,
    skipLibCheck: true,
    types: ["node"],
    typeRoots: [path.join(root, "node_modules", "@types")],
  });
  return ts
    .getPreEmitDiagnostics(program, program.getSourceFile(file))
    .map((d) => `${d.start ?? 0}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
}

describe("SDK types", () => {
  it("teamId: group.id did not compile on a VirtualMachine: one resource-group reference type takes id and teamId everywhere", () => {
    const errors = typeCheck(`
      import * as c from SDK;
      const group = new c.ResourceGroup("g", { name: "g" });
      const child = new c.ResourceGroup("c", { name: "c", parentTeamId: group.id });
      new c.ResourceGroup("c2", { name: "c2", parentTeamId: group.teamId });
      const base = { name: "x", datacenterId: "d", imageId: 1, configurationId: 1 };
      new c.VirtualMachine("a", { ...base, teamId: group.id });
      new c.VirtualMachine("b", { ...base, teamId: group.teamId });
      new c.VirtualMachine("n", { ...base, teamId: null });
      const vol = { name: "v", datacenterId: "d", volumeTypeId: 1, sizeGb: 100 };
      new c.Volume("v1", { ...vol, teamId: group.id });
      new c.Volume("v2", { ...vol, teamId: child.teamId });
      const gpu = { name: "g", datacenterId: "d", seriesId: 1, gpuCount: 1 as const };
      new c.GpuVirtualMachine("g1", { ...gpu, teamId: group.id });
      new c.GpuVirtualMachine("g2", { ...gpu, teamId: group.teamId });
      new c.User("u", { email: "a@b.c", firstName: "a", lastName: "b", teamIds: [group.id, child.teamId, 3] });
      const ref: c.ResourceGroupRef = "12";
      void ref;
    `);
    expect(errors).toEqual([]);
  });

  it("GpuVirtualMachine took imageName and imageId together: now a compile error, either alone compiles", () => {
    const ok = typeCheck(`
      import * as c from SDK;
      const gpu = { name: "g", datacenterId: "d", seriesId: 1, gpuCount: 1 as const };
      new c.GpuVirtualMachine("a", { ...gpu, imageName: "ubuntu-24.04" });
      new c.GpuVirtualMachine("b", { ...gpu, imageId: 3 });
      new c.GpuVirtualMachine("c", gpu);
    `);
    expect(ok).toEqual([]);
    const both = typeCheck(`
      import * as c from SDK;
      new c.GpuVirtualMachine("a", { name: "g", datacenterId: "d", seriesId: 1, gpuCount: 1, imageName: "u", imageId: 3 });
    `);
    expect(both.length).toBeGreaterThan(0);
  });

  it("Network documented 1 of 19 outputs: every output and argument of every SDK class has JSDoc", () => {
    const undocumented: string[] = [];
    let outputs = 0;
    for (const name of fs.readdirSync(sdkDir).filter((f) => f.endsWith(".ts"))) {
      const file = path.join(sdkDir, name);
      const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
      const visit = (node: ts.Node, owner: string) => {
        if (ts.isClassDeclaration(node) || ts.isInterfaceDeclaration(node)) {
          const exported = node.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
          if (!exported) return;
          const className = node.name?.text ?? "?";
          if (ts.getJSDocCommentsAndTags(node).length === 0) undocumented.push(`${name}: ${className}`);
          for (const member of node.members) {
            const isProperty = ts.isPropertyDeclaration(member) || ts.isPropertySignature(member);
            if (!isProperty) continue;
            if (ts.isPropertyDeclaration(member)) outputs++;
            if (ts.getJSDocCommentsAndTags(member).length === 0) {
              undocumented.push(`${name}: ${className}.${member.name.getText(source)}`);
            }
          }
          return;
        }
        ts.forEachChild(node, (child) => visit(child, owner));
      };
      visit(source, name);
    }
    expect(outputs).toBeGreaterThan(100);
    expect(undocumented).toEqual([]);
  });

  it("Network's networkType output is the union, not string", () => {
    const errors = typeCheck(`
      import * as c from SDK;
      const net = new c.Network("n", { name: "n", datacenterId: "d", networkType: "standard" });
      const t: c.Network["networkType"] extends { apply: unknown } ? true : false = true;
      const u: "standard" | "custom" = "" as unknown as Parameters<Parameters<typeof net.networkType.apply>[0]>[0];
      void u;
      void t;
    `);
    expect(errors).toEqual([]);
  });
});
