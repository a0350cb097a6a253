import { createServer, type Server } from "node:net";
import { inspect } from "node:util";
import { MockAgent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError,
  Authenticator,
  CloudClient,
  JobFailedError,
  Redactor,
  RequestValidationError,
  type ExchangeInfo,
} from "../../provider/client";
import { clientHarness, recordingDispatcher, type ClientHarness } from "./helpers";

const ORIGIN = "http://api.example.test";
const BASE = `${ORIGIN}/v1`;
const API_KEY = "svc_AbCdEfGhIjKlMnOpQrStUvWxYz12";
const PASSWORD = "Very-Secret-Passw0rd!";
const TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const SESSION_TOKEN = "sess-0123456789abcdefghijklmnopqrstuvwxyz";
const TWO_FACTOR_COOKIE = "2fa-cookie-value-0123456789";

function mockAgent(): MockAgent {
  const agent = new MockAgent({ enableCallHistory: true });
  agent.disableNetConnect();
  return agent;
}

/** Every rendering of an error a log line could show. */
function renderings(error: unknown): string[] {
  const e = error as Error;
  return [
    e.message,
    String(e.stack),
    JSON.stringify(e),
    inspect(e, { depth: 10 }),
    String(e.cause instanceof Error ? e.cause.message + e.cause.stack : e.cause),
    String(JSON.stringify((e as ApiError).data)),
    (e as ApiError).path,
  ];
}

function expectNoSecret(error: unknown, secrets: string[]): void {
  for (const text of renderings(error)) {
    for (const secret of secrets) expect(text, `leaked ${secret}`).not.toContain(secret);
  }
}

describe("ApiError redaction", () => {
  it("removes the API key from message, data, JSON and inspect output", async () => {
    const agent = mockAgent();
    agent
      .get(ORIGIN)
      .intercept({ path: "/v1/auth/check", method: "GET" })
      .reply(401, {
        success: false,
        error: "API_KEY_INVALID",
        message: `The key ${API_KEY} was rotated (Authorization: Bearer ${API_KEY})`,
        data: { apiKey: API_KEY, note: `x-api-key=${API_KEY}` },
      });
    const client = new CloudClient({ baseUrl: BASE, auth: { apiKey: API_KEY }, dispatcher: agent });
    const error = await client.check().catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: "API_KEY_INVALID", method: "GET", path: "/auth/check" });
    expect(error.message).toContain("was rotated");
    expectNoSecret(error, [API_KEY, API_KEY.slice(4)]);
    expect(error.data).toMatchObject({ apiKey: "[REDACTED]" });
    await client.close();
    await agent.close();
  });

  it("removes password, TOTP secret and codes, 2FA cookie and session token, also from network causes", async () => {
    const agent = mockAgent();
    const pool = agent.get(ORIGIN);
    const codesSent: string[] = [];
    pool.intercept({ path: "/v1/auth/sign-in/email", method: "POST" }).reply(
      400,
      {
        success: false,
        error: "TWO_FACTOR_REQUIRED",
        message: `Second factor needed for password ${PASSWORD}`,
        data: { userId: "7d4c3b2a-1e0f-4a9b-8c7d-6e5f4a3b2c1d", totpConfigured: true, email: "a@b.example" },
      },
      { headers: { "set-cookie": `two_factor_token=${TWO_FACTOR_COOKIE}; Path=/; HttpOnly; SameSite=Lax` } },
    );
    pool.intercept({ path: "/v1/auth/two-factor/verify-totp", method: "POST" }).reply((opts) => {
      const { code } = JSON.parse(String(opts.body)) as { code: string };
      codesSent.push(code);
      return {
        statusCode: 200,
        data: {
          success: true,
          data: {
            user: { id: "7d4c3b2a-1e0f-4a9b-8c7d-6e5f4a3b2c1d", email: "a@b.example", name: "A" },
            token: SESSION_TOKEN,
          },
        },
      };
    });
    pool.intercept({ path: "/v1/users/me", method: "GET" }).reply((opts) => ({
      statusCode: 403,
      data: {
        success: false,
        error: "INSUFFICIENT_PERMISSIONS",
        message: `Denied for ${String((opts.headers as Record<string, string>).authorization)}, cookie ${TWO_FACTOR_COOKIE}, code ${codesSent[0]}, secret ${TOTP_SECRET}`,
        data: { token: SESSION_TOKEN, echo: { password: PASSWORD } },
      },
    }));
    pool.intercept({ path: "/v1/auth/check", method: "GET" }).replyWithError(
      Object.assign(new Error(`socket hang up (Bearer ${SESSION_TOKEN}; password=${PASSWORD})`), {
        code: "ECONNRESET",
      }),
    );
    const client = new CloudClient({
      baseUrl: BASE,
      auth: { email: "a@b.example", password: PASSWORD, totpSecret: TOTP_SECRET },
      dispatcher: agent,
      retry: { retries: 0 },
    });
    const secrets = [PASSWORD, TOTP_SECRET, SESSION_TOKEN, TWO_FACTOR_COOKIE];

    const denied = await client.me().catch((e) => e);
    expect(denied).toMatchObject({ status: 403, code: "INSUFFICIENT_PERMISSIONS" });
    expect(codesSent).toHaveLength(1);
    expectNoSecret(denied, [...secrets, codesSent[0]]);
    expect(denied.message).toContain("Bearer [REDACTED]");

    const network = await client.check().catch((e) => e);
    expect(network).toMatchObject({ status: 0, code: "NETWORK_ERROR" });
    expect(network.cause).toBeInstanceOf(Error);
    expect((network.cause as { code?: string }).code).toBe("ECONNRESET");
    expectNoSecret(network, secrets);
    await client.close();
    await agent.close();
  });

  it("redacts credential-shaped text it was never told about", () => {
    const redactor = new Redactor();
    const text = redactor.text(
      `key svc_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZ, Authorization: Bearer abc.def, {"password":"p@ss","code":"123456"}, ?token=xyz&a=1`,
    );
    expect(text).not.toMatch(/ZZZZ|abc\.def|p@ss|123456|xyz/);
    expect(text).toContain("a=1");
  });

  it("redacts a wrong API key refused by the emulator", async () => {
    const h = await clientHarness();
    const wrongKey = "svc_ThisKeyDoesNotExist12345678";
    const client = h.client({ auth: { apiKey: wrongKey } });
    const error = await client.check().catch((e) => e);
    expect(error).toMatchObject({ status: 401, code: "API_KEY_INVALID" });
    expectNoSecret(error, [wrongKey, wrongKey.slice(4)]);
  });
});

describe("request validation before sending", () => {
  let h: ClientHarness;
  beforeAll(async () => {
    h = await clientHarness();
  });

  it("rejects an invalid body naming each field, and sends nothing", async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const client = h.client({ dispatcher });
    const volumesBefore = Object.keys(h.emulator.ctx.state.volumes).length;
    const error = await client
      .createVolume({
        body: {
          name: "",
          datacenterId: "not-a-uuid",
          volumeTypeId: 1,
          volumeSizeId: 101,
          sizeGb: -5,
          colour: "red",
        } as never,
      })
      .catch((e) => e);
    expect(error).toBeInstanceOf(RequestValidationError);
    expect(error).toMatchObject({ status: 0, code: "INVALID_REQUEST", route: "createVolume", attempts: 0 });
    const fields = (error as RequestValidationError).issues.map((i) => i.field);
    expect(fields).toEqual(expect.arrayContaining(["body.name", "body.datacenterId", "body.sizeGb", "body"]));
    expect(error.message).toMatch(/body\.sizeGb/);
    expect(error.message).toMatch(/colour/);
    expect(requests).toHaveLength(0);
    expect(Object.keys(h.emulator.ctx.state.volumes)).toHaveLength(volumesBefore);
    expect(await h.requestLog({ route: "createVolume" })).toHaveLength(0);
  });

  it("checks path params and query too", async () => {
    const { dispatcher, requests } = recordingDispatcher();
    const client = h.client({ dispatcher });
    await expect(client.getVm({ params: { id: "42" } })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: "path.id" })],
    });
    await expect(client.listVms({ query: { limit: 500 } })).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: "query.limit" })],
    });
    await expect(client.listVms({ query: { sort: "name" } })).rejects.toBeInstanceOf(RequestValidationError);
    await expect(client.check({ body: { x: 1 } } as never)).rejects.toMatchObject({
      issues: [expect.objectContaining({ field: "body" })],
    });
    expect(requests).toHaveLength(0);
  });
});

describe("responses", () => {
  it("tolerates extra fields and strips them; a contract mismatch is INVALID_RESPONSE", async () => {
    const agent = mockAgent();
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: "/v1/resource/gpu/inventory", method: "GET" }).reply(200, {
      success: true,
      data: [],
      extra: "ignored",
    });
    pool.intercept({ path: "/v1/auth/api-keys/options/expiration", method: "GET" }).reply(200, {
      success: true,
      data: [{ days: 7, label: "7 days", recommended: true }],
    });
    pool.intercept({ path: "/v1/resource/jobs", method: "POST" }).reply(200, { success: true, data: { jobs: [{}] } });
    const client = new CloudClient({ baseUrl: BASE, auth: { sessionToken: SESSION_TOKEN }, dispatcher: agent });
    expect(await client.gpuInventory()).toEqual([]);
    expect(await client.apiKeyExpirationOptions()).toEqual([{ days: 7, label: "7 days" }]);
    const error = await client
      .queryJobs({ body: { jobIds: ["7d4c3b2a-1e0f-4a9b-8c7d-6e5f4a3b2c1d"] } })
      .catch((e) => e);
    expect(error).toMatchObject({ code: "INVALID_RESPONSE", status: 200, route: "queryJobs" });
    expect(error.message).toContain("data.jobs.0.id");
    await client.close();
    await agent.close();
  });

  it("an HTML 404 page was echoed raw: now an ApiError naming the full URL, the page's title and the base URL to check", async () => {
    const agent = mockAgent();
    const page = "<html><head><title>Not here</title></head><body>" + "x".repeat(5000) + "</body></html>";
    agent.get(ORIGIN).intercept({ path: "/v1/users/me", method: "GET" }).reply(404, page);
    const client = new CloudClient({ baseUrl: BASE, auth: { apiKey: API_KEY }, dispatcher: agent });
    const error = await client.me().catch((e) => e);
    expect(error).toMatchObject({ status: 404, code: "HTTP_404" });
    expect(error.message).not.toContain("<html>");
    expect(error.message).toContain('HTML page ("Not here")');
    expect(error.message).toContain(`GET ${BASE}/users/me`);
    expect(error.message).toContain("no API route at this URL");
    await client.close();
    await agent.close();
  });
});

describe("network failures", () => {
  let closedPort: number;
  let resetServer: Server;
  let resetPort: number;
  let resetConnections = 0;
  beforeAll(async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    closedPort = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    // Accepts the request, then drops the connection: the server may have processed it.
    resetServer = createServer((socket) => {
      socket.once("data", () => {
        resetConnections++;
        socket.destroy();
      });
    });
    await new Promise<void>((r) => resetServer.listen(0, "127.0.0.1", r));
    resetPort = (resetServer.address() as { port: number }).port;
  });
  afterAll(() => new Promise((r) => resetServer.close(r)));

  const volumeBody = {
    name: "v",
    datacenterId: "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601",
    volumeTypeId: 1,
    volumeSizeId: 101,
    sizeGb: 10,
  };

  it("maps a refused connection to NETWORK_ERROR with its cause, and retries even a create", async () => {
    const exchanges: ExchangeInfo[] = [];
    const client = new CloudClient({
      baseUrl: `http://127.0.0.1:${closedPort}/v1`,
      auth: { apiKey: API_KEY },
      retry: { retries: 2, minDelayMs: 1, maxDelayMs: 5 },
      onExchange: (e) => exchanges.push(e),
    });
    const error = await client.createVolume({ body: volumeBody }).catch((e) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 0, code: "NETWORK_ERROR", mayHaveSucceeded: false, attempts: 3 });
    expect(JSON.stringify(error.toJSON().cause)).toContain("ECONNREFUSED");
    expect(exchanges.map((e) => e.code)).toEqual(["ECONNREFUSED", "ECONNREFUSED", "ECONNREFUSED"]);
    expectNoSecret(error, [API_KEY]);
    await client.close();
  });

  it("does not resend a create after the connection dropped mid-request, and flags it ambiguous", async () => {
    const client = new CloudClient({
      baseUrl: `http://127.0.0.1:${resetPort}/v1`,
      auth: { apiKey: API_KEY },
      retry: { retries: 3, minDelayMs: 1, maxDelayMs: 5 },
    });
    const before = resetConnections;
    const error = await client.createVolume({ body: volumeBody }).catch((e) => e);
    expect(error).toMatchObject({ status: 0, code: "NETWORK_ERROR", mayHaveSucceeded: true, attempts: 1 });
    expect(error.message).toContain("may have taken effect");
    expect(resetConnections - before).toBe(1);

    const getError = await client.getVolume({ params: { id: volumeBody.datacenterId } }).catch((e) => e);
    expect(getError).toMatchObject({ code: "NETWORK_ERROR", mayHaveSucceeded: false, attempts: 4 });
    expect(resetConnections - before).toBe(5);
    await client.close();
  });
});

describe("job failures", () => {
  it("rejects with JobFailedError carrying the job record and its error text", async () => {
    const h = await clientHarness();
    const response = await fetch(`${h.emulator.baseUrl.replace(/\/v1$/, "")}/__admin/faults`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        kind: "job",
        operation: "volume.create",
        outcome: "fail",
        message: "Provider quota exceeded",
        count: 1,
      }),
    });
    expect(response.status).toBeLessThan(300);
    const client = h.client();
    const created = await client.createVolume({
      body: {
        name: "doomed",
        datacenterId: h.emulator.bootstrap.fixtures.datacenters[0].id,
        volumeTypeId: 1,
        volumeSizeId: 101,
        sizeGb: 10,
      },
    });
    const error = await client.jobs.wait(created.jobId).catch((e) => e);
    expect(error).toBeInstanceOf(JobFailedError);
    expect(error.code).toBe("JOB_FAILED");
    expect(error.job).toMatchObject({ id: created.jobId, status: "failed", error: "Provider quota exceeded" });
    expect(error.message).toContain("Provider quota exceeded");
    expect(error.message).toContain(created.jobId);
    expect(h.emulator.ctx.state.jobs[created.jobId].status).toBe("failed");
    expect(h.emulator.ctx.state.volumes[created.id].status).toBe("Error");
  });
});

describe("errors of the client's own making carry their catalogue code", () => {
  it("a base URL that is not http(s) is a TypeError coded BASE_URL_INVALID, naming the setting", () => {
    const make = () => new CloudClient({ baseUrl: "ftp://api.example.test/v1", auth: { apiKey: API_KEY } });
    expect(make).toThrow(TypeError);
    expect(make).toThrow(expect.objectContaining({ code: "BASE_URL_INVALID" }));
    expect(make).toThrow(/the client's baseUrl option/);
  });

  it("signing in without a password is refused with SIGN_IN_UNAVAILABLE, before any request", async () => {
    const exchanged: unknown[] = [];
    const auth = new Authenticator({ apiKey: API_KEY }, new Redactor(), (...args: unknown[]) => {
      exchanged.push(args);
      throw new Error("no exchange expected");
    });
    await expect(auth.signIn()).rejects.toMatchObject({ code: "SIGN_IN_UNAVAILABLE" });
    expect(exchanged).toEqual([]);
  });
});
