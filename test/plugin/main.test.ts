/**
 * The plugin as the engine starts it (dist/provider/plugin/main.js, the package's `pulumi-resource-cloudinfra` bin):
 * it prints its port as the first stdout line and serves there; and the committed schema.json is exactly what the
 * sources generate.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import { describe, expect, it } from "vitest";
import { schemaPath, schemaText } from "../../tools/schema";
import { stackOnEmulator } from "../resources/helpers";
import { coldStart, mainJs, root } from "./launcher";
import manifest from "../../package.json";

describe("the plugin's entry point", () => {
  it("is the package's pulumi-resource-cloudinfra bin: an executable shell script running main.js with node", () => {
    const bin = (manifest as { bin?: Record<string, string> }).bin?.["pulumi-resource-cloudinfra"];
    expect(bin).toBe("pulumi-resource-cloudinfra");
    const launcher = path.join(root, bin!);
    expect(fs.statSync(launcher).mode & 0o111).not.toBe(0);
    const text = fs.readFileSync(launcher, "utf8");
    expect(text.startsWith("#!/bin/sh\n")).toBe(true);
    expect(text).toContain('exec node "$(dirname "$self")/dist/provider/plugin/main.js" "$@"');
    expect(fs.readFileSync(mainJs, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  it("starts through a symlink (npm's .bin), handing NODE_EXTRA_CA_CERTS over unless NODE_OPTIONS picks the store", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-bin-"));
    const link = path.join(dir, "pulumi-resource-cloudinfra");
    fs.symlinkSync(path.join(root, "pulumi-resource-cloudinfra"), link);
    const caFile = path.join(root, "test", "fixtures", "tls", "cert.pem");
    // The environment the plugin process runs with (it is the script's own process: the script execs node).
    const started = async (extra: Record<string, string>) => {
      const env: NodeJS.ProcessEnv = { ...process.env, NODE_EXTRA_CA_CERTS: caFile, ...extra };
      delete env.CLOUDINFRA_EXTRA_CA_CERTS;
      const child = spawn(link, ["127.0.0.1:1"], { env, stdio: ["ignore", "pipe", "inherit"] });
      try {
        const first = await new Promise<string>((resolve, reject) => {
          readline.createInterface({ input: child.stdout! }).once("line", resolve);
          child.once("exit", (code) => reject(new Error(`exited with ${code}`)));
        });
        expect(first).toMatch(/^\d+$/);
        const environ = fs.readFileSync(`/proc/${child.pid}/environ`, "utf8").split("\0");
        return (name: string) => environ.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
      } finally {
        child.kill();
      }
    };
    try {
      const moved = await started({});
      expect(moved("NODE_EXTRA_CA_CERTS")).toBeUndefined();
      expect(moved("CLOUDINFRA_EXTRA_CA_CERTS")).toBe(caFile);
      const kept = await started({ NODE_OPTIONS: "--use-openssl-ca" });
      expect(kept("NODE_EXTRA_CA_CERTS")).toBe(caFile);
      expect(kept("CLOUDINFRA_EXTRA_CA_CERTS")).toBeUndefined();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("prints its port first on stdout and answers Configure and Check there (cold start measured)", async () => {
    const world = await stackOnEmulator();
    const { port, listeningMs, answeredMs, failures } = await coldStart({
      baseUrl: world.emulator.baseUrl,
      apiKey: world.emulator.bootstrap.users.admin.apiKey,
      datacenterId: world.datacenters[0]!.id,
    });
    expect(port).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    console.log(
      `plugin cold start: port printed after ${Math.round(listeningMs)} ms, first Check answered after ${Math.round(answeredMs)} ms`,
    );
  });
});

describe("schema.json", () => {
  it("is what `npm run schema` generates from the sources (regenerate it when this fails)", async () => {
    expect(fs.readFileSync(schemaPath(root), "utf8")).toBe(await schemaText(root));
  });

  it("describes every resource, function, type and property (nested types too, from the declarations)", () => {
    type Properties = Record<string, { description?: string }>;
    type Described = { description?: string };
    const schema = JSON.parse(fs.readFileSync(schemaPath(root), "utf8")) as {
      config: { variables: Properties };
      provider: { inputProperties: Properties };
      resources: Record<string, Described & { properties: Properties; inputProperties: Properties }>;
      functions: Record<
        string,
        Described & { inputs: { properties?: Properties }; outputs: { properties: Properties } }
      >;
      types: Record<string, Described & { properties: Properties }>;
    };
    const undescribed: string[] = [];
    const check = (where: string, item: Described) => {
      if (!item.description?.trim()) undescribed.push(where);
    };
    const checkAll = (where: string, properties: Properties) => {
      for (const [key, property] of Object.entries(properties)) check(`${where}.${key}`, property);
    };
    checkAll("config", schema.config.variables);
    checkAll("provider", schema.provider.inputProperties);
    for (const [name, resource] of Object.entries(schema.resources)) {
      check(name, resource);
      checkAll(`${name} output`, resource.properties);
      checkAll(`${name} input`, resource.inputProperties);
    }
    for (const [name, fn] of Object.entries(schema.functions)) {
      check(name, fn);
      checkAll(`${name} input`, fn.inputs.properties ?? {}); // none for a function without arguments
      checkAll(`${name} output`, fn.outputs.properties);
    }
    expect(Object.keys(schema.types).length).toBeGreaterThan(0);
    for (const [name, type] of Object.entries(schema.types)) {
      check(name, type);
      checkAll(name, type.properties);
    }
    expect(undescribed).toEqual([]);
  });

  it("types every value: `Any` only for the free-form objects the spec leaves open (metadata, usage, other)", () => {
    const schema = JSON.parse(fs.readFileSync(schemaPath(root), "utf8")) as Record<string, unknown>;
    const untyped: string[] = [];
    const walk = (value: unknown, where: string[]): void => {
      if (Array.isArray(value)) return value.forEach((item, i) => walk(item, [...where, String(i)]));
      if (value === null || typeof value !== "object") return;
      const record = value as Record<string, unknown>;
      if (record.$ref === "pulumi.json#/Any") {
        // The values of a free-form object: a property named for what the spec leaves open (`other`: what an answer
        // whose fields the spec does not show carries beyond the contract's).
        const property = where.at(-1) === "additionalProperties" ? where.at(-2) : where.at(-1);
        if (!["metadata", "usage", "other"].includes(property ?? "")) untyped.push(where.join("."));
      }
      for (const [key, nested] of Object.entries(record)) walk(nested, [...where, key]);
    };
    walk(schema, []);
    expect(untyped).toEqual([]);
  });

  it("names every kind and every function under cloudinfra:index, and flags the secret settings", () => {
    const schema = JSON.parse(fs.readFileSync(path.join(root, "provider/plugin/schema.json"), "utf8")) as {
      resources: Record<string, { properties: Record<string, { secret?: boolean }> }>;
      functions: Record<string, unknown>;
      config: { variables: Record<string, { secret?: boolean }> };
    };
    expect(Object.keys(schema.resources).sort()).toEqual(
      [
        "ApiKey",
        "GpuVirtualMachine",
        "Network",
        "ResourceGroup",
        "ResourceGroupMember",
        "User",
        "UserRole",
        "VirtualMachine",
        "Volume",
        "VolumeAttachment",
      ].map((k) => `cloudinfra:index:${k}`),
    );
    const lookups = ["Network", "Volume", "VirtualMachine", "GpuVirtualMachine", "ResourceGroup", "User"];
    expect(Object.keys(schema.functions).sort()).toEqual(
      [
        "getCaller",
        "getGpuInventory",
        "getVolumeSizes",
        "getNetworkVirtualMachines",
        "getAttachableVirtualMachines",
        "getApiKey",
        "getApiKeys",
        "getApiKeyOptions",
        "getVirtualMachineMetrics",
        "getEntityUsage",
        "getUsageMonths",
        ...lookups.flatMap((kind) => [`get${kind}`, `get${kind}s`]),
      ]
        .map((name) => `cloudinfra:index:${name}`)
        .sort(),
    );
    const secrets = Object.entries(schema.config.variables)
      .filter(([, v]) => v.secret)
      .map(([k]) => k);
    expect(secrets.sort()).toEqual(["apiKey", "password", "sessionToken", "totpSecret"]);
    expect(schema.resources["cloudinfra:index:ApiKey"]!.properties.key!.secret).toBe(true);
  });
});
