/**
 * What a Pulumi program imports from `@cloudinfra/pulumi`.
 * The resource classes and data functions are built on the client re-exported here.
 */
export { CloudClient, ApiError, JobFailedError } from "../provider/client";
export type { CloudClientOptions } from "../provider/client";
