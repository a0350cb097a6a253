/**
 * Sessions through the real CLI, signed in with email + password + TOTP (the emulator's admin): an `up` of 20
 * resources signs in once per provider process (one dynamic-provider host, or one plugin) and leaves no session open
 * when the CLI returns, and neither does the `destroy` after it. The emulator's session list (`GET /__admin/sessions`,
 * a test control) is read before and after each run; its request log counts the sign-ins and sign-outs.
 */
import { expect, it } from "vitest";
import * as cloudinfra from "../../sdk";
import { resource, useLauncher } from "../plugin/launcher";
import { cliWorld, describeCli } from "./helpers";

useLauncher();
const world = await cliWorld();
const [fra] = world.datacenters;
const admin = world.emulator.bootstrap.users.admin;
const adminUrl = world.emulator.baseUrl.replace(/\/v1$/, "/__admin");

async function admin_<T>(path: string): Promise<T> {
  const response = await fetch(`${adminUrl}${path}`);
  expect(response.ok, path).toBe(true);
  return ((await response.json()) as { data: T }).data;
}
const openSessions = () => admin_<{ userId: string }[]>(`/sessions?userId=${admin.id}`);
const mark = async () => (await admin_<{ seq: number }>("/requests/mark")).seq;
const routesAfter = async (seq: number) =>
  (await admin_<{ route: string | null; status: number }[]>(`/requests?after=${seq}`)).map((r) => r.route);

type Host = "dynamic" | "plugin";

/** 10 networks and 10 volumes, on either host. */
function program(host: Host, prefix: string) {
  return async () => {
    for (let i = 0; i < 10; i++) {
      const net = { name: `${prefix}-net-${i}`, datacenterId: fra!.id, networkType: "standard" as const };
      const vol = { name: `${prefix}-vol-${i}`, datacenterId: fra!.id, volumeTypeId: 1, sizeGb: 10 };
      if (host === "dynamic") {
        new cloudinfra.Network(`net-${i}`, net);
        new cloudinfra.Volume(`vol-${i}`, vol);
      } else {
        resource("Network", `net-${i}`, net);
        resource("Volume", `vol-${i}`, vol);
      }
    }
    return {};
  };
}

function signedInRuns(host: Host) {
  it(`${host}: an up of 20 resources signs in once and leaves no open session; so does the destroy`, async () => {
    const prefix = host === "dynamic" ? "ses-d" : "ses-p";
    const stack = await world.stack("quickstart", program(host, prefix), world.signIn);
    const before = await openSessions();

    let seq = await mark();
    await stack.up({ color: "never" });
    let routes = await routesAfter(seq);
    const created = await world.namesInApi(prefix);
    expect(created.networks).toHaveLength(10);
    expect(created.volumes).toHaveLength(10);
    // One provider process ran the resources (the dynamic-provider host, or the plugin): one sign-in, one sign-out.
    expect(routes.filter((r) => r === "signIn")).toHaveLength(1);
    expect(routes.filter((r) => r === "verifyTotp")).toHaveLength(1);
    expect(routes.filter((r) => r === "signOut")).toHaveLength(1);
    expect(await openSessions()).toEqual(before);

    seq = await mark();
    await stack.destroy({ color: "never" });
    routes = await routesAfter(seq);
    expect(await world.namesInApi(prefix)).toMatchObject({ networks: [], volumes: [] });
    expect(routes.filter((r) => r === "signIn").length).toBeLessThanOrEqual(1);
    expect(routes.filter((r) => r === "signOut").length).toBe(routes.filter((r) => r === "signIn").length);
    expect(await openSessions()).toEqual(before);
  });
}

describeCli("sessions signed in with email + password + TOTP", () => {
  signedInRuns("dynamic");
  signedInRuns("plugin");
});
