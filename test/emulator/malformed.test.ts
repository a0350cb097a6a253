import { randomUUID } from "node:crypto";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { hashSecret } from "../../emulator/http";
import type { State } from "../../emulator/state";
import { ErrorEnvelope, type RouteSpec, routes } from "../../provider/api";
import { type TestEmulator, testEmulator } from "../helpers/emulator";

/*
 * Property: every malformed request (body or query) is answered 400 INVALID_REQUEST with the error envelope, never
 * anything else, and changes nothing in the state. Bodies are derived from each route's own schema (via its JSON
 * Schema): start from a minimal valid body, then break one thing. Each generated body is checked to really fail the
 * schema before it is sent.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
interface JsonSchema {
  type?: string;
  format?: string;
  enum?: Json[];
  const?: Json;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

const NUM_RUNS = 30;
let em: TestEmulator;
beforeAll(async () => {
  em = await testEmulator();
});

const entries = Object.entries(routes) as [string, RouteSpec][];
const bodyRoutes = entries.filter(([, r]) => r.body && ["POST", "PUT", "PATCH"].includes(r.method));
const queryRoutes = entries.filter(([, r]) => r.method === "GET" && r.query);

const fails = (schema: z.ZodType, value: unknown) => !schema.safeParse(value).success;

/** Size of every collection in the state (and the scalar counters), to show nothing was created or removed. */
function sizes(state: State): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(state).map(([k, v]) => [
      k,
      Array.isArray(v) ? v.length : v && typeof v === "object" ? Object.keys(v).length : v,
    ]),
  );
}

/** Path parameters filled with ids from the seeded state where one fits, else random UUIDs. */
function pathOf(route: RouteSpec): string {
  const shape = route.params ? (route.params as z.ZodObject).shape : {};
  const b = em.bootstrap;
  const adminKeyId = Object.values(em.ctx.state.apiKeys).find(
    (k) => k.secretHash === hashSecret(b.users.admin.apiKey),
  )!.id;
  const params: Record<string, string> = {};
  const url = route.path.replace(/:(\w+)/g, (_, name: string) => {
    let value: string;
    if (name === "keyId") value = adminKeyId;
    else if (name === "userId") value = b.users.member.id;
    else if (name === "roleName") value = "tenant-user";
    else if (shape[name]?.safeParse("1").success) value = "1";
    else if (route.path.startsWith("/users/")) value = b.users.member.id;
    else if (route.path.startsWith("/metrics/entity/")) value = b.entityId;
    else if (route.path.startsWith("/resource/data-centers/")) value = b.fixtures.datacenters[0].id;
    else value = randomUUID();
    params[name] = value;
    return value;
  });
  if (route.params) expect(route.params.safeParse(params).success, `params of ${route.path}`).toBe(true);
  return `/v1${url}`;
}

/** The object schema a body is built from (the first branch of a union). */
const objectOf = (js: JsonSchema): JsonSchema =>
  js.type === "object" ? js : ((js.anyOf ?? []).find((s) => s.type === "object") ?? js);

/** A minimal value satisfying a JSON Schema. */
function sample(js: JsonSchema): Json {
  if (js.const !== undefined) return js.const;
  if (js.enum) return js.enum[0];
  if (js.anyOf) return sample(js.anyOf[0]);
  switch (js.type) {
    case "object":
      return Object.fromEntries((js.required ?? []).map((k) => [k, sample(js.properties![k])]));
    case "array":
      return Array.from({ length: js.minItems ?? 0 }, () => sample(js.items ?? {}));
    case "integer":
    case "number":
      return js.minimum ?? (js.exclusiveMinimum !== undefined ? js.exclusiveMinimum + 1 : 1);
    case "boolean":
      return true;
    case "string":
      if (js.format === "uuid") return randomUUID();
      if (js.format === "email") return "someone@acme.example";
      if (js.format === "ipv4") return "10.0.0.1";
      if (js.format === "cidrv4") return "10.0.0.0/24";
      return "x".repeat(Math.max(1, js.minLength ?? 1));
    default:
      return null;
  }
}

/** Values outside a schema's range or format. */
function outOfRange(js: JsonSchema): Json[] {
  const out: Json[] = [];
  if (js.type === "integer" || js.type === "number") {
    const low = js.exclusiveMinimum ?? (js.minimum !== undefined ? js.minimum - 1 : undefined);
    if (low !== undefined) out.push(low, low - 1000);
    if (js.maximum !== undefined) out.push(js.maximum + 1);
    if (js.type === "integer") out.push((js.minimum ?? js.exclusiveMinimum ?? 0) + 1.5);
  }
  if (js.type === "string") {
    if ((js.minLength ?? 0) > 0) out.push("");
    if (js.maxLength !== undefined) out.push("y".repeat(js.maxLength + 1));
    if (js.format === "uuid")
      out.push(
        "not-a-uuid",
        randomUUID().slice(0, 35),
        randomUUID().replace(/-/g, ""),
        `${randomUUID()}0`,
        "zzzzzzzz-zzzz-4zzz-8zzz-zzzzzzzzzzzz",
      );
    if (js.format === "ipv4") out.push("300.1.1.1", "10.0.0");
    if (js.format === "cidrv4") out.push("10.0.0.0/33", "10.0.0.0");
    if (js.format === "email") out.push("not-an-email");
    if (js.enum) out.push("not-one-of-them");
  }
  if (js.type === "array") {
    if ((js.minItems ?? 0) > 0) out.push([]);
    if (js.maxItems !== undefined) out.push(Array.from({ length: js.maxItems + 1 }, () => sample(js.items ?? {})));
    if (js.items) out.push(...outOfRange(js.items).map((bad) => [bad]));
  }
  if (js.anyOf) out.push(...js.anyOf.flatMap(outOfRange));
  if (js.const !== undefined && typeof js.const === "number") out.push(js.const + 0.5, 3, 16);
  return out;
}

const anyJson = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>;
const wrongTyped: fc.Arbitrary<Json> = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), anyJson, { maxKeys: 2 }),
  fc.array(anyJson, { maxLength: 3 }),
);
const reserved = new Set(["__proto__", "constructor", "prototype"]);

/** Malformed bodies for a route's body schema: the kinds the spec names, each really failing the schema. */
function malformedBodies(schema: z.ZodType): { arbitrary: fc.Arbitrary<unknown>; base: Json } {
  const js = objectOf(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JsonSchema);
  const base = sample(js);
  expect(schema.safeParse(base).success, `sample body ${JSON.stringify(base)}`).toBe(true);
  const baseObject = base as Record<string, Json>;
  const props = Object.keys(js.properties ?? {});
  const kinds: fc.Arbitrary<unknown>[] = [
    // Not an object at all.
    fc.oneof(
      fc.constant(null),
      fc.integer(),
      fc.string({ maxLength: 20 }),
      fc.boolean(),
      fc.array(anyJson, { maxLength: 3 }),
    ),
    // An unknown extra field.
    fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !props.includes(k) && !reserved.has(k)),
        anyJson,
      )
      .map(([k, v]) => ({ ...baseObject, [k]: v })),
  ];
  const required = js.required ?? [];
  if (required.length > 0) {
    // Missing required fields (one or all).
    kinds.push(
      fc
        .subarray(required, { minLength: 1 })
        .map((gone) => Object.fromEntries(Object.entries(baseObject).filter(([k]) => !gone.includes(k)))),
    );
  }
  if (props.length > 0) {
    // A field of the wrong type.
    kinds.push(
      fc
        .tuple(fc.constantFrom(...props), wrongTyped)
        .map(([k, v]) => ({ ...baseObject, [k]: v }))
        .filter((body) => fails(schema, body)),
    );
    // Bad UUIDs, out-of-range numbers, too long or empty strings, too few or too many items, bad enums.
    const ranged = props.flatMap((k) => outOfRange(js.properties![k]).map((v) => ({ ...baseObject, [k]: v })));
    const failing = ranged.filter((body) => fails(schema, body));
    if (failing.length > 0) kinds.push(fc.constantFrom(...failing));
  }
  return { arbitrary: fc.oneof(...kinds), base };
}

async function send(method: string, url: string, payload: string, contentType: string | null) {
  const res = await em.app.inject({
    method: method as "POST",
    url,
    payload,
    headers: {
      "x-api-key": em.bootstrap.users.admin.apiKey,
      ...(contentType !== null ? { "content-type": contentType } : {}),
    },
  });
  return { status: res.statusCode, body: res.body.length > 0 ? (JSON.parse(res.body) as unknown) : null };
}

function expectInvalidRequest(res: { status: number; body: unknown }, what: string): void {
  expect(res.status, `${what} → ${JSON.stringify(res.body)}`).toBe(400);
  expect(ErrorEnvelope.safeParse(res.body).success, what).toBe(true);
  expect((res.body as { error: string }).error, what).toBe("INVALID_REQUEST");
}

describe("malformed bodies on every POST/PUT/PATCH route with a body", () => {
  it("covers the body routes of the contract", () => {
    expect(bodyRoutes.length).toBeGreaterThan(40);
  });

  it.each(bodyRoutes)("%s", async (name, route) => {
    const url = pathOf(route);
    const { arbitrary, base } = malformedBodies(route.body!);
    const before = sizes(em.ctx.state);
    await fc.assert(
      fc.asyncProperty(arbitrary, async (body) => {
        expect(fails(route.body!, body), `generated body must be invalid: ${JSON.stringify(body)}`).toBe(true);
        expectInvalidRequest(
          await send(route.method, url, JSON.stringify(body), "application/json"),
          `${name} ${JSON.stringify(body)}`,
        );
        expect(sizes(em.ctx.state)).toEqual(before);
      }),
      { numRuns: NUM_RUNS, examples: [[null], [0], ["body"], [true], [[]], [[base]]] },
    );
    // A valid body with a missing or wrong Content-Type is refused too.
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          null,
          "text/plain",
          "application/x-www-form-urlencoded",
          "application/xml",
          "application/json-patch+json",
          "multipart/form-data; boundary=x",
        ),
        async (contentType) => {
          expectInvalidRequest(
            await send(route.method, url, JSON.stringify(base), contentType),
            `${name} with Content-Type ${String(contentType)}`,
          );
          expect(sizes(em.ctx.state)).toEqual(before);
        },
      ),
      { numRuns: 6 },
    );
    // Not JSON at all.
    expectInvalidRequest(await send(route.method, url, "{not json", "application/json"), `${name} with broken JSON`);
    expect(sizes(em.ctx.state)).toEqual(before);
  });
});

/** A query that passes the schema, to which one bad parameter is added. */
function baseQuery(shape: Record<string, z.ZodType>): Record<string, string> {
  const query: Record<string, string> = {};
  for (const [key, schema] of Object.entries(shape)) {
    if (schema.safeParse(undefined).success) continue;
    const value = ["1", randomUUID(), "10.0.0.0/24", "x"].find((v) => schema.safeParse(v).success);
    if (value !== undefined) query[key] = value;
  }
  return query;
}

const badQueryValues = [
  "",
  "abc",
  "-1",
  "0",
  "1.5",
  "101",
  "1e3",
  "99999999999999999999",
  "not-a-uuid",
  "name",
  "name:sideways",
  "createdAt:",
  "z".repeat(201),
  "2024-13",
  "maybe",
  "3",
];

describe("malformed query strings on every GET route with a query schema", () => {
  it.each(queryRoutes)("%s", async (name, route) => {
    const schema = route.query! as z.ZodObject;
    const shape = schema.shape as Record<string, z.ZodType>;
    const base = baseQuery(shape);
    expect(schema.safeParse(base).success, `base query of ${name}`).toBe(true);
    const url = pathOf(route);
    const badPairs = Object.keys(shape).flatMap((k) =>
      badQueryValues.map((v) => ({ ...base, [k]: v })).filter((q) => fails(schema, q)),
    );
    const unknownKey = fc
      .stringMatching(/^[a-zA-Z][a-zA-Z0-9_[\]]{0,15}$/)
      .filter((k) => !(k in shape) && !reserved.has(k))
      .map((k) => ({ ...base, [k]: "1" }));
    const randomValue = fc
      .tuple(fc.constantFrom(...Object.keys(shape)), fc.string({ maxLength: 12 }))
      .map(([k, v]) => ({ ...base, [k]: v }))
      .filter((q) => fails(schema, q));
    const before = sizes(em.ctx.state);
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.constantFrom(...badPairs), unknownKey, randomValue), async (query) => {
        expect(fails(schema, query)).toBe(true);
        const qs = new URLSearchParams(query).toString();
        const res = await em.app.inject({
          method: "GET",
          url: `${url}?${qs}`,
          headers: { "x-api-key": em.bootstrap.users.admin.apiKey },
        });
        expectInvalidRequest({ status: res.statusCode, body: JSON.parse(res.body) }, `${name} ?${qs}`);
        expect(sizes(em.ctx.state)).toEqual(before);
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
