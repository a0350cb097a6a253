import { Secret, TOTP } from "otpauth";
import { beforeAll, describe, expect, it } from "vitest";
import { hashSecret } from "../../emulator/http";
import { routes, type RouteName } from "../../provider/api";
import { ApiError, CloudClient } from "../../provider/client";
import { clientHarness, type ClientHarness } from "./helpers";

const totpNow = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret) }).generate();

let h: ClientHarness;
let admin: CloudClient;
const state = () => h.emulator.ctx.state;

beforeAll(async () => {
  h = await clientHarness();
  admin = h.client();
});

/** Routes answered with a success status at least once, as the client saw them. */
function exercised(): Set<string> {
  return new Set(h.exchanges.filter((e) => e.status >= 200 && e.status < 300).map((e) => e.route));
}

describe("CloudClient has one typed method per contract route", () => {
  it("names every method after its route", () => {
    const names = Object.keys(routes) as RouteName[];
    expect(names.length).toBeGreaterThan(90);
    for (const name of names) expect(typeof admin[name], name).toBe("function");
  });
});

describe("authentication and two-factor routes", () => {
  const freshEmail = "fresh.user@acme.example";
  const freshPassword = "Fresh-Passw0rd!2024";
  let freshId: string;
  let session: CloudClient;
  let totpSecret: string;
  let backupCodes: string[];

  it("signs in with TOTP through signIn + verifyTotp, and a trusted device skips the second factor", async () => {
    const member = h.emulator.bootstrap.users.member;
    const browser = h.client();
    const challenge = await browser
      .signIn({ body: { email: member.email, password: member.password } })
      .catch((e) => e);
    expect(challenge).toBeInstanceOf(ApiError);
    expect(challenge).toMatchObject({ status: 400, code: "TWO_FACTOR_REQUIRED" });
    expect(challenge.data).toEqual({ userId: member.id, totpConfigured: true, email: member.email });

    const signedIn = await browser.verifyTotp({ body: { code: totpNow(member.totpSecret), trustDevice: true } });
    expect(signedIn.user.id).toBe(member.id);
    expect(state().sessions[hashSecret(signedIn.token)]?.userId).toBe(member.id);

    const direct = await browser.signIn({ body: { email: member.email, password: member.password } });
    expect(direct.user.id).toBe(member.id);
    expect(state().sessions[hashSecret(direct.token)]).toBeDefined();
  });

  it("registers a user who signs in with the email code (sendOtp + verifyOtp)", async () => {
    const user = await admin.createUser({
      body: {
        email: freshEmail,
        action: "register",
        password: freshPassword,
        firstName: "Fresh",
        roleNames: ["tenant-admin"],
      },
    });
    freshId = user.id;
    expect(state().users[freshId]).toMatchObject({ email: freshEmail, inviteStatus: "activated", totpSecret: null });

    const browser = h.client();
    const challenge = await browser.signIn({ body: { email: freshEmail, password: freshPassword } }).catch((e) => e);
    expect(challenge.data).toMatchObject({ totpConfigured: false });
    await browser.sendOtp();
    const mail = state()
      .outbox.filter((m) => m.to === freshEmail && m.kind === "two-factor-otp")
      .at(-1)!;
    const signedIn = await browser.verifyOtp({ body: { code: mail.secret } });
    expect(state().sessions[hashSecret(signedIn.token)]?.userId).toBe(freshId);
    session = h.client({ auth: { sessionToken: signedIn.token } });
  });

  it("enables TOTP, regenerates backup codes and reports the status", async () => {
    expect(await session.twoFactorStatus()).toMatchObject({ twoFactorEnabled: true, totpConfigured: false });
    const enabled = await session.enableTwoFactor({ body: { password: freshPassword } });
    totpSecret = enabled.secret;
    expect(state().users[freshId].totpSecret).toBe(enabled.secret);
    const regenerated = await session.generateBackupCodes({ body: { password: freshPassword } });
    backupCodes = regenerated.backupCodes;
    expect(state().users[freshId].backupCodeHashes).toEqual(backupCodes.map((c) => hashSecret(c)));
    expect(await session.twoFactorStatus()).toMatchObject({ totpConfigured: true, method: "totp" });
  });

  it("signs in with a backup code, once", async () => {
    const browser = h.client();
    await browser.signIn({ body: { email: freshEmail, password: freshPassword } }).catch(() => undefined);
    const signedIn = await browser.verifyBackupCode({ body: { code: backupCodes[0] } });
    expect(state().sessions[hashSecret(signedIn.token)]?.userId).toBe(freshId);
    expect(state().users[freshId].backupCodeHashes).toHaveLength(backupCodes.length - 1);
  });

  it("manages API keys of the signed-in user", async () => {
    expect((await session.apiKeyRoleOptions()).map((r) => r.id)).toContain("tenant-user");
    expect((await session.apiKeyExpirationOptions()).map((o) => o.days)).toContain(90);

    const created = await session.createApiKey({ body: { name: "ci", roleId: "tenant-user", expiresInDays: 30 } });
    expect(created.key).toMatch(/^svc_.{28}$/);
    expect(state().apiKeys[created.id].secretHash).toBe(hashSecret(created.key));
    const keyClient = h.client({ auth: { apiKey: created.key } });
    expect((await keyClient.check()).user.id).toBe(freshId);

    const listed = await session.listApiKeys({ query: { search: "ci" } });
    expect(listed.data.map((k) => k.id)).toContain(created.id);
    expect(listed.meta.total).toBeGreaterThanOrEqual(1);

    await session.setApiKeyStatus({ params: { keyId: created.id }, body: { enabled: false } });
    expect(state().apiKeys[created.id].enabled).toBe(false);
    await expect(keyClient.check()).rejects.toMatchObject({ status: 401, code: "API_KEY_INVALID" });
    await session.setApiKeyStatus({ params: { keyId: created.id }, body: { enabled: true } });

    state().users[freshId].platformAdmin = true;
    await session.setApiKeyRateLimit({
      params: { keyId: created.id },
      body: { requestsPerWindow: 500, windowSeconds: 60 },
    });
    expect(state().apiKeys[created.id].rateLimit).toEqual({ requestsPerWindow: 500, windowSeconds: 60 });

    const rotated = await session.rotateApiKey({ params: { keyId: created.id } });
    expect(rotated.key).not.toBe(created.key);
    await expect(keyClient.check()).rejects.toMatchObject({ code: "API_KEY_INVALID" });
    expect((await h.client({ auth: { apiKey: rotated.key } }).check()).user.id).toBe(freshId);

    await session.deleteOwnApiKey({ params: { keyId: created.id } });
    expect(state().apiKeys[created.id]).toBeUndefined();

    const another = await session.createApiKey({ body: { name: "to-revoke" } });
    await admin.deleteApiKey({ params: { keyId: another.id } });
    expect(state().apiKeys[another.id]).toBeUndefined();
  });

  it("signs in by itself with email + password + TOTP secret", async () => {
    const auto = h.client({ auth: { email: freshEmail, password: freshPassword, totpSecret } });
    expect((await auto.check()).user.id).toBe(freshId);
    expect(auto.auth.signIns).toBe(1);
  });

  it("changes the password (other sessions end), disables 2FA, signs out", async () => {
    const before = Object.values(state().sessions).filter((s) => s.userId === freshId).length;
    expect(before).toBeGreaterThan(1);
    const newPassword = "Changed-Passw0rd!2025";
    await session.changePassword({
      params: { id: freshId },
      body: { oldPassword: freshPassword, password: newPassword },
    });
    expect(Object.values(state().sessions).filter((s) => s.userId === freshId)).toHaveLength(1);

    const disabled = await session.disableTwoFactor({ body: { password: newPassword } });
    expect(disabled.totpConfigured).toBe(false);
    expect(state().users[freshId].totpSecret).toBeNull();

    await session.signOut();
    expect(Object.values(state().sessions).filter((s) => s.userId === freshId)).toHaveLength(0);
    await expect(session.check()).rejects.toMatchObject({ status: 401, code: "SESSION_EXPIRED" });
  });

  it("requests and completes a password reset", async () => {
    const anonymous = h.client();
    await anonymous.forgetPassword({ body: { email: freshEmail } });
    await anonymous.usersForgotPassword({ body: { email: "nobody@nowhere.example" } });
    const mail = state()
      .outbox.filter((m) => m.to === freshEmail && m.kind === "password-reset")
      .at(-1)!;
    const resetPassword = "Reset-Passw0rd!2026";
    await anonymous.resetPassword({ body: { token: mail.secret, password: resetPassword } });
    const challenge = await anonymous.signIn({ body: { email: freshEmail, password: resetPassword } }).catch((e) => e);
    expect(challenge).toMatchObject({ code: "TWO_FACTOR_REQUIRED" });
  });
});

describe("virtual machines and GPU VMs", () => {
  it("creates, reads, updates, powers, resizes, rescues and deletes VMs", async () => {
    const dc = h.emulator.bootstrap.fixtures.datacenters[0].id;
    const jobs = await admin.createVm({
      body: {
        name: "web",
        datacenterId: dc,
        imageId: 1,
        configurationId: 1,
        numberOfInstances: 2,
        allocatePublicIp: true,
      },
    });
    expect(jobs).toHaveLength(2);
    const done = await admin.jobs.waitAll(jobs.map((j) => j.id));
    const [id, second] = done.map((j) => j.resourceId!);
    expect(state().vms[id].status).toBe("Running");

    const detail = await admin.getVm({ params: { id } });
    expect(detail.virtualMachine).toMatchObject({ id, configurationId: 1 });
    const listed = await admin.listVms({ query: { search: "web", sort: "name:asc" } });
    expect(listed.meta.total).toBe(2);
    expect(listed.data.map((v) => v.id).sort()).toEqual([id, second].sort());

    await admin.updateVm({ params: { id }, body: { name: "web-main" } });
    expect(state().vms[id].name).toBe("web-main");
    await admin.stopVm({ params: { id } });
    expect(state().vms[id].status).toBe("Stopped");
    await admin.startVm({ params: { id } });
    expect(state().vms[id].status).toBe("Running");
    await admin.resetVm({ params: { id } });
    expect(state().vms[id].status).toBe("Running");

    const resize = await admin.resizeVm({ params: { id }, body: { configurationId: 2 } });
    await admin.jobs.wait(resize.jobId);
    expect(state().vms[id].configurationId).toBe(2);

    expect(await admin.getRescue({ params: { id } })).toEqual({ rescued: false, image: null });
    const rescueImage = h.emulator.bootstrap.fixtures.rescueImages[0];
    const rescue = await admin.rescueVm({
      params: { id },
      body: { sourceType: "catalog", sourceImageId: rescueImage.id },
    });
    await admin.jobs.wait(rescue.jobId);
    expect((await admin.getRescue({ params: { id } })).image?.id).toBe(rescueImage.id);
    const unrescue = await admin.unrescueVm({ params: { id } });
    await admin.jobs.wait(unrescue.jobId);
    expect(state().vms[id].rescueImageId).toBeNull();

    expect((await admin.getVmSshKey({ params: { id } })).privateKey).toBe(state().vms[id].privateKey);

    const deletions = await Promise.all([id, second].map((vm) => admin.deleteVm({ params: { id: vm } })));
    await admin.jobs.waitAll(deletions.map((d) => d.jobId));
    expect(state().vms[id]).toBeUndefined();
    expect(state().vms[second]).toBeUndefined();
  });

  it("creates, reads, updates, powers and deletes GPU VMs", async () => {
    const { datacenters, gpuSeries } = h.emulator.bootstrap.fixtures;
    const a100 = gpuSeries.find((s) => s.code === "a100")!;
    const inventory = await admin.gpuInventory({ query: { code: "a100", count: 1 } });
    expect(inventory.map((e) => e.seriesId)).toEqual([a100.id]);

    const created = await admin.createGpuVm({
      body: { name: "trainer", datacenterId: datacenters[0].id, seriesId: a100.id, gpuCount: 1 },
    });
    await admin.jobs.wait(created.jobId);
    const id = created.id;
    expect(state().gpuVms[id].status).toBe("Running");
    expect((await admin.getGpuVm({ params: { id } })).series.id).toBe(a100.id);
    expect((await admin.listGpuVms({ query: { search: "trainer" } })).data.map((g) => g.id)).toEqual([id]);
    await admin.updateGpuVm({ params: { id }, body: { name: "trainer-2" } });
    expect(state().gpuVms[id].name).toBe("trainer-2");
    await admin.stopGpuVm({ params: { id } });
    expect(state().gpuVms[id].status).toBe("Stopped");
    await admin.startGpuVm({ params: { id } });
    await admin.resetGpuVm({ params: { id } });
    expect(state().gpuVms[id].status).toBe("Running");
    expect((await admin.getGpuSshKey({ params: { id } })).privateKey).toBe(state().gpuVms[id].privateKey);
    const deletion = await admin.deleteGpuVm({ params: { id } });
    await admin.jobs.wait(deletion.jobId);
    expect(state().gpuVms[id]).toBeUndefined();
  });
});

describe("networks and volumes", () => {
  it("creates and manages networks, volumes and attachments", async () => {
    const dc = h.emulator.bootstrap.fixtures.datacenters[0].id;
    const cidr = await admin.cidrDetails({ query: { cidr: "10.20.0.0/24" } });
    expect(cidr).toMatchObject({ valid: true, usableAddresses: 254 });

    const net = await admin.createNetwork({
      body: { name: "backend", datacenterId: dc, networkType: "standard", cidrBlock: "10.20.0.0/24" },
    });
    await admin.jobs.wait(net.jobId);
    expect((await admin.getNetwork({ params: { id: net.id } })).status).toBe("Active");
    expect((await admin.listNetworks({ query: { search: "backend" } })).data.map((n) => n.id)).toEqual([net.id]);
    await admin.updateNetwork({ params: { id: net.id }, body: { description: "app tier" } });
    expect(state().networks[net.id].description).toBe("app tier");

    const [vmJob] = await admin.createVm({
      body: {
        name: "db",
        datacenterId: dc,
        imageId: 2,
        configurationId: 1,
        networkInterfaces: [{ networkId: net.id, primary: true }],
      },
    });
    const vmId = (await admin.jobs.wait(vmJob.id)).resourceId!;
    expect((await admin.networkVms({ params: { id: net.id } })).map((v) => v.id)).toEqual([vmId]);

    const sizes = await admin.volumeSizes({ params: { id: dc } });
    const ssd = sizes.volumeTypes.find((t) => t.name === "ssd")!;
    const [size10, size20] = ssd.availableSizes;
    const volumeBody = (name: string) => ({
      name,
      datacenterId: dc,
      volumeTypeId: ssd.id,
      volumeSizeId: size10.id,
      sizeGb: size10.sizeGb,
    });
    const [vol, vol2] = await Promise.all([
      admin.createVolume({ body: volumeBody("data") }),
      admin.createVolume({ body: volumeBody("scratch") }),
    ]);
    await admin.jobs.waitAll([vol.jobId, vol2.jobId]);
    expect((await admin.getVolume({ params: { id: vol.id } })).status).toBe("Available");
    expect((await admin.listVolumes({ query: { "filter[datacenterId]": dc } })).meta.total).toBe(2);
    expect((await admin.attachableVms({ params: { id: vol.id } })).map((v) => v.id)).toContain(vmId);

    await admin.jobs.wait(
      (await admin.attachVolume({ params: { id: vol.id }, body: { virtualMachineId: vmId } })).jobId,
    );
    expect(state().volumes[vol.id]).toMatchObject({ status: "In-use", virtualMachineId: vmId });
    await admin.jobs.wait((await admin.detachVolume({ params: { id: vol.id } })).jobId);
    expect(state().volumes[vol.id]).toMatchObject({ status: "Available", virtualMachineId: null });
    await admin.jobs.wait(
      (await admin.resizeVolume({ params: { id: vol.id }, body: { newSizeGb: size20.sizeGb } })).jobId,
    );
    expect(state().volumes[vol.id].sizeGb).toBe(size20.sizeGb);

    await admin.jobs.wait(
      (await admin.attachVolume({ params: { id: vol2.id }, body: { virtualMachineId: vmId } })).jobId,
    );
    const detached = await admin.bulkDetachVolumes({ body: { ids: [vol2.id] } });
    expect(detached).toMatchObject([{ id: vol2.id, success: true }]);
    await admin.jobs.wait(detached[0].jobId!);
    expect(state().volumes[vol2.id].virtualMachineId).toBeNull();
    const bulkDeleted = await admin.bulkDeleteVolumes({ body: { ids: [vol2.id] } });
    await admin.jobs.wait(bulkDeleted[0].jobId!);
    expect(state().volumes[vol2.id]).toBeUndefined();
    await admin.jobs.wait((await admin.deleteVolume({ params: { id: vol.id } })).jobId);
    expect(state().volumes[vol.id]).toBeUndefined();

    await admin.jobs.wait((await admin.deleteVm({ params: { id: vmId } })).jobId);
    expect(await admin.deleteNetwork({ params: { id: net.id } })).toEqual({ id: net.id, deleted: true });
    expect(state().networks[net.id]).toBeUndefined();

    const spare = await admin.createNetwork({ body: { name: "spare", datacenterId: dc, networkType: "custom" } });
    await admin.jobs.wait(spare.jobId);
    expect(await admin.bulkDeleteNetworks({ body: { ids: [spare.id] } })).toMatchObject([
      { id: spare.id, success: true },
    ]);
    expect(state().networks[spare.id]).toBeUndefined();
  });
});

describe("users and resource groups", () => {
  it("manages users, roles and invitations", async () => {
    expect((await admin.me()).id).toBe(h.emulator.bootstrap.users.admin.id);
    const invited = await admin.createUser({ body: { email: "invitee@acme.example", firstName: "Ivy" } });
    expect(state().users[invited.id].inviteStatus).toBe("pending");
    expect((await admin.getUser({ params: { id: invited.id } })).email).toBe("invitee@acme.example");
    expect((await admin.listUsers({ query: { search: "invitee" } })).data.map((u) => u.id)).toEqual([invited.id]);
    await admin.updateUser({ params: { id: invited.id }, body: { lastName: "Invited" } });
    expect(state().users[invited.id].lastName).toBe("Invited");
    await admin.resendInvite({ params: { id: invited.id } });
    await admin.bulkResendInvite({ body: { ids: [invited.id] } });
    expect(state().outbox.filter((m) => m.to === "invitee@acme.example" && m.kind === "invite")).toHaveLength(3);

    await admin.addUserRole({ params: { userId: invited.id }, body: { roleName: "vm-operator" } });
    expect(state().users[invited.id].roles).toContain("vm-operator");
    expect((await admin.userRoles({ params: { userId: invited.id } })).map((r) => r.name)).toContain("vm-operator");
    await admin.removeUserRole({ params: { userId: invited.id, roleName: "vm-operator" } });
    expect(state().users[invited.id].roles).not.toContain("vm-operator");
    expect(await admin.bulkAssignRoles({ body: { userIds: [invited.id], roleNames: ["vm-operator"] } })).toEqual({
      affected: 1,
    });
    expect(state().users[invited.id].roles).toContain("vm-operator");

    const other = await admin.createUser({ body: { email: "other@acme.example" } });
    expect(await admin.bulkDeleteUsers({ body: { ids: [other.id] } })).toMatchObject([{ id: other.id, success: true }]);
    expect(state().users[other.id].deletedAt).not.toBeNull();
    await admin.deleteUser({ params: { id: invited.id } });
    expect(state().users[invited.id].deletedAt).not.toBeNull();
  });

  it("manages resource groups and their members", async () => {
    const memberId = h.emulator.bootstrap.users.member.id;
    const { teamId } = await admin.createTeam({ body: { name: "platform" } });
    expect(state().teams[String(teamId)].name).toBe("platform");
    const { teamId: childId } = await admin.createTeam({ body: { name: "platform-oncall", parentTeamId: teamId } });
    await admin.updateTeam({ params: { id: childId }, body: { name: "platform-sre" } });
    expect(state().teams[String(childId)]).toMatchObject({ name: "platform-sre", parentTeamId: teamId });
    const teams = await admin.listTeams({ query: { search: "platform" } });
    expect(teams.meta.total).toBe(2);
    expect(typeof teams.meta.unassignedUsers).toBe("number");

    await admin.addTeamMember({ params: { id: teamId }, body: { userId: memberId } });
    expect(state().teams[String(teamId)].memberIds).toContain(memberId);
    expect((await admin.getTeam({ params: { id: teamId } })).members.map((m) => m.id)).toEqual([memberId]);
    expect((await admin.userTeams({ params: { id: memberId } })).data.map((t) => t.id)).toContain(teamId);
    await admin.removeTeamMember({ params: { id: teamId, userId: memberId } });
    expect(state().teams[String(teamId)].memberIds).not.toContain(memberId);
    await admin.bulkAddTeamMembers({ body: { userIds: [memberId], teamIds: [teamId, childId] } });
    expect(state().teams[String(childId)].memberIds).toContain(memberId);
    await admin.bulkAssignTeams({ body: { userIds: [h.emulator.bootstrap.users.admin.id], teamIds: [teamId] } });
    expect(state().teams[String(teamId)].memberIds).toContain(h.emulator.bootstrap.users.admin.id);

    await admin.deleteTeam({ params: { id: childId } });
    expect(state().teams[String(childId)]).toBeUndefined();
    expect(await admin.bulkDeleteTeams({ body: { ids: [teamId] } })).toMatchObject([{ id: teamId, success: true }]);
    expect(state().teams[String(teamId)]).toBeUndefined();
  });
});

describe("jobs and metrics", () => {
  it("queries jobs in both forms", async () => {
    const dc = h.emulator.bootstrap.fixtures.datacenters[1].id;
    const net = await admin.createNetwork({ body: { name: "jobs-net", datacenterId: dc, networkType: "standard" } });
    const queried = await admin.queryJobs({ body: { jobIds: [net.jobId] } });
    expect(queried.jobs.map((j) => j.id)).toEqual([net.jobId]);
    await admin.jobs.wait(net.jobId);
    const status = await admin.jobStatus({ query: { jobIds: [net.jobId] } });
    expect(status).toMatchObject({ isCompleted: true, jobs: [{ id: net.jobId, status: "completed" }] });
    expect(state().jobs[net.jobId].status).toBe("completed");
  });

  it("reads the metrics", async () => {
    const entityId = h.emulator.bootstrap.entityId;
    const metrics = await admin.vmMetrics({ query: { includeVmNames: true } });
    expect(metrics.summary.totalVms).toBe(Object.values(state().vms).filter((v) => v.entityId === entityId).length);
    const usage = await admin.entityUsage({ params: { id: entityId } });
    expect(usage.entityId).toBe(entityId);
    expect(await admin.availableMonths({ params: { id: entityId } })).toHaveLength(24);
  });
});

describe("client conveniences", () => {
  it("iterates over every page with listAll", async () => {
    const created = await Promise.all(
      Array.from({ length: 7 }, (_, i) => admin.createTeam({ body: { name: `paged-${i}` } })),
    );
    const seen: number[] = [];
    for await (const team of admin.listAll("listTeams", { search: "paged-", limit: 3 })) seen.push(team.id);
    expect(seen.sort((a, b) => a - b)).toEqual(created.map((t) => t.teamId).sort((a, b) => a - b));
    const pages = h.exchanges.filter((e) => e.route === "listTeams" && e.path.includes("paged-"));
    expect(pages).toHaveLength(3);
    const memberId = h.emulator.bootstrap.users.member.id;
    await admin.bulkAddTeamMembers({ body: { userIds: [memberId], teamIds: created.map((t) => t.teamId) } });
    const teamsOfMember: number[] = [];
    for await (const team of admin.listAll("userTeams", { limit: 2 }, { params: { id: memberId } })) {
      teamsOfMember.push(team.id);
    }
    expect(teamsOfMember.sort((a, b) => a - b)).toEqual(
      Object.values(state().teams)
        .filter((t) => t.memberIds.includes(memberId))
        .map((t) => t.id)
        .sort((a, b) => a - b),
    );
    expect(teamsOfMember.length).toBeGreaterThanOrEqual(7);
  });

  it("sends the configured entityId on every route that accepts it", async () => {
    const child = h.emulator.bootstrap.childEntityId;
    const scoped = h.client({ entityId: child });
    const dc = h.emulator.bootstrap.fixtures.datacenters[0].id;
    const net = await scoped.createNetwork({ body: { name: "child-net", datacenterId: dc, networkType: "custom" } });
    expect(state().networks[net.id].entityId).toBe(child);
    await scoped.jobs.wait(net.jobId);
    expect((await scoped.check()).activeEntity.id).toBe(child);
    // An explicit entityId wins; `me` takes no query at all and gets none.
    expect((await scoped.check({ query: { entityId: h.emulator.bootstrap.entityId } })).activeEntity.id).toBe(
      h.emulator.bootstrap.entityId,
    );
    expect((await scoped.me()).id).toBe(h.emulator.bootstrap.users.admin.id);
    const paths = h.exchanges.filter((e) => e.route === "createNetwork" || e.route === "queryJobs").map((e) => e.path);
    expect(paths.some((p) => p.includes(`entityId=${child}`))).toBe(true);
  });
});

describe("coverage", () => {
  it("exercised every route of the contract successfully through its typed method", () => {
    const missing = (Object.keys(routes) as RouteName[]).filter((name) => !exercised().has(name));
    expect(missing).toEqual([]);
  });
});
