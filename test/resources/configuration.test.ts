import * as fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ApiError, CloudClient } from "../../provider/client";
import { settingSources } from "../../provider/resources";
import { ApiKey, Network } from "../../sdk";
import { destroy, refresh, up, type RunOptions, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const admin = stack.emulator.bootstrap.users.admin;
const [fra] = stack.datacenters;

/** The host inherits the test's environment: every CLOUDINFRA_* variable is unset unless a test sets it. */
const noEnv: Record<string, string | undefined> = Object.fromEntries(
  Object.values(settingSources).map((name) => [name, undefined]),
);

const networkProgram = (name: string) => () => {
  const net = new Network("net", { name, datacenterId: fra.id, networkType: "standard" });
  return { id: net.id };
};

function bare(config: RunOptions["config"], env: Record<string, string | undefined> = {}): RunOptions {
  return { ...stack.options(), config, env: { ...noEnv, ...env } };
}

const errorText = (result: RunResult) => result.errors.map((e) => e.message).join("\n");

describe("provider configuration", () => {
  it("without credentials: one error listing every way to configure them, and no request sent", async () => {
    const since = stack.mark();
    const result = await up(networkProgram("cf-none"), {
      ...bare({ "cloudinfra:baseUrl": stack.emulator.baseUrl }),
      throwOnError: false,
    });
    expect(result.errors).toHaveLength(1);
    const text = errorText(result);
    expect(text).toContain("No cloudinfra credentials are configured");
    for (const option of [
      "cloudinfra:apiKey",
      "CLOUDINFRA_API_KEY",
      "cloudinfra:sessionToken",
      "CLOUDINFRA_SESSION_TOKEN",
      "cloudinfra:email",
      "cloudinfra:password",
      "cloudinfra:totpSecret",
      "CLOUDINFRA_EMAIL",
      "CLOUDINFRA_PASSWORD",
      "CLOUDINFRA_TOTP_SECRET",
    ]) {
      expect(text).toContain(option);
    }
    expect(result.state.resources.filter((r) => r.name === "net")).toEqual([]);
    expect(await stack.requests(since)).toEqual([]);
  });

  it("names what is missing: the base URL, or the rest of the sign-in credentials", async () => {
    const since = stack.mark();
    const noUrl = await up(networkProgram("cf-nourl"), {
      ...bare({ "cloudinfra:apiKey": { secret: admin.apiKey } }),
      throwOnError: false,
    });
    expect(errorText(noUrl)).toContain("cloudinfra:baseUrl is not set");
    expect(errorText(noUrl)).toContain("CLOUDINFRA_BASE_URL");

    const partial = await up(networkProgram("cf-partial"), {
      ...bare({ "cloudinfra:baseUrl": stack.emulator.baseUrl, "cloudinfra:email": { secret: admin.email } }),
      throwOnError: false,
    });
    expect(errorText(partial)).toContain("Signing in needs cloudinfra:password, cloudinfra:totpSecret too");
    expect(await stack.requests(since)).toEqual([]);
  });

  it("rejects bad pollIntervalMs and jobTimeoutMs, naming the key and its variable, before any request", async () => {
    const since = stack.mark();
    const base = { "cloudinfra:baseUrl": stack.emulator.baseUrl, "cloudinfra:apiKey": { secret: admin.apiKey } };
    const poll = await up(networkProgram("cf-poll"), {
      ...bare({ ...base, "cloudinfra:pollIntervalMs": "fast" }),
      throwOnError: false,
    });
    expect(errorText(poll)).toContain(
      'cloudinfra:pollIntervalMs (CLOUDINFRA_POLL_INTERVAL_MS) must be an integer of at least 1, not "fast"',
    );
    const timeout = await up(networkProgram("cf-timeout"), {
      ...bare(base, { CLOUDINFRA_JOB_TIMEOUT_MS: "500" }),
      throwOnError: false,
    });
    expect(errorText(timeout)).toContain(
      'cloudinfra:jobTimeoutMs (CLOUDINFRA_JOB_TIMEOUT_MS) must be an integer of at least 1000, not "500"',
    );
    expect(await stack.requests(since)).toEqual([]);
  });

  it("falls back to CLOUDINFRA_* variables, lets stack config win over them, and reads it at every call", async () => {
    const env = {
      CLOUDINFRA_BASE_URL: stack.emulator.baseUrl,
      CLOUDINFRA_API_KEY: admin.apiKey,
      CLOUDINFRA_EMAIL: admin.email,
      CLOUDINFRA_PASSWORD: admin.password,
      CLOUDINFRA_TOTP_SECRET: admin.totpSecret,
      CLOUDINFRA_POLL_INTERVAL_MS: "20",
    };
    const options = bare({}, env);
    // Network through the API key, ApiKey through the sign-in credentials: all of them from the environment.
    const created = await up(() => {
      const net = new Network("net", { name: "cf-env", datacenterId: fra.id, networkType: "standard" });
      const key = new ApiKey("key", { name: "cf-env" });
      return { netId: net.id, keyId: key.id };
    }, options);
    expect((await stack.api.getNetwork({ params: { id: created.outputs.netId as string } })).name).toBe("cf-env");
    const secret = created.step("key").outputs.key as string;
    const probe = new CloudClient({ baseUrl: stack.emulator.baseUrl, auth: { apiKey: secret } });
    await expect(probe.check()).resolves.toBeTruthy();
    await probe.close();
    const stateText = fs.readFileSync(options.stateFile, "utf8");
    for (const value of [admin.apiKey, admin.password, admin.totpSecret, secret])
      expect(stateText).not.toContain(value);

    // Stack config wins over the environment.
    const bogus = "svc_NotAKeyNotAKeyNotAKeyNotAKey1";
    const overridden = await refresh({
      ...options,
      config: { "cloudinfra:baseUrl": stack.emulator.baseUrl, "cloudinfra:apiKey": { secret: admin.apiKey } },
      env: { ...env, CLOUDINFRA_BASE_URL: "http://127.0.0.1:9/v1", CLOUDINFRA_API_KEY: bogus },
    });
    expect(overridden.step("net").refresh).toBe("same");

    // Nothing was captured at creation: a refresh with another (wrong) key fails with the API's 401, key redacted.
    const wrong = await refresh({
      ...options,
      config: { "cloudinfra:apiKey": { secret: bogus } },
      throwOnError: false,
    });
    const text = errorText(wrong);
    expect(text).toContain("API_KEY_INVALID");
    expect(text).not.toContain(bogus);

    await destroy(options);
    await expect(stack.api.getNetwork({ params: { id: created.outputs.netId as string } })).rejects.toBeInstanceOf(
      ApiError,
    );
    const keys = (await stack.api.listApiKeys({ query: { search: "cf-env" } })).data;
    expect(keys.filter((k) => k.name === "cf-env")).toEqual([]);
  });
});

describe("cloudinfra:jobTimeoutMs", async () => {
  // Slow jobs: a network takes about 1.8 s to create, longer than the smallest timeout allowed (1000 ms).
  const slow = await stackOnEmulator({ jobDurationMs: 20_000 });
  const slowNetwork = () => {
    const net = new Network("net", { name: "cf-slow", datacenterId: fra.id, networkType: "standard" });
    return { id: net.id };
  };

  it("a create outlasting it fails with the timeout message, and the resource is recorded, not orphaned", async () => {
    const options = slow.options();
    const failed = await up(slowNetwork, {
      ...options,
      config: { ...options.config, "cloudinfra:jobTimeoutMs": "1000" },
      env: noEnv,
      throwOnError: false,
    });
    const text = errorText(failed);
    expect(text).toContain("did not finish within 1000 ms");
    expect(text).toContain("raise cloudinfra:jobTimeoutMs");
    const recorded = failed.state.resources.find((r) => r.name === "net");
    expect(recorded?.id).toBeTruthy();
    expect(recorded?.initErrors?.join(" ")).toContain("did not finish within 1000 ms");
    expect((await slow.api.getNetwork({ params: { id: recorded!.id! } })).name).toBe("cf-slow");

    // With the default timeout the next up finishes it (same network), and destroy removes it.
    const finished = await up(slowNetwork, { ...options, env: noEnv });
    expect(finished.step("net").op).toBe("update");
    expect(finished.outputs.id).toBe(recorded!.id);
    await destroy({ ...options, env: noEnv });
    await expect(slow.api.getNetwork({ params: { id: recorded!.id! } })).rejects.toMatchObject({ status: 404 });
  });
});
