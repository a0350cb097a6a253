/**
 * Cancel (the engine sends it on Ctrl-C and when it shuts down) ends the waits of the operations in flight: a VM
 * create waiting for its job fails at once saying it was cancelled, recorded with the id of the VM the API has.
 */
import { Empty } from "google-protobuf/google/protobuf/empty_pb";
import { afterAll, beforeAll, expect, it } from "vitest";
import { closeClients } from "../../provider/resources";
import { initFailureOf } from "../../tools/harness/host";
import { stackOnEmulator } from "../resources/helpers";
import { failure, secret, startDriver, urnOf, type Driver } from "./driver";

// Jobs long enough (a VM create takes 30 s) that only a cancelled wait ends before its job does.
const world = await stackOnEmulator({ jobDurationMs: 60_000 });
const { datacenters, images, configurations } = world.emulator.bootstrap.fixtures;

let driver: Driver;
beforeAll(async () => {
  driver = await startDriver();
  await driver.configure({
    baseUrl: world.emulator.baseUrl,
    apiKey: secret(world.emulator.bootstrap.users.admin.apiKey),
    pollIntervalMs: "20",
  });
});
afterAll(async () => {
  driver.close();
  await closeClients();
});

it("Cancel ends a VM create's job wait: the create fails saying so, recorded with the id of the VM that exists", async () => {
  const { inputs, failures } = await driver.check("VirtualMachine", {
    name: "cancelled-vm",
    datacenterId: datacenters[0]!.id,
    imageId: images[0]!.id,
    configurationId: configurations[0]!.id,
  });
  expect(failures).toEqual([]);
  const urn = urnOf("VirtualMachine", "slow");
  const creating = failure(driver.create("VirtualMachine", "slow", inputs));
  // The wait is under way once the plugin has told the engine that it waits for the job.
  await expect
    .poll(() => driver.lines.some((l) => l.urn === urn && /job \S+ started; waiting/.test(l.message)), {
      timeout: 10_000,
      interval: 20,
    })
    .toBe(true);
  await driver.call<Empty>(driver.client.cancel, new Empty());

  const error = await creating;
  expect(error.details).toMatch(
    /^Creating VM "cancelled-vm": cancelled \(the engine asked the provider to stop: Ctrl-C or shutdown\) while waiting for job \S+; the job goes on in the cloud \[OPERATION_CANCELLED\]$/,
  );
  const { data: vms } = await world.api.listVms({ query: { search: "cancelled-vm" } });
  expect(vms.map((vm) => vm.name)).toEqual(["cancelled-vm"]);
  // Recorded with the id of the VM the API has, which is still being created: the job was not waited for.
  const recorded = initFailureOf(error);
  expect(recorded?.id).toBe(vms[0]!.id);
  expect(recorded?.properties).toMatchObject({ name: "cancelled-vm", status: "Creating" });
  expect(recorded?.reasons).toEqual([error.details]);
  expect((await world.api.getVm({ params: { id: vms[0]!.id } })).status).toBe("Creating");

  // Operations after the Cancel run as usual: a refresh reads the VM.
  const read = await driver.read("VirtualMachine", "slow", vms[0]!.id, recorded!.properties, inputs);
  expect(read.id).toBe(vms[0]!.id);
  expect(read.outs.status).toBe("Creating");
});
