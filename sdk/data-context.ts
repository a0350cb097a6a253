import * as pulumi from "@pulumi/pulumi";
import { messageWithCode } from "../provider/client/error-codes";
import type { HandlerContext } from "../provider/resources";

/**
 * The provider's modules the data functions run (the client, the contract, the kinds' reads), loaded at the first call
 * of one: a program that only declares resources loads none of them. (`import()` rather than `require()`: it also
 * loads the sources where a test runs them, and the first call is asynchronous anyway.)
 */
async function loadProviderModules() {
  const resources = await import("../provider/resources/index.js");
  const [lookups, data] = await Promise.all([
    import("../provider/resources/lookups.js"),
    import("../provider/resources/data.js"),
  ]);
  return {
    configuration: resources.configuration,
    handlerContext: resources.handlerContext,
    dataFunctions: lookups.dataFunctions,
    availableCombinations: data.availableCombinations,
  };
}

let loading: ReturnType<typeof loadProviderModules> | undefined;

/** What the data functions use of the provider: loaded at the first call (see {@link loadProviderModules}). */
export function providerModules(): ReturnType<typeof loadProviderModules> {
  loading ??= loadProviderModules();
  return loading;
}

/**
 * The context of a data function called from the program, read at each call: stack config `cloudinfra:*` (the same
 * keys as the provider's, secrets included), else the `CLOUDINFRA_*` environment variables; a ConfigurationError
 * lists every problem of them.
 */
export async function programContext(): Promise<HandlerContext> {
  const { configuration, handlerContext } = await providerModules();
  const config = new pulumi.Config("cloudinfra");
  return handlerContext({
    configuration: configuration(
      (key) => config.get(key.replace(/^cloudinfra:/, "")),
      Object.keys(pulumi.runtime.allConfig()),
    ),
  });
}

/**
 * Runs data function `name` in the program. A failure is a RunError (printed without a stack: a message for the user)
 * `name: <message> [CODE]`, the code as README's "Error codes" lists it, as the plugin's invokes report theirs.
 */
export async function inProgram<T>(name: string, call: (ctx: HandlerContext) => Promise<T>): Promise<T> {
  try {
    return await call(await programContext());
  } catch (error) {
    throw new pulumi.RunError(`${name}: ${messageWithCode(error)}`);
  }
}
