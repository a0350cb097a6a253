import * as pulumi from "@pulumi/pulumi";
import { configuration, handlerContext, type HandlerContext } from "../provider/resources";

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
