/**
 * The plugin as the engine starts it (dist/provider/plugin/main.js, the package's `pulumi-resource-cloudinfra` bin):
 * it prints its port as the first stdout line and serves there; and the committed schema.json is exactly what the
 * sources generate.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import * as grpc from "@grpc/grpc-js";
import * as provider from "@pulumi/pulumi/proto/provider_pb";
import * as providerRpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import { describe, expect, it } from "vitest";
import { schemaPath, schemaText } from "../../provider/plugin/schema-build";
import { stackOnEmulator } from "../resources/helpers";
import { secret, struct } from "./driver";
import { mainJs, root } from "./launcher";
import manifest from "../../package.json";

describe("the plugin's entry point", () => {
  it("is the package's pulumi-resource-cloudinfra bin: an executable with a node shebang, starting main.js", () => {
    const bin = (manifest as { bin?: Record<string, string> }).bin?.["pulumi-resource-cloudinfra"];
    expect(bin).toBe("pulumi-resource-cloudinfra");
    const launcher = path.join(root, bin!);
    expect(fs.statSync(launcher).mode & 0o111).not.toBe(0);
    const text = fs.readFileSync(launcher, "utf8");
    expect(text.startsWith("#!/usr/bin/env node\n")).toBe(true);
    expect(text).toContain('require("./dist/provider/plugin/main.js")');
    expect(fs.readFileSync(mainJs, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  it("prints its port first on stdout and answers Configure and Check there (cold start measured)", async () => {
    const world = await stackOnEmulator();
    const started = performance.now();
    // The engine address is not listened on: log lines to it are dropped, the provider still serves.
    const child = spawn(path.join(root, "pulumi-resource-cloudinfra"), ["127.0.0.1:1"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      const first = await new Promise<string>((resolve, reject) => {
        readline.createInterface({ input: child.stdout! }).once("line", resolve);
        child.once("exit", (code) => reject(new Error(`plugin exited with ${code}`)));
      });
      expect(first).toMatch(/^\d+$/);
      const listening = performance.now() - started;
      const client = new providerRpc.ResourceProviderClient(`127.0.0.1:${first}`, grpc.credentials.createInsecure());
      const call = <Res>(method: unknown, request: unknown) =>
        new Promise<Res>((resolve, reject) =>
          (method as (r: unknown, cb: (e: grpc.ServiceError | null, res: Res) => void) => unknown).call(
            client,
            request,
            (e, res) => (e ? reject(e) : resolve(res)),
          ),
        );
      await call<provider.ConfigureResponse>(
        client.configure,
        new provider.ConfigureRequest()
          .setArgs(
            struct({ baseUrl: world.emulator.baseUrl, apiKey: secret(world.emulator.bootstrap.users.admin.apiKey) }),
          )
          .setAcceptsecrets(true),
      );
      const check = await call<provider.CheckResponse>(
        client.check,
        new provider.CheckRequest()
          .setUrn("urn:pulumi:t::p::cloudinfra:index:Network::n")
          .setType("cloudinfra:index:Network")
          .setOlds(struct({}))
          .setNews(struct({ name: "cold", datacenterId: world.datacenters[0]!.id, networkType: "standard" })),
      );
      expect(check.getFailuresList()).toEqual([]);
      const answered = performance.now() - started;
      console.log(
        `plugin cold start: port printed after ${Math.round(listening)} ms, first Check answered after ${Math.round(answered)} ms`,
      );
      client.close();
    } finally {
      child.kill();
    }
  });
});

describe("schema.json", () => {
  it("is what `npm run schema` generates from the sources (regenerate it when this fails)", async () => {
    expect(fs.readFileSync(schemaPath(root), "utf8")).toBe(await schemaText(root));
  });

  it("names every kind and both functions under cloudinfra:index, and flags the secret settings", () => {
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
        "User",
        "VirtualMachine",
        "Volume",
        "VolumeAttachment",
      ].map((k) => `cloudinfra:index:${k}`),
    );
    expect(Object.keys(schema.functions)).toEqual([
      "cloudinfra:index:getGpuInventory",
      "cloudinfra:index:getVolumeSizes",
    ]);
    const secrets = Object.entries(schema.config.variables)
      .filter(([, v]) => v.secret)
      .map(([k]) => k);
    expect(secrets.sort()).toEqual(["apiKey", "password", "sessionToken", "totpSecret"]);
    expect(schema.resources["cloudinfra:index:ApiKey"]!.properties.key!.secret).toBe(true);
  });
});
