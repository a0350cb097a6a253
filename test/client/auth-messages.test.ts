/**
 * Configuration failures as both SDKs show them, each naming the setting most likely at fault and carrying the code
 * of what happened: the dynamic host's check (its error goes to the engine with the resource) and the plugin's
 * CheckConfig (the property the engine prints beside the reason) and Configure. Before, an API that could not be
 * reached was shown as `property requestTimeoutMs value {<nil>} has a problem: The cloudinfra credentials could not
 * be checked: Network failure (ECONNREFUSED) … [AUTH_REJECTED]`: the wrong property and the wrong code.
 * A wrong TOTP secret is not checked ahead (signing in is not free of effects): it fails the first call that needs a
 * session, naming `cloudinfra:totpSecret`, on either host.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { hashSecret } from "../../emulator/http";
import { dynamicHandlers } from "../../provider/dynamic";
import { closeClients } from "../../provider/resources";
import { stackOnEmulator } from "../resources/helpers";
import { failure, secret, startDriver, type Driver } from "../plugin/driver";

const world = await stackOnEmulator();
const [fra] = world.datacenters;
const admin = world.emulator.bootstrap.users.admin;
const origin = world.emulator.baseUrl.replace(/\/v1$/, "");
const expiredKey = `svc_${"e".repeat(28)}`;
const refusedKey = `svc_${"0".repeat(28)}`;
const wrongTotp = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";

let driver: Driver;
beforeAll(async () => {
  driver = await startDriver();
  // A key of the admin's that expired yesterday.
  const state = world.emulator.ctx.state;
  const own = Object.values(state.apiKeys).find((k) => k.userId === admin.id)!;
  const id = randomUUID();
  state.apiKeys[id] = {
    ...own,
    id,
    name: "expired",
    secretHash: hashSecret(expiredKey),
    start: expiredKey.slice(0, 8),
    expiresAt: world.emulator.ctx.now() - 24 * 3600_000,
  };
});
afterAll(async () => {
  driver.close();
  await closeClients();
});

interface Case {
  name: string;
  /** Settings besides `pollIntervalMs` and `maxRetries: 0` (an unreachable API is tried once). */
  settings: Record<string, string>;
  /** Whose fault: the setting named by the message (and the plugin's CheckConfig property). */
  setting: string;
  code: string;
  /** More the message says. */
  says: RegExp;
  /** Checked ahead (the credentials check, CheckConfig); otherwise the first call fails. */
  ahead: boolean;
}

const cases: Case[] = [
  {
    name: "API unreachable",
    settings: { baseUrl: "http://127.0.0.1:1/v1", apiKey: admin.apiKey },
    setting: "baseUrl",
    code: "NETWORK_ERROR",
    says: /The API at http:\/\/127\.0\.0\.1:1\/v1 could not be reached: check cloudinfra:baseUrl[^\n]*ECONNREFUSED/,
    ahead: true,
  },
  {
    name: "key refused",
    settings: { baseUrl: world.emulator.baseUrl, apiKey: refusedKey },
    setting: "apiKey",
    code: "API_KEY_INVALID",
    says: /The API refused the cloudinfra credentials \(cloudinfra:apiKey[^\n]*was refused/,
    ahead: true,
  },
  {
    name: "key expired",
    settings: { baseUrl: world.emulator.baseUrl, apiKey: expiredKey },
    setting: "apiKey",
    code: "API_KEY_EXPIRED",
    says: /The API refused the cloudinfra credentials \(cloudinfra:apiKey[^\n]*has expired/,
    ahead: true,
  },
  {
    name: "TOTP secret wrong",
    settings: { baseUrl: world.emulator.baseUrl, email: admin.email, password: admin.password, totpSecret: wrongTotp },
    setting: "totpSecret",
    code: "INVALID_OTP",
    says: /refused the TOTP code computed from cloudinfra:totpSecret/,
    ahead: false,
  },
  {
    name: "base URL of something else (ends in /v1, not the API)",
    settings: { baseUrl: `${origin}/other/v1`, apiKey: admin.apiKey },
    setting: "baseUrl",
    code: "NOT_FOUND",
    says: /does not answer as the cloudinfra API/,
    ahead: true,
  },
  {
    name: "base URL malformed",
    settings: { baseUrl: "htp:/127.0.0.1", apiKey: admin.apiKey },
    setting: "baseUrl",
    code: "SETTING_INVALID",
    says: /cloudinfra:baseUrl/,
    ahead: true,
  },
];

const full = (c: Case) => ({ ...c.settings, pollIntervalMs: "20", maxRetries: "0" });
const secrets = new Set(["apiKey", "password", "totpSecret"]);
const network = { datacenterId: fra!.id, networkType: "standard" };
const tagged = (message: string, code: string) => expect(message.endsWith(` [${code}]`), message).toBe(true);
const noSecret = (message: string, c: Case) => {
  for (const [k, v] of Object.entries(c.settings)) if (secrets.has(k)) expect(message).not.toContain(v);
};

describe.each(cases)("$name", (c) => {
  it(`the plugin: CheckConfig names ${c.setting} (the property the engine prints), the reason carries ${c.code}; Configure and the first call say the same`, async () => {
    const settings = Object.fromEntries(Object.entries(full(c)).map(([k, v]) => [k, secrets.has(k) ? secret(v) : v]));
    const { failures } = await driver.checkConfig(settings);
    if (c.ahead) {
      expect(failures).toHaveLength(1);
      expect(failures[0]!.property).toBe(c.setting);
      expect(failures[0]!.reason).toMatch(c.says);
      expect(failures[0]!.reason).toContain(`cloudinfra:${c.setting}`);
      expect(failures[0]!.reason).not.toContain("AUTH_REJECTED");
      tagged(failures[0]!.reason, c.code);
      noSecret(failures[0]!.reason, c);
      const configured = await startDriver();
      try {
        const error = await failure(configured.configure(settings));
        expect(error.message).toMatch(c.says);
        expect(error.message).toContain(`[${c.code}]`);
      } finally {
        configured.close();
      }
    } else {
      expect(failures).toEqual([]);
      const configured = await startDriver();
      try {
        await configured.configure(settings);
        const error = await failure(configured.create("Network", "n", { name: "msg-totp-p", ...network }));
        expect(error.message).toMatch(c.says);
        expect(error.message).toContain(`[${c.code}]`);
        noSecret(error.message, c);
      } finally {
        configured.close();
      }
    }
  });

  it(`the dynamic host: the error of the check (or of the first call) names cloudinfra:${c.setting} and ends in [${c.code}]`, async () => {
    const values = Object.fromEntries(Object.entries(full(c)).map(([k, v]) => [`cloudinfra:${k}`, v]));
    dynamicHandlers.configure({ config: { get: (key: string) => values[key] } } as never);
    const inputs = { name: `msg-${c.setting}-d`, ...network };
    const error = (await (
      c.ahead ? dynamicHandlers.check("Network", {}, inputs) : dynamicHandlers.create("Network", inputs)
    ).catch((e: unknown) => e)) as Error & { code?: string };
    expect(error).toBeInstanceOf(Error);
    expect(error.message).toMatch(c.says);
    expect(error.message).toContain(`cloudinfra:${c.setting}`);
    tagged(error.message, c.code);
    expect(error.code).toBe(c.code);
    noSecret(error.message, c);
  });
});

it("nothing was created by any of these", async () => {
  const { data } = await world.api.listNetworks({ query: { search: "msg-", limit: 100 } });
  expect(data.filter((n) => n.name.startsWith("msg-"))).toEqual([]);
});
