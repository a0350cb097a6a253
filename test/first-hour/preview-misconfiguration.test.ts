/**
 * Issue 8, items 3 and 5: `preview` of the quickstart with no credentials, a wrong API key, or a base URL where
 * nothing listens reported 5 creates and no error (only `up` failed), so a pull request's CI preview was green.
 * Preview runs through the real dynamic-provider host (tools/harness): Check is where it fails now.
 */
import * as net from "node:net";
import { describe, expect, it } from "vitest";
import { settingSources } from "../../provider/resources";
import { Network, VirtualMachine, Volume } from "../../sdk";
import { preview, up, destroy, type RunOptions, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";

const stack = await stackOnEmulator();
const admin = stack.emulator.bootstrap.users.admin;
const [fra] = stack.datacenters;
const fixtures = stack.emulator.bootstrap.fixtures;

/** The host inherits the test's environment: every CLOUDINFRA_* variable is unset. */
const noEnv: Record<string, string | undefined> = Object.fromEntries(
  Object.values(settingSources).map((name) => [name, undefined]),
);

/**
 * The quickstart's kinds: a network, a VM, a volume. Independent of each other here: the test host, unlike the
 * engine, does not abandon the dependents of a resource that failed, and would wait for them.
 */
const quickstart = (prefix: string) => () => {
  const network = new Network("network", { name: `${prefix}-net`, datacenterId: fra.id, networkType: "standard" });
  const vm = new VirtualMachine("vm", {
    name: `${prefix}-vm`,
    datacenterId: fra.id,
    imageId: fixtures.images[0]!.id,
    configurationId: fixtures.configurations[0]!.id,
  });
  const volume = new Volume("data", { name: `${prefix}-data`, datacenterId: fra.id, volumeTypeId: 1, sizeGb: 10 });
  return { network: network.id, vm: vm.id, volume: volume.id };
};

function run(config: RunOptions["config"], env: Record<string, string | undefined> = {}): RunOptions {
  return { ...stack.options(), config, env: { ...noEnv, ...env }, throwOnError: false };
}

const errorText = (result: RunResult) => result.errors.map((e) => e.message).join("\n");
/** Resources of ours the run created (or, in a preview, planned to create) without error. */
const creates = (result: RunResult) =>
  result.steps.filter((s) => s.type.includes("cloudinfra:") && s.op === "create" && !s.error).length;

/** A port where nothing listens (bound, then closed). */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("preview fails on misconfiguration", () => {
  it("preview without credentials planned the creates and reported no error: it fails, sending nothing", async () => {
    const since = stack.mark();
    const result = await preview(quickstart("pm-none"), run({ "cloudinfra:baseUrl": stack.emulator.baseUrl }));
    expect(result.errors.length).toBeGreaterThan(0);
    expect(errorText(result)).toContain("No cloudinfra credentials are configured");
    expect(creates(result)).toBe(0);
    expect(await stack.requests(since)).toEqual([]);
  });

  it("preview with a wrong API key was green: it fails naming cloudinfra:apiKey, after one GET /auth/check", async () => {
    const since = stack.mark();
    const bogus = "svc_WrongWrongWrongWrongWrongWron";
    const result = await preview(
      quickstart("pm-wrong"),
      run({ "cloudinfra:baseUrl": stack.emulator.baseUrl, "cloudinfra:apiKey": { secret: bogus } }),
    );
    const text = errorText(result);
    expect(text).toContain("API_KEY_INVALID");
    expect(text).toContain("cloudinfra:apiKey (stack config)");
    expect(text).toContain("pulumi config set --secret cloudinfra:apiKey");
    expect(text).toContain("cloudinfra:skipCredentialsValidation");
    expect(text).not.toContain(bogus);
    expect(creates(result)).toBe(0);
    // Three resources, one credential, one host process: one check.
    const log = await stack.requests(since);
    expect(log.map((r) => `${r.method} ${r.path.split("?")[0]} ${r.status}`)).toEqual(["GET /v1/auth/check 401"]);
  });

  it("a refused key from the environment says so and how to set it", async () => {
    const result = await preview(
      quickstart("pm-envkey"),
      run({}, { CLOUDINFRA_BASE_URL: stack.emulator.baseUrl, CLOUDINFRA_API_KEY: "svc_EnvWrongEnvWrongEnvWrongEnvWr" }),
    );
    const text = errorText(result);
    expect(text).toContain("CLOUDINFRA_API_KEY (environment)");
    expect(text).toContain("set CLOUDINFRA_API_KEY=<key>");
  });

  it("preview against a base URL where nothing listens was green: it fails naming the URL and cloudinfra:baseUrl", async () => {
    const port = await closedPort();
    const baseUrl = `http://127.0.0.1:${port}/v1`;
    const result = await preview(
      quickstart("pm-closed"),
      run({
        "cloudinfra:baseUrl": baseUrl,
        "cloudinfra:apiKey": { secret: admin.apiKey },
        "cloudinfra:maxRetries": "1",
      }),
    );
    const text = errorText(result);
    expect(text).toContain(`GET ${baseUrl}/auth/check`);
    expect(text).toContain("nothing listens");
    expect(text).toContain("cloudinfra:baseUrl (stack config)");
    expect(creates(result)).toBe(0);
  });

  it("malformed settings fail check before any request: not a URL, no /v1, key not a key, bad numbers, all at once", async () => {
    const since = stack.mark();
    const origin = stack.emulator.baseUrl.replace(/\/v1$/, "");
    const notUrl = await preview(
      quickstart("pm-bad"),
      run({ "cloudinfra:baseUrl": "api.example.com", "cloudinfra:apiKey": { secret: admin.apiKey } }),
    );
    expect(errorText(notUrl)).toContain('cloudinfra:baseUrl (stack config) is not a URL ("api.example.com")');

    const noVersion = await preview(
      quickstart("pm-bad"),
      run({ "cloudinfra:baseUrl": origin, "cloudinfra:apiKey": { secret: admin.apiKey } }),
    );
    expect(errorText(noVersion)).toContain("does not end in /v1");
    expect(errorText(noVersion)).toContain(`${origin}/v1`);

    const several = await preview(
      quickstart("pm-bad"),
      run({
        "cloudinfra:baseUrl": stack.emulator.baseUrl,
        "cloudinfra:apiKey": { secret: "not-a-key" },
        "cloudinfra:requestTimeoutMs": "soon",
        "cloudinfra:maxRetries": "-1",
      }),
    );
    const text = errorText(several);
    expect(text).toContain("The cloudinfra configuration has 3 problems");
    expect(text).toContain("cloudinfra:apiKey (stack config) is not an API key");
    expect(text).not.toContain("not-a-key");
    expect(text).toContain("cloudinfra:requestTimeoutMs (CLOUDINFRA_REQUEST_TIMEOUT_MS) must be an integer from 100");
    expect(text).toContain('cloudinfra:maxRetries (CLOUDINFRA_MAX_RETRIES) must be an integer from 0 to 10, not "-1"');
    expect(await stack.requests(since)).toEqual([]);
  });

  it("an unknown key under cloudinfra: (cloudinfra:apikey) is named with the closest known key", async () => {
    const result = await preview(
      quickstart("pm-typo"),
      run({ "cloudinfra:baseUrl": stack.emulator.baseUrl, "cloudinfra:apikey": { secret: admin.apiKey } }),
    );
    const text = errorText(result);
    expect(text).toContain("cloudinfra:apikey is not a cloudinfra setting: did you mean cloudinfra:apiKey?");
    expect(text).toContain("pulumi config rm cloudinfra:apikey");
    expect(text).not.toContain(admin.apiKey);
  });

  it("cloudinfra:skipCredentialsValidation previews without asking the API", async () => {
    const since = stack.mark();
    const result = await preview(
      quickstart("pm-skip"),
      run({
        "cloudinfra:baseUrl": stack.emulator.baseUrl,
        "cloudinfra:apiKey": { secret: "svc_WrongWrongWrongWrongWrongWron" },
        "cloudinfra:skipCredentialsValidation": "true",
      }),
    );
    expect(result.errors).toEqual([]);
    expect(creates(result)).toBe(3);
    expect(await stack.requests(since)).toEqual([]);
  });

  it("sign-in credentials are not tried by preview: signing in would spend the TOTP code the following up needs", async () => {
    const since = stack.mark();
    const result = await preview(
      quickstart("pm-signin"),
      run({
        "cloudinfra:baseUrl": stack.emulator.baseUrl,
        "cloudinfra:email": { secret: admin.email },
        "cloudinfra:password": { secret: admin.password },
        "cloudinfra:totpSecret": { secret: admin.totpSecret },
      }),
    );
    expect(result.errors).toEqual([]);
    expect(creates(result)).toBe(3);
    expect(await stack.requests(since)).toEqual([]);
  });

  it("good settings: preview plans the creates after one credential check; up then creates them", async () => {
    const options = { ...stack.options(), env: noEnv };
    const since = stack.mark();
    const planned = await preview(quickstart("pm-good"), options);
    expect(planned.errors).toEqual([]);
    expect(creates(planned)).toBe(3);
    // One credential check, the volume's size catalogue (check: the size must be offered), then the preview checks'
    // reads (preflight.ts): the stack's own key, and whether the network's and the volume's names are free. Reads
    // only.
    expect((await stack.requests(since)).map((r) => r.route).sort()).toEqual([
      "check",
      "listApiKeys",
      "listNetworks",
      "listVolumes",
      "volumeSizes",
    ]);
    const created = await up(quickstart("pm-good"), options);
    expect(created.summary.create).toBe(4); // three resources and the stack
    expect((await stack.api.getVm({ params: { id: created.outputs.vm as string } })).virtualMachine.name).toBe(
      "pm-good-vm",
    );
    await destroy(options);
  });
});
