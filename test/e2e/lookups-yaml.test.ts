/**
 * The lookup functions from hosts nobody here wrote: a Pulumi YAML program (Pulumi's YAML language host, the plugin
 * from this package's directory) finds a network made through the API by name (`fn::invoke` of
 * cloudinfra:index:getNetwork), puts a VM on it, lists networks and volumes and reads the caller; the next preview has
 * no changes. The Go and Python SDKs generated from the schema have the lookups (gen-sdk): the Go one (sdk/go)
 * compiles with a program calling them (test/e2e/go-program), the Python one byte-compiles (no Pulumi for Python here).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { beforeAll, expect, it } from "vitest";
import { goBuild, GO_CACHE_TIMEOUT, warmGoBuildCache } from "../../tools/go";
import { genSdk, goSdkDirectory } from "../../tools/plugin-sdk";
import { cliWorld, describeCli } from "./helpers";
import { describeYaml, yamlProject } from "./yaml-host";

// Only the project's plugin entry may serve cloudinfra.
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
const world = await cliWorld();
const [fra] = world.datacenters;
const { admin } = world.emulator.bootstrap.users;

const program = `name: yaml-lookups
runtime: yaml
plugins:
  providers:
    - name: cloudinfra
      path: (the package directory)
config:
  datacenterId:
    type: string
variables:
  shared:
    fn::invoke:
      function: cloudinfra:index:getNetwork
      arguments:
        name: yl-shared
  networks:
    fn::invoke:
      function: cloudinfra:index:getNetworks
      arguments:
        datacenterId: \${datacenterId}
  volumes:
    fn::invoke:
      function: cloudinfra:index:getVolumes
      arguments:
        search: yl-
  caller:
    fn::invoke:
      function: cloudinfra:index:getCaller
      arguments: {}
resources:
  vm:
    type: cloudinfra:index:VirtualMachine
    properties:
      name: yl-vm
      datacenterId: \${datacenterId}
      imageId: 1
      configurationId: 1
      networkInterfaces:
        - networkId: \${shared.id}
          primary: true
outputs:
  sharedId: \${shared.id}
  sharedCidr: \${shared.cidrBlock}
  networkCount: \${networks.count}
  networkList: \${networks.networks}
  volumeCount: \${volumes.count}
  email: \${caller.email}
  entityId: \${caller.entityId}
  vmId: \${vm.id}
`;

describeYaml("the lookups in a Pulumi YAML program, through the plugin", () => {
  it("finds the network by name, puts a VM on it, lists and reads the caller; then no changes", async () => {
    const made = (await world.api.createNetwork({
      body: { name: "yl-shared", datacenterId: fra!.id, networkType: "standard" },
    })) as { id: string };
    const stack = await world.stack(yamlProject(world, program), undefined, {
      ...world.config,
      datacenterId: fra!.id,
    });
    const up = await stack.up({ color: "never" });
    const out = Object.fromEntries(Object.entries(up.outputs).map(([k, v]) => [k, v.value]));
    const live = await world.api.getNetwork({ params: { id: made.id } });
    expect(out.sharedId).toBe(made.id);
    expect(out.sharedCidr).toBe(live.cidrBlock);
    const held = (await world.api.listNetworks({ query: { "filter[datacenterId]": fra!.id, limit: 100 } })).data;
    expect(out.networkCount).toBe(held.length);
    expect((out.networkList as { name: string }[]).map((n) => n.name)).toEqual(
      held.map((n) => n.name).sort((a, b) => a.localeCompare(b)),
    );
    expect(out.volumeCount).toBe(0);
    expect(out).toMatchObject({ email: admin.email, entityId: world.emulator.bootstrap.entityId });
    const vm = await world.api.getVm({ params: { id: out.vmId as string } });
    expect(vm.virtualMachine.networkInterfaces?.map((n) => n.networkId)).toEqual([made.id]);
    await stack.preview({ color: "never", expectNoChanges: true });
  });
});

describeCli("the Go and Python SDKs generated from the schema", () => {
  // The Go builds come from the build cache `npm run go-cache` prepares (.ci/run; this hook too, a no-op when warm):
  // the test's own timeout never covers a cold compile of the Pulumi Go SDK and ours (minutes on a loaded machine).
  beforeAll(() => {
    warmGoBuildCache();
  }, GO_CACHE_TIMEOUT);

  it("Go: a lookup and a list function per kind and getCaller, compiled with a program calling them", () => {
    // sdk/go is what gen-sdk makes of the schema now (test/e2e/go-sdk.test.ts regenerates it and compares).
    const go = path.join(goSdkDirectory(), "cloudinfra");
    const text = (file: string) => fs.readFileSync(path.join(go, file), "utf8");
    for (const kind of ["Network", "Volume", "VirtualMachine", "GpuVirtualMachine", "ResourceGroup", "User"]) {
      // Go names a function whose resource exists Lookup<Kind>.
      const one = text(`get${kind}.go`);
      expect(one).toContain(`func Lookup${kind}(ctx *pulumi.Context`);
      expect(one).toContain(`func Lookup${kind}Output(`);
      expect(one).toContain(`"cloudinfra:index:get${kind}"`);
      const list = text(`get${kind}s.go`);
      expect(list).toContain(`func Get${kind}s(ctx *pulumi.Context`);
      expect(list).toContain(`"cloudinfra:index:get${kind}s"`);
    }
    expect(text("getCaller.go")).toContain('"cloudinfra:index:getCaller"');

    // test/e2e/go-program: a module requiring sdk/go (replaced by the directory) with its committed go.sum, and a
    // program using getCaller, getNetwork (plain and Output), getVolumes with a filter and a VirtualMachine on the
    // network, built as the language host builds programs.
    const out = fs.mkdtempSync(path.join(world.work, "go-build-"));
    goBuild(path.join(__dirname, "go-program"), path.join(out, "program"), { GOFLAGS: "-mod=readonly" });
    expect(fs.statSync(path.join(out, "program")).size).toBeGreaterThan(0);
  });

  it("Python: a function and its _output form per lookup, list and getCaller, byte-compiled", () => {
    const python = path.join(genSdk("python", world.work), "pulumi_cloudinfra");
    const text = (file: string) => fs.readFileSync(path.join(python, file), "utf8");
    const snake = (name: string) => name.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
    const functions = ["Network", "Volume", "VirtualMachine", "GpuVirtualMachine", "ResourceGroup", "User"]
      .flatMap((kind) => [`get${kind}`, `get${kind}s`])
      .concat("getCaller");
    for (const fn of functions) {
      const source = text(`${snake(fn)}.py`);
      expect(source).toContain(`def ${snake(fn)}(`);
      expect(source).toContain(`def ${snake(fn)}_output(`);
      expect(source).toContain(`'cloudinfra:index:${fn}'`);
    }
    // Pulumi's Python SDK is not installable here (no PyPI): the generated package is compiled, not imported.
    const compiled = spawnSync("python3", ["-m", "compileall", "-q", python], { encoding: "utf8" });
    expect(compiled.stdout + compiled.stderr).toBe("");
    expect(compiled.status).toBe(0);
  });
});
