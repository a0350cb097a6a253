import * as pulumi from "@pulumi/pulumi";
import { configuration, handlerContext, type HandlerContext } from "../provider/resources";
import { messageWithCode } from "../provider/client/error-codes";

/**
 * The context of a data function called from the program, read at each call: stack config `cloudinfra:*` (the same
 * keys as the provider's, secrets included), else the `CLOUDINFRA_*` environment variables; a ConfigurationError
 * lists every problem of them.
 */
export function programContext(): HandlerContext {
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
    return await call(programContext());
  } catch (error) {
    throw new pulumi.RunError(`${name}: ${messageWithCode(error)}`);
  }
}
