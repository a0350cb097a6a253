/** The API contract: zod schemas for every request and response of the spec, and the route table built on them. */
export * from "./common";
export * from "./auth";
export * from "./compute";
export * from "./volumes";
export * from "./networks";
export * from "./cidr";
export * from "./directory";
export * from "./jobs";
export * from "./metrics";
export * from "./routes";
