/**
 * docs/guides/plugin-sdk.md, the user's page on `@cloudinfra/pulumi-plugin`: its TypeScript compiles against the SDK,
 * and what it tells a user to type names what this repository really makes (the CLI suite
 * test/e2e/plugin-sdk-package.test.ts follows the page: the tarballs, the install, Pulumi.yaml, `pulumi import`).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { codeBlocks, typeCheckBlocks } from "./blocks";

const root = path.resolve(__dirname, "../..");
const guide = fs.readFileSync(path.join(root, "docs", "guides", "plugin-sdk.md"), "utf8");
const readJson = <T>(file: string) => JSON.parse(fs.readFileSync(path.join(root, file), "utf8")) as T;
const main = readJson<{ name: string; version: string; scripts: Record<string, string> }>("package.json");
const sdk = readJson<{ name: string }>("sdk/plugin/package.json");
const schema = readJson<{ language: { nodejs: { packageName: string } } }>("provider/plugin/schema.json");

describe("docs/guides/plugin-sdk.md", () => {
  it("every TypeScript block type-checks against the SDK", () => {
    const errors = typeCheckBlocks(guide, root).map((e) => `docs/guides/plugin-sdk.md:${e.line}: ${e.message}`);
    expect(errors).toEqual([]);
  });

  it("names the package the schema names, the two tarballs npm packs, and the script that packs them", () => {
    expect(sdk.name).toBe(schema.language.nodejs.packageName);
    expect(guide).toContain(`import * as cloudinfra from "${sdk.name}";`);
    const tarball = (name: string) => `${name.replace(/^@/, "").replace("/", "-")}-${main.version}.tgz`;
    expect(guide).toContain(`npm install ./${tarball(main.name)} ./${tarball(sdk.name)} @pulumi/pulumi`);
    expect(guide).toContain("npm run pack-all");
    expect(main.scripts["pack-all"]).toBe("npm pack --workspaces --include-workspace-root");
  });

  it("its Pulumi.yaml names the installed main package's directory as the plugin", () => {
    const yaml = codeBlocks(guide).filter((b) => b.lang === "yaml");
    expect(yaml.map((b) => parse(b.code) as unknown)).toContainEqual(
      expect.objectContaining({
        runtime: "nodejs",
        plugins: { providers: [{ name: "cloudinfra", path: `node_modules/${main.name}` }] },
      }),
    );
  });
});
