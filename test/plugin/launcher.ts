/**
 * The built plugin as the engine finds it without a language host: an executable `pulumi-resource-cloudinfra` on
 * PATH (a launcher of dist/provider/plugin/main.js, as the package's `bin` is once installed), and typed helpers for
 * programs that register the plugin's resources.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";

export const root = path.resolve(__dirname, "../..");
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

/** A resource of any `cloudinfra:index:<Kind>` type, registered by its token (CustomResource is abstract). */
export class PluginResource extends pulumi.CustomResource {
  constructor(type: string, name: string, props: Record<string, unknown>, opts?: pulumi.CustomResourceOptions) {
    super(type, name, props, opts);
  }
}

/** An explicit cloudinfra provider: one configuration (API, credentials, entity) per instance. */
export class PluginProvider extends pulumi.ProviderResource {
  constructor(name: string, settings: Record<string, pulumi.Input<string>>, opts?: pulumi.ResourceOptions) {
    super("cloudinfra", name, settings, opts);
  }
}

/** A plugin resource: `cloudinfra:index:<kind>`, with `outputs` declared so the program can read them. */
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
