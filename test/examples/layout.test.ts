import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../examples");

/** Each runnable example and the function its `program.ts` exports. */
const examples = {
  quickstart: "quickstart",
  "gpu-training": "gpuTraining",
  "team-onboarding": "teamOnboarding",
  drift: "drift",
  "usage-report": "usageReport",
  team: "team",
};

describe.each(Object.entries(examples))("examples/%s", (name, fn) => {
  const read = (file: string) => fs.readFileSync(path.join(root, name, file), "utf8");

  it("is a Pulumi nodejs project named after its folder", () => {
    const project = read("Pulumi.yaml");
    expect(project).toMatch(new RegExp(`^name: ${name}$`, "m"));
    expect(project).toMatch(/^runtime: nodejs$/m);
  });

  it("depends on this package and Pulumi, and runs index.ts", () => {
    const pkg = JSON.parse(read("package.json")) as { main: string; dependencies: Record<string, string> };
    expect(pkg.main).toBe("index.ts");
    expect(pkg.dependencies).toMatchObject({
      "@cloudinfra/pulumi": "file:../..",
      "@pulumi/pulumi": expect.any(String),
    });
  });

  it("index.ts exports what program.ts returns, and the README tells how to run it on the emulator", async () => {
    expect(read("index.ts")).toBe(`import { ${fn} } from "./program";\n\nexport = ${fn}();\n`);
    const program = (await import(path.join(root, name, "program.ts"))) as Record<string, unknown>;
    expect(typeof program[fn]).toBe("function");
    expect(read("README.md")).toContain("pulumi config set cloudinfra:baseUrl http://127.0.0.1:8787/v1");
  });
});
