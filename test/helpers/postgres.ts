/**
 * A throwaway PostgreSQL cluster for the team suite and the fleet bench: `initdb` into a fresh directory, `pg_ctl
 * start` on a free port (TCP on 127.0.0.1 with passwords, a unix socket in the same directory with trust for the
 * superuser), a database owned by a user of its own, and `pg_ctl stop` plus removal at the end. Run as root (CI and
 * this machine image), the server runs as the `postgres` user, as PostgreSQL refuses to run as root. The server's
 * binaries are found with `pg_config --bindir`, in /usr/lib/postgresql/<version>/bin (Debian's `postgresql-15`), or
 * on PATH. No client library: `psql` and `pg_dump` from the same package read the rows.
 */
import { execFileSync, spawnSync, type ExecFileSyncOptions } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

/** The directory holding `initdb`, `pg_ctl`, `psql` and `pg_dump` of the newest server installed, if any. */
export function postgresBinDir(): string | undefined {
  const has = (dir: string) => ["initdb", "pg_ctl", "psql", "pg_dump"].every((b) => fs.existsSync(path.join(dir, b)));
  const candidates: string[] = [];
  if (process.env.CLOUDINFRA_PG_BINDIR) candidates.push(process.env.CLOUDINFRA_PG_BINDIR);
  const debian = "/usr/lib/postgresql";
  if (fs.existsSync(debian)) {
    const versions = fs.readdirSync(debian).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(debian, v, "bin")));
  }
  const config = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  if (config.status === 0) candidates.push(config.stdout.trim());
  candidates.push(...(process.env.PATH ?? "").split(path.delimiter).filter((d) => d !== ""));
  return candidates.find(has);
}

/**
 * Why the PostgreSQL suites cannot run here (no server binaries), or undefined when they can. With
 * CLOUDINFRA_REQUIRE_CLI=1 (CI, this machine image) a missing server is an error, not a skip.
 */
export function postgresMissing(): string | undefined {
  if (postgresBinDir() !== undefined) return undefined;
  const reason =
    "no PostgreSQL server binaries (initdb, pg_ctl, psql, pg_dump): install Debian's `postgresql-15` " +
    "(or set CLOUDINFRA_PG_BINDIR to the directory holding them)";
  if (process.env.CLOUDINFRA_REQUIRE_CLI === "1") throw new Error(`CLOUDINFRA_REQUIRE_CLI=1 but ${reason}`);
  return reason;
}

export interface Postgres {
  /** The port the server listens on (127.0.0.1). */
  port: number;
  /** The database and the user owning it (with a password), made for the caller. */
  database: string;
  user: string;
  /** The PostgreSQL backend's URL for `pulumi login` (the password in it: treat it as a secret). */
  url: string;
  /** Runs SQL as the superuser in the database; the rows as psql prints them unaligned (`|` between columns). */
  sql(statement: string): string;
  /** `pg_dump --data-only` of the database: every row of every table, as text. */
  dump(): string;
  /** Stops the server and removes its directory. */
  stop(): void;
}

/** A free TCP port on 127.0.0.1 (free when asked; the server is started on it at once). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** The uid and gid of the `postgres` user when this process runs as root (the server must not). */
function serverOwner(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  try {
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error("running as root, PostgreSQL needs the `postgres` user to run as: none exists (useradd postgres)");
  }
}

/**
 * Starts a throwaway cluster with a database `database` owned by the user `user` (password generated). Fails with
 * the server's log when it cannot start.
 */
export async function startPostgres(options: { database?: string; user?: string } = {}): Promise<Postgres> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error(postgresMissing() ?? "no PostgreSQL server binaries");
  const database = options.database ?? "pulumi";
  const user = options.user ?? "pulumi";
  const password = `pw-${Math.random().toString(36).slice(2)}`;
  const owner = serverOwner();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cloudinfra-pg-"));
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);
  const data = path.join(dir, "data");
  const log = path.join(dir, "server.log");
  const asServer: ExecFileSyncOptions = { ...(owner ?? {}), stdio: ["ignore", "pipe", "pipe"], cwd: dir };
  const run = (binary: string, args: string[], extra: ExecFileSyncOptions = {}) =>
    execFileSync(path.join(bin, binary), args, { ...asServer, encoding: "utf8", ...extra }) as string;
  run("initdb", ["-D", data, "-U", "postgres", "-E", "UTF8", "--auth-local=trust", "--auth-host=scram-sha-256"]);
  let port = 0;
  for (let attempt = 1; ; attempt++) {
    port = await freePort();
    try {
      const settings = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
      run("pg_ctl", ["-D", data, "-l", log, "-o", settings, "-w", "-t", "60", "start"]);
      break;
    } catch (error) {
      // The port may have been taken between asking and starting: try another, then give up with the log.
      if (attempt < 3) continue;
      const serverLog = fs.existsSync(log) ? fs.readFileSync(log, "utf8").slice(-2000) : "";
      fs.rmSync(dir, { recursive: true, force: true });
      throw new Error(`PostgreSQL did not start: ${String(error)}\n${serverLog}`);
    }
  }
  const client = ["-h", dir, "-p", String(port), "-U", "postgres"];
  const sql = (statement: string, db = database) =>
    run("psql", [...client, "-d", db, "-v", "ON_ERROR_STOP=1", "-At", "-c", statement]);
  sql(`CREATE USER "${user}" PASSWORD '${password}'`, "postgres");
  sql(`CREATE DATABASE "${database}" OWNER "${user}"`, "postgres");
  let stopped = false;
  return {
    port,
    database,
    user,
    url: `postgres://${user}:${password}@127.0.0.1:${port}/${database}?sslmode=disable`,
    sql: (statement) => sql(statement),
    dump: () => run("pg_dump", [...client, "--data-only", database], { maxBuffer: 256 * 2 ** 20 }),
    stop() {
      if (stopped) return;
      stopped = true;
      try {
        run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
