/**
 * Check messages, as the engine shows them: `property: reason`. Regression of issue 9: reasons were zod's default
 * text (`name: name: Invalid input: expected string, received number`) and repeated the property
 * (`sizeGb: sizeGb: volumes cannot shrink ...`). Every property of every kind is given values of the wrong type:
 * each failure names the property once, says what is expected and how to fix it, in our words.
 */
import { describe, expect, it } from "vitest";
import { kinds, type CheckFailure, type KindName } from "../../provider/resources";
import { noValue, UNKNOWN } from "../../provider/resources";

/** Values of every JSON type: for each property, those of the wrong type must fail. */
const wrongValues: unknown[] = [12345, 1.5, -3, "wrong-type", true, [1, 2], [{ a: 1 }], { a: 1 }, null];

/** zod's own wording (zod 4 locale), which a user must never see. */
const zodDefault =
  /Invalid input|Invalid option|Invalid (string|number|type|element|key|union)|Too (small|big)|expected \w+, received|Unrecognized key/i;

function assertWellWorded(kind: string, failure: CheckFailure): void {
  const shown = `${failure.property}: ${failure.reason}`;
  const where = `${kind}.${shown}`;
  expect(failure.reason, where).not.toMatch(zodDefault);
  const last = failure.property.split(".").pop()!;
  // The property is named once, by the engine: the reason does not start with it again.
  expect(failure.reason.startsWith(`${failure.property}:`), where).toBe(false);
  expect(new RegExp(`^${last}\\b`).test(failure.reason), where).toBe(false);
  expect(shown.includes(`${failure.property}: ${failure.property}`), where).toBe(false);
  // What is expected (which says how to fix it).
  expect(failure.reason, where).toMatch(
    /must|required|only|not a property|needs|at (least|most)|exactly|can|is not|unknown|are set|use |twice/,
  );
}

describe("check messages name the property once, and say what is expected and how to fix it", () => {
  for (const [kind, { inputs }] of Object.entries(kinds) as [KindName, (typeof kinds)[KindName]][]) {
    const schema = inputs.schema;
    it(`${kind}: every property with a value of the wrong type (was zod's default text, property doubled)`, async () => {
      for (const property of Object.keys(schema.shape)) {
        let failed = 0;
        for (const value of wrongValues) {
          const { failures } = await kinds[kind].check({}, { [property]: value });
          const mine = failures.filter((f) => f.property === property || f.property.startsWith(`${property}.`));
          for (const failure of failures) assertWellWorded(kind, failure);
          failed += mine.length;
        }
        expect(failed, `${kind}.${property}: no wrong value was refused`).toBeGreaterThan(0);
      }
    });
  }

  it("a missing required property says it has no value, why it may not be known, and what to give", async () => {
    const { failures } = await kinds.Network.check({}, {});
    expect(failures.find((f) => f.property === "name")?.reason).toBe(
      noValue("is required: set it to a string (text in quotes)"),
    );
  });

  it("an id left out because its resource was not created (--continue-on-error) says its value is not known", async () => {
    // Outside preview the engine leaves an unknown value out of Check: was "must be the UUID of a virtual machine".
    const volumeId = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";
    const { failures } = await kinds.VolumeAttachment.check({}, { volumeId });
    expect(failures).toEqual([
      {
        property: "virtualMachineId",
        reason:
          "has no value: if the program sets it from another resource's output, that resource was not created in " +
          "this run (see its error), so the value is not known; otherwise it must be the UUID of a virtual machine",
      },
    ]);
    // Nested in a list: the engine drops the unknown from the object.
    const vm = await kinds.VirtualMachine.check({}, { networkInterfaces: [{}] });
    expect(vm.failures.find((f) => f.property === "networkInterfaces.0.networkId")?.reason).toMatch(
      /^has no value: .* the value is not known; otherwise it must be/,
    );
    // In a preview the value arrives as the unknown sentinel and passes; a value given but wrong keeps its reason.
    expect((await kinds.VolumeAttachment.check({}, { volumeId, virtualMachineId: UNKNOWN })).failures).toEqual([]);
    const wrong = await kinds.VolumeAttachment.check({}, { volumeId, virtualMachineId: "vm-1" });
    expect(wrong.failures).toEqual([{ property: "virtualMachineId", reason: "must be the UUID of a virtual machine" }]);
  });

  it("an unknown property is refused once, with the known ones", async () => {
    const { failures } = await kinds.Volume.check({}, { size: 10 });
    const failure = failures.find((f) => f.property === "size")!;
    assertWellWorded("Volume", failure);
    expect(failure.reason).toContain("sizeGb");
  });

  it("cross-property checks (sizeGb: sizeGb: volumes cannot shrink ...) do not repeat their property", async () => {
    const cases: [KindName, Record<string, unknown>, Record<string, unknown>][] = [
      [
        "Volume",
        { name: "v", datacenterId: "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601", volumeTypeId: 1, sizeGb: 50 },
        { sizeGb: 20 },
      ],
      [
        "Network",
        {},
        {
          networkType: "custom",
          snatEnabled: true,
          cidrBlock: "10.0.0.0/24",
          dhcpStartAddress: "10.0.0.9",
          dhcpEndAddress: "10.0.0.5",
          defaultRoute: "10.0.1.1",
        },
      ],
      ["Network", {}, { cidrBlock: "10.0.0.1/24" }],
      [
        "VirtualMachine",
        {},
        {
          networkInterfaces: [
            { networkId: "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601", primary: true },
            { networkId: "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601", primary: true },
          ],
          adopt: true,
        },
      ],
      ["User", {}, { email: "a@example.com", action: "register", entityId: "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601" }],
      [
        "User",
        {},
        {
          email: "a@example.com",
          action: "invite",
          password: "Secret-password-1",
          entityId: "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601",
        },
      ],
      ["GpuVirtualMachine", {}, { imageName: "ubuntu", imageId: 1 }],
    ];
    for (const [kind, olds, news] of cases) {
      const { failures } = await kinds[kind].check(olds, { ...olds, ...news });
      const crossed = failures;
      expect(crossed.length, `${kind} ${JSON.stringify(news)}`).toBeGreaterThan(0);
      for (const failure of crossed) assertWellWorded(kind, failure);
    }
  });
});
