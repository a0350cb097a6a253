import { existsSync, linkSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadStateFile, writeStateFile } from "../../emulator/persistence";
import { buildEmulator, startEmulator } from "../../emulator/server";
import type { State } from "../../emulator/state";

const dir = mkdtempSync(join(tmpdir(), "cloudinfra-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const inject = (
  app: Awaited<ReturnType<typeof buildEmulator>>["app"],
  apiKey: string,
  method: "GET" | "POST",
  url: string,
  body?: unknown,
) =>
  app.inject({
    method,
    url,
    headers: { "x-api-key": apiKey, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });

describe("--state FILE", () => {
  it("keeps resources and the bootstrap across a restart", async () => {
    const file = join(dir, "restart.json");
    const first = await buildEmulator({ stateFile: file, jobDurationMs: 20, rateLimit: 0 });
    const key = first.bootstrap.users.admin.apiKey;
    const created = await inject(first.app, key, "POST", "/v1/resource/networks", {
      name: "persisted-net",
      datacenterId: first.bootstrap.fixtures.datacenters[0].id,
      networkType: "standard",
      cidrBlock: "10.20.0.0/24",
    });
    expect(created.statusCode).toBe(202);
    const { id, jobId } = (created.json() as { data: { id: string; jobId: string } }).data;
    for (let i = 0; i < 100 && first.ctx.state.jobs[jobId].status !== "completed"; i++) {
      await new Promise((r) => setTimeout(r, 10));
      await first.app.inject({ method: "GET", url: "/__health" });
    }
    expect(first.ctx.state.jobs[jobId].status).toBe("completed");
    await first.app.close();

    expect(existsSync(file)).toBe(true);
    const second = await buildEmulator({ stateFile: file, jobDurationMs: 20, rateLimit: 0 });
    try {
      expect(second.bootstrap).toEqual(first.bootstrap);
      const read = await inject(second.app, key, "GET", `/v1/resource/networks/${id}`);
      expect(read.statusCode).toBe(200);
      expect(read.json()).toMatchObject({ data: { id, name: "persisted-net", cidrBlock: "10.20.0.0/24" } });
      const jobs = await inject(second.app, key, "POST", "/v1/resource/jobs", { jobIds: [jobId] });
      expect(jobs.json()).toMatchObject({ data: { jobs: [{ id: jobId, status: "completed" }] } });
    } finally {
      await second.app.close();
    }
  });

  it("saves changes made while running, without waiting for close", async () => {
    const file = join(dir, "running.json");
    const em = await startEmulator({ port: 0, stateFile: file, rateLimit: 0 });
    try {
      em.ctx.state.outbox.push({ at: 1, to: "probe@acme.example", kind: "invite", subject: "probe", secret: "x" });
      em.ctx.touch();
      let saved: State | null = null;
      for (let i = 0; i < 100 && !saved?.outbox.some((m) => m.to === "probe@acme.example"); i++) {
        await new Promise((r) => setTimeout(r, 20));
        saved = existsSync(file) ? loadStateFile(file) : null;
      }
      expect(saved?.outbox.map((m) => m.to)).toContain("probe@acme.example");
      expect(saved?.bootstrap?.entityId).toBe(em.bootstrap.entityId);
    } finally {
      await em.close();
    }
  });

  it("writes atomically: a new file is renamed over the old one, no temporary file is left", () => {
    const file = join(dir, "atomic.json");
    const state = { version: 1, marker: "old" } as unknown as State;
    writeStateFile(file, state);
    const oldLink = join(dir, "atomic-old.json");
    linkSync(file, oldLink);
    const oldInode = statSync(file).ino;

    writeStateFile(file, { ...state, marker: "new" } as unknown as State);
    // A rewrite in place would have changed the old inode's content; a rename leaves it whole.
    expect(JSON.parse(readFileSync(oldLink, "utf8"))).toEqual({ version: 1, marker: "old" });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ version: 1, marker: "new" });
    expect(statSync(file).ino).not.toBe(oldInode);
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });

  it("refuses a state file of another version", async () => {
    const file = join(dir, "future.json");
    writeFileSync(file, JSON.stringify({ version: 2 }));
    await expect(buildEmulator({ stateFile: file })).rejects.toThrow(/unsupported emulator state version 2/);
  });
});
