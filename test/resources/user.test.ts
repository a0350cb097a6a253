import * as fs from "node:fs";
import * as pulumi from "@pulumi/pulumi";
import { describe, expect, it } from "vitest";
import { ResourceGroup, User, type UserArgs } from "../../sdk";
import { destroy, refresh, RunError, up } from "../../tools/harness";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator();
const childEntityId = stack.emulator.bootstrap.childEntityId;

const getUser = (id: string, entityId?: string) =>
  stack.api.getUser({ params: { id }, query: entityId ? { entityId } : undefined });
const usersNamed = async (prefix: string, entityId?: string) =>
  (await stack.api.listUsers({ query: { search: prefix, limit: 100, ...(entityId ? { entityId } : {}) } })).data.filter(
    (u) => u.email.startsWith(prefix),
  );
/** Valid credentials answer TWO_FACTOR_REQUIRED (2FA is mandatory); a wrong password answers 401. */
const signInStatus = (email: string, password: string) =>
  stack.api.signIn({ body: { email, password } }).then(
    () => 200,
    (e: { status: number }) => e.status,
  );
const PASSWORD = "Correct-Horse-42!";

function program(args: UserArgs) {
  return () => {
    const user = new User("user", args);
    return { id: user.id, name: user.name, inviteStatus: user.inviteStatus };
  };
}

// The lifecycle contract (create, no-op, in place, replace, drift, deleted behind the stack, bad input, a retried
// create, adopt, destroy) is the lifecycle table's (test/lifecycle/table.ts); here, what is particular to users.
describe("User", () => {
  it("5. registers with a secret password; action and entity changes replace the user, deleting it first", async () => {
    const options = stack.options();
    const email = "rp-grace@example.com";
    const invited = await up(program({ email }), options);
    const invitedId = invited.outputs.id as string;

    // invite → register: replaced delete-first (same email), the old user is gone, the new one can sign in
    const registered = await up(program({ email, action: "register", password: pulumi.secret(PASSWORD) }), options);
    const step = registered.step("user");
    expect(step.op).toBe("replace");
    expect(step.diff?.deleteBeforeReplace).toBe(true);
    const registeredId = registered.outputs.id as string;
    expect(registeredId).not.toBe(invitedId);
    await expect(getUser(invitedId)).rejects.toMatchObject({ status: 404 });
    expect((await getUser(registeredId)).inviteStatus).toBe("activated");
    expect(await signInStatus(email, PASSWORD)).toBe(400);
    expect(await signInStatus(email, "Wrong-Horse-42!")).toBe(401);

    // the password never appears in clear in the state, the outputs or the host's log
    const state = fs.readFileSync(options.stateFile, "utf8");
    expect(state).toContain(email);
    expect(state).not.toContain(PASSWORD);
    expect(step.secretOutputs).toContain("password");
    expect(registered.hostLog).not.toContain(PASSWORD);

    // a changed password alone changes nothing (users change their own password)
    const plain = { email, action: "register" as const, password: "Another-Pass-77#" };
    expect((await up(program(plain), options)).step("user").op).toBe("same");
    // given in clear, the SDK still stores it as a secret; the output stays the password registered
    expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain("Another-Pass-77#");
    expect(await signInStatus(email, PASSWORD)).toBe(400);

    // entityId: registered in the child entity, replacing the user again
    const moved = await up(program({ ...plain, entityId: childEntityId }), options);
    expect(moved.step("user").op).toBe("replace");
    const movedId = moved.outputs.id as string;
    expect((await getUser(movedId, childEntityId)).entityId).toBe(childEntityId);
    expect(moved.step("user").secretOutputs).toContain("password");
    expect(fs.readFileSync(options.stateFile, "utf8")).not.toContain("Another-Pass-77#");
    await expect(getUser(registeredId)).rejects.toMatchObject({ status: 404 });
    expect((await up(program({ ...plain, entityId: childEntityId }), options)).step("user").op).toBe("same");

    await destroy(options);
    expect(await usersNamed("rp-")).toEqual([]);
    expect(await usersNamed("rp-", childEntityId)).toEqual([]);
  });

  it("without roleNames, a role granted elsewhere (a UserRole of another stack) is not drift; with them, it is", async () => {
    const options = stack.options();
    const unmanaged = program({ email: "ur-free@example.com" });
    const created = await up(unmanaged, options);
    const id = created.outputs.id as string;
    expect(created.step("user").outputs?.roles).toBeUndefined();
    await stack.api.addUserRole({ params: { userId: id }, body: { roleName: "vm-operator" } });
    expect((await getUser(id)).roles).toContain("vm-operator"); // the API holds the grant, and bumped updatedAt
    expect((await refresh(options)).step("user").refresh).toBe("same");
    expect((await up(unmanaged, options)).step("user").op).toBe("same");
    expect((await getUser(id)).roles).toContain("vm-operator"); // left alone

    // Managed: the same grant made behind the stack is drift, and up revokes it.
    const managed = program({ email: "ur-free@example.com", roleNames: ["tenant-user"] });
    expect((await up(managed, options)).step("user").op).toBe("update");
    expect([...(await getUser(id)).roles].sort()).toEqual(["tenant-user"]);
    await stack.api.addUserRole({ params: { userId: id }, body: { roleName: "vm-operator" } });
    expect((await refresh(options)).step("user").refresh).toBe("changed");
    await up(managed, options);
    expect([...(await getUser(id)).roles].sort()).toEqual(["tenant-user"]);
    await destroy(options);
  });

  it("joins a resource group of the same program by its Pulumi id, and leaves before the group is deleted", async () => {
    const options = stack.options();
    const together = () => {
      const group = new ResourceGroup("group", { name: "tg-group" });
      const user = new User("user", { email: "tg-user@example.com", teamIds: [group.id] });
      return { groupId: group.id, userId: user.id };
    };
    const created = await up(together, options);
    const groupId = Number(created.outputs.groupId);
    expect((await getUser(created.outputs.userId as string)).teamIds).toEqual([groupId]);
    const again = await up(together, options);
    expect([again.step("group").op, again.step("user").op]).toEqual(["same", "same"]);

    const since = stack.mark();
    await destroy(options);
    const deletes = (await stack.requests(since)).filter((r) => r.method === "DELETE");
    expect(deletes.map((r) => [r.route, r.status])).toEqual([
      ["deleteUser", 204],
      ["deleteTeam", 204],
    ]);
    expect(await usersNamed("tg-")).toEqual([]);
  });

  it("resendInviteTrigger re-sends an expired invitation in place (one resend, no delete, no create); then pending", async () => {
    const options = stack.options();
    const email = "ri-ada@example.com";
    let mark = stack.mark();
    const invited = await up(program({ email, resendInviteTrigger: "1" }), options);
    const id = invited.outputs.id as string;
    expect(invited.outputs.inviteStatus).toBe("pending");
    // The create invites; the trigger given at creation re-sends nothing.
    expect((await stack.requests(mark)).filter((r) => r.route === "resendInvite")).toEqual([]);

    // Eight days on, the invitation has expired: the API says so, and refresh shows it.
    stack.emulator.ctx.clockOffsetMs += 8 * 24 * 3600_000;
    expect((await getUser(id)).inviteStatus).toBe("expired");
    expect((await refresh(options)).step("user").outputs.inviteStatus).toBe("expired");

    // The trigger bumped: the same user, exactly one resend and nothing else written.
    mark = stack.mark();
    const bumped = await up(program({ email, resendInviteTrigger: "2" }), options);
    expect(bumped.step("user").op).toBe("update");
    expect(bumped.outputs.id).toBe(id);
    const writes = (await stack.requests(mark)).filter((r) => r.method !== "GET");
    expect(writes.map((r) => `${r.method} ${r.path.split("?")[0]} ${r.status}`)).toEqual([
      `POST /v1/users/${id}/resend-invite 200`,
    ]);
    expect((await getUser(id)).inviteStatus).toBe("pending");
    expect(bumped.outputs.inviteStatus).toBe("pending");
    expect((await refresh(options)).step("user").outputs.inviteStatus).toBe("pending");

    // Unchanged or removed, the trigger sends nothing.
    mark = stack.mark();
    expect((await up(program({ email, resendInviteTrigger: "2" }), options)).step("user").op).toBe("same");
    expect((await up(program({ email }), options)).step("user").op).toBe("same");
    expect((await stack.requests(mark)).filter((r) => r.method !== "GET")).toEqual([]);
    await destroy(options);
    expect(await usersNamed("ri-")).toEqual([]);
  });

  it("resendInviteTrigger on a user who accepted: a warning, no request", async () => {
    const options = stack.options();
    const args = { email: "ra-joined@example.com", action: "register" as const, password: PASSWORD };
    const created = await up(program({ ...args, resendInviteTrigger: "1" }), options);
    const mark = stack.mark();
    const bumped = await up(program({ ...args, resendInviteTrigger: "2" }), options);
    expect(bumped.step("user").op).toBe("update");
    expect(bumped.hostLog).toContain("the user has accepted the invitation (activated): nothing to re-send");
    expect((await stack.requests(mark)).filter((r) => r.method !== "GET")).toEqual([]);
    expect((await getUser(created.outputs.id as string)).inviteStatus).toBe("activated");
    await destroy(options);
  });

  it("9. refuses bad inputs at check, naming each property and never echoing the password, before any request", async () => {
    const options = stack.options();
    const since = stack.mark();
    const weak = "weakpassword";
    const bad = {
      email: "not-an-email",
      action: "register",
      password: weak,
      roleNames: ["tenant-user", "superuser"],
      teamIds: ["first"],
    } as unknown as UserArgs;
    const error = (await up(program(bad), options).catch((e: unknown) => e)) as RunError;
    expect(error).toBeInstanceOf(RunError);
    for (const text of [
      "email: must be an email address",
      "password: must mix upper- and lower-case letters, contain a number, contain a special character",
      'unknown role "superuser"',
      "roleNames.1",
      "teamIds.0",
    ]) {
      expect(error.message).toContain(text);
    }
    expect(error.message).not.toContain(weak);

    const misplaced = (await up(
      program({ email: "bad@example.com", password: PASSWORD, entityId: childEntityId }),
      options,
    ).catch((e: unknown) => e)) as RunError;
    expect(misplaced.message).toContain('password: is only accepted with action "register"');
    expect(misplaced.message).toContain('entityId: is only accepted with action "register"');
    expect(misplaced.message).not.toContain(PASSWORD);

    const missing = (await up(program({ email: "bad@example.com", action: "register" }), options).catch(
      (e: unknown) => e,
    )) as RunError;
    expect(missing.message).toContain('password: is required when action is "register"');

    expect(await stack.requests(since)).toEqual([]);
  });

  it("10. an ambiguous create failure (HTTP 500) is resent without a duplicate; lost on every send (1 + maxRetries) is a clear error", async () => {
    const options = stack.options();
    const since = stack.mark();
    await stack.faults("createUser,status=500,count=1");
    const created = await up(program({ email: "amb-user@example.com" }), options);
    await stack.faults("");
    const posts = (await stack.requests(since)).filter((r) => r.route === "createUser");
    expect(posts.map((r) => r.status)).toEqual([500, 201]);
    expect((await usersNamed("amb-")).map((u) => u.id)).toEqual([created.outputs.id]);
    await destroy(options);

    await stack.faults("createUser,status=500,count=4");
    const failed = await up(program({ email: "amb-user@example.com" }), { ...options, throwOnError: false });
    await stack.faults("");
    const message = failed.errors.map((e) => e.message).join("\n");
    expect(message).toContain("Creating the user with the email amb-user@example.com failed");
    expect(message).toContain("so nothing was created; the next `pulumi up` creates it");
    expect(message).not.toContain("may have taken effect");
    expect(failed.state.resources.filter((r) => r.name === "user")).toEqual([]);
    expect(await usersNamed("amb-")).toEqual([]);
  });

  it("10. a user that exists after an ambiguous create failure is recorded, not orphaned", async () => {
    const options = stack.options();
    // The preview check (preflight.ts) would refuse the held email first: off, the create path meets the namesake.
    options.config = { ...options.config, "cloudinfra:preflight": "off" };
    // As if the server had created the user and the answer had been lost.
    const made = await stack.api.createUser({ body: { email: "lost-answer@example.com" } });
    await stack.faults("createUser,status=502,count=1");
    const recorded = await up(program({ email: "lost-answer@example.com", firstName: "Lin" }), options);
    await stack.faults("");
    expect(recorded.outputs.id).toBe(made.id);
    expect((await getUser(made.id)).firstName).toBe("Lin");
    await destroy(options);
    expect(await usersNamed("lost-")).toEqual([]);
  });
});
