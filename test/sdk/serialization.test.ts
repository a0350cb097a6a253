import * as os from "node:os";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { beforeAll, describe, expect, it } from "vitest";
import { kinds } from "../../provider/resources";
import * as sdk from "../../sdk";

// Secrets present everywhere a careless provider could pick them up from: the environment and the stack config.
const secrets = {
  CLOUDINFRA_API_KEY: "svc_EnvironmentSecretKey000000000",
  CLOUDINFRA_SESSION_TOKEN: "env-session-token-3b9f0c",
  CLOUDINFRA_PASSWORD: "Env-Password-7!x",
  CLOUDINFRA_TOTP_SECRET: "JBSWY3DPEHPK3PXPENVTOTP",
};
const configSecrets = {
  "cloudinfra:apiKey": "svc_ConfigSecretKey00000000000000",
  "cloudinfra:password": "Config-Password-9?y",
  "cloudinfra:totpSecret": "KRUGKIDROVUWG2ZAMJZG653OEBTG",
};
const userPassword = "User-Input-Password-5#z";
const everySecret = [...Object.values(secrets), ...Object.values(configSecrets), userPassword];

const repoRoot = path.resolve(__dirname, "../..");
const forbiddenPaths = [...new Set(["/work", os.homedir(), repoRoot, process.cwd(), os.tmpdir()])].filter(
  (p) => p.length > 1,
);

interface Registered {
  type: string;
  name: string;
  provider: string;
}
const registered: Registered[] = [];

/** One resource of each SDK class (two of Network, to compare), with a secret input where the class takes one. */
function declareAll(): pulumi.Resource[] {
  const dc = "0b5d4a1e-7c1f-4f7e-9a55-1c8f2f6d3a10";
  const net = new sdk.Network("net", { name: "n", datacenterId: dc, networkType: "standard" });
  const net2 = new sdk.Network("net2", { name: "n2", datacenterId: dc, networkType: "custom" });
  const vm = new sdk.VirtualMachine("vm", {
    name: "vm",
    datacenterId: dc,
    imageId: 1,
    configurationId: 1,
    networkInterfaces: [{ networkId: net.id }],
  });
  const gpu = new sdk.GpuVirtualMachine("gpu", { name: "g", datacenterId: dc, seriesId: 1, gpuCount: 1 });
  const vol = new sdk.Volume("vol", { name: "v", datacenterId: dc, volumeTypeId: 1, sizeGb: 10 });
  const att = new sdk.VolumeAttachment("att", { volumeId: vol.id, virtualMachineId: vm.id });
  const group = new sdk.ResourceGroup("group", { name: "rg" });
  const user = new sdk.User("user", {
    email: "someone@example.com",
    action: "register",
    password: pulumi.secret(userPassword),
  });
  const key = new sdk.ApiKey("key", { name: "ci" });
  const member = new sdk.ResourceGroupMember("member", { teamId: group.id, userId: user.id });
  const role = new sdk.UserRole("role", { userId: user.id, roleName: "vm-operator" });
  return [net, net2, vm, gpu, vol, att, group, user, key, member, role];
}

beforeAll(async () => {
  Object.assign(process.env, secrets);
  pulumi.runtime.setAllConfig(
    { ...configSecrets, "cloudinfra:baseUrl": "http://127.0.0.1:1/v1" },
    Object.keys(configSecrets),
  );
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        registered.push({ type: args.type, name: args.name, provider: String(args.inputs.__provider) });
        return { id: `${args.name}-id`, state: args.inputs };
      },
      call: (args) => args.inputs,
    },
    "serialization",
    "test",
    false,
  );
  const resources = declareAll();
  await Promise.all(resources.map((r) => new Promise((resolve) => r.urn.apply(resolve))));
});

describe("serialized dynamic providers (`__provider`)", () => {
  it("registers every kind of the registry with the type token pulumi-nodejs:dynamic/cloudinfra:<Kind>", () => {
    const types = new Set(registered.map((r) => r.type));
    expect([...types].sort()).toEqual(
      Object.keys(kinds)
        .map((k) => `pulumi-nodejs:dynamic/cloudinfra:${k}`)
        .sort(),
    );
    expect(registered).toHaveLength(11);
  });

  it.each(Object.keys(kinds))("%s: requires the package by name, and holds no secret, path or client code", (kind) => {
    const text = registered.find((r) => r.type === `pulumi-nodejs:dynamic/cloudinfra:${kind}`)!.provider;
    expect(text.length).toBeGreaterThan(0);
    expect(text).toContain('require("@cloudinfra/pulumi/dynamic/host")');
    expect(text).toContain(`"${kind}"`);
    for (const secret of everySecret) expect(text).not.toContain(secret);
    for (const p of forbiddenPaths) expect(text).not.toContain(p);
    expect(text).not.toMatch(/[A-Za-z]:\\\\/); // no Windows path either
    for (const code of ["undici", "CloudClient", "zod", "fetch(", "process.env"]) expect(text).not.toContain(code);
    expect(text).not.toMatch(/\bclass\s+[A-Za-z_$]/);
    // The closure: the provider's seven methods and the kind's name, nothing pulled in by value.
    expect(text.length).toBeLessThan(6000);
  });

  it("keeps one provider per kind: two resources of a kind carry the same text (the host caches by it)", () => {
    const networks = registered.filter((r) => r.type.endsWith(":Network"));
    expect(networks).toHaveLength(2);
    expect(networks[0].provider).toBe(networks[1].provider);
  });
});
