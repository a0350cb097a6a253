import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, expect, it } from "vitest";
import { quickstart } from "../../examples/quickstart/program";
import { destroy, preview, up, type RunOptions, type RunResult } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";
import {
  packProject,
  PolicyEngine,
  projectFiles,
  stackResources,
  type Diagnostic,
  type PolicyConfigFile,
} from "./engine";

// The ready pack project of examples/policy-pack, installed as `npm install` leaves it and started as
// `pulumi up --policy-pack` starts it: its index.ts through the SDK's TypeScript runner (type-checked).
const pack = packProject(projectFiles("examples/policy-pack"));
const engine = await PolicyEngine.start(pack.dir, { project: "quickstart" });
const stack = await stackOnEmulator();
afterAll(async () => {
  await engine.close();
  pack.remove();
});

const exampleConfig = JSON.parse(
  fs.readFileSync(path.join(__dirname, "../../examples/policy-pack/policy-config.json"), "utf8"),
) as PolicyConfigFile;

/** `policy level resource` of each diagnostic, e.g. `max-vm-size mandatory vm`. */
const summary = (ds: Diagnostic[]) => ds.map((d) => `${d.policyName} ${d.enforcementLevel} ${d.urn.split("::").pop()}`);

/** The pack over what a run registered: remediate, analyze each resource, analyze the stack. */
const judge = (result: RunResult) => engine.run(stackResources(result));

function quickstartOptions(config: Record<string, string> = {}): RunOptions {
  return stack.options({ project: "quickstart", config: { ...stack.options().config, ...config } });
}

it("the example pack serves the guard with its settings as the initial config, and its stack config is valid", async () => {
  expect(engine.info).toMatchObject({ name: "cloudinfra-guard", version: "0.1.0" });
  expect(engine.info.initialConfig["max-gpu-count"]).toEqual({ enforcementLevel: "mandatory", properties: { max: 4 } });
  const levels = (config: Record<string, { enforcementLevel?: string }>) =>
    Object.fromEntries(Object.entries(config).map(([name, c]) => [name, c.enforcementLevel]));
  expect(levels(await engine.configure())).toMatchObject({
    "max-vm-size": "mandatory",
    "max-reported-vm-size": "mandatory",
    "max-api-key-lifetime": "remediate",
    "no-public-ip": "advisory",
    "require-resource-group": "advisory",
  });
  expect(levels(await engine.configure(exampleConfig))).toMatchObject({
    "max-vm-size": "mandatory",
    "require-resource-group": "mandatory",
    "allowed-vm-configurations": "mandatory",
  });
  await engine.configure();
});

it("quickstart: a clean stack passes preview and up; a larger VM is blocked; reported sizes are checked", async () => {
  const { teamId } = await stack.api.createTeam({ body: { name: "policy-qs" } });
  const options = quickstartOptions({ name: "policy-qs", teamId: String(teamId) });

  // clean: in a resource group, within every limit: not a single diagnostic, before and after the resources exist
  expect((await judge(await preview(quickstart, options))).diagnostics).toEqual([]);
  const created = await up(quickstart, options);
  expect((await judge(created)).diagnostics).toEqual([]);

  // a change to the xl configuration (16 vCPU, 64 GB): max-vm-size is mandatory in the example, so the preview blocks
  const bigger = await judge(
    await preview(quickstart, { ...options, config: { ...options.config, configurationId: "4" } }),
  );
  expect(summary(bigger.mandatory)).toEqual(["max-vm-size mandatory vm"]);
  expect(bigger.mandatory[0].message).toContain("16 vCPU > maxCpu 8");

  // the stack policy reads the cpu / ram / disk the provider reported for the VM that exists
  const vm = (await stack.api.getVm({ params: { id: created.outputs.vmId as string } })).virtualMachine;
  await engine.configure({ "max-reported-vm-size": { maxCpu: 1 } });
  const reported = await judge(created);
  expect(summary(reported.mandatory)).toEqual(["max-reported-vm-size mandatory vm"]);
  expect(reported.mandatory[0].message).toContain(`VM vm is reported with ${vm.cpu} vCPU, ${vm.ram} GB RAM`);
  await engine.configure();

  await destroy(options);
  await stack.api.deleteTeam({ params: { id: teamId } });
});

it("quickstart without a resource group: advisory in the example pack, blocking with its policy-config.json", async () => {
  const planned = await preview(quickstart, quickstartOptions());
  const advised = await judge(planned);
  expect(advised.mandatory).toEqual([]);
  expect(summary(advised.diagnostics).sort()).toEqual([
    "require-resource-group advisory data",
    "require-resource-group advisory vm",
  ]);

  await engine.configure(exampleConfig);
  const blocked = await judge(planned);
  await engine.configure();
  expect(summary(blocked.mandatory).sort()).toEqual([
    "require-resource-group mandatory data",
    "require-resource-group mandatory vm",
  ]);
});
