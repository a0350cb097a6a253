import type { z } from "zod";
import { errorStatus, type ErrorCode } from "../provider/api";

/** An API failure the emulator answers with the error envelope. Throw it from any handler. */
export class ApiProblem extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data?: unknown,
    status?: number,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = status ?? errorStatus[code];
  }
}

export const invalid = (message: string, data?: unknown) => new ApiProblem("INVALID_REQUEST", message, data);
export const notFound = (what: string, id: string | number) => new ApiProblem("NOT_FOUND", `${what} ${id} not found`);
export const conflict = (message: string, data?: unknown) => new ApiProblem("CONFLICT", message, data);
export const forbidden = (message: string) => new ApiProblem("INSUFFICIENT_PERMISSIONS", message);

/** Turns zod issues into one INVALID_REQUEST naming every offending field. */
export function fromZodError(where: "body" | "query" | "path", error: z.ZodError): ApiProblem {
  const issues = error.issues.map((i) => {
    const path = i.path.length > 0 ? i.path.join(".") : where;
    if (i.code === "unrecognized_keys") {
      return { field: path, message: `unknown field(s): ${i.keys.join(", ")}` };
    }
    return { field: path, message: i.message };
  });
  const text = issues.map((i) => `${i.field}: ${i.message}`).join("; ");
  return invalid(`Invalid ${where}: ${text}`, { issues });
}
