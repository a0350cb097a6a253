/**
 * What a Pulumi program imports from `@cloudinfra/pulumi`: the resource classes, the data functions, and the client
 * they are built on.
 */
export { Network, type NetworkArgs } from "./network";
export { CloudClient, ApiError, JobFailedError } from "../provider/client";
export type { CloudClientOptions } from "../provider/client";
