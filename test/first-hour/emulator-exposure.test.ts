/**
 * Issue 8, item 7 (emulator): `--host 0.0.0.0` exposed the unauthenticated admin API, whose `/__admin/bootstrap`
 * hands out passwords, TOTP secrets and API keys; a taken port gave no hint. Off loopback the admin API now needs a
 * token (printed once at start) or is off.
 */
import { type ChildProcess, spawn } from "node:child_process";
import * as net from "node:net";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startEmulator } from "../../emulator/server";

const cli = resolve(__dirname, "../../dist/emulator/cli.js");
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

function start(args: string[]) {
  const child = spawn(process.execPath, [cli, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let stderr = "";
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout! });
  reader.on("line", (l) => lines.push(l));
  const exit = new Promise<{ code: number | null; stderr: string }>((done) =>
    child.once("close", (code) => done({ code, stderr })),
  );
  const firstLines = (n: number) =>
    new Promise<string[]>((done, fail) => {
      const check = () => (lines.length >= n ? done(lines.slice(0, n)) : undefined);
      reader.on("line", check);
      check();
      child.once("exit", (code) => fail(new Error(`exited ${code}: ${stderr}`)));
    });
  return { child, exit, firstLines };
}

describe("the admin API off loopback", () => {
  it("--host 0.0.0.0 served /__admin/bootstrap (passwords, TOTP secrets, keys) to anyone: now only with the token printed at start", async () => {
    const emulator = start(["--host", "0.0.0.0", "--port", "0", "--rate-limit", "0"]);
    const [listening, , , token] = await emulator.firstLines(4);
    const port = /:(\d+)\/v1/.exec(listening!)![1];
    const adminToken = /admin token:\s+(\S+)/.exec(token!)?.[1];
    expect(adminToken).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    const bootstrapUrl = `http://127.0.0.1:${port}/__admin/bootstrap`;
    const anonymous = await fetch(bootstrapUrl);
    expect(anonymous.status).toBe(401);
    const text = await anonymous.text();
    expect(text).not.toContain("svc_");
    expect(text).toContain("admin token");
    expect((await fetch(bootstrapUrl, { headers: { authorization: "Bearer wrong-token-wrong" } })).status).toBe(401);
    const allowed = await fetch(bootstrapUrl, { headers: { authorization: `Bearer ${adminToken}` } });
    expect(allowed.status).toBe(200);
    expect(
      ((await allowed.json()) as { data: { users: { admin: { apiKey: string } } } }).data.users.admin.apiKey,
    ).toMatch(/^svc_/);
    // The API itself is unchanged, and health stays open.
    expect((await fetch(`http://127.0.0.1:${port}/__health`)).status).toBe(200);
  });

  it("--no-admin-api serves no admin route at all", async () => {
    const emulator = await startEmulator({ port: 0, host: "0.0.0.0", adminApi: false, rateLimit: 0 });
    try {
      const origin = `http://127.0.0.1:${new URL(emulator.baseUrl).port}`;
      expect((await fetch(`${origin}/__admin/bootstrap`)).status).toBe(404);
      expect((await fetch(`${origin}/__admin/requests`)).status).toBe(404);
      expect(emulator.adminToken).toBeNull();
    } finally {
      await emulator.close();
    }
  });

  it("on loopback (the default) the admin API stays open, as the test helpers and the demo use it", async () => {
    const emulator = await startEmulator({ port: 0, rateLimit: 0 });
    try {
      expect(emulator.adminToken).toBeNull();
      const origin = emulator.baseUrl.replace(/\/v1$/, "");
      expect((await fetch(`${origin}/__admin/bootstrap`)).status).toBe(200);
    } finally {
      await emulator.close();
    }
  });
});

describe("a taken port", () => {
  const blocker = net.createServer();
  afterAll(() => new Promise<void>((done) => blocker.close(() => done())));

  it("said only EADDRINUSE: now the hint to pass --port 0", async () => {
    await new Promise<void>((done) => blocker.listen(0, "127.0.0.1", done));
    const port = (blocker.address() as net.AddressInfo).port;
    const { code, stderr } = await start(["--port", String(port)]).exit;
    expect(code).toBe(1);
    expect(stderr).toContain("EADDRINUSE");
    expect(stderr).toContain(`port ${port} is taken: pass --port 0 to pick a free one`);
  });
});
