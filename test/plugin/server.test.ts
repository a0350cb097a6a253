/**
 * Every RPC of the provider plugin through a gRPC driver of our own, against the emulator: configuration checks
 * (settings, a refused key), detailed diff kinds, secrets in and out, unknowns in preview with no API call, Read for
 * refresh and import, Invoke, engine log lines with the URN, customTimeouts bounding a job wait.
 */
import * as grpc from "@grpc/grpc-js";
import * as provider from "@pulumi/pulumi/proto/provider_pb";
import * as plugin from "@pulumi/pulumi/proto/plugin_pb";
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeClients } from "../../provider/resources";
import { stackOnEmulator } from "../resources/helpers";
import { failure, isSecret, secret, startDriver, struct, UNKNOWN, urnOf, type Driver } from "./driver";
import manifest from "../../package.json";

const world = await stackOnEmulator();
const [fra] = world.datacenters;
const admin = world.emulator.bootstrap.users.admin;
const settings = { baseUrl: world.emulator.baseUrl, apiKey: secret(admin.apiKey), pollIntervalMs: "20" };
const refusedKey = "svc_00000000000000000000000000000000";
const K = provider.PropertyDiff.Kind;
/** The detailed diff as property → kind. */
const kindsOf = (diff: provider.DiffResponse) => {
  const map = diff.getDetaileddiffMap();
  return Object.fromEntries(map.getEntryList().map(([key]) => [key, map.get(key)!.getKind()]));
};

let driver: Driver;
beforeAll(async () => {
  driver = await startDriver();
});
afterAll(async () => {
  driver.close();
  await closeClients();
});

describe("plugin information and schema", () => {
  it("reports the package version and serves the generated schema", async () => {
    const info = await driver.call<plugin.PluginInfo>(driver.client.getPluginInfo, new Empty());
    expect(info.getVersion()).toBe(manifest.version);
    const response = await driver.call<provider.GetSchemaResponse>(
      driver.client.getSchema,
      new provider.GetSchemaRequest(),
    );
    const schema = JSON.parse(response.getSchema()) as {
      resources: Record<string, unknown>;
      functions: Record<string, unknown>;
    };
    expect(Object.keys(schema.resources)).toContain("cloudinfra:index:VolumeAttachment");
    for (const name of ["getGpuInventory", "getVolumeSizes", "getCaller", "getNetwork", "getNetworks"]) {
      expect(Object.keys(schema.functions)).toContain(`cloudinfra:index:${name}`);
    }
  });
});

describe("engine handshakes", () => {
  it("Handshake accepts secrets; Cancel, GetMapping and Attach answer; Construct and Call are not supported", async () => {
    const handshake = await driver.call<provider.ProviderHandshakeResponse>(
      driver.client.handshake,
      new provider.ProviderHandshakeRequest().setEngineAddress("127.0.0.1:1"),
    );
    expect(handshake.getAcceptSecrets()).toBe(true);
    await driver.call<Empty>(driver.client.cancel, new Empty());
    const mapping = await driver.call<provider.GetMappingResponse>(
      driver.client.getMapping,
      new provider.GetMappingRequest().setKey("terraform"),
    );
    expect(mapping.getProvider()).toBe("");
    const construct = await failure(driver.call(driver.client.construct, new provider.ConstructRequest()));
    expect(construct.code).toBe(grpc.status.UNIMPLEMENTED);
    const callError = await failure(driver.call(driver.client.call, new provider.CallRequest()));
    expect(callError.code).toBe(grpc.status.UNIMPLEMENTED);
  });
});

describe("configuration", () => {
  it("CheckConfig reports every settings problem by its setting, with nothing sent", async () => {
    const since = world.mark();
    const { failures } = await driver.checkConfig({
      baseUrl: "http://127.0.0.1:1/api",
      apiKey: secret("not-a-key"),
      pollIntervalMs: "0",
    });
    expect(failures.map((f) => f.property).sort()).toEqual(["apiKey", "baseUrl", "pollIntervalMs"]);
    expect(failures.find((f) => f.property === "baseUrl")?.reason).toContain("/v1");
    expect(JSON.stringify(failures)).not.toContain("not-a-key");
    expect(await world.requests(since)).toEqual([]);
  });

  it("CheckConfig reports a missing credential and a mistyped setting", async () => {
    const { failures } = await driver.checkConfig({ baseUrl: world.emulator.baseUrl, apiKye: "x" });
    const text = failures.map((f) => f.reason).join("\n");
    expect(text).toContain("did you mean cloudinfra:apiKey");
    expect(text).toContain("No cloudinfra credentials");
  });

  it("CheckConfig fails on a key the API refuses, naming cloudinfra:apiKey, and keeps the inputs' secrets", async () => {
    const { inputs, failures } = await driver.checkConfig({
      baseUrl: world.emulator.baseUrl,
      apiKey: secret(refusedKey),
    });
    expect(failures).toHaveLength(1);
    expect(failures[0]!.property).toBe("apiKey");
    expect(failures[0]!.reason).toContain("cloudinfra:apiKey");
    expect(failures[0]!.reason).not.toContain(refusedKey);
    expect(isSecret(inputs.apiKey)).toBe(true);
  });

  it("CheckConfig returns a credential given as plain config as a secret, so the provider's state keeps it encrypted", async () => {
    const { inputs, failures } = await driver.checkConfig({ ...settings, apiKey: admin.apiKey });
    expect(failures).toEqual([]);
    expect(isSecret(inputs.apiKey)).toBe(true);
    expect(isSecret(inputs.baseUrl)).toBe(false);
  });

  it("CheckConfig passes good settings; a provider given unknown settings (preview) is not checked yet", async () => {
    expect((await driver.checkConfig(settings)).failures).toEqual([]);
    expect((await driver.checkConfig({ ...settings, apiKey: UNKNOWN })).failures).toEqual([]);
  });

  it("DiffConfig lists changed settings, never a replacement", async () => {
    const request = new provider.DiffRequest()
      .setUrn("urn:pulumi:test::plugin::pulumi:providers:cloudinfra::p")
      .setOlds(struct(settings))
      .setNews(struct({ ...settings, entityId: world.emulator.bootstrap.childEntityId }));
    const diff = await driver.call<provider.DiffResponse>(driver.client.diffConfig, request);
    expect(diff.getChanges()).toBe(provider.DiffResponse.DiffChanges.DIFF_SOME);
    expect(diff.getReplacesList()).toEqual([]);
    expect(diff.getDetaileddiffMap().get("entityId")?.getKind()).toBe(K.ADD);
  });

  it("Configure with a refused key fails naming cloudinfra:apiKey; Check then fails the same way", async () => {
    const refused = await startDriver();
    try {
      const configureError = await failure(
        refused.configure({ baseUrl: world.emulator.baseUrl, apiKey: secret(refusedKey) }),
      );
      expect(configureError.code).toBe(grpc.status.UNKNOWN);
      expect(configureError.details).toContain("cloudinfra:apiKey");
      expect(configureError.details).not.toContain(refusedKey);
      const checkError = await failure(
        refused.check("Network", { name: "x", datacenterId: fra!.id, networkType: "standard" }),
      );
      expect(checkError.details).toContain("cloudinfra:apiKey");
    } finally {
      refused.close();
    }
  });

  it("Configure accepts secrets and answers that it accepts them and supports preview", async () => {
    const response = await driver.configure(settings);
    expect(response.getAcceptsecrets()).toBe(true);
    expect(response.getSupportspreview()).toBe(true);
  });
});

describe("resources", () => {
  beforeAll(() => driver.configure(settings));

  it("Check reports input problems by property and fills defaults; unknowns pass unchecked", async () => {
    const bad = await driver.check("Network", { name: "", datacenterId: "x", networkType: "standard", bogus: 1 });
    expect(bad.failures.map((f) => f.property).sort()).toEqual(["bogus", "datacenterId", "name"]);
    const pending = await driver.check("VirtualMachine", {
      name: "chk-vm",
      datacenterId: fra!.id,
      imageId: 1,
      configurationId: 1,
      networkInterfaces: [{ networkId: UNKNOWN, primary: true }],
    });
    expect(pending.failures).toEqual([]);
    expect(pending.inputs.powerState).toBe("running");
    expect(JSON.stringify(pending.inputs.networkInterfaces)).toContain(UNKNOWN);
  });

  it("Create in preview answers unknown outputs and sends nothing to the API", async () => {
    const since = world.mark();
    const { id, outs } = await driver.create(
      "Network",
      "pv",
      { name: "pv-net", datacenterId: fra!.id, networkType: "standard" },
      { preview: true },
    );
    expect(id).toBe("");
    expect(outs.name).toBe("pv-net");
    expect(outs.status).toBe(UNKNOWN);
    expect(outs.gateway).toBe(UNKNOWN);
    expect(await world.requests(since)).toEqual([]);
    expect((await world.api.listNetworks({ query: { search: "pv-net" } })).data).toEqual([]);
  });

  describe("a network's life: create, diff, update, read, delete", () => {
    let id: string;
    let outs: Record<string, unknown>;
    const inputs = {
      name: "life-net",
      datacenterId: fra!.id,
      networkType: "custom",
      cidrBlock: "10.70.0.0/24",
      description: "one",
    };

    it("Create makes it in the API and logs the job to the engine with the URN", async () => {
      driver.lines.length = 0;
      ({ id, outs } = await driver.create("Network", "life", inputs));
      const network = await world.api.getNetwork({ params: { id } });
      expect(network).toMatchObject({
        name: "life-net",
        cidrBlock: "10.70.0.0/24",
        description: "one",
        status: "Active",
      });
      expect(outs).toMatchObject({ name: "life-net", status: "Active", gateway: network.gateway });
      const started = driver.lines.find((l) => /job \S+ started/.test(l.message));
      expect(started).toMatchObject({ severity: "info", urn: urnOf("Network", "life") });
      expect(started?.message).toContain('network named "life-net"');
      expect(driver.lines.some((l) => /job \S+ completed/.test(l.message) && l.urn === urnOf("Network", "life"))).toBe(
        true,
      );
    });

    it("Diff answers each property's change: UPDATE, ADD, UPDATE_REPLACE, with the replacement listed", async () => {
      const diff = await driver.diff(
        "Network",
        id,
        outs,
        { ...inputs, description: "two", networkType: "standard", defaultRoute: "10.70.0.1" },
        inputs,
      );
      expect(diff.getChanges()).toBe(provider.DiffResponse.DiffChanges.DIFF_SOME);
      expect(diff.getHasdetaileddiff()).toBe(true);
      const kinds = kindsOf(diff);
      expect(kinds).toEqual({ description: K.UPDATE, networkType: K.UPDATE_REPLACE, defaultRoute: K.ADD });
      expect(diff.getReplacesList()).toEqual(["networkType"]);
      expect(diff.getDeletebeforereplace()).toBe(true);
    });

    it("Diff of the same inputs is no change; an unknown during preview is a change", async () => {
      const same = await driver.diff("Network", id, outs, inputs, inputs);
      expect(same.getChanges()).toBe(provider.DiffResponse.DiffChanges.DIFF_NONE);
      expect(same.getDetaileddiffMap().getLength()).toBe(0);
      const pending = await driver.diff("Network", id, outs, { ...inputs, description: UNKNOWN }, inputs);
      expect(pending.getDetaileddiffMap().get("description")?.getKind()).toBe(K.UPDATE);
    });

    it("Update changes it in place in the API", async () => {
      const updated = await driver.update("Network", "life", id, outs, { ...inputs, description: "two" });
      expect(updated.description).toBe("two");
      expect((await world.api.getNetwork({ params: { id } })).description).toBe("two");
      outs = updated;
    });

    it("Read for refresh keeps the program's inputs and shows drift in the outputs", async () => {
      await world.api.updateNetwork({ params: { id }, body: { description: "by hand" } });
      const read = await driver.read("Network", "life", id, outs, { ...inputs, description: "two" });
      expect(read.id).toBe(id);
      expect(read.outs.description).toBe("by hand");
      expect(read.inputs).toEqual({ ...inputs, description: "two" });
    });

    it("a retried request is a warning in the engine's log, with the URN", async () => {
      driver.lines.length = 0;
      await world.faults("getNetwork,status=503,count=1");
      try {
        expect((await driver.read("Network", "retried", id, outs, inputs)).id).toBe(id);
      } finally {
        await world.faults("");
      }
      const retry = driver.lines.find((l) => l.message.includes("retrying"));
      expect(retry).toMatchObject({ severity: "warning", urn: urnOf("Network", "retried") });
    });

    it("Read for import takes the inputs from the API, and they diff as no change", async () => {
      const read = await driver.read("Network", "imported", id);
      expect(read.inputs).toEqual({
        name: "life-net",
        datacenterId: fra!.id,
        networkType: "custom",
        cidrBlock: "10.70.0.0/24",
        description: "by hand",
        snatEnabled: false,
        dhcpServerEnabled: true,
        defaultRouteEnabled: false,
        serveDNSServersEnabled: false,
        dnsServers: [],
      });
      const diff = await driver.diff("Network", id, read.outs, read.inputs, read.inputs);
      expect(diff.getChanges()).toBe(provider.DiffResponse.DiffChanges.DIFF_NONE);
    });

    it("Delete removes it from the API; Read then answers an empty id", async () => {
      await driver.delete("Network", "life", id, outs);
      const gone = await world.api.getNetwork({ params: { id } }).catch((e: { status?: number }) => e.status);
      expect(gone).toBe(404);
      expect((await driver.read("Network", "life", id, outs, inputs)).id).toBe("");
    });
  });

  it("Diff of a resource recorded in a failed state replaces it, shown on the output that says so", async () => {
    const inputs = { name: "f", datacenterId: fra!.id, networkType: "standard" };
    const diff = await driver.diff("Network", "id", { ...inputs, status: "Error" }, inputs, inputs);
    expect(diff.getReplacesList()).toEqual(["status"]);
    expect(kindsOf(diff)).toEqual({ status: K.UPDATE_REPLACE });
  });

  it("a type this provider does not serve fails with the types it serves", async () => {
    const error = await failure(driver.create("Bucket", "b", {}));
    expect(error.details).toContain("unknown resource type cloudinfra:index:Bucket");
    expect(error.details).toContain("cloudinfra:index:Network");
  });

  it("Diff answers DELETE for a cleared input (a group's parent)", async () => {
    const olds = { name: "g", parentTeamId: 5, members: [] };
    const diff = await driver.diff(
      "ResourceGroup",
      "9",
      olds,
      { name: "g", members: [] },
      { name: "g", parentTeamId: "5", members: [] },
    );
    expect(kindsOf(diff)).toEqual({
      parentTeamId: K.DELETE,
    });
    expect(diff.getReplacesList()).toEqual([]);
  });

  it("secrets: a user's password comes back a secret; an API key's key is a secret output", async () => {
    const { id, outs } = await driver.create("User", "sec", {
      email: "sec@example.com",
      action: "register",
      password: secret("Str0ng-Passw0rd!"),
      firstName: "Sec",
    });
    expect(isSecret(outs.password)).toBe(true);
    expect((await world.api.getUser({ params: { id } })).email).toBe("sec@example.com");
    expect(driver.lines.map((l) => l.message).join("\n")).not.toContain("Str0ng-Passw0rd!");

    const signedIn = await startDriver();
    try {
      await signedIn.configure({
        ...settings,
        email: admin.email,
        password: secret(admin.password),
        totpSecret: secret(admin.totpSecret),
      });
      const key = await signedIn.create("ApiKey", "k", { name: "plugin-key", enabled: true });
      expect(isSecret(key.outs.key)).toBe(true);
      expect((key.outs.key as { value: string }).value).toMatch(/^svc_/);
      const listed = [];
      for await (const k of world.api.listAll("listApiKeys", {})) listed.push(k);
      expect(listed.find((k) => k.id === key.id)?.name).toBe("plugin-key");
    } finally {
      signedIn.close();
    }
  });

  it("customTimeouts bound the job wait: a create that outlasts it fails naming the limit, recorded with its id", async () => {
    const slow = await stackOnEmulator({ jobDurationMs: 60_000 });
    const slowDriver = await startDriver();
    try {
      await slowDriver.configure({
        baseUrl: slow.emulator.baseUrl,
        apiKey: secret(slow.emulator.bootstrap.users.admin.apiKey),
        pollIntervalMs: "20",
      });
      const error = await failure(
        slowDriver.create(
          "Network",
          "slow",
          { name: "slow-net", datacenterId: fra!.id, networkType: "standard" },
          { timeout: 1 },
        ),
      );
      expect(error.details).toContain("within 1000 ms");
      expect(error.details).toContain("raise the resource's customTimeouts");
      expect(slowDriver.lines.find((l) => l.message.includes("started"))?.message).toContain(
        "at most 1 s: the resource's customTimeouts",
      );
      expect(error.metadata.get("grpc-status-details-bin")).toHaveLength(1);
      expect(error.metadata.get("cloudinfra-error-code")).toEqual(["JOB_TIMEOUT"]);
      // The message (what the CLI prints) ends with the same code.
      expect(error.details).toMatch(/ \[JOB_TIMEOUT\]$/);
      expect((await slow.api.listNetworks({ query: { search: "slow-net" } })).data).toHaveLength(1);
    } finally {
      slowDriver.close();
    }
  });
});

describe("functions", () => {
  beforeAll(() => driver.configure(settings));

  it("getGpuInventory returns the inventory and the available combinations", async () => {
    const { result, failures } = await driver.invoke("cloudinfra:index:getGpuInventory", {});
    expect(failures).toEqual([]);
    const series = await world.api.gpuInventory({ query: {} });
    expect(result.series).toEqual(JSON.parse(JSON.stringify(series)));
    const available = result.available as { gpuCount: number; datacenterId: string; seriesId: number }[];
    for (const offer of available) {
      const entry = series
        .find((s) => s.seriesId === offer.seriesId)!
        .availability.find((a) => a.datacenterId === offer.datacenterId)!;
      expect(entry.gpuCounts[String(offer.gpuCount) as "1"].available).toBe(true);
    }
  });

  it("getVolumeSizes returns a data center's volume types; bad arguments are failures by property", async () => {
    const { result } = await driver.invoke("cloudinfra:index:getVolumeSizes", { datacenterId: fra!.id });
    expect(result).toEqual(JSON.parse(JSON.stringify(await world.api.volumeSizes({ params: { id: fra!.id } }))));
    const bad = await driver.invoke("cloudinfra:index:getVolumeSizes", { datacenterId: "nope" });
    expect(bad.failures.map((f) => f.property)).toEqual(["datacenterId"]);
  });

  it("getNetwork finds a network by name and by id; neither given is a failure naming `name`", async () => {
    const made = (await world.api.createNetwork({
      body: { name: "inv-lookup", datacenterId: fra!.id, networkType: "standard" },
    })) as { id: string };
    // Both lookups must read the same record: wait out the create job (status and updatedAt change when it ends).
    await expect
      .poll(async () => ((await world.api.getNetwork({ params: { id: made.id } })) as { status: string }).status, {
        timeout: 10_000,
      })
      .toBe("Active");
    const byName = await driver.invoke("cloudinfra:index:getNetwork", { name: "inv-lookup" });
    expect(byName.result).toMatchObject({ id: made.id, name: "inv-lookup", datacenterId: fra!.id });
    const byId = await driver.invoke("cloudinfra:index:getNetwork", { id: made.id });
    expect(byId.result).toEqual(byName.result);
    const neither = await driver.invoke("cloudinfra:index:getNetwork", {});
    expect(neither.failures.map((f) => f.property)).toEqual(["name"]);
  });
});
