/**
 * The upgrade suite (issue 30): stacks made by an earlier build of this package are taken over by the current one,
 * through the real CLI, with both SDKs and every kind. The package is built at {@link PINNED} (upgrade-build.ts: a
 * worktree, `npm ci`, `npm run build`, `npm pack`, cached outside the repository by commit) and its tarball installed
 * into a user's project, as from the registry: one project on the dynamic resources (`@cloudinfra/pulumi`), one on
 * the provider plugin (`@cloudinfra/pulumi/plugin`, the plugin started from the installed package's directory through
 * Pulumi.yaml `plugins: providers: path:`). Each makes one resource of every kind with `pulumi up`. Then the current
 * tarballs (the package and the workspace `@cloudinfra/pulumi-plugin`) are installed in the same project, and with
 * the same program: `refresh` and `preview --expect-no-changes` find nothing to change, an in-place update (the
 * network's description) applies without touching the rest, and `destroy` leaves the API holding nothing of it.
 * Everything is checked against what the emulator holds, read through the API client.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Stack } from "@pulumi/pulumi/automation";
import { beforeAll, describe, expect, it } from "vitest";
import { cliStack } from "../../tools/pulumi-cli";
import { everyKindFixtures, recordsInApi, type Family, type Listed } from "./every-kind";
import { packed } from "../helpers/packed";
import { cliWorld, describeCli, DYNAMIC_TYPE, recordRuns } from "./helpers";
import { earlierBuild, type EarlierBuild } from "./upgrade-build";

/**
 * The earlier commit whose build makes the stacks: a5d4bde, the last change of the dynamic resources' state format
 * (`__provider` became `require("@cloudinfra/pulumi/dynamic/<kind>")` for registry installs; the modules it names
 * must stay loadable). It is old enough to matter: every later change a stack meets on upgrade comes after it (the
 * handlers' bundle behind @cloudinfra/pulumi/dynamic/host, exposePrivateKey dropping the VMs' SSH key, the kinds
 * declared with defineKind and their outputs typed from the contract, the plugin SDK as its own package, a credential
 * of the plugin's configuration kept as a secret). It moves forward only with a CHANGELOG entry saying so.
 */
export const PINNED = "a5d4bde038567babd52eda33844dbe41a1d7eea2";

/**
 * The cold build at {@link PINNED} took 42 s, 42 s and 60 s on the 2-core machine shared by eight engineers (load 5 to
 * 12; 13 s of it `npm ci` from a warm npm cache): five times the slowest leaves room for a slower runner.
 */
const BUILD_TIMEOUT = 300_000;
/** One CLI command on ten resources, or an `npm install` of the tarballs: a minute or two on the loaded machine. */
const STEP_TIMEOUT = 600_000;

const root = path.resolve(__dirname, "../..");
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, unknown>;
/** The @pulumi/pulumi this repository uses, as the user's project installs it. */
const pulumiVersion = readJson(path.join(root, "node_modules/@pulumi/pulumi/package.json")).version as string;

// Only the project's plugin entry may serve cloudinfra (no launcher on PATH, no plugin installed elsewhere).
process.env.PULUMI_IGNORE_AMBIENT_PLUGINS = "true";
const world = await cliWorld();
const fixtures = await everyKindFixtures(world.emulator, world.api);

/** The ten kinds, as the state of a stack names them (the last part of their type token). */
const KINDS = [
  "ApiKey",
  "GpuVirtualMachine",
  "Network",
  "ResourceGroup",
  "ResourceGroupMember",
  "User",
  "UserRole",
  "VirtualMachine",
  "Volume",
  "VolumeAttachment",
];

/**
 * The program of the user's project, one resource of every kind, written against what both builds accept; `app:phase`
 * = `changed` changes the network's description (an in-place update).
 */
function program(family: Family): string {
  const sdk = family === "dynamic" ? "@cloudinfra/pulumi" : "@cloudinfra/pulumi/plugin";
  return `import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "${sdk}";

const config = new pulumi.Config("app");
const p = config.require("prefix");
const changed = config.get("phase") === "changed";
const datacenterId = "${fixtures.datacenterId}";

const net = new cloudinfra.Network("net", {
  name: \`\${p}-net\`,
  datacenterId,
  networkType: "standard",
  description: changed ? "updated by the current build" : "made by the earlier build",
});
const vm = new cloudinfra.VirtualMachine("vm", {
  name: \`\${p}-vm\`,
  datacenterId,
  imageId: 1,
  configurationId: ${fixtures.configurations[0]!.id},
  networkInterfaces: [{ networkId: net.id }],
});
const gpu = new cloudinfra.GpuVirtualMachine("gpu", {
  name: \`\${p}-gpu\`,
  datacenterId: "${fixtures.gpuOffer.datacenterId}",
  seriesId: ${fixtures.gpuOffer.seriesId},
  gpuCount: 1,
  powerState: "running",
});
const vol = new cloudinfra.Volume("vol", {
  name: \`\${p}-vol\`,
  datacenterId,
  volumeTypeId: ${fixtures.volumeTypeId},
  sizeGb: 10,
});
const att = new cloudinfra.VolumeAttachment("att", { volumeId: vol.id, virtualMachineId: vm.id });
const group = new cloudinfra.ResourceGroup("group", { name: \`\${p}-group\` });
const user = new cloudinfra.User("user", { email: \`\${p}-user@example.com\` });
const member = new cloudinfra.ResourceGroupMember("member", { teamId: group.id, userId: user.id });
const role = new cloudinfra.UserRole("role", { userId: user.id, roleName: "vm-operator" });
const key = new cloudinfra.ApiKey("key", { name: \`\${p}-key\`, expiresInDays: 60 });

export const ids = {
  net: net.id,
  vm: vm.id,
  gpu: gpu.id,
  vol: vol.id,
  att: att.id,
  group: group.id,
  user: user.id,
  member: member.id,
  role: role.id,
  key: key.id,
};
`;
}

/** Installs tarballs (and @pulumi/pulumi) into the project as a user does; from npm's cache where it has them. */
function npmInstall(project: string, packages: string[]): void {
  const started = performance.now();
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", ...packages], {
    cwd: project,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`upgrade suite: npm install in ${path.basename(project)}: ${seconds} s`);
}

/** The project's cloudinfra resources in the state: kind (last part of the type token) → the resource. */
async function stateByKind(stack: Stack, family: Family) {
  const deployment = (await stack.exportStack()).deployment as {
    resources?: { type: string; id?: string; inputs?: Record<string, unknown>; outputs?: Record<string, unknown> }[];
  };
  const prefix = family === "dynamic" ? DYNAMIC_TYPE : "cloudinfra:index:";
  return new Map(
    (deployment.resources ?? []).filter((r) => r.type.startsWith(prefix)).map((r) => [r.type.slice(prefix.length), r]),
  );
}

let earlier: EarlierBuild;
let current: string[];

describeCli("stacks made by an earlier build, taken over by the current one", () => {
  beforeAll(async () => {
    earlier = earlierBuild(root, PINNED);
    console.log(
      `upgrade suite: the package at ${earlier.commit.slice(0, 12)}: ` +
        (earlier.builtSeconds > 0
          ? `built in ${earlier.builtSeconds} s`
          : `cached (built in ${earlier.coldSeconds} s)`),
    );
    // The current package and its plugin SDK, as `npm run pack-all` packs them (dist/ as `npm run build` left it),
    // packed once for every suite (test/helpers/packed.ts).
    current = (await packed()).tarballs.map((p) => p.file);
  }, BUILD_TIMEOUT);

  it("the earlier build packed the package alone; the current one packs it with @cloudinfra/pulumi-plugin", () => {
    expect(earlier.tarballs.map((t) => path.basename(t))).toEqual(["cloudinfra-pulumi-0.1.0.tgz"]);
    expect(current.map((t) => path.basename(t)).sort()).toEqual([
      "cloudinfra-pulumi-0.1.0.tgz",
      "cloudinfra-pulumi-plugin-0.1.0.tgz",
    ]);
  });

  describe.each<Family>(["dynamic", "plugin"])("%s SDK", (family) => {
    const prefix = `upg-${family}`;
    let project: string;
    let stack: Stack;
    let ids: Record<string, string>;

    /** What the API holds of the stack: per listed kind, the ids of the records named with its prefix. */
    const held = async () =>
      Object.fromEntries(
        Object.entries(await recordsInApi(world.api, prefix)).map(([kind, records]) => [
          kind,
          records.map((r) => r.id),
        ]),
      ) as Record<Listed, string[]>;

    beforeAll(async () => {
      project = path.join(world.work, `${family}-project`);
      fs.mkdirSync(project);
      fs.writeFileSync(
        path.join(project, "package.json"),
        JSON.stringify({ name: `upgrade-${family}`, private: true, main: "index.ts" }, null, 2),
      );
      const plugins =
        family === "plugin"
          ? "plugins:\n  providers:\n    - name: cloudinfra\n      path: node_modules/@cloudinfra/pulumi\n"
          : "";
      fs.writeFileSync(path.join(project, "Pulumi.yaml"), `name: upgrade-${family}\nruntime: nodejs\n${plugins}`);
      fs.writeFileSync(path.join(project, "index.ts"), program(family));
      npmInstall(project, [...earlier.tarballs, `@pulumi/pulumi@${pulumiVersion}`]);
      stack = await cliStack({
        projectDir: project,
        backendDir: path.join(world.work, "backend"),
        stackName: family,
        // An API key for the resources, the sign-in for the ApiKey (a key is made by a signed-in user).
        config: { ...world.config, ...world.signIn, "app:prefix": prefix },
      });
      recordRuns(stack);
    }, STEP_TIMEOUT);

    it(
      "the earlier build makes one of every kind with pulumi up",
      async () => {
        // The earlier package: no plugin SDK package of its own yet.
        expect(fs.existsSync(path.join(project, "node_modules/@cloudinfra/pulumi-plugin"))).toBe(false);
        const created = await stack.up({ color: "never" });
        expect(created.summary.result).toBe("succeeded");
        ids = created.outputs.ids!.value as Record<string, string>;

        const state = await stateByKind(stack, family);
        expect([...state.keys()].sort()).toEqual(KINDS);
        if (family === "dynamic") {
          // The state format the pinned commit introduced: the kind's module by name, not the provider by value.
          for (const [kind, r] of state) {
            expect(r.inputs!.__provider, kind).toMatch(/require\("@cloudinfra\/pulumi\/dynamic\/[a-z-]+"\)/);
            expect((r.inputs!.__provider as string).length, kind).toBeLessThan(400);
          }
        }
        // The pinned build read each VM's SSH private key at create and kept it in the outputs.
        for (const kind of ["VirtualMachine", "GpuVirtualMachine"]) {
          expect(state.get(kind)!.outputs, kind).toHaveProperty("sshPrivateKey");
        }
        const inApi = await held();
        for (const kind of ["net", "vm", "gpu", "vol", "group", "user", "key"] as const) {
          expect(inApi[kind], `${family} ${kind}`).toEqual([ids[kind]]);
        }
        const volume = await world.api.getVolume({ params: { id: ids.vol! } });
        expect(volume.virtualMachineId).toBe(ids.vm);
        expect((await world.api.getNetwork({ params: { id: ids.net! } })).description).toBe(
          "made by the earlier build",
        );
      },
      STEP_TIMEOUT,
    );

    it(
      "the current tarballs in the same project: refresh and preview find no changes",
      async () => {
        npmInstall(project, current);
        const installed = readJson(path.join(project, "node_modules/@cloudinfra/pulumi-plugin/package.json"));
        expect(installed.version).toBe(readJson(path.join(root, "package.json")).version);

        const since = world.mark();
        const refreshed = await stack.refresh({ color: "never" });
        expect(refreshed.summary.result).toBe("succeeded");
        expect(Object.keys(refreshed.summary.resourceChanges ?? {})).toEqual(["same"]);
        // The current build's code served the refresh: it drops the key an earlier version kept (CHANGELOG,
        // Breaking: exposePrivateKey), without a request and without reporting a change.
        const state = await stateByKind(stack, family);
        for (const kind of ["VirtualMachine", "GpuVirtualMachine"]) {
          expect(state.get(kind)!.outputs, kind).not.toHaveProperty("sshPrivateKey");
        }
        expect(
          (await world.requests(since)).filter((r) => r.path.endsWith("/ssh-key")),
          "no SSH key read",
        ).toEqual([]);
        await stack.preview({ color: "never", expectNoChanges: true });
        // Neither wrote anything to the API.
        expect((await world.requests(since)).filter((r) => r.method !== "GET" && !r.path.startsWith("/auth/"))).toEqual(
          [],
        );
      },
      STEP_TIMEOUT,
    );

    it(
      "an in-place update applies: the network's description, nothing else replaced or changed",
      async () => {
        await stack.setConfig("app:phase", { value: "changed" });
        const updated = await stack.up({ color: "never" });
        expect(updated.summary.resourceChanges).toMatchObject({ update: 1 });
        expect(Object.keys(updated.summary.resourceChanges ?? {}).sort()).toEqual(["same", "update"]);
        expect(updated.outputs.ids!.value).toEqual(ids);
        expect((await world.api.getNetwork({ params: { id: ids.net! } })).description).toBe(
          "updated by the current build",
        );
        if (family === "dynamic") {
          // The updated resource's state is written by the current build, in the same short form.
          const net = (await stateByKind(stack, family)).get("Network")!;
          expect(net.outputs!.__provider).toContain('require("@cloudinfra/pulumi/dynamic/network")');
        }
        await stack.preview({ color: "never", expectNoChanges: true });
      },
      STEP_TIMEOUT,
    );

    it(
      "destroy leaves the API holding nothing of the stack",
      async () => {
        const destroyed = await stack.destroy({ color: "never" });
        expect(destroyed.summary.result).toBe("succeeded");
        expect(await held()).toEqual({ net: [], vm: [], gpu: [], vol: [], group: [], user: [], key: [] });
        await expect(world.api.getVolume({ params: { id: ids.vol! } })).rejects.toMatchObject({ status: 404 });
        await expect(world.api.getNetwork({ params: { id: ids.net! } })).rejects.toMatchObject({ status: 404 });
      },
      STEP_TIMEOUT,
    );
  });
});
