/**
 * The team setup (examples/team) through the real CLI: the project's stacks in Pulumi's PostgreSQL backend (a
 * throwaway cluster started here), deployed by two CI runners that share nothing but the API and the database: each
 * has its own HOME, PULUMI_HOME and checkout, and its own API key of the same user. Shown: both runners' ups of
 * different stacks at once succeed, each stack's resources in the API; a second `up` of a stack being updated is
 * refused by the backend's lock before any API request; the database's rows hold no API key and no SSH private key in
 * clear (the stack's secrets provider encrypts them); both runners' destroys at once leave nothing in the API.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CloudClient } from "../../provider/client";
import { cliEnvironment, prepareProject } from "../../tools/pulumi-cli";
import { postgresMissing, startPostgres, type Postgres } from "../helpers/postgres";
import { cliWorld, describeCli } from "./helpers";

const root = path.resolve(__dirname, "../..");
const missing = postgresMissing();
const world = await cliWorld();
/** The team's passphrase: a CI secret every runner has (the stack's secrets provider). */
const PASSPHRASE = "team-passphrase-for-the-state";

interface CliResult {
  code: number;
  output: string;
}

/** A CI runner: its own HOME, PULUMI_HOME and checkout of the project, and its own API key of the admin user. */
interface Runner {
  name: string;
  keyId: string;
  key: string;
  checkout: string;
  pulumi(...args: string[]): Promise<CliResult>;
}

let pg: Postgres;
let runnerA: Runner;
let runnerB: Runner;
const keysOfUser: string[] = [];

/** A runner's own machine: directories of its own; only the backend URL, the passphrase and its key come in. */
function makeRunner(name: string, key: { id: string; key: string }, backendUrl: string): Runner {
  const home = fs.mkdtempSync(path.join(world.work, `${name}-home-`));
  const checkout = prepareProject(path.join(root, "examples", "team"), home, root);
  // The offline settings of the suites' CLI (no update check, no plugin downloads, the project's node_modules for
  // the dynamic-provider host), without their file backend.
  const offline = cliEnvironment(path.join(home, "unused-backend"), checkout);
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: home,
    PULUMI_HOME: path.join(home, ".pulumi"),
    NODE_PATH: offline.NODE_PATH!,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_NODEJS_TRANSPILE_ONLY: "true",
    PULUMI_BACKEND_URL: backendUrl,
    PULUMI_CONFIG_PASSPHRASE: PASSPHRASE,
    CLOUDINFRA_API_KEY: key.key,
    CLOUDINFRA_POLL_INTERVAL_MS: "20",
  };
  return {
    name,
    keyId: key.id,
    key: key.key,
    checkout,
    pulumi: (...args) =>
      new Promise((resolve, reject) => {
        const child = spawn("pulumi", [...args, "--non-interactive", "--color", "never"], {
          cwd: checkout,
          env,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let output = "";
        child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code: code ?? -1, output }));
      }),
  };
}

const ok = (result: CliResult) => expect(result.code, result.output.slice(-3000)).toBe(0);

/** The state blobs of the backend's table whose key contains `part` (stacks, locks, history). */
const keysWith = (part: string) =>
  pg
    .sql(`SELECT key FROM pulumi_state WHERE key LIKE '%${part}%' ORDER BY key`)
    .split("\n")
    .filter((k) => k !== "");

/** The request log's entries since `mark` made with the API key `keyId`. */
async function requestsByKey(mark: number, keyId: string) {
  const log = (await world.requests(mark)) as unknown as {
    route: string | null;
    caller: { apiKeyId: string } | null;
  }[];
  return log.filter((e) => e.caller?.apiKeyId === keyId);
}

describeCli("a team's runners on a PostgreSQL backend (examples/team)", () => {
  describe.skipIf(missing !== undefined)(
    missing === undefined ? "PostgreSQL server found" : `skipped: ${missing}`,
    () => {
      beforeAll(async () => {
        pg = await startPostgres({ database: "pulumi", user: "ci" });
        // Keys are made by a signed-in session (an API key cannot make keys), one per runner, of the same user.
        const admin = world.emulator.bootstrap.users.admin;
        const session = new CloudClient({
          baseUrl: world.emulator.baseUrl,
          auth: { email: admin.email, password: admin.password, totpSecret: admin.totpSecret },
        });
        const made = [
          await session.createApiKey({ body: { name: "team-runner-a" } }),
          await session.createApiKey({ body: { name: "team-runner-b" } }),
        ];
        await session.close();
        keysOfUser.push(admin.apiKey, ...made.map((k) => k.key));
        runnerA = makeRunner("a", made[0]!, pg.url);
        runnerB = makeRunner("b", made[1]!, pg.url);
        // Each runner logs its CLI in to the database; the project's stacks are made once (by runner A here) and
        // their settings files (the API's URL, the passphrase's salt; no secret) committed: runner B's checkout gets
        // them. The API key is each runner's own (CLOUDINFRA_API_KEY), in no stack's settings.
        ok(await runnerA.pulumi("login"));
        ok(await runnerB.pulumi("login"));
        for (const stack of ["dev", "staging"]) {
          ok(await runnerA.pulumi("stack", "init", stack, "--secrets-provider", "passphrase"));
          ok(await runnerA.pulumi("config", "set", "cloudinfra:baseUrl", world.emulator.baseUrl, "--stack", stack));
          const settings = `Pulumi.${stack}.yaml`;
          fs.copyFileSync(path.join(runnerA.checkout, settings), path.join(runnerB.checkout, settings));
        }
      }, 120_000);
      afterAll(() => pg?.stop());

      it("each runner's CLI is logged in to the database, which holds the project's stacks", async () => {
        const whoami = await runnerB.pulumi("whoami", "--verbose");
        ok(whoami);
        expect(whoami.output).toContain(`postgres://ci:`);
        expect(whoami.output).toContain(`127.0.0.1:${pg.port}/pulumi`);
        // The backend's blobs, keyed by the database's name: a checkpoint per stack (and its backup).
        expect(keysWith(".pulumi/stacks/").filter((k) => k.endsWith(".json"))).toEqual([
          "pulumi/.pulumi/stacks/team/dev.json",
          "pulumi/.pulumi/stacks/team/staging.json",
        ]);
        const listed = await runnerB.pulumi("stack", "ls", "--json");
        ok(listed);
        const names = (JSON.parse(listed.output) as { name: string }[]).map((s) => s.name).sort();
        expect(names).toEqual(["dev", "staging"]);
      }, 60_000);

      it("two runners' ups of different stacks at once both succeed, each on its own key", async () => {
        const mark = world.mark();
        const [a, b] = await Promise.all([
          runnerA.pulumi("up", "--yes", "--stack", "dev"),
          runnerB.pulumi("up", "--yes", "--stack", "staging"),
        ]);
        ok(a);
        ok(b);
        for (const stack of ["dev", "staging"]) {
          const held = await world.namesInApi(`team-${stack}-`);
          expect(held).toMatchObject({
            networks: [`team-${stack}-net`],
            vms: [`team-${stack}-app`],
            volumes: [`team-${stack}-data`],
          });
        }
        // Each runner's creates (and the attachment) went with its own key: dev's by A, staging's by B.
        for (const [runner, stack] of [
          [runnerA, "dev"],
          [runnerB, "staging"],
        ] as const) {
          const creates = (await requestsByKey(mark, runner.keyId)).filter((e) =>
            /^(create[A-Z]|attachVolume$)/.test(e.route ?? ""),
          );
          expect(creates.map((e) => e.route).sort(), `${stack} by runner ${runner.name}`).toEqual([
            "attachVolume",
            "createNetwork",
            "createVm",
            "createVolume",
          ]);
        }
        expect(keysWith("/locks/"), "no lock left behind").toEqual([]);
        expect(keysWith("pulumi/.pulumi/history/team/dev/").length).toBeGreaterThan(0);
      }, 300_000);

      it("a second up of a stack being updated is refused by the backend's lock, before any API request", async () => {
        // Runner A's refresh of dev is slowed by the API (its first read answers after 8 s): the lock is held.
        await world.faults("method=GET,latency=8s,count=1");
        const first = runnerA.pulumi("up", "--yes", "--refresh", "--skip-preview", "--stack", "dev");
        const deadline = Date.now() + 60_000;
        while (keysWith("/locks/").length === 0) {
          if (Date.now() > deadline) throw new Error("runner A's up never took the stack's lock");
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        let second: CliResult;
        let mark: number;
        try {
          expect(keysWith("/locks/")).toEqual([
            expect.stringMatching(/^pulumi\/\.pulumi\/locks\/organization\/team\/dev\/[\w-]+\.json$/),
          ]);
          mark = world.mark();
          second = await runnerB.pulumi("up", "--yes", "--stack", "dev");
        } finally {
          ok(await first);
          await world.faults("");
        }
        expect(second.code).not.toBe(0);
        expect(second.output).toContain("the stack is currently locked by 1 lock(s)");
        expect(second.output).toMatch(/created by \S+@\S+ \(pid \d+\)/);
        expect(second.output, "the database's password is not shown").not.toContain(pg.url.split(/[:@]/)[2]);
        expect(await requestsByKey(mark, runnerB.keyId), "requests with runner B's key").toEqual([]);
        expect(keysWith("/locks/"), "the lock is released").toEqual([]);
        // The refused run changed nothing: runner B's next up goes through, with nothing to do.
        const again = await runnerB.pulumi("up", "--yes", "--stack", "dev", "--expect-no-changes");
        ok(again);
        expect(await world.namesInApi("team-dev-")).toMatchObject({
          networks: ["team-dev-net"],
          vms: ["team-dev-app"],
          volumes: ["team-dev-data"],
        });
      }, 300_000);

      it("the database's rows hold no API key and no SSH private key in clear", async () => {
        // pg_dump's text of every row, and each blob decoded (the backend stores them base64-encoded in JSON).
        const dump = pg.dump();
        const blobs = pg.sql("SELECT convert_from(decode(data->>'data', 'base64'), 'UTF8') FROM pulumi_state");
        const rows = `${dump}\n${blobs}`;
        const vms = Object.values(world.emulator.ctx.state.vms).filter((vm) => vm.name.startsWith("team-"));
        expect(vms).toHaveLength(2);
        // What the rows do hold: both stacks' resources, and their SSH keys as the secrets provider's ciphertext.
        for (const vm of vms) expect(blobs).toContain(vm.id);
        expect(blobs.match(/"ciphertext"/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
        const secrets = {
          ...Object.fromEntries(keysOfUser.map((key, i) => [`API key ${i}`, key])),
          ...Object.fromEntries(vms.map((vm) => [`SSH private key of ${vm.name}`, vm.privateKey])),
          passphrase: PASSPHRASE,
        };
        // The key is there, encrypted: a runner with the team's passphrase reads it back from the database.
        const shown = await runnerB.pulumi("stack", "output", "sshPrivateKey", "--show-secrets", "--stack", "dev");
        ok(shown);
        expect(shown.output.trim()).toBe(vms.find((vm) => vm.name === "team-dev-app")?.privateKey.trim());
        for (const [what, secret] of Object.entries(secrets)) {
          expect(secret.length, what).toBeGreaterThan(20);
          expect(rows.includes(secret), `${what} in the database`).toBe(false);
          // Nor as a JSON string (a PEM key's newlines escaped), nor any line of it.
          expect(rows.includes(JSON.stringify(secret).slice(1, -1)), `${what} escaped`).toBe(false);
          for (const line of secret.split("\n").filter((l) => l.length > 20 && !l.startsWith("-----"))) {
            expect(rows.includes(line), `a line of ${what}`).toBe(false);
          }
        }
      }, 60_000);

      it("both runners' destroys at once leave nothing of either stack in the API", async () => {
        const [a, b] = await Promise.all([
          runnerA.pulumi("destroy", "--yes", "--stack", "dev"),
          runnerB.pulumi("destroy", "--yes", "--stack", "staging"),
        ]);
        ok(a);
        ok(b);
        const empty = { networks: [], vms: [], volumes: [] };
        expect(await world.namesInApi("team-dev-")).toMatchObject(empty);
        expect(await world.namesInApi("team-staging-")).toMatchObject(empty);
        expect(keysWith("/locks/")).toEqual([]);
      }, 300_000);
    },
  );
});
