import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { closeClients, configuration, handlerContext, kinds, type Props } from "../../provider/resources";
import { stackOnEmulator } from "../resources/helpers";

/**
 * The kinds whose writes are gathered into bulk routes (issue 27), through their handlers with an explicit context:
 * ResourceGroupMember creates into `POST /teams/bulk/add-members`, UserRole creates into `POST /users/bulk/assign-roles`,
 * VolumeAttachment deletes into `POST /resource/volumes/bulk/detach`. Each resource keeps its own outcome: a refused
 * pair fails only its resource, with its own message; a lone create is the single request it always was.
 */
const stack = await stackOnEmulator({ jobDurationMs: 50 });
afterAll(closeClients);
const config: Record<string, string> = {
  "cloudinfra:baseUrl": stack.emulator.baseUrl,
  "cloudinfra:apiKey": stack.emulator.bootstrap.users.admin.apiKey,
  "cloudinfra:pollIntervalMs": "20",
};
const ctx = handlerContext({ configuration: configuration((key) => config[key]), log: { info() {}, warn() {} } });
const state = () => stack.emulator.ctx.state;
const routesSince = async (mark: number) => (await stack.requests(mark)).map((r) => r.route);
const membersOf = (teamId: number) => [...state().teams[String(teamId)]!.memberIds].sort();

const users = (prefix: string, count: number) =>
  Promise.all(
    Array.from({ length: count }, (_, i) => stack.api.createUser({ body: { email: `${prefix}-${i}@acme.example` } })),
  );
const groups = (prefix: string, count: number) =>
  Promise.all(Array.from({ length: count }, (_, i) => stack.api.createTeam({ body: { name: `${prefix}-${i}` } })));
const member = (teamId: number, userId: string) =>
  kinds.ResourceGroupMember.create(ctx, { teamId, userId } as unknown as Props);

describe("ResourceGroupMember and UserRole creates gathered into bulk requests", () => {
  it("5 users × 4 groups: one add-members request, each membership recorded under its own id", async () => {
    const us = await users("k-product", 5);
    const gs = await groups("k-product", 4);
    const mark = stack.mark();
    const created = await Promise.all(us.flatMap((u) => gs.map((g) => member(g.teamId, u.id))));
    expect(await routesSince(mark)).toEqual(["bulkAddTeamMembers"]);
    expect(created.map((c) => c.id)).toEqual(us.flatMap((u) => gs.map((g) => `${g.teamId}:${u.id}`)));
    expect(created[0]!.outs).toMatchObject({ teamId: gs[0]!.teamId, userId: us[0]!.id });
    for (const g of gs) expect(membersOf(g.teamId)).toEqual(us.map((u) => u.id).sort());
  });

  it("a user that does not exist fails only its own membership, with its own message; the others are added", async () => {
    const us = await users("k-refused", 5);
    const [g] = await groups("k-refused", 1);
    const ghost = randomUUID();
    const results = await Promise.allSettled([...us.map((u) => u.id), ghost].map((id) => member(g!.teamId, id)));
    expect(results.slice(0, 5).every((r) => r.status === "fulfilled")).toBe(true);
    const failed = results[5]!;
    expect(failed.status).toBe("rejected");
    expect(String((failed as PromiseRejectedResult).reason)).toContain(
      `Adding user ${ghost} to resource group ${g!.teamId} failed`,
    );
    expect(membersOf(g!.teamId)).toEqual(us.map((u) => u.id).sort());
  });

  it("a lone membership is the single request it always was", async () => {
    const [u] = await users("k-lone", 1);
    const [g] = await groups("k-lone", 1);
    const mark = stack.mark();
    await member(g!.teamId, u!.id);
    expect(await routesSince(mark)).toEqual(["addTeamMember"]);
    expect(membersOf(g!.teamId)).toEqual([u!.id]);
  });

  it("a bulk request whose answer is lost: each membership goes the single way and takes over what it added", async () => {
    const us = await users("k-lost", 3);
    const gs = await groups("k-lost", 2);
    await stack.faults("bulkAddTeamMembers,status=503,after,count=10");
    try {
      const mark = stack.mark();
      const created = await Promise.all(us.flatMap((u) => gs.map((g) => member(g.teamId, u.id))));
      expect(created).toHaveLength(6);
      const routes = await routesSince(mark);
      expect(routes.filter((r) => r === "addTeamMember")).toHaveLength(6);
      for (const g of gs) expect(membersOf(g.teamId)).toEqual(us.map((u) => u.id).sort());
    } finally {
      await stack.faults("");
    }
  });

  it("6 users × 2 roles: one assign-roles request; each grant its own resource", async () => {
    const us = await users("k-roles", 6);
    const mark = stack.mark();
    const created = await Promise.all(
      us.flatMap((u) =>
        ["vm-operator", "tenant-admin"].map((roleName) =>
          kinds.UserRole.create(ctx, { userId: u.id, roleName } as unknown as Props),
        ),
      ),
    );
    expect(await routesSince(mark)).toEqual(["bulkAssignRoles"]);
    expect(created.map((c) => c.id)).toEqual(us.flatMap((u) => [`${u.id}:vm-operator`, `${u.id}:tenant-admin`]));
    for (const u of us) {
      expect([...state().users[u.id]!.roles].sort()).toEqual(["tenant-admin", "tenant-user", "vm-operator"]);
    }
  });
});

describe("VolumeAttachment deletes gathered into one bulk detach", () => {
  it("three attachments removed together: one bulk detach, no single detach; a failed detach job is sent again alone", async () => {
    const [fra] = stack.datacenters;
    const { bootstrap } = stack.emulator;
    const vm = await kinds.VirtualMachine.create(
      ctx,
      (
        await kinds.VirtualMachine.check(
          {},
          {
            name: "k-detach-vm",
            datacenterId: fra!.id,
            imageId: bootstrap.fixtures.images[0]!.id,
            configurationId: bootstrap.fixtures.configurations[2]!.id,
          },
          ctx,
        )
      ).inputs,
    );
    const volumeIds = await Promise.all(
      [0, 1, 2].map(async (i) => {
        const inputs = await kinds.Volume.check(
          {},
          { name: `k-detach-${i}`, datacenterId: fra!.id, volumeTypeId: 1, sizeGb: 10 },
          ctx,
        );
        return (await kinds.Volume.create(ctx, inputs.inputs)).id;
      }),
    );
    const attachments = await Promise.all(
      volumeIds.map((volumeId) =>
        kinds.VolumeAttachment.create(ctx, { volumeId, virtualMachineId: vm.id } as unknown as Props),
      ),
    );
    for (const id of volumeIds) expect(state().volumes[id]!.status).toBe("In-use");

    let mark = stack.mark();
    await Promise.all(attachments.map((a) => kinds.VolumeAttachment.delete(ctx, a.id, a.outs)));
    let writes = (await stack.requests(mark)).filter((r) => r.method !== "GET" && r.route !== "queryJobs");
    expect(writes.map((r) => r.route)).toEqual(["bulkDetachVolumes"]);
    for (const id of volumeIds)
      expect(state().volumes[id]!).toMatchObject({ status: "Available", virtualMachineId: null });

    // Attached again; this time the first detach job fails: that volume's detach is sent once more, singly.
    const again = await Promise.all(
      volumeIds.map((volumeId) =>
        kinds.VolumeAttachment.create(ctx, { volumeId, virtualMachineId: vm.id } as unknown as Props),
      ),
    );
    await stack.faults("job=volume.detach,fail=Provider detach failed,count=1");
    try {
      mark = stack.mark();
      await Promise.all(again.map((a) => kinds.VolumeAttachment.delete(ctx, a.id, a.outs)));
      writes = (await stack.requests(mark)).filter((r) => r.method !== "GET" && r.route !== "queryJobs");
      expect(writes.map((r) => r.route)).toEqual(["bulkDetachVolumes", "detachVolume"]);
    } finally {
      await stack.faults("");
    }
    for (const id of volumeIds)
      expect(state().volumes[id]!).toMatchObject({ status: "Available", virtualMachineId: null });
  });
});
