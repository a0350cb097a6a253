/**
 * The CI recipe (examples/ci) as a runner would run it: the `run:` steps of the GitHub Actions workflow, read from the
 * file (so the file and this test cannot drift apart), run in order by bash with the workflow's env (secrets and
 * variables standing in for the repository's), the real CLI and an emulator as the cloud. The story: a pull request
 * previews the stack with the policy pack, main deploys it, a change made through the API sets the drift alarm off
 * naming the resource and the property, main's next update repairs it and the alarm goes quiet. The program job
 * deploys the program on an emulator it starts itself. The workflow is validated against the workflow JSON schema
 * (SchemaStore's, through @action-validator/core); the GitLab file runs the same story on a stack of its own.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { validateWorkflow } from "@action-validator/core";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { prepareProject } from "../../tools/pulumi-cli";
import { cliWorld, describeCli, type CliWorld } from "./helpers";

const root = path.resolve(__dirname, "../..");
const recipe = path.join(root, "examples", "ci");
const workflowText = fs.readFileSync(path.join(recipe, "github-workflow.yml"), "utf8");
const gitlabText = fs.readFileSync(path.join(recipe, "gitlab-ci.yml"), "utf8");

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
}
interface Job {
  if?: string;
  env?: Record<string, string>;
  concurrency?: { group: string; "cancel-in-progress"?: boolean };
  defaults?: { run?: { "working-directory"?: string } };
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  env?: Record<string, string>;
  jobs: Record<string, Job>;
}
const workflow = parse(workflowText) as Workflow;

/** Steps a runner of this test does not run: the test has done their work before (tools on PATH, projects installed). */
const preparedBy: Record<string, string> = {
  "actions/checkout": "the test copies the repository's examples into a workspace",
  "actions/setup-node": "Node.js runs this test",
  "pulumi/actions": "the CLI `npm run cli` built is on PATH",
  "Install the program's dependencies": "prepareProject gives the copy the node_modules npm ci would",
  "Install the policy pack's dependencies": "prepareProject gives the copy the node_modules npm ci would",
};

/** Values of the contexts a workflow's expressions may read. */
interface Contexts {
  secrets: Record<string, string>;
  vars: Record<string, string>;
  github: Record<string, string>;
  env: Record<string, string>;
}

/** `${{ ctx.NAME }}` in a string, from the contexts; anything else is refused (this runner knows no more). */
function expand(text: string, contexts: Contexts): string {
  return text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_, expression: string) => String(evaluate(expression, contexts)));
}

/** The few expressions the recipe uses: `ctx.NAME`, `'literal'`, `==`, `&&`, `||`. */
function evaluate(expression: string, contexts: Contexts): string | boolean {
  if (expression.includes("||")) return expression.split("||").some((e) => evaluate(e, contexts) === true);
  if (expression.includes("&&")) return expression.split("&&").every((e) => evaluate(e, contexts) === true);
  if (expression.includes("==")) {
    const [left, right] = expression.split("==").map((e) => evaluate(e.trim(), contexts));
    return left === right;
  }
  const literal = /^'([^']*)'$/.exec(expression.trim());
  if (literal) return literal[1]!;
  const reference = /^(secrets|vars|github|env)\.(\w+)$/.exec(expression.trim());
  if (!reference) throw new Error(`this runner does not evaluate \${{ ${expression} }}`);
  return contexts[reference[1] as keyof Contexts][reference[2]!] ?? "";
}

interface StepRun {
  name: string;
  exitCode: number;
  output: string;
}
interface JobRun {
  steps: StepRun[];
  /** The job's summary ($GITHUB_STEP_SUMMARY). */
  summary: string;
  /** Whether every step that ran succeeded. */
  succeeded: boolean;
  /** Everything the job printed. */
  log: string;
}

/** Ends the process groups of a job's scripts, as a runner ends what a job left running. */
function endProcesses(groups: number[]): void {
  for (const group of groups) {
    try {
      process.kill(-group, "SIGTERM");
    } catch {
      // the group has no process left
    }
  }
}

/** Runs a bash script as GitHub's runner does (`bash --noprofile --norc -eo pipefail`), without blocking the loop. */
function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
  groups: number[] = [],
): Promise<{ exitCode: number; output: string }> {
  return new Promise((resolve, reject) => {
    // its own process group: what it leaves running in the background (the emulator) is ended with the job
    const child = spawn("bash", ["--noprofile", "--norc", "-eo", "pipefail", "-c", script], {
      cwd,
      env,
      detached: true,
    });
    groups.push(child.pid!);
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ exitCode: code ?? 1, output }));
  });
}

/** A workspace: the repository's recipe, program and policy pack as a checkout holds them, installed. */
function checkout(parent: string, env: Record<string, string>): string {
  const workspace = fs.mkdtempSync(path.join(parent, "workspace-"));
  const examples = path.join(workspace, "examples");
  fs.mkdirSync(examples);
  for (const dir of [env.PULUMI_PROJECT_DIR!, env.POLICY_PACK_DIR!]) {
    expect(path.dirname(dir)).toBe("examples");
    prepareProject(path.join(root, dir), examples, root);
  }
  fs.cpSync(recipe, path.join(examples, "ci"), { recursive: true });
  // What npm ci would link in node_modules/.bin: the package's emulator (a shim, as npm makes for node scripts).
  const bin = path.join(workspace, env.PULUMI_PROJECT_DIR!, "node_modules", ".bin");
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, "cloudinfra-emulator"),
    `#!/bin/sh\nexec node "${path.join(root, "dist", "emulator", "cli.js")}" "$@"\n`,
    { mode: 0o755 },
  );
  return workspace;
}

/**
 * Runs one job of the workflow for an event: its `run:` steps in order (a failed step skips the rest but those with
 * `if: always()`), with env from the workflow, the job, $GITHUB_ENV and the step, expressions from `contexts`.
 */
async function runJob(
  jobId: string,
  event: { name: string; ref: string },
  options: {
    workspace: string;
    runner: Record<string, string>;
    secrets: Record<string, string>;
    vars: Record<string, string>;
  },
): Promise<JobRun> {
  const job = workflow.jobs[jobId]!;
  const temp = fs.mkdtempSync(path.join(options.workspace, "..", `runner-${jobId}-`));
  const files = { GITHUB_ENV: path.join(temp, "env"), GITHUB_STEP_SUMMARY: path.join(temp, "summary.md") };
  for (const file of Object.values(files)) fs.writeFileSync(file, "");
  const github = {
    event_name: event.name,
    ref: event.ref,
    workspace: options.workspace,
    run_id: String(Date.now()),
  };
  const contexts: Contexts = { secrets: options.secrets, vars: options.vars, github, env: {} };
  const level = (values: Record<string, string> | undefined) => {
    for (const [key, value] of Object.entries(values ?? {})) contexts.env[key] = expand(String(value), contexts);
  };
  level(workflow.env);
  expect(job.if === undefined || evaluate(job.if, contexts) === true, `${jobId} runs on ${event.name}`).toBe(true);
  level(job.env);
  const base = {
    ...options.runner,
    ...files,
    RUNNER_TEMP: temp,
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_RUN_ID: github.run_id,
    GITHUB_EVENT_NAME: event.name,
    GITHUB_REF: event.ref,
  };
  const run: JobRun = { steps: [], summary: "", succeeded: true, log: "" };
  const groups: number[] = [];
  for (const step of job.steps) {
    const name = step.name ?? step.uses?.replace(/@.*/, "") ?? "(unnamed)";
    if (step.run === undefined || preparedBy[name] !== undefined) {
      expect(preparedBy[name], `${jobId}: a step this runner cannot run: ${name}`).toBeDefined();
      continue;
    }
    if (!run.succeeded && step.if !== "always()") continue;
    expect(step.run, `${name}: no expression inside a script (use env)`).not.toContain("${{");
    const fromFile = Object.fromEntries(
      fs
        .readFileSync(files.GITHUB_ENV, "utf8")
        .split("\n")
        .filter((line) => line.includes("="))
        .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
    );
    const stepContexts = { ...contexts, env: { ...contexts.env, ...fromFile } };
    const env: Record<string, string> = { ...base, ...stepContexts.env };
    for (const [key, value] of Object.entries(step.env ?? {})) env[key] = expand(String(value), stepContexts);
    const directory = step["working-directory"] ?? job.defaults?.run?.["working-directory"] ?? ".";
    const cwd = path.resolve(options.workspace, expand(directory, stepContexts));
    const result = await bash(step.run, cwd, env, groups);
    run.steps.push({ name, ...result });
    run.log += `--- ${jobId} / ${name} (exit ${result.exitCode})\n${result.output}`;
    if (result.exitCode !== 0) run.succeeded = false;
  }
  run.summary = fs.readFileSync(files.GITHUB_STEP_SUMMARY, "utf8");
  endProcesses(groups);
  return run;
}

describe("the CI recipe's files", () => {
  it("the GitHub workflow is valid against the workflow JSON schema (SchemaStore's, by @action-validator/core)", () => {
    expect(validateWorkflow(workflowText).errors).toEqual([]);
    // the validator is no rubber stamp: a misspelt key fails it
    expect(validateWorkflow(workflowText.replace("runs-on:", "run-on:")).errors.length).toBeGreaterThan(0);
  });

  it("the workflow has the four jobs, the update and the drift alarm in one concurrency group that never cancels", () => {
    expect(Object.keys(workflow.jobs).sort()).toEqual(["drift", "preview", "program", "up"]);
    expect(Object.keys(workflow.on).sort()).toEqual(["pull_request", "push", "schedule", "workflow_dispatch"]);
    const { up, drift } = workflow.jobs;
    expect(up!.concurrency).toEqual({ group: drift!.concurrency!.group, "cancel-in-progress": false });
    expect(up!.concurrency!.group).toContain(workflow.env!.PULUMI_STACK);
    // credentials only from the secret store, never written into a script
    for (const [name, value] of Object.entries({ ...workflow.env, ...up!.env })) {
      if (/API_KEY|TOKEN|PASSPHRASE/.test(name)) expect(value, name).toMatch(/^\$\{\{ secrets\.\w+ \}\}$/);
    }
  });
});

/** A job's run as the story reads it, whichever CI ran it. */
interface Ran {
  succeeded: boolean;
  /** What the job printed. */
  log: string;
  /** What it published: GitHub's job summary, GitLab's artifacts. */
  published: string;
}
type Event = "pull request" | "push to main" | "schedule";
type RunJob = (job: "preview" | "up" | "drift", event: Event) => Promise<Ran>;

/** What a runner of ours has besides the repository's tools: an offline CLI, nothing of this process's own config. */
function runnerEnvironment(workspace: string, projectDir: string): Record<string, string> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined && !/^(PULUMI_|CLOUDINFRA_)/.test(entry[0]),
    ),
  );
  return {
    ...inherited,
    CI: "true",
    PULUMI_HOME: path.join(workspace, "..", "pulumi-home"),
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    // the symlinked node_modules of a prepared project resolve from NODE_PATH only (see cliEnvironment)
    NODE_PATH: path.join(workspace, projectDir, "node_modules"),
    // job polling at test speed (the emulator's jobs take a fraction of a second)
    CLOUDINFRA_POLL_INTERVAL_MS: "20",
  };
}

/**
 * The story both recipes must tell, against the emulator of `world`: a preview of the stack with the policy pack,
 * published; the update; a change made through the API; the drift alarm failing and naming the drifted resources and
 * properties with both values, changing nothing; the next update repairing it; the alarm silent. Returns the logs.
 */
async function story(world: CliWorld, run: RunJob, outputOf: (name: string) => Promise<string>): Promise<string[]> {
  const logs: string[] = [];
  const job = async (id: "preview" | "up" | "drift", event: Event) => {
    const ran = await run(id, event);
    logs.push(ran.log, ran.published);
    console.log(`${ran.log}\n--- published:\n${ran.published}`);
    return ran;
  };
  const networks = async () => (await world.api.listNetworks({ query: { search: "quickstart-net" } })).data;

  // (a) the pull request: a preview of the whole stack, the policy pack run, the preview published
  const preview = await job("preview", "pull request");
  expect(preview.succeeded).toBe(true);
  for (const kind of ["Network", "VirtualMachine", "Volume", "VolumeAttachment"]) {
    expect(preview.log).toContain(`+ pulumi-nodejs:dynamic/cloudinfra:${kind}: (create)`);
  }
  expect(preview.log).toMatch(/Policy Packs run:[\s\S]*cloudinfra-guard\|local\|/);
  expect(preview.log).toContain("cloudinfra-guard@v0.1.0 [advisory]");
  expect(preview.published).toMatch(/\+ 5 to create/);
  expect(await networks()).toEqual([]);

  // (b) main: the update, then the API holds the stack
  const up = await job("up", "push to main");
  expect(up.succeeded).toBe(true);
  expect(up.published).toMatch(/\+ 5 created/);
  const [network] = await networks();
  expect(network?.description).toBe("quickstart network, managed by Pulumi");
  const vmId = await outputOf("vmId");
  expect(vmId).toMatch(/^[0-9a-f-]{36}$/);

  // a change made behind the stack's back, through the API
  await world.api.updateNetwork({
    params: { id: network!.id },
    body: { description: "edited by hand in the console" },
  });
  await world.api.stopVm({ params: { id: vmId } });

  // (c) the drift alarm fires: non-zero, each drifted resource and property named with both values
  const alarm = await job("drift", "schedule");
  expect(alarm.succeeded).toBe(false);
  for (const text of [alarm.log, alarm.published]) {
    expect(text).toContain("**Drift in `production`**: 2 resources differ from what the stack recorded.");
    expect(text).toContain(
      '- `network` (cloudinfra:Network): `description` "quickstart network, managed by Pulumi" → "edited by hand in the console"',
    );
    expect(text).toMatch(/- `vm` \(cloudinfra:VirtualMachine\): `powerState` "running" → "stopped"/);
  }
  // the alarm changed nothing: the API still holds the edit
  expect((await world.api.getNetwork({ params: { id: network!.id } })).description).toBe(
    "edited by hand in the console",
  );

  // main's next update reads the cloud and puts back what the program declares
  const repair = await job("up", "push to main");
  expect(repair.succeeded).toBe(true);
  expect((await world.api.getNetwork({ params: { id: network!.id } })).description).toBe(
    "quickstart network, managed by Pulumi",
  );
  expect((await world.api.getVm({ params: { id: vmId } })).status).toBe("Running");

  // and the alarm is silent
  const quiet = await job("drift", "schedule");
  expect(quiet.succeeded).toBe(true);
  expect(quiet.log).toContain("No drift in `production`: the cloud holds what the stack recorded.");
  return logs;
}

/** One output of a stack, by the CLI. */
async function stackOutput(cwd: string, env: Record<string, string>, stack: string, name: string): Promise<string> {
  const result = await bash(`pulumi stack output --stack "${stack}" ${name}`, cwd, env);
  expect(result.exitCode, result.output).toBe(0);
  return result.output.trim();
}

interface GitLabJob {
  rules?: { if: string }[];
  resource_group?: string;
  variables?: Record<string, string>;
  script: string[];
  artifacts?: { paths?: string[] };
}

/** `$NAME` and `${NAME}` in a string, from `variables` (unknown names are empty, as in GitLab). */
const gitlabExpand = (text: string, variables: Record<string, string>): string =>
  text.replace(/\$\{?(\w+)\}?/g, (_, name: string) => variables[name] ?? "");

/** The rules' expressions the recipe uses: `$A == "literal"`, `$A == $B`, `&&`. */
function gitlabRule(expression: string, variables: Record<string, string>): boolean {
  return expression.split("&&").every((clause) => {
    const [left, right] = clause.split("==").map((side) => {
      const value = side.trim();
      const literal = /^"([^"]*)"$/.exec(value);
      if (literal) return literal[1];
      if (/^\$\w+$/.test(value)) return variables[value.slice(1)] ?? "";
      throw new Error(`this runner does not evaluate the rule ${expression}`);
    });
    return left === right;
  });
}

const worlds = { github: await cliWorld(), gitlab: await cliWorld() };

describeCli("the CI recipe (examples/ci) run through the real CLI", () => {
  it.concurrent(
    "GitHub: a pull request previews with the policy pack, main deploys, the drift alarm fires naming the drifted resource and property, the next update repairs it and the alarm is silent",
    async () => {
      const world = worlds.github;
      const admin = world.emulator.bootstrap.users.admin;
      const parent = fs.mkdtempSync(path.join(world.work, "github-"));
      const workspace = checkout(parent, workflow.env!);
      const passphrase = "ci-recipe-state-passphrase";
      fs.mkdirSync(path.join(parent, "state"));
      const options = {
        workspace,
        runner: runnerEnvironment(workspace, workflow.env!.PULUMI_PROJECT_DIR!),
        secrets: { CLOUDINFRA_API_KEY: admin.apiKey, PULUMI_CONFIG_PASSPHRASE: passphrase },
        vars: { CLOUDINFRA_BASE_URL: world.emulator.baseUrl, PULUMI_BACKEND_URL: `file://${parent}/state` },
      };
      const events = {
        "pull request": { name: "pull_request", ref: "refs/pull/7/merge" },
        "push to main": { name: "push", ref: "refs/heads/main" },
        schedule: { name: "schedule", ref: "refs/heads/main" },
      };
      const logs = await story(
        world,
        async (id, event) => {
          const run = await runJob(id, events[event], options);
          const names = run.steps.map((s) => s.name);
          expect(names).toEqual(
            {
              preview: ["Preview", "Publish the preview"],
              up: ["Update", "Publish the update"],
              drift: ["Drift alarm"],
            }[id],
          );
          return { succeeded: run.succeeded, log: run.log, published: run.summary };
        },
        (name) =>
          stackOutput(
            path.join(workspace, workflow.env!.PULUMI_PROJECT_DIR!),
            {
              ...options.runner,
              PULUMI_BACKEND_URL: options.vars.PULUMI_BACKEND_URL,
              PULUMI_CONFIG_PASSPHRASE: passphrase,
            },
            workflow.env!.PULUMI_STACK!,
            name,
          ),
      );
      // (d) the credentials never reached a log or a summary
      for (const text of logs) {
        expect(text).not.toContain(admin.apiKey);
        expect(text).not.toContain(passphrase);
      }
    },
  );

  it.concurrent(
    "GitHub: the program job deploys the program on an emulator it starts itself, finds nothing to change, and destroys it",
    async () => {
      const parent = fs.mkdtempSync(path.join(worlds.github.work, "program-"));
      const workspace = checkout(parent, workflow.env!);
      const run = await runJob(
        "program",
        { name: "pull_request", ref: "refs/pull/7/merge" },
        { workspace, runner: runnerEnvironment(workspace, workflow.env!.PULUMI_PROJECT_DIR!), secrets: {}, vars: {} },
      );
      console.log(run.log);
      expect(run.steps.map((s) => [s.name, s.exitCode])).toEqual([
        ["Start the emulator", 0],
        ["Deploy the program on the emulator", 0],
        ["Destroy", 0],
      ]);
      const deploy = run.steps[1]!.output;
      expect(deploy).toMatch(/\+ 5 created/);
      expect(deploy).toMatch(/5 unchanged/);
      expect(run.steps[2]!.output).toMatch(/- 5 deleted/);
      // the emulator's key was masked for the log
      expect(run.steps[0]!.output).toMatch(/^::add-mask::svc_\w+$/m);
    },
  );

  it.concurrent("GitLab: the same story through the scripts of .gitlab-ci.yml", async () => {
    const world = worlds.gitlab;
    const admin = world.emulator.bootstrap.users.admin;
    const gitlab = parse(gitlabText) as {
      variables: Record<string, string>;
      default: { before_script: string[] };
    } & Record<string, GitLabJob>;
    // the default before_script installs the tools and the projects: what checkout() does here
    expect(gitlab.default.before_script.join("\n")).toMatch(/get\.pulumi\.com[\s\S]*npm ci[\s\S]*npm ci/);
    const parent = fs.mkdtempSync(path.join(world.work, "gitlab-"));
    const workspace = checkout(parent, gitlab.variables);
    const passphrase = "ci-recipe-gitlab-passphrase";
    fs.mkdirSync(path.join(parent, "state"));
    // Settings > CI/CD > Variables
    const project = {
      CLOUDINFRA_BASE_URL: world.emulator.baseUrl,
      CLOUDINFRA_API_KEY: admin.apiKey,
      PULUMI_BACKEND_URL: `file://${parent}/state`,
      PULUMI_CONFIG_PASSPHRASE: passphrase,
    };
    const runner = runnerEnvironment(workspace, gitlab.variables.PULUMI_PROJECT_DIR!);
    const sources = { "pull request": "merge_request_event", "push to main": "push", schedule: "schedule" };
    let pipelines = 0;
    const logs = await story(
      world,
      async (id, event) => {
        const job = gitlab[id]!;
        const predefined = {
          CI: "true",
          CI_PROJECT_DIR: workspace,
          CI_PIPELINE_ID: String(++pipelines),
          CI_PIPELINE_SOURCE: sources[event],
          CI_DEFAULT_BRANCH: "main",
          CI_COMMIT_BRANCH: event === "pull request" ? "feature" : "main",
        };
        expect(
          job.rules?.some((rule) => gitlabRule(rule.if, predefined)),
          `${id} runs on ${event}`,
        ).toBe(true);
        // precedence: the file's variables, the job's, then the project's settings
        const variables: Record<string, string> = { ...predefined };
        for (const [key, value] of Object.entries({ ...gitlab.variables, ...job.variables })) {
          variables[key] = gitlabExpand(String(value), variables);
        }
        Object.assign(variables, project);
        for (const artifact of job.artifacts?.paths ?? []) fs.rmSync(path.join(workspace, artifact), { force: true });
        const result = await bash(job.script.join("\n"), workspace, { ...runner, ...variables });
        const published = (job.artifacts?.paths ?? [])
          .map((artifact) => path.join(workspace, artifact))
          .filter((file) => fs.existsSync(file))
          .map((file) => fs.readFileSync(file, "utf8"))
          .join("\n");
        return { succeeded: result.exitCode === 0, log: `--- ${id}\n${result.output}`, published };
      },
      (name) =>
        stackOutput(
          path.join(workspace, gitlab.variables.PULUMI_PROJECT_DIR!),
          { ...runner, PULUMI_BACKEND_URL: project.PULUMI_BACKEND_URL, PULUMI_CONFIG_PASSPHRASE: passphrase },
          gitlab.variables.PULUMI_STACK!,
          name,
        ),
    );
    expect(gitlab.up!.resource_group).toBe(gitlab.drift!.resource_group);
    for (const text of logs) {
      expect(text).not.toContain(admin.apiKey);
      expect(text).not.toContain(passphrase);
    }
  });
});
