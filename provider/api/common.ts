import { z } from "zod";

/** Identifiers and scalars shared by every route group. */
export const Uuid = z.uuid();
export const Timestamp = z.string();
export const PositiveInt = z.number().int().positive();
export const NonEmpty = z.string().trim().min(1);
export const Name = z.string().trim().min(1).max(128);

/** The error catalogue. The first block is the spec's table; the second holds the codes the spec leaves "not shown". */
export const specErrorStatus = {
  INVALID_CREDENTIALS: 401,
  TWO_FACTOR_REQUIRED: 400,
  INVALID_OTP: 400,
  SESSION_EXPIRED: 401,
  NOT_AUTHENTICATED: 401,
  INSUFFICIENT_PERMISSIONS: 403,
  API_KEY_INVALID: 401,
  API_KEY_EXPIRED: 401,
  RATE_LIMIT_EXCEEDED: 429,
  INVALID_REQUEST: 400,
  SERVER_ERROR: 500,
} as const;

export const chosenErrorStatus = {
  NOT_FOUND: 404,
  CONFLICT: 409,
  NOT_IMPLEMENTED: 501,
} as const;

export const errorStatus = { ...specErrorStatus, ...chosenErrorStatus } as const;
export type ErrorCode = keyof typeof errorStatus;
export const ErrorCodeSchema = z.enum(Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]]);

/** Envelopes. Responses tolerate unknown fields (zod strips them), requests are strict. */
export const PageMeta = z.object({
  total: z.number().int(),
  page: z.number().int(),
  pageSize: z.number().int(),
  totalPages: z.number().int(),
  hasNextPage: z.boolean(),
  hasPreviousPage: z.boolean(),
});
export type PageMeta = z.infer<typeof PageMeta>;

export const TeamsPageMeta = PageMeta.extend({
  unassignedUsers: z.number().int(),
  unassignedVMs: z.number().int(),
});

export const ErrorEnvelope = z.object({
  success: z.literal(false),
  error: z.string(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

export function successEnvelope<D extends z.ZodType, M extends z.ZodType | undefined = undefined>(data: D, meta?: M) {
  return z.object({
    success: z.literal(true),
    data,
    meta: (meta ?? z.undefined()) as M extends z.ZodType ? M : z.ZodUndefined,
    message: z.string().optional(),
  });
}

/** Query-string helpers: the wire carries strings, the schema yields typed values. */
const intPattern = /^-?\d+$/;
export function qInt(min?: number, max?: number) {
  let n = z.number().int();
  if (min !== undefined) n = n.min(min);
  if (max !== undefined) n = n.max(max);
  return z.preprocess((v) => (typeof v === "string" && intPattern.test(v) ? Number(v) : v), n) as unknown as z.ZodType<
    number,
    number | string
  >;
}
export const qBool = z.preprocess(
  (v) => (v === "true" ? true : v === "false" ? false : v),
  z.boolean(),
) as unknown as z.ZodType<boolean, boolean | string>;

/** A repeatable query parameter: `a=1&a=2` or `a=1,2`. */
export function qList<T extends z.ZodType>(item: T) {
  return z.preprocess(
    (v) => (typeof v === "string" ? v.split(",").filter((s) => s.length > 0) : v),
    z.array(item).min(1),
  ) as unknown as z.ZodType<z.output<T>[], z.output<T>[] | string | string[]>;
}

export const SortParam = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_.]*:(asc|desc)$/, "sort must be `field:direction` with direction asc or desc");

/** Common list parameters; each list route extends them with its filters. */
export const listQueryShape = {
  page: qInt(1).optional(),
  limit: qInt(1, 100).optional(),
  sort: SortParam.optional(),
  search: z.string().max(200).optional(),
  entityId: Uuid.optional(),
};
export const ListQuery = z.strictObject(listQueryShape);
export type ListQuery = z.output<typeof ListQuery>;

/** Every route accepts `entityId` to act on a child entity. */
export const EntityQuery = z.strictObject({ entityId: Uuid.optional() });

export const IdParams = z.strictObject({ id: Uuid });
export const IntIdParams = z.strictObject({ id: qInt(1) });

/**
 * Response fields the spec does not document are declared with {@link undocumented}: optional, read when the API
 * sends them, never required. {@link documentedOnly} keeps of an answer what the spec documents (the emulator's
 * spec-fields-only mode answers that, as an API built to the spec alone may).
 */
const undocumentedFields = new WeakSet<z.ZodType>();

/** A response field the spec does not document: optional, read when present, never required. */
export function undocumented<T extends z.ZodType>(schema: T): z.ZodOptional<T> {
  const field = schema.optional();
  undocumentedFields.add(field);
  return field;
}

/**
 * The `data` of a route whose answer the spec does not show (e.g. the 200 of a PUT): whatever the API sends, never
 * read as a record; callers read the resource again.
 */
export const NotShown = z.unknown();

/**
 * The part of a response value that the spec documents: the fields declared {@link undocumented} and those the
 * contract does not know are dropped, recursively through objects, arrays, optional and nullable values; an answer
 * the spec does not show ({@link NotShown}) becomes `{}`.
 */
export function documentedOnly(schema: z.ZodType, value: unknown): unknown {
  if (schema === NotShown) return {};
  if (value === null || value === undefined) return value;
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable) {
    return documentedOnly(schema.unwrap() as z.ZodType, value);
  }
  if (schema instanceof z.ZodArray && Array.isArray(value)) {
    return value.map((item) => documentedOnly(schema.element as z.ZodType, item));
  }
  if (schema instanceof z.ZodObject && typeof value === "object" && !Array.isArray(value)) {
    const shape = schema.shape as Record<string, z.ZodType>;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key in shape && !undocumentedFields.has(shape[key]!))
        .map(([key, field]) => [key, documentedOnly(shape[key]!, field)]),
    );
  }
  return value;
}

/** The three tracking shapes of a 202 response. */
export const JobArrayItem = z.object({
  id: Uuid,
  status: z.literal("pending"),
  resourceType: z.string(),
  createdAt: Timestamp,
});
export const OperationJob = z.object({
  jobId: Uuid,
  resourceType: z.string(),
  operation: z.string(),
  stage: z.string(),
  progressPercentage: z.number().int().min(0).max(100),
});
export const CreatedJob = z.object({ jobId: Uuid, id: z.string() });

/** Result row of a bulk operation (shape chosen by us: the spec does not show it). */
export const BulkResultItem = z.object({
  id: z.union([z.string(), z.number()]),
  success: z.boolean(),
  jobId: Uuid.nullable(),
  error: z.string().nullable(),
});
export const BulkIds = z.strictObject({ ids: z.array(Uuid).min(1).max(50) });

export const DatacenterRef = z.object({ id: Uuid, name: z.string() });
