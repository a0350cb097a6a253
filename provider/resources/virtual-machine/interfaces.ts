import { z } from "zod";
import type { VmDetail } from "../../api";
import { uuidInput } from "../check";
import { sdkTypes } from "../fields";
import { containsUnknown, UNKNOWN } from "../props";

export const NetworkInterfaceInput = z
  .strictObject({
    networkId: uuidInput("a network").describe("Network (UUID) to connect, in the VM's data center and Active."),
    primary: z
      .boolean({ error: "must be true or false" })
      .optional()
      .describe(
        "Whether this is the primary interface. Exactly one may be; when none is marked, the first interface is.",
      ),
  })
  .describe("One network interface of a VM.")
  .register(sdkTypes, { name: "VirtualMachineNetworkInterfaceArgs", io: "input" });

/** A network interface in the outputs (described for the schema and the SDK; the values are the API's). */
export const NetworkInterfaceReported = z
  .object({
    id: z.string().describe("Interface id."),
    networkId: z.string().describe("Network (UUID) the interface is connected to."),
    primary: z.boolean().describe("Whether it is the VM's primary interface."),
    privateIp: z.string().describe("Static private address from the network's CIDR block."),
  })
  .describe("A network interface as the API reports it.")
  .register(sdkTypes, { name: "VirtualMachineNetworkInterface", io: "output" });

/** Fills in `primary` (the first interface when none is marked), as the API needs exactly one. */
export function normalizeInterfaces(value: unknown): unknown {
  if (!Array.isArray(value) || value.some((n) => n === null || typeof n !== "object")) return value;
  const nics = value as { networkId: unknown; primary?: unknown }[];
  const marked = nics.some((n) => n.primary === true || n.primary === UNKNOWN);
  return nics.map((n, i) => ({ networkId: n.networkId, primary: n.primary ?? (!marked && i === 0) }));
}

const byNetwork = (a: { networkId: unknown }, b: { networkId: unknown }) =>
  String(a.networkId).localeCompare(String(b.networkId));

/** The comparable form of interfaces (outputs carry ids and addresses; order does not matter). */
export function comparableInterfaces(value: unknown): unknown {
  if (!Array.isArray(value) || containsUnknown(value)) return value;
  return (value as { networkId: unknown; primary?: unknown }[])
    .map((n) => ({ networkId: n.networkId, primary: n.primary === true }))
    .sort(byNetwork);
}

/**
 * The interfaces as the API reports them: the VM detail's (a field the spec does not document); without them, those
 * `given` (the program's, or the outputs on a read) with the primary one's address from the documented
 * `primaryPrivateIp` (of the list items), when the API reported it; else undefined (the value given stays).
 */
export function reportedInterfaces(
  detailed: VmDetail["virtualMachine"]["networkInterfaces"],
  given: unknown,
  primaryPrivateIp: string | null | undefined,
): unknown[] | undefined {
  if (detailed !== undefined) return detailed;
  if (!Array.isArray(given) || primaryPrivateIp === null || primaryPrivateIp === undefined) return undefined;
  return given.map((nic: unknown) =>
    nic !== null && typeof nic === "object" && "primary" in nic && nic.primary === true
      ? { ...nic, privateIp: primaryPrivateIp }
      : nic,
  );
}
