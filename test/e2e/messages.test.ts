/**
 * Messages under failure, as the real CLI shows them, for the dynamic resources and the provider plugin: a create
 * whose job fails (the message names the job and the VM), a check that throws (credentials refused), an API that
 * cannot be reached (told by the setting at fault, `cloudinfra:baseUrl`, the property the plugin's CheckConfig
 * names, with a network code), a read and a delete that fail, and an attachment whose VM was never created under `--continue-on-error`. Each error is printed
 * once, with its resource, and no output shows a stack frame (the dynamic host printed every thrown error with its
 * stack, under the Stack, before the engine printed its message). A diff that throws cannot be provoked through a
 * program (every kind's diff is a pure comparison); it goes through the same adapter as check, read and delete.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { CommandError, type Stack } from "@pulumi/pulumi/automation";
import { describe, expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { cliRuns, cliWorld, describeCli, runsWithStackFrames, STACK_FRAME } from "./helpers";
import { resource, useLauncher } from "../plugin/launcher";
import { errorCodesTable, readmeTableRows } from "../../tools/readme-tables";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const DYNAMIC = "pulumi-nodejs:dynamic/cloudinfra:";
const PLUGIN = "cloudinfra:index:";

type Host = "dynamic" | "plugin";

/** A network, a VM on it, a volume, and (with `app:attach`) the volume attached to the VM, on either host. */
function program(host: Host, prefix: string) {
  return async () => {
    const attach = new pulumi.Config("app").getBoolean("attach") === true;
    const args = {
      net: { name: `${prefix}-net`, datacenterId: fra!.id, networkType: "standard" as const },
      vm: (networkId: pulumi.Output<string>) => ({
        name: `${prefix}-vm`,
        datacenterId: fra!.id,
        imageId: 1,
        configurationId: 1,
        networkInterfaces: [{ networkId }],
      }),
      vol: { name: `${prefix}-vol`, datacenterId: fra!.id, volumeTypeId: 1, sizeGb: 10 },
    };
    if (host === "dynamic") {
      const net = new cloudinfra.Network("net", args.net);
      const vm = new cloudinfra.VirtualMachine("vm", args.vm(net.id));
      const vol = new cloudinfra.Volume("vol", args.vol);
      if (attach) new cloudinfra.VolumeAttachment("att", { volumeId: vol.id, virtualMachineId: vm.id });
      return { netId: net.id };
    }
    const net = resource("Network", "net", args.net);
    const vm = resource("VirtualMachine", "vm", args.vm(net.id));
    const vol = resource("Volume", "vol", args.vol);
    if (attach) resource("VolumeAttachment", "att", { volumeId: vol.id, virtualMachineId: vm.id });
    return { netId: net.id };
  };
}

/** What a CLI run printed: the output of a run that succeeded, or of one that failed (its CommandError). */
async function output(run: Promise<{ stdout: string; stderr: string }>): Promise<{ failed: boolean; text: string }> {
  try {
    const result = await run;
    return { failed: false, text: `${result.stdout}\n${result.stderr}` };
  } catch (error) {
    expect(error).toBeInstanceOf(CommandError);
    const result = (error as unknown as { commandResult: { stdout: string; stderr: string } }).commandResult;
    return { failed: true, text: `${result.stdout}\n${result.stderr}` };
  }
}

/** The CLI's Diagnostics section: each resource's lines, keyed `type (name)` (the Stack's is `pulumi:pulumi:Stack`). */
function diagnostics(text: string): Map<string, string> {
  const found = new Map<string, string>();
  const start = text.indexOf("\nDiagnostics:\n");
  if (start < 0) return found;
  let current: string | undefined;
  for (const line of text.slice(start + "\nDiagnostics:\n".length).split("\n")) {
    if (/^\S/.test(line)) break;
    const header = /^ {2}(\S+) \((.+)\):$/.exec(line);
    if (header) {
      current = header[1] === "pulumi:pulumi:Stack" ? header[1] : `${header[1]} (${header[2]})`;
      found.set(current, "");
    } else if (current !== undefined) found.set(current, `${found.get(current)}${line.trim()}\n`);
  }
  return found;
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** The codes of the generated "Error codes" table (docs/guides/troubleshooting.md), as its first column shows them. */
const documentedCodes = readmeTableRows(
  fs.readFileSync(path.resolve(__dirname, "../..", errorCodesTable.file), "utf8"),
  errorCodesTable,
).map((row) => row[0]!.replaceAll("`", ""));

/**
 * The run's output shows no stack frame; `message` is shown once, with `resource` (`Kind (name)`), and not under the
 * Stack, which has at most a line saying which resource failed.
 */
function shownOnce(host: Host, text: string, resource: string, message: string | RegExp): string {
  expect(STACK_FRAME.test(text), text).toBe(false);
  const diags = diagnostics(text);
  const own = diags.get(`${host === "dynamic" ? DYNAMIC : PLUGIN}${resource}`) ?? "";
  const shown = typeof message === "string" ? message : (message.exec(own)?.[0] ?? `${message}`);
  expect(occurrences(own, shown), `${resource} in:\n${text}`).toBe(1);
  expect(diags.get("pulumi:pulumi:Stack") ?? "", text).not.toContain(shown);
  return shown;
}

async function stateId(stack: Stack, name: string): Promise<string> {
  const deployment = (await stack.exportStack()).deployment as { resources?: { urn: string; id?: string }[] };
  const found = deployment.resources?.find((r) => r.urn.endsWith(`::${name}`));
  expect(found?.id, name).toBeTruthy();
  return found!.id!;
}

function lifecycle(host: Host) {
  const prefix = host === "dynamic" ? "msg-d" : "msg-p";
  let stack: Stack;

  it("a failed VM create names its job and its VM, then its code (documented in the README), once, with the resource", async () => {
    stack = await world.stack("quickstart", program(host, prefix), { ...world.config, "cloudinfra:maxRetries": "0" });
    await world.faults("job=vm.create,fail=VM quota exceeded,count=2");
    const run = await output(stack.up({ color: "never" })).finally(() => world.faults(""));
    expect(run.failed).toBe(true);
    const vmId = await stateId(stack, "vm");
    const message = shownOnce(
      host,
      run.text,
      "VirtualMachine (vm)",
      new RegExp(`Creating VM "${prefix}-vm" failed: VM quota exceeded \\(job (${UUID}), VM ${vmId}\\) \\[(\\w+)\\]`),
    );
    // The code right after the message, what README's "Error codes" table is keyed by.
    expect(message.endsWith(" [JOB_FAILED]"), message).toBe(true);
    expect(documentedCodes).toContain("JOB_FAILED");
    const jobId = new RegExp(UUID).exec(message.slice(message.indexOf("(job")))![0];
    const [job] = (await world.api.queryJobs({ body: { jobIds: [jobId] } })).jobs;
    expect(job).toMatchObject({ status: "failed", resourceId: vmId, error: "VM quota exceeded" });
    expect((await world.api.getVm({ params: { id: vmId } })).status).toBe("Error");
    // The next up replaces the failed VM.
    expect((await output(stack.up({ color: "never" }))).failed).toBe(false);
  });

  it("a check that throws (credentials refused) shows its message once per resource", async () => {
    await stack.setConfig("cloudinfra:apiKey", { value: "svc_not-a-key-of-this-api", secret: true });
    const run = await output(stack.preview({ color: "never" })).finally(() =>
      stack.setConfig("cloudinfra:apiKey", { value: world.emulator.bootstrap.users.admin.apiKey, secret: true }),
    );
    expect(run.failed).toBe(true);
    expect(STACK_FRAME.test(run.text), run.text).toBe(false);
    const refused = "The API refused the cloudinfra credentials";
    const diags = [...diagnostics(run.text).entries()];
    const withMessage = diags.filter(([, lines]) => lines.includes(refused));
    expect(withMessage.length, run.text).toBeGreaterThan(0);
    for (const [, lines] of withMessage) expect(occurrences(lines, refused)).toBe(1);
    const underStack = diagnostics(run.text).get("pulumi:pulumi:Stack") ?? "";
    expect(underStack).not.toContain(refused);
    // The dynamic host's own line (the plugin's output is not shown): which resource's check failed.
    if (host === "dynamic") {
      expect(underStack).toMatch(
        new RegExp(`cloudinfra: checking \\w+ "${prefix}-\\w+" failed \\(the error is shown with the resource\\)`),
      );
    }
  });

  it("an API that cannot be reached names cloudinfra:baseUrl and carries NETWORK_ERROR (not requestTimeoutMs, not AUTH_REJECTED)", async () => {
    const unreachable = "http://127.0.0.1:1/v1";
    await stack.setConfig("cloudinfra:baseUrl", { value: unreachable });
    const run = await output(stack.preview({ color: "never" })).finally(() =>
      stack.setConfig("cloudinfra:baseUrl", { value: world.emulator.baseUrl }),
    );
    expect(run.failed).toBe(true);
    expect(STACK_FRAME.test(run.text), run.text).toBe(false);
    const said = new RegExp(
      `The API at ${unreachable.replaceAll(".", "\\.")} could not be reached: check cloudinfra:baseUrl \\(stack config\\): ` +
        `Network failure \\(ECONNREFUSED\\)[^\\n]* \\[NETWORK_ERROR\\]`,
    );
    expect(run.text).toMatch(said);
    expect(run.text).not.toContain("AUTH_REJECTED");
    expect(run.text).not.toContain("requestTimeoutMs value");
    // The plugin's CheckConfig names the property; the engine prints it with its value.
    if (host === "plugin")
      expect(run.text).toContain(`property baseUrl value {${unreachable}} has a problem: The API at`);
  });

  it("a read that fails (refresh) shows its message once, with the resource", async () => {
    const netId = await stateId(stack, "net");
    await world.faults("getNetwork,status=500,message=Network store unavailable");
    const run = await output(stack.refresh({ color: "never" })).finally(() => world.faults(""));
    expect(run.failed).toBe(true);
    shownOnce(host, run.text, "Network (net)", "Network store unavailable");
    expect((await world.api.getNetwork({ params: { id: netId } })).status).toBe("Active");
  });

  it("a delete that fails (destroy) shows its message once, with the resource; the network stays", async () => {
    const netId = await stateId(stack, "net");
    await world.faults("deleteNetwork,status=409,message=Network is busy,count=2");
    const run = await output(stack.destroy({ color: "never" })).finally(() => world.faults(""));
    expect(run.failed).toBe(true);
    shownOnce(host, run.text, "Network (net)", `Network ${netId} cannot be deleted now (status Active)`);
    expect((await world.api.getNetwork({ params: { id: netId } })).status).toBe("Active");
    expect(await stateId(stack, "net")).toBe(netId);
    expect((await output(stack.destroy({ color: "never" }))).failed).toBe(false);
    await expect(world.api.getNetwork({ params: { id: netId } })).rejects.toMatchObject({ status: 404 });
  });

  it("--continue-on-error: an attachment whose VM was not created says the VM id is not known", async () => {
    const config = { ...world.config, "app:attach": "true" };
    const stack = await world.stack("quickstart", program(host, `${prefix}c`), config);
    await world.faults("job=network.create,fail=Network quota exceeded,count=2");
    const run = await output(stack.up({ color: "never", continueOnError: true })).finally(() => world.faults(""));
    expect(run.failed).toBe(true);
    const shown = shownOnce(
      host,
      run.text,
      "VolumeAttachment (att)",
      /virtualMachineId[^\n]*has no value: if the program sets it from another resource's output, that resource was not created in this run \(see its error\), so the value is not known; otherwise it must be the UUID of a virtual machine/,
    );
    expect(shown).not.toMatch(/^[^\n]*virtualMachineId[^\n]*: must be the UUID/);
    expect((await output(stack.destroy({ color: "never" }))).failed).toBe(false);
    const left = await world.api.listNetworks({ query: { search: `${prefix}c`, limit: 100 } });
    expect(left.data.filter((n) => n.name.startsWith(`${prefix}c`))).toEqual([]);
  });
}

describeCli("messages under failure", () => {
  describe("dynamic resources", () => lifecycle("dynamic"));
  describe("provider plugin", () => lifecycle("plugin"));

  it("no CLI output of this suite shows a stack frame (every run recorded and scanned)", () => {
    expect(cliRuns.filter((r) => / (up|preview|refresh|destroy) /.test(r.command)).length).toBeGreaterThanOrEqual(12);
    expect(runsWithStackFrames()).toEqual([]);
    // What the dynamic host printed before: the scan finds it.
    const before = `pulumi:pulumi:Stack (s1):\n    ApiError: Injected fault: ApiError: Injected fault\n        at Transport.errorFromResponse (/work/main/provider/client/transport.ts:598:19)\n`;
    expect(runsWithStackFrames([{ command: "pulumi refresh", output: before }])).toHaveLength(1);
  });
});
