/**
 * Secrets through the real CLI: the stack's exported state holds no credential and no ApiKey `key` in plain text
 * (`--show-secrets` shows the key), and nothing of them reaches the CLI's output or its logs.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { cliWorld, describeCli } from "./helpers";

const world = await cliWorld();
const [fra] = world.datacenters;
const admin = world.emulator.bootstrap.users.admin;

describeCli("secrets through the real CLI", () => {
  it("no API key, password, TOTP secret or ApiKey key in the state, the output or the logs", async () => {
    // the 2FA sign-in (an ApiKey needs it) and, on a second stack, an API key: every kind of credential
    const signedIn = await world.stack(
      "team-onboarding",
      async () => {
        const key = new cloudinfra.ApiKey("ci", { name: "sec-ci", expiresInDays: 30 });
        return { keyId: key.id, key: key.key };
      },
      world.signIn,
    );
    const withKey = await world.stack("quickstart", async () => {
      const network = new cloudinfra.Network("net", { name: "sec-net", datacenterId: fra.id, networkType: "standard" });
      return { networkId: network.id, region: pulumi.output(fra.region) };
    });

    let printed = "";
    const capture = { onOutput: (out: string) => (printed += out), onError: (err: string) => (printed += err) };
    // What a CI log shows (default verbosity). Not `--debug` or `-v=9`: there Pulumi itself prints secrets in plain text (the Node.js
    // SDK's debug line "RegisterResource RPC finished" dumps the engine's answer, secret outputs included; the
    // engine's -v=9 log dumps every gRPC payload), which no provider can prevent.
    const created = await signedIn.up({ color: "never", ...capture });
    await withKey.up({ color: "never", ...capture });
    await signedIn.preview({ color: "never", ...capture });
    await withKey.refresh({ color: "never", ...capture });

    const backend = new URL(signedIn.workspace.envVars.PULUMI_BACKEND_URL).pathname;
    const key = created.outputs.key;
    expect(key.secret).toBe(true);
    expect(key.value).toMatch(/^svc_/);
    // the key is the one the API issued: it works
    const [listed] = (await world.api.listApiKeys({ query: { search: "sec-ci" } })).data;
    expect(listed.id).toBe(created.outputs.keyId.value);
    expect(String(key.value).startsWith(listed.start)).toBe(true);

    const secrets = { apiKey: admin.apiKey, password: admin.password, totpSecret: admin.totpSecret, key: key.value };
    const found = (text: string) => Object.entries(secrets).filter(([, value]) => text.includes(String(value)));

    for (const stack of [signedIn, withKey]) {
      const env = { ...process.env, ...stack.workspace.envVars };
      const exported = (...args: string[]) =>
        execFileSync("pulumi", ["stack", "export", "--stack", stack.name, ...args], {
          cwd: stack.workspace.workDir,
          env,
          encoding: "utf8",
        });
      expect(found(exported())).toEqual([]);
      // the state file as the file backend keeps it
      const stateFile = path.join(
        backend,
        ".pulumi",
        "stacks",
        await stack.workspace.projectSettings().then((p) => p.name),
        `${stack.name}.json`,
      );
      expect(found(fs.readFileSync(stateFile, "utf8"))).toEqual([]);
      // --show-secrets shows them: the key, and the sign-in the dynamic provider was configured with (the engine
      // keeps the provider's config in the state, encrypted as secrets)
      if (stack === signedIn) {
        expect(found(exported("--show-secrets")).map(([name]) => name)).toEqual(["password", "totpSecret", "key"]);
      }
    }
    expect(printed.length).toBeGreaterThan(1000);
    expect(found(printed)).toEqual([]);

    await signedIn.destroy({ color: "never" });
    await withKey.destroy({ color: "never" });
  });

  it("a check failure about a secret password names it without the value (the engine prints a failing property's value)", async () => {
    const weak = "weakpassword";
    const stack = await world.stack("quickstart", async () => {
      new cloudinfra.User("user", {
        email: "sec-weak@example.com",
        firstName: "Weak",
        lastName: "Password",
        action: "register",
        password: pulumi.secret(weak),
      });
    });
    let printed = "";
    const failed = await stack
      .preview({ color: "never", onOutput: (out) => (printed += out) })
      .catch((error: unknown) => error);
    expect(String(failed)).toContain("password: must mix upper- and lower-case letters");
    expect(printed + String(failed)).not.toContain(weak);
    expect((await world.api.listUsers({ query: { search: "sec-weak" } })).data).toEqual([]);
  });
});
