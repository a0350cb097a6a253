/**
 * The plugin signs out when the engine cancels: a provider signed in with email + password + TOTP that is sent
 * Cancel (Ctrl-C, or the engine shutting down) ends its session once the operations in flight have ended, so the
 * session is not left open for its idle timeout. (The process's exit signal does the same: test/e2e/sessions.test.ts.)
 */
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { afterAll, expect, it } from "vitest";
import { closeClients } from "../../provider/resources";
import { stackOnEmulator } from "../resources/helpers";
import { secret, startDriver } from "../plugin/driver";

const world = await stackOnEmulator();
const [fra] = world.datacenters;
const admin = world.emulator.bootstrap.users.admin;
const adminUrl = world.emulator.baseUrl.replace(/\/v1$/, "/__admin");
afterAll(closeClients);

const openSessions = async () => {
  const response = await fetch(`${adminUrl}/sessions?userId=${admin.id}`);
  return ((await response.json()) as { data: unknown[] }).data.length;
};
const routesSince = async (seq: number) => {
  const response = await fetch(`${adminUrl}/requests?after=${seq}`);
  return ((await response.json()) as { data: { route: string }[] }).data.map((r) => r.route);
};

it("Cancel signs the session out once the operations in flight have ended", async () => {
  const driver = await startDriver();
  try {
    await driver.configure({
      baseUrl: world.emulator.baseUrl,
      email: admin.email,
      password: secret(admin.password),
      totpSecret: secret(admin.totpSecret),
      pollIntervalMs: "20",
    });
    const before = await openSessions();
    const seq = world.mark();
    const created = await driver.create("Network", "n", {
      name: "cancel-signout",
      datacenterId: fra!.id,
      networkType: "standard",
    });
    expect(created.id).toBeTruthy();
    expect(await openSessions()).toBe(before + 1);

    await driver.call<Empty>(driver.client.cancel, new Empty());
    // The sign-out is one request after Cancel answers: wait for it (bounded), then nothing is left open.
    for (let i = 0; i < 50 && (await openSessions()) > before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await openSessions()).toBe(before);
    const routes = await routesSince(seq);
    expect(routes.filter((r) => r === "signIn")).toHaveLength(1);
    expect(routes.filter((r) => r === "signOut")).toHaveLength(1);
  } finally {
    driver.close();
  }
});
