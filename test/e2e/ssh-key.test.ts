/**
 * `exposePrivateKey` through the real CLI, both SDKs (issue 18): a VM without it sends no ssh-key request and has no
 * `sshPrivateKey`; one with it reads the key once at create, and `pulumi stack export` holds it as a secret only (its
 * text nowhere in clear, the backend's file included). Refresh reads no key; turning it on is an in-place update that
 * reads the key once.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as plugin from "@cloudinfra/pulumi/plugin";
import * as pulumi from "@pulumi/pulumi";
import type { Stack } from "@pulumi/pulumi/automation";
import { describe, expect, it } from "vitest";
import * as dynamic from "../../sdk";
import { cliWorld, describeCli } from "./helpers";
import { useLauncher } from "../plugin/launcher";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;

/** The signature of a secret value in Pulumi's state. */
const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";

/** Two VMs: `keyed` asks for its key, `plain` only when `app:exposePlain` is set. */
function program(sdk: "dynamic" | "plugin") {
  return async () => {
    const config = new pulumi.Config("app");
    const Vm = sdk === "dynamic" ? dynamic.VirtualMachine : plugin.VirtualMachine;
    const base = { datacenterId: fra!.id, imageId: 1, configurationId: 1 };
    const keyed = new Vm("keyed", { ...base, name: `sk-${sdk}-keyed`, exposePrivateKey: true });
    const plain = new Vm("plain", {
      ...base,
      name: `sk-${sdk}-plain`,
      ...(config.getBoolean("exposePlain") ? { exposePrivateKey: true } : {}),
    });
    return { keyed: keyed.id, plain: plain.id };
  };
}

interface Deployment {
  resources: { id?: string; outputs?: Record<string, unknown> }[];
}

/** `pulumi stack export` as a user runs it (no `--show-secrets`): its text. */
const exported = (stack: Stack) =>
  execFileSync("pulumi", ["stack", "export", "--stack", stack.name], {
    cwd: stack.workspace.workDir,
    env: { ...process.env, ...stack.workspace.envVars },
    encoding: "utf8",
  });

/** The outputs of the resource `id` in an export. */
const outputsIn = (text: string, id: string) =>
  (JSON.parse(text) as { deployment: Deployment }).deployment.resources.find((r) => r.id === id)?.outputs ?? {};

/** The ssh-key reads of the VM `id` since `mark`, from the emulator's request log. */
const keyReads = async (mark: number, id: string) =>
  (await world.requests(mark)).filter((r) => r.route === "getVmSshKey" && r.path.includes(id)).length;

describeCli("exposePrivateKey through the real CLI", () => {
  describe.each(["dynamic", "plugin"] as const)("%s SDK", (sdk) => {
    it("the key is read and kept (a secret) only where asked; turning it on is an update", async () => {
      const stack = await world.stack("quickstart", program(sdk));
      let mark = world.mark();
      const up = await stack.up({ color: "never" });
      const keyed = up.outputs.keyed!.value as string;
      const plain = up.outputs.plain!.value as string;
      expect(await keyReads(mark, keyed)).toBe(1);
      expect(await keyReads(mark, plain)).toBe(0);

      const state = exported(stack);
      expect(outputsIn(state, keyed).sshPrivateKey).toMatchObject({ ciphertext: expect.any(String) });
      expect(JSON.stringify(outputsIn(state, keyed).sshPrivateKey)).toContain(SECRET_SIG);
      expect(outputsIn(state, plain)).not.toHaveProperty("sshPrivateKey");
      const { privateKey } = await world.api.getVmSshKey({ params: { id: keyed } });
      const keyBody = privateKey.split("\n")[1]!;
      expect(keyBody.length).toBeGreaterThan(20);
      expect(state).not.toContain(keyBody);
      const backend = path.join(world.work, "backend");
      const files = fs.readdirSync(backend, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".json"));
      for (const file of files) expect(fs.readFileSync(path.join(backend, file), "utf8")).not.toContain(keyBody);

      mark = world.mark();
      await stack.refresh({ color: "never" });
      expect((await world.requests(mark)).filter((r) => r.route === "getVmSshKey")).toEqual([]);

      await stack.setConfig("app:exposePlain", { value: "true" });
      mark = world.mark();
      const on = await stack.up({ color: "never" });
      expect(on.summary.resourceChanges).toMatchObject({ update: 1 });
      expect(on.summary.resourceChanges).not.toHaveProperty("replace");
      expect(on.outputs.plain!.value).toBe(plain);
      expect(await keyReads(mark, plain)).toBe(1);
      expect(await keyReads(mark, keyed)).toBe(0);
      const after = exported(stack);
      expect(JSON.stringify(outputsIn(after, plain).sshPrivateKey)).toContain(SECRET_SIG);
      expect(after).not.toContain(privateKey.split("\n")[1]);

      await stack.destroy({ color: "never" });
      expect((await world.namesInApi(`sk-${sdk}`)).vms).toEqual([]);
    });
  });
});
