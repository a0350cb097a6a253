import { afterAll, expect, it } from "vitest";
import type { ProgressLog } from "../../provider/client/progress";
import { CloudClient } from "../../provider/client";
import {
  checkResource,
  closeClients,
  configuration,
  handlerContext,
  kinds,
} from "../../provider/resources";
import { stackOnEmulator } from "./helpers";

const stack = await stackOnEmulator({ jobDurationMs: 50 });
const { admin, member } = stack.emulator.bootstrap.users;
afterAll(closeClients);
const run = (values: Record<string, string>) => {
  const log: ProgressLog = {
    info: () => undefined,
    warn: (m) => console.log("WARN", m),
  };
  const config: Record<string, string> = {
    "cloudinfra:baseUrl": stack.emulator.baseUrl,
    "cloudinfra:pollIntervalMs": "20",
    ...values,
  };
  return handlerContext({
    configuration: configuration((key) => config[key]),
    log,
  });
};
const tokenOf = async (u: {
  email: string;
  password: string;
  totpSecret: string;
}) => {
  const c = new CloudClient({
    baseUrl: stack.emulator.baseUrl,
    auth: { email: u.email, password: u.password, totpSecret: u.totpSecret },
  });
  return (await c.auth.headers()).headers.authorization!.replace(
    /^Bearer /,
    "",
  );
};

it("ApiKey: a tenant-user's session suspending the admin's key", async () => {
  const adminToken = await tokenOf(admin);
  const memberToken = await tokenOf(member);
  const asAdmin = run({ "cloudinfra:sessionToken": adminToken });
  const key = await kinds.ApiKey.create(
    asAdmin,
    (await checkResource(asAdmin, kinds.ApiKey, {}, { name: "owned-by-admin" }))
      .inputs,
  );
  await closeClients();
  const asMember = run({ "cloudinfra:sessionToken": memberToken });
  const olds = { ...key.outs };
  const checked = await checkResource(asMember, kinds.ApiKey, olds, {
    name: "owned-by-admin",
    enabled: false,
  });
  console.log("preview failures:", JSON.stringify(checked.failures));
  const up = await kinds.ApiKey.update(
    run({
      "cloudinfra:sessionToken": memberToken,
      "cloudinfra:preflight": "off",
    }),
    key.id,
    olds,
    checked.inputs,
  ).then(
    () => "succeeded",
    (e: unknown) => `failed: ${String(e)}`,
  );
  console.log("up:", up);
  expect(checked.failures.length > 0).toBe(up !== "succeeded");
});

it("VolumeAttachment: a size's per-VM maximum", async () => {
  const fra = stack.datacenters[0]!.id;
  const [job] = await stack.api.createVm({
    body: {
      name: "size-vm",
      datacenterId: fra,
      imageId: 1,
      configurationId: 2,
    },
  });
  const vm = (await stack.api.waitForJob(job!.id)).resourceId!;
  const catalog = await stack.api.volumeSizes({ params: { id: fra } });
  const size = catalog.volumeTypes
    .find((t) => t.id === 2)!
    .availableSizes.find((s) => s.sizeGb === 50)!;
  const vol = async (name: string) => {
    const j = await stack.api.createVolume({
      body: {
        name,
        datacenterId: fra,
        volumeTypeId: 2,
        volumeSizeId: size.id,
        sizeGb: 50,
      },
    });
    return (await stack.api.waitForJob(j.jobId)).resourceId!;
  };
  for (const n of [1, 2, 3, 4]) {
    const j = await stack.api.attachVolume({
      params: { id: await vol(`nv-${n}`) },
      body: { virtualMachineId: vm },
    });
    await stack.api.waitForJob(j.jobId);
  }
  const fifth = await vol("nv-5");
  const ctx = run({ "cloudinfra:apiKey": admin.apiKey });
  const checked = await checkResource(
    ctx,
    kinds.VolumeAttachment,
    {},
    { volumeId: fifth, virtualMachineId: vm },
  );
  console.log("preview failures:", JSON.stringify(checked.failures));
  const up = await kinds.VolumeAttachment.create(
    run({ "cloudinfra:apiKey": admin.apiKey, "cloudinfra:preflight": "off" }),
    checked.inputs,
  ).then(
    () => "succeeded",
    (e: unknown) => `failed: ${String(e)}`,
  );
  console.log("up:", up);
  expect(checked.failures.length > 0).toBe(up !== "succeeded");
});
