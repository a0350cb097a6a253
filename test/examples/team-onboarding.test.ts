import * as fs from "node:fs";
import { expect, it } from "vitest";
import { teamOnboarding, type TeamMember } from "../../examples/team-onboarding/program";
import { CloudClient } from "../../provider/client";
import { destroy, up } from "../../tools/harness";
import { stackOnEmulator } from "../resources/helpers";
import { inventory } from "./helpers";

const stack = await stackOnEmulator();
const admin = stack.emulator.bootstrap.users.admin;

/** The example's stack config as its README sets it: no API key, the 2FA sign-in an ApiKey needs. */
const options = (config: Record<string, string> = {}) =>
  stack.options({
    project: "team-onboarding",
    config: {
      "cloudinfra:baseUrl": stack.emulator.baseUrl,
      "cloudinfra:email": admin.email,
      "cloudinfra:password": { secret: admin.password },
      "cloudinfra:totpSecret": { secret: admin.totpSecret },
      "cloudinfra:pollIntervalMs": "20",
      ...config,
    },
  });

interface Outputs {
  resourceGroupId: number;
  members: { id: string; email: string; roles: string[]; inviteStatus: string }[];
  ciApiKeyId: string;
  ciApiKey: string;
}

it("team-onboarding: creates the group, invites the members with their roles, issues a CI key as a secret, and is destroyed", async () => {
  const before = await inventory(stack);
  const opts = options();

  const created = await up(teamOnboarding, opts);
  const out = created.outputs as unknown as Outputs;
  const group = await stack.api.getTeam({ params: { id: out.resourceGroupId } });
  expect(group.name).toBe("ml-platform");

  expect(out.members.map((m) => m.email)).toEqual(["ana.lopez@example.com", "ben.okafor@example.com"]);
  const [ana, ben] = await Promise.all(out.members.map((m) => stack.api.getUser({ params: { id: m.id } })));
  expect(ana).toMatchObject({ firstName: "Ana", lastName: "Lopez", teamIds: [out.resourceGroupId] });
  expect([...ana.roles].sort()).toEqual(["tenant-user", "vm-operator"]);
  expect(ben).toMatchObject({ firstName: "Ben", roles: ["tenant-user"], teamIds: [out.resourceGroupId] });
  expect(out.members.map((m) => m.inviteStatus)).toEqual(["pending", "pending"]);

  // the CI key: limited to vm-operator, a secret in the stack (never in clear in the state), and it works
  const [key] = (await stack.api.listApiKeys({ query: { search: "ml-platform-ci" } })).data;
  expect(key).toMatchObject({ id: out.ciApiKeyId, roleId: "vm-operator", status: "Active" });
  expect(out.ciApiKey).toMatch(/^svc_/);
  expect(created.secretOutputs).toContain("ciApiKey");
  expect(fs.readFileSync(opts.stateFile, "utf8")).not.toContain(out.ciApiKey);
  const ci = new CloudClient({ baseUrl: stack.emulator.baseUrl, auth: { apiKey: out.ciApiKey } });
  try {
    expect((await ci.listVms({ query: {} })).data).toEqual([]);
  } finally {
    await ci.close();
  }

  // one more member: only that user is created, the others are left alone
  const carla: TeamMember = { email: "carla.ng@example.com", firstName: "Carla", roles: ["tenant-admin"] };
  const ben2: TeamMember = { email: "ben.okafor@example.com", firstName: "Ben", lastName: "Okafor" };
  const grown = await up(teamOnboarding, {
    ...opts,
    config: { ...opts.config, members: JSON.stringify([ben2, carla]) },
  });
  expect(grown.summary).toMatchObject({ create: 1, delete: 1 });
  expect(grown.step("user-carla.ng@example.com").op).toBe("create");
  expect(grown.step("user-ben.okafor@example.com").op).toBe("same");
  expect(grown.step("user-ana.lopez@example.com").op).toBe("delete");
  const carlaId = (grown.outputs as unknown as Outputs).members[1].id;
  expect(await stack.api.getUser({ params: { id: carlaId } })).toMatchObject({
    roles: ["tenant-admin"],
    teamIds: [out.resourceGroupId],
  });

  await destroy(opts);
  expect(await inventory(stack)).toEqual(before);
});
