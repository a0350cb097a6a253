/**
 * Go programs through the real CLI: the engine starts this repository's `pulumi-language-go` (cli/language-host),
 * which builds the program with the machine's Go and runs it; the program uses the Go SDK of sdk/go and the provider
 * plugin from this package's directory (`plugins: providers:`). examples/go goes through up (what the API holds
 * checked), `preview --expect-no-changes`, refresh with no drift, a change made through the API behind the stack's back
 * (refresh shows it, the next up repairs it) and destroy (the API holds nothing of it); a program that does not compile
 * fails with the compiler's message; and templates/go through `pulumi new`, up and destroy.
 *
 * The Go builds come from the build cache that `npm run go-cache` prepares (.ci/run runs it before the tests; the
 * `beforeAll` below runs it too, seconds when the cache is warm), so no test's timeout covers a cold compile, except the
 * test of the project `pulumi new` makes (it takes the SDK from the module cache): that one has the hook's timeout.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { EngineEvent, Stack } from "@pulumi/pulumi/automation";
import { beforeAll, expect, it, vi } from "vitest";
import { GO_CACHE_TIMEOUT, goBuildCache, goRun, goSdkProxy, warmGoBuildCache } from "../../tools/go";
import { goSdkDirectory } from "../../tools/plugin-sdk";
import { cliEnvironment } from "../../tools/pulumi-cli";
import { cliVersion, cliWorld, describeCli, gone, STACK_FRAME, type CliWorld } from "./helpers";

// Only the project's plugin entry may serve cloudinfra.
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
// Removing the stacks after the file (cliWorld's hook) runs the CLI once per stack: on a loaded machine, minutes.
vi.setConfig({ hookTimeout: 300_000 });
const root = path.resolve(__dirname, "../..");
const world = await cliWorld();
const [fra] = world.datacenters;

/**
 * A copy of the Go project `source` for {@link CliWorld.stack}: its Pulumi.yaml's plugin `path:` set to this package's
 * directory, and its go.mod's replace of the Go SDK pointed at this repository's sdk/go (relative paths do not survive
 * the copy).
 */
function goProject(world: CliWorld, source: string): string {
  const dir = path.join(fs.mkdtempSync(path.join(world.work, "go-")), path.basename(source));
  fs.cpSync(source, dir, { recursive: true });
  const pulumiYaml = path.join(dir, "Pulumi.yaml");
  fs.writeFileSync(pulumiYaml, fs.readFileSync(pulumiYaml, "utf8").replace(/^(\s+path:) .*$/m, `$1 ${root}`));
  goRun(dir, ["mod", "edit", `-replace=github.com/cloudinfra/pulumi-cloudinfra/sdk/go=${goSdkDirectory(root)}`]);
  return dir;
}

/** What each resource did in a run, by name: `create`, `update`, `same`, `delete` (refresh reports these too). */
function recorder(): { onEvent: (event: EngineEvent) => void; ops: Record<string, string> } {
  const ops: Record<string, string> = {};
  return {
    ops,
    onEvent(event) {
      const meta = event.resOutputsEvent?.metadata;
      if (meta === undefined || meta.type === "pulumi:pulumi:Stack" || meta.type.startsWith("pulumi:providers:"))
        return;
      ops[meta.urn.split("::").pop()!] = meta.op;
    },
  };
}

beforeAll(() => {
  if (cliVersion !== undefined) warmGoBuildCache(root);
}, GO_CACHE_TIMEOUT);

describeCli("examples/go through the real CLI and this repository's pulumi-language-go", () => {
  let stack: Stack;
  let out: Record<string, unknown>;

  beforeAll(async () => {
    stack = await world.stack(goProject(world, path.join(root, "examples", "go")), undefined, {
      ...world.config,
      name: "gx",
      datacenterId: fra!.id,
    });
  });

  it("up builds the program and creates the network, the VM, the volume (a size the lookup found), the attachment", async () => {
    const created = await stack.up({ color: "never" });
    expect(created.summary.result).toBe("succeeded");
    out = Object.fromEntries(Object.entries(created.outputs).map(([k, v]) => [k, v.value]));

    const network = await world.api.getNetwork({ params: { id: out.networkId as string } });
    expect(network).toMatchObject({
      name: "gx-net",
      status: "Active",
      gateway: out.gateway,
      cidrBlock: "10.20.0.0/24",
    });
    const vm = await world.api.getVm({ params: { id: out.vmId as string } });
    expect(vm).toMatchObject({ status: "Running", virtualMachine: { name: "gx-vm" } });
    expect(out.vmStatus).toBe("Running");
    expect(vm.virtualMachine.networkInterfaces?.map((n) => n.networkId)).toEqual([network.id]);
    const [firstType] = (await world.api.volumeSizes({ params: { id: fra!.id } })).volumeTypes;
    const volume = await world.api.getVolume({ params: { id: out.volumeId as string } });
    expect(volume).toMatchObject({
      name: "gx-data",
      status: "In-use",
      virtualMachineId: out.vmId,
      sizeGb: firstType!.availableSizes[0]!.sizeGb,
    });
    expect(out.volumeSizeGb).toBe(volume.sizeGb);
    expect(out.attachmentId).toBe(`${volume.id}:${out.vmId as string}`);
  });

  it("preview --expect-no-changes, and refresh finds no drift", async () => {
    await stack.preview({ color: "never", expectNoChanges: true });
    const refresh = recorder();
    await stack.refresh({ color: "never", onEvent: refresh.onEvent });
    expect(refresh.ops).toEqual({ network: "same", vm: "same", data: "same", "data-on-vm": "same" });
    await stack.preview({ color: "never", expectNoChanges: true });
  });

  it("a change made through the API behind the stack's back: refresh shows it, the next up repairs it", async () => {
    const networkId = out.networkId as string;
    const volumeId = out.volumeId as string;
    await world.api.updateNetwork({ params: { id: networkId }, body: { description: "by hand" } });
    await world.api.jobs.wait((await world.api.detachVolume({ params: { id: volumeId } })).jobId);

    const refresh = recorder();
    await stack.refresh({ color: "never", onEvent: refresh.onEvent });
    // refresh records what the API holds: the new description, and the attachment gone.
    expect(refresh.ops).toMatchObject({ network: "update", "data-on-vm": "delete", vm: "same", data: "same" });
    const repair = recorder();
    const repaired = await stack.up({ color: "never", onEvent: repair.onEvent });
    expect(repaired.summary.resourceChanges).toMatchObject({ update: 1, create: 1 });
    expect(repair.ops).toMatchObject({ network: "update", "data-on-vm": "create" });

    expect((await world.api.getNetwork({ params: { id: networkId } })).description).toBe(
      "quickstart network, managed by Pulumi (Go)",
    );
    expect(await world.api.getVolume({ params: { id: volumeId } })).toMatchObject({
      status: "In-use",
      virtualMachineId: out.vmId,
    });
    await stack.preview({ color: "never", expectNoChanges: true });
  });

  it("destroy: the API holds nothing of the stack", async () => {
    await stack.destroy({ color: "never" });
    expect(await gone(() => world.api.getNetwork({ params: { id: out.networkId as string } }))).toBe(true);
    expect(await gone(() => world.api.getVm({ params: { id: out.vmId as string } }))).toBe(true);
    expect(await gone(() => world.api.getVolume({ params: { id: out.volumeId as string } }))).toBe(true);
    expect(await world.namesInApi("gx-")).toMatchObject({ networks: [], vms: [], volumes: [] });
  });

  it("a program that does not compile: up fails with what `go build` printed, and nothing is created", async () => {
    const dir = goProject(world, path.join(root, "examples", "go"));
    const main = path.join(dir, "main.go");
    fs.writeFileSync(main, fs.readFileSync(main, "utf8").replace("cloudinfra.NewNetwork(", "cloudinfra.NewNetwrk("));
    const broken = await world.stack(dir, undefined, { ...world.config, name: "gbroken", datacenterId: fra!.id });
    const failure = await broken.up({ color: "never" }).then(
      () => undefined,
      (error: unknown) => String(error),
    );
    expect(failure).toContain("`go build` of the program");
    expect(failure).toMatch(/main\.go:\d+:\d+: undefined: cloudinfra\.NewNetwrk/);
    expect(await world.namesInApi("gbroken-")).toMatchObject({ networks: [], vms: [], volumes: [] });
  });
});

describeCli("templates/go through `pulumi new`, up and destroy", () => {
  it(
    "pulumi new templates/go --yes with the settings on the command line, then up and destroy",
    async () => {
      const dir = path.join(fs.mkdtempSync(path.join(world.work, "new-")), "my-infra");
      fs.mkdirSync(dir);
      const backend = path.join(world.work, "new-backend");
      // The Go SDK as `go mod tidy` downloads it once this repository tags sdk/go/v<version>: from a module proxy
      // (a directory of this run, first in GOPROXY; the checksum database does not know an untagged module).
      const proxy = goSdkProxy(fs.mkdtempSync(path.join(world.work, "goproxy-")), root);
      // Its own module cache, so that the SDK is downloaded from that proxy each run (the machine's cache, a proxy too,
      // serves the other modules without the network).
      const machineModules = goRun(root, ["env", "GOMODCACHE"]).trim();
      // The plugin as the template's README installs it (`npm install --global @cloudinfra/pulumi`): the package's
      // `pulumi-resource-cloudinfra` on PATH, where the CLI finds it (ambient plugins allowed for this project).
      const bin = fs.mkdtempSync(path.join(world.work, "bin-"));
      fs.symlinkSync(path.join(root, "pulumi-resource-cloudinfra"), path.join(bin, "pulumi-resource-cloudinfra"));
      const env = {
        ...process.env,
        ...cliEnvironment(backend, dir),
        PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}`,
        PULUMI_IGNORE_AMBIENT_PLUGINS: "false",
        GOPROXY: `file://${proxy},file://${machineModules}/cache/download,${process.env.GOPROXY ?? "https://proxy.golang.org"}`,
        GONOSUMDB: "github.com/cloudinfra",
        GOMODCACHE: path.join(world.work, "go-modules"),
        GOFLAGS: `${process.env.GOFLAGS ?? ""} -modcacherw`.trim(),
        GOCACHE: goBuildCache(),
      };
      // Asynchronous: the emulator answers the plugin from this process.
      const pulumi = async (args: string[]) => {
        const { status, output } = await new Promise<{ status: number | null; output: string }>((resolve) => {
          let text = `$ pulumi ${args.join(" ")}\n`;
          const child = spawn("pulumi", args, { cwd: dir, env });
          child.stdout.on("data", (chunk: Buffer) => (text += chunk.toString()));
          child.stderr.on("data", (chunk: Buffer) => (text += chunk.toString()));
          child.on("error", (error) => resolve({ status: -1, output: `${text}${String(error)}` }));
          child.on("close", (code) => resolve({ status: code, output: text }));
        });
        expect(status, output).toBe(0);
        expect(output, "no stack frame in what the CLI printed").not.toMatch(STACK_FRAME);
        return output;
      };

      const apiKey = world.emulator.bootstrap.users.admin.apiKey;
      await pulumi([
        "new",
        path.join(root, "templates", "go"),
        "--yes",
        "--stack",
        "dev",
        "--config",
        `cloudinfra:baseUrl=${world.emulator.baseUrl}`,
        "--config",
        `cloudinfra:apiKey=${apiKey}`,
        "--config",
        `datacenterId=${fra!.id}`,
        "--config",
        "cloudinfra:pollIntervalMs=20",
      ]);
      // What pulumi new wrote: the program, go.mod naming the project, go.sum from `go mod tidy` (our host's
      // InstallDependencies) with the SDK's hash, and the settings. (Pulumi saves a --config value as given, secret in
      // the template or not: the README says to set the key with `pulumi config set --secret`.)
      expect(fs.readFileSync(path.join(dir, "go.mod"), "utf8")).toMatch(/^module my-infra$/m);
      expect(fs.readFileSync(path.join(dir, "go.sum"), "utf8")).toContain(
        "github.com/cloudinfra/pulumi-cloudinfra/sdk/go v",
      );
      expect(fs.readFileSync(path.join(dir, "Pulumi.dev.yaml"), "utf8")).toContain(`my-infra:datacenterId: ${fra!.id}`);

      // The README's next step: the key again, encrypted (a --config value is saved as given).
      await pulumi(["config", "set", "--secret", "cloudinfra:apiKey", apiKey]);
      expect(fs.readFileSync(path.join(dir, "Pulumi.dev.yaml"), "utf8")).not.toContain(apiKey);

      await pulumi(["up", "--yes", "--color", "never"]);
      const outputs = JSON.parse((await pulumi(["stack", "output", "--json"])).replace(/^\$.*\n/, "")) as Record<
        string,
        string
      >;
      const network = await world.api.getNetwork({ params: { id: outputs.networkId! } });
      expect(network).toMatchObject({ name: "my-infra-net", status: "Active" });
      const vm = await world.api.getVm({ params: { id: outputs.vmId! } });
      expect(vm).toMatchObject({ status: "Running", virtualMachine: { name: "my-infra-vm" } });
      expect(vm.virtualMachine.networkInterfaces?.map((n) => n.networkId)).toEqual([network.id]);
      await pulumi(["preview", "--expect-no-changes", "--color", "never"]);
      // The provider's settings in the state: the key only as a secret (the schema marks it one).
      expect(await pulumi(["stack", "export"])).not.toContain(apiKey);

      await pulumi(["destroy", "--yes", "--color", "never"]);
      expect(await gone(() => world.api.getNetwork({ params: { id: outputs.networkId! } }))).toBe(true);
      expect(await gone(() => world.api.getVm({ params: { id: outputs.vmId! } }))).toBe(true);
      await pulumi(["stack", "rm", "--yes", "dev"]);
      // The build of the new project takes the SDK from the module cache, not from sdk/go: Go may compile it anew, which
      // with a cold cache takes as long as the first build (GO_CACHE_TIMEOUT).
    },
    GO_CACHE_TIMEOUT,
  );

  it("templates/go requires the Go SDK at this package's version", () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
    expect(fs.readFileSync(path.join(root, "templates", "go", "go.mod"), "utf8")).toContain(
      `github.com/cloudinfra/pulumi-cloudinfra/sdk/go v${version}\n`,
    );
  });
});
