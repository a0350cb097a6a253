/* eslint-disable @typescript-eslint/no-require-imports -- dynamicProvider loads the module of a kind's provider by
   its path, chosen at run time (see there). */
// What the dynamic SDK's classes load of the provider: Node's own modules and ./provider.ts, nothing of the client,
// the contract or the kinds' declarations (a program that only declares resources never loads them).
import * as path from "node:path";
import type * as pulumi from "@pulumi/pulumi";
import type { KindName } from "../resources";
import { providerOf } from "./provider";

/**
 * The dynamic provider of one resource kind, as the SDK classes give it to Pulumi, which serializes it into the state
 * of every resource (twice: inputs and outputs). Where Pulumi's serializer can name it, it is the exports of the
 * kind's module `@cloudinfra/pulumi/dynamic/<kind>`, serialized as a `require` of that module (~260 bytes instead of
 * ~2.7 KB). The serializer names a module's exports when the module's path goes through node_modules and the
 * package's manifest resolves from @pulumi/pulumi's own location; otherwise (a linked or `file:` install, a layout
 * like pnpm's) it would write a path the package does not export, so an object that is no module's exports is given
 * instead, serialized by value (providerOf): the same provider, the larger text.
 */
export function dynamicProvider(kind: KindName): pulumi.dynamic.ResourceProvider {
  const file = kind.replace(/([a-z])([A-Z])/g, "$1-$2").toLowerCase();
  const module = requiredByName(`./${file}`, `@cloudinfra/pulumi/dynamic/${file}`);
  return module === undefined ? providerOf(kind) : (require(module) as pulumi.dynamic.ResourceProvider);
}

/**
 * The path of the module `relative` when Pulumi's closure serializer would write its exports as `require(name)`;
 * undefined when it would not, or when Node cannot load it as it is (sources run through a TypeScript loader).
 */
function requiredByName(relative: string, name: string): string | undefined {
  try {
    const file = require.resolve(relative);
    const parts = path.relative(process.cwd(), file).split(path.sep);
    const at = parts.indexOf("node_modules");
    if (at < 0 || `${parts[at + 1]}/${parts[at + 2]}` !== "@cloudinfra/pulumi") return undefined;
    const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json"));
    return require.resolve(name, { paths: [pulumiDir] }) === file ? file : undefined;
  } catch {
    return undefined;
  }
}
