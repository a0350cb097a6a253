import { describe, expect, it } from "vitest";
import { testEmulator, type TestEmulator } from "../helpers/emulator";

/** The same requests against the emulator as it is and in its spec-fields-only mode. */
const full = await testEmulator();
const specOnly = await testEmulator({ specFieldsOnly: true });

type Rec = Record<string, unknown>;
const data = async <T = Rec>(reply: Promise<{ status: number; body: { data?: unknown } }>): Promise<T> => {
  const { status, body } = await reply;
  expect(status).toBeLessThan(300);
  return body.data as T;
};

async function vmOn(emu: TestEmulator): Promise<{ id: string; jobId: string }> {
  const [fra] = emu.bootstrap.fixtures.datacenters;
  const net = await data<{ id: string; jobId: string }>(
    emu.call("POST", "/resource/networks", {
      body: { name: "spec-net", datacenterId: fra.id, networkType: "custom", cidrBlock: "10.7.0.0/24" },
    }),
  );
  await emu.settle();
  const [job] = await data<{ id: string }[]>(
    emu.call("POST", "/resource/virtual-machines", {
      body: {
        name: "spec-vm",
        datacenterId: fra.id,
        imageId: 1,
        configurationId: 1,
        allocatePublicIp: true,
        networkInterfaces: [{ networkId: net.id, primary: true }],
        sshKeyIds: ["key-1"],
      },
    }),
  );
  await emu.settle();
  const jobs = await data<{ jobs: { resourceId: string }[] }>(
    emu.call("POST", "/resource/jobs", { body: { jobIds: [job.id] } }),
  );
  return { id: jobs.jobs[0].resourceId, jobId: job.id };
}

const [plainVm, specVm] = await Promise.all([vmOn(full), vmOn(specOnly)]);
const vmUndocumented = ["imageId", "networkInterfaces", "primaryPrivateIp", "primaryPublicIp", "sshKeyIds"];

describe("the emulator's spec-fields-only mode", () => {
  it("leaves out of the VM detail what the spec's list of its fields lacks", async () => {
    const plain = await data<{ virtualMachine: Rec }>(full.call("GET", `/resource/virtual-machines/${plainVm.id}`));
    const spec = await data<{ virtualMachine: Rec } & Rec>(
      specOnly.call("GET", `/resource/virtual-machines/${specVm.id}`),
    );
    expect(Object.keys(plain.virtualMachine)).toEqual(expect.arrayContaining(vmUndocumented));
    expect(Object.keys(spec.virtualMachine).sort()).toEqual(
      [
        "id",
        "name",
        "teamId",
        "cpu",
        "ram",
        "disk",
        "configurationId",
        "configuration",
        "configurationCategoryCode",
        "image",
        "datacenter",
        "createdAt",
        "updatedAt",
      ].sort(),
    );
    expect(Object.keys(spec).sort()).toEqual(["consoleEnabled", "networkHotplug", "status", "usage", "virtualMachine"]);
  });

  it("keeps the documented addresses on the VM list items", async () => {
    const [item] = await data<Rec[]>(specOnly.call("GET", "/resource/virtual-machines?search=spec-vm"));
    expect(Object.keys(item).sort()).toEqual(
      [
        "id",
        "name",
        "status",
        "createdAt",
        "updatedAt",
        "configuration",
        "datacenter",
        "imageName",
        "primaryPrivateIp",
        "primaryPublicIp",
      ].sort(),
    );
    expect(item.primaryPublicIp).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
  });

  it("answers API key records with the spec's fields (and status)", async () => {
    const plain = await data<Rec[]>(full.call("GET", "/auth/api-keys"));
    const spec = await data<Rec[]>(specOnly.call("GET", "/auth/api-keys"));
    expect(Object.keys(plain[0])).toEqual(expect.arrayContaining(["enabled", "roleId", "userId", "metadata"]));
    for (const key of spec) {
      expect(Object.keys(key).sort()).toEqual(["createdAt", "expiresAt", "id", "name", "start", "status"]);
    }
  });

  it("answers job records with the spec's fields", async () => {
    const body = { jobIds: [specVm.jobId] };
    const [plain] = (
      await data<{ jobs: Rec[] }>(full.call("POST", "/resource/jobs", { body: { jobIds: [plainVm.jobId] } }))
    ).jobs;
    const [spec] = (await data<{ jobs: Rec[] }>(specOnly.call("POST", "/resource/jobs", { body }))).jobs;
    expect(plain).toHaveProperty("operation");
    expect(Object.keys(spec).sort()).toEqual(
      [
        "completedAt",
        "createdAt",
        "error",
        "id",
        "progress",
        "resourceId",
        "resourceType",
        "status",
        "updatedAt",
      ].sort(),
    );
  });

  it("answers {} where the spec shows no answer (the 200 of an update), and still makes the change", async () => {
    const body = { name: "spec-vm-renamed" };
    expect(await data(full.call("PUT", `/resource/virtual-machines/${plainVm.id}`, { body }))).toHaveProperty("status");
    expect(await data(specOnly.call("PUT", `/resource/virtual-machines/${specVm.id}`, { body }))).toEqual({});
    expect(specOnly.ctx.state.vms[specVm.id].name).toBe("spec-vm-renamed");
  });

  it("keeps the documented GPU VM detail and inventory whole", async () => {
    const inventory = await data<Rec[]>(specOnly.call("GET", "/resource/gpu/inventory"));
    expect(Object.keys(inventory[0]).sort()).toEqual(["availability", "seriesCode", "seriesId", "seriesName"]);
    const check = await data<{ user: Rec; activeEntity: Rec }>(specOnly.call("GET", "/auth/check"));
    expect(Object.keys(check.user).sort()).toEqual(["email", "id", "name", "permissions", "roles"]);
  });
});
