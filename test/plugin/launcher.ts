/**
 * The built plugin as the engine finds it without a language host: an executable `pulumi-resource-cloudinfra` on
 * PATH (a launcher of dist/provider/plugin/main.js, as the package's `bin` is once installed), its cold start
 * measured as the engine sees it, and typed helpers for programs that register the plugin's resources.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as readline from "node:readline";
import * as grpc from "@grpc/grpc-js";
import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import * as provider from "@pulumi/pulumi/proto/provider_pb";
import * as providerRpc from "@pulumi/pulumi/proto/provider_grpc_pb";
import { repositoryRoot } from "../../tools/harness/engine";
import { secret, struct } from "./driver";

/** The repository root, whether this runs from the sources (vitest) or from dist/ (`npm run bench`). */
export const root = repositoryRoot();
export const mainJs = path.join(root, "dist", "provider", "plugin", "main.js");
export const TOKEN = "cloudinfra:index:";

/** Puts a `pulumi-resource-cloudinfra` launcher first on this process's PATH (the CLI inherits it). */
export function useLauncher(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-plugin-bin-"));
  const launcher = path.join(dir, "pulumi-resource-cloudinfra");
  fs.writeFileSync(launcher, `#!/bin/sh\nexec node "${mainJs}" "$@"\n`, { mode: 0o755 });
  process.env.PATH = `${dir}${path.delimiter}${process.env.PATH ?? ""}`;
  return dir;
}

/** One cold start of the plugin: milliseconds from spawning it to its port printed and to its first Check answered. */
export interface ColdStart {
  port: number;
  listeningMs: number;
  answeredMs: number;
  /**
   * CPU time (user + system) the plugin process had used when its first Check was answered, from /proc (Linux;
   * undefined elsewhere): steadier than the wall times on a loaded machine. 10 ms resolution.
   */
  cpuMs?: number;
  /** The failures of that first Check (a Network in `datacenterId`): none expected. */
  failures: { property: string; reason: string }[];
}

/**
 * Starts the package's `pulumi-resource-cloudinfra` as the engine does, times the port printed on stdout and the
 * first Check answered (after a Configure against `baseUrl`), then stops it and waits for its exit. The engine
 * address given is not listened on: log lines to it are dropped, the provider still serves.
 */
export async function coldStart(api: { baseUrl: string; apiKey: string; datacenterId: string }): Promise<ColdStart> {
  const started = performance.now();
  const child = spawn(path.join(root, "pulumi-resource-cloudinfra"), ["127.0.0.1:1"], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  let client: providerRpc.ResourceProviderClient | undefined;
  try {
    const first = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout! }).once("line", resolve);
      child.once("error", reject);
      child.once("exit", (code) => reject(new Error(`plugin exited with ${code} before printing its port`)));
    });
    if (!/^\d+$/.test(first)) throw new Error(`the plugin's first stdout line is not a port: ${JSON.stringify(first)}`);
    const listeningMs = performance.now() - started;
    const rpc = new providerRpc.ResourceProviderClient(`127.0.0.1:${first}`, grpc.credentials.createInsecure());
    client = rpc;
    const call = <Res>(method: unknown, request: unknown) =>
      new Promise<Res>((resolve, reject) =>
        (method as (r: unknown, cb: (e: grpc.ServiceError | null, res: Res) => void) => unknown).call(
          rpc,
          request,
          (e, res) => (e ? reject(e) : resolve(res)),
        ),
      );
    await call<provider.ConfigureResponse>(
      rpc.configure,
      new provider.ConfigureRequest()
        .setArgs(struct({ baseUrl: api.baseUrl, apiKey: secret(api.apiKey) }))
        .setAcceptsecrets(true),
    );
    const check = await call<provider.CheckResponse>(
      rpc.check,
      new provider.CheckRequest()
        .setUrn("urn:pulumi:t::p::cloudinfra:index:Network::n")
        .setType("cloudinfra:index:Network")
        .setOlds(struct({}))
        .setNews(struct({ name: "cold", datacenterId: api.datacenterId, networkType: "standard" })),
    );
    const answeredMs = performance.now() - started;
    const cpuMs = cpuTimeMs(child.pid);
    const failures = check.getFailuresList().map((f) => ({ property: f.getProperty(), reason: f.getReason() }));
    return { port: Number(first), listeningMs, answeredMs, cpuMs, failures };
  } finally {
    client?.close();
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      const exited = once(child, "exit");
      child.kill();
      await exited;
    }
  }
}

/** User + system CPU time of a running process in ms (fields 14 and 15 of /proc/<pid>/stat, in clock ticks of 10 ms). */
function cpuTimeMs(pid: number | undefined): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** A resource of any `cloudinfra:index:<Kind>` type, registered by its token (CustomResource is abstract). */
class PluginResource extends pulumi.CustomResource {
  constructor(type: string, name: string, props: Record<string, unknown>, opts?: pulumi.CustomResourceOptions) {
    super(type, name, props, opts);
  }
}

/**
 * A plugin resource: `cloudinfra:index:<kind>`, with `outputs` declared so the program can read them; untyped, for
 * tests that build inputs per kind in a loop (programs use the typed SDK, `@cloudinfra/pulumi/plugin`).
 */
export function resource(
  kind: string,
  name: string,
  props: Record<string, unknown>,
  outputs: string[] = [],
  opts?: pulumi.CustomResourceOptions,
): pulumi.CustomResource & Record<string, pulumi.Output<unknown>> {
  const declared = Object.fromEntries(outputs.map((k) => [k, undefined]));
  return new PluginResource(`${TOKEN}${kind}`, name, { ...declared, ...props }, opts) as never;
}

/** A resource of an exported deployment (the parts read here). */
export interface PluginStateResource {
  urn: string;
  type: string;
  id?: string;
  inputs?: Record<string, unknown>;
  outputs?: Record<string, unknown>;
  provider?: string;
  external?: boolean;
}

/** The plugin's resources (and providers) of a stack, as the CLI's state holds them. */
export async function pluginResources(stack: Stack): Promise<PluginStateResource[]> {
  const deployment = (await stack.exportStack()).deployment as { resources?: PluginStateResource[] };
  return (deployment.resources ?? []).filter(
    (r) => r.type.startsWith(TOKEN) || r.type === "pulumi:providers:cloudinfra",
  );
}
