/** The engine side of the package: the typed API client and the API contract. */
export * from "./client";
export * as api from "./api";
