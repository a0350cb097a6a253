#!/usr/bin/env node
import { parseArgs } from "node:util";
import type { EmulatorOptions } from "./context";
import { FaultSpecError, parseFaultSpec } from "./faults";
import { type RunningEmulator, startEmulator } from "./server";

const usage = `Usage: cloudinfra-emulator [options]        (installed package: npx cloudinfra-emulator ...)
       npm run -s emulator -- [options]      (checkout: builds first; -s keeps npm's banner off stdout)

  --port N              port to listen on; 0 picks a free one (default 8787)
  --host H              address to bind (default 127.0.0.1). Off loopback the admin API needs a token
  --admin-token T       token the admin API requires (default: none on loopback, a random one printed at start
                        otherwise); send it as "Authorization: Bearer T"
  --no-admin-api        do not serve the admin API (/__admin/*) at all
  --json                print the bootstrap JSON (base URL, users, fixtures; adminToken off loopback) as the first stdout line
  --job-duration-ms MS  the longest job (GPU VM create) takes MS; others proportionally less (default realistic)
  --rate-limit N        general limit per user or IP per 60 s; 0 turns it off (default 100)
  --state FILE          load the state from FILE when it exists and keep it saved there
  --faults SPEC         fault injection rules, e.g. "createVolume,status=503,count=2;job=vm.create,stall"
  --seed N              seed of the deterministic random source (default 1)
  --log-requests        write a line per request to stderr
  --spec-fields-only    answer only the fields the spec documents (and {} where it shows no answer)
  --help                show this help`;

/** A command-line mistake: reported with the usage, exit code 2. */
class UsageError extends Error {}

function integer(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) {
    throw new UsageError(`--${flag} must be an integer ≥ ${min}, got "${value}"`);
  }
  return Number(value);
}

/** Turns the command line into emulator options; throws UsageError on unknown flags or bad values. */
export function parseCli(argv: string[]): { options: EmulatorOptions; json: boolean; help: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        json: { type: "boolean" },
        "job-duration-ms": { type: "string" },
        "rate-limit": { type: "string" },
        state: { type: "string" },
        faults: { type: "string" },
        seed: { type: "string" },
        "log-requests": { type: "boolean" },
        "admin-token": { type: "string" },
        "no-admin-api": { type: "boolean" },
        "spec-fields-only": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message : String(e));
  }
  const port = integer("port", values.port, 0);
  if (port !== undefined && port > 65535) throw new UsageError(`--port must be at most 65535, got ${port}`);
  if (values.host !== undefined && values.host.length === 0) throw new UsageError("--host must not be empty");
  if (values.state !== undefined && values.state.length === 0) throw new UsageError("--state needs a file name");
  if (values["admin-token"] !== undefined && values["admin-token"].length < 8) {
    throw new UsageError("--admin-token must be at least 8 characters");
  }
  if (values.faults !== undefined) {
    try {
      parseFaultSpec(values.faults);
    } catch (e) {
      if (e instanceof FaultSpecError) throw new UsageError(`--faults: ${e.message}`);
      throw e;
    }
  }
  return {
    json: values.json ?? false,
    help: values.help ?? false,
    options: {
      port: port ?? 8787,
      host: values.host ?? "127.0.0.1",
      jobDurationMs: integer("job-duration-ms", values["job-duration-ms"], 1),
      rateLimit: integer("rate-limit", values["rate-limit"], 0),
      stateFile: values.state,
      faults: values.faults,
      seed: integer("seed", values.seed, 0),
      logRequests: values["log-requests"] ?? false,
      adminToken: values["admin-token"],
      adminApi: !(values["no-admin-api"] ?? false),
      specFieldsOnly: values["spec-fields-only"] ?? false,
    },
  };
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseCli>;
  try {
    parsed = parseCli(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`emulator: ${e.message}\n\n${usage}`);
    process.exit(2);
  }
  if (parsed.help) {
    console.log(usage);
    return;
  }
  // Handlers go in before anything is printed: a caller may signal as soon as it has read the first line.
  let emulator: RunningEmulator | null = null;
  let stopping = false;
  const stop = () => {
    if (!emulator) return;
    emulator.close().then(
      () => process.exit(0),
      (e: unknown) => {
        console.error("emulator: error while closing:", e);
        process.exit(1);
      },
    );
  };
  const onSignal = () => {
    if (stopping) return;
    stopping = true;
    stop();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    emulator = await startEmulator(parsed.options);
  } catch (e) {
    const inUse = (e as { code?: unknown }).code === "EADDRINUSE";
    const hint = inUse ? ` (port ${parsed.options.port} is taken: pass --port 0 to pick a free one)` : "";
    console.error(`emulator: could not start: ${e instanceof Error ? e.message : String(e)}${hint}`);
    process.exit(1);
  }
  if (stopping) return stop();
  const adminApi = parsed.options.adminApi !== false;
  if (parsed.json) {
    // The admin token (off loopback only) rides along, so a caller of --json can use the admin API.
    const token = emulator.adminToken ? { adminToken: emulator.adminToken } : {};
    console.log(JSON.stringify({ ...emulator.bootstrap, ...token }));
  } else {
    const { users } = emulator.bootstrap;
    console.log(`cloudinfra emulator listening on ${emulator.baseUrl}`);
    console.log(`  admin API key: ${users.admin.apiKey}  (${users.admin.email})`);
    if (!adminApi) console.log("  admin API:     off (--no-admin-api)");
    else console.log(`  bootstrap:     ${emulator.baseUrl.replace(/\/v1$/, "")}/__admin/bootstrap`);
    // Printed once: the admin API hands out every password, TOTP secret and API key.
    if (emulator.adminToken) console.log(`  admin token:   ${emulator.adminToken}  (Authorization: Bearer <token>)`);
    console.log("  Ctrl-C to stop");
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error("emulator:", e);
    process.exit(1);
  });
}
