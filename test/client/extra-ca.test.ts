/**
 * An https API whose certificate only an extra authority vouches for: the plugin's executable hands
 * NODE_EXTRA_CA_CERTS over as CLOUDINFRA_EXTRA_CA_CERTS (so that Node does not read it at every start), and the
 * client trusts that file next to Node's own authorities. The API here is the emulator behind a TLS proxy with a
 * self-signed certificate made for these tests (test/fixtures/tls: a throwaway key, valid for 127.0.0.1 only).
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { startEmulator, type RunningEmulator } from "../../emulator/server";

const fixtures = path.join(__dirname, "..", "fixtures", "tls");
let emulator: RunningEmulator;
let proxy: https.Server;
let httpsBase: string;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  const target = new URL(emulator.baseUrl);
  proxy = https.createServer(
    { key: fs.readFileSync(path.join(fixtures, "key.pem")), cert: fs.readFileSync(path.join(fixtures, "cert.pem")) },
    (req, res) => {
      const forward = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(forward);
    },
  );
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  httpsBase = `https://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`;
});

afterAll(async () => {
  await new Promise((resolve) => proxy.close(resolve));
  await emulator.close();
});

afterEach(() => {
  delete process.env.CLOUDINFRA_EXTRA_CA_CERTS;
});

const client = () =>
  new CloudClient({
    baseUrl: httpsBase,
    auth: { apiKey: emulator.bootstrap.users.admin.apiKey },
    retry: { retries: 0 },
  });

describe("CLOUDINFRA_EXTRA_CA_CERTS (NODE_EXTRA_CA_CERTS as the plugin's executable passes it on)", () => {
  it("is trusted for an https API, next to Node's own authorities", async () => {
    process.env.CLOUDINFRA_EXTRA_CA_CERTS = path.join(fixtures, "cert.pem");
    const api = client();
    try {
      const mark = emulator.ctx.requestMark();
      await api.listNetworks({ query: { page: 1, limit: 1 } });
      // The request went through the proxy to the API.
      const url = `${emulator.baseUrl.replace(/\/v1$/, "")}/__admin/requests?after=${mark}`;
      const log = ((await (await fetch(url)).json()) as { data: { route: string | null; status: number }[] }).data;
      expect(log.map((e) => [e.route, e.status])).toContainEqual(["listNetworks", 200]);
    } finally {
      await api.close();
    }
  });

  it("without it, the self-signed certificate is refused (the test's API is not trusted by default)", async () => {
    const api = client();
    try {
      await expect(api.listNetworks({ query: { page: 1, limit: 1 } })).rejects.toThrow(/certificate/i);
    } finally {
      await api.close();
    }
  });
});
