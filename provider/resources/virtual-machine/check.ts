import { type CheckFailure, checkInputs, type CheckResult } from "../check";
import type { HandlerContext } from "../context";
import { type Props, UNKNOWN } from "../props";
import { inputFields, VirtualMachineInputs } from "./declaration";
import { normalizeInterfaces } from "./interfaces";
import { shrinkMessage, shrinks, sizeOf } from "./sizes";

function crossChecks(known: Partial<VirtualMachineInputs>, failures: CheckFailure[]): void {
  const nics = known.networkInterfaces;
  if (!nics) return;
  if (nics.filter((n) => n.primary === true).length > 1) {
    failures.push({
      property: "networkInterfaces",
      reason: "exactly one interface may have `primary: true` (none marked: the first is primary): unmark the others",
    });
  }
  // Marked, but none true: the API needs exactly one (found by the check-vs-API property test, which sent it).
  if (nics.length > 0 && nics.every((n) => n.primary === false)) {
    failures.push({
      property: "networkInterfaces",
      reason:
        "exactly one interface must have `primary: true`, and every one says false: mark one, or leave `primary` out " +
        "(the first is then primary)",
    });
  }
  const seen = new Set<string>();
  nics.forEach((nic, i) => {
    if (seen.has(nic.networkId)) {
      failures.push({
        property: `networkInterfaces.${i}.networkId`,
        reason: `network ${nic.networkId} is named twice; a VM has one interface per network: remove the repeat`,
      });
    }
    seen.add(nic.networkId);
  });
}

/**
 * Schema and cross-field checks; then, when `configurationId` changes on an existing VM, what can be learned
 * read-only about the two sizes: a known shrink is a failure unless `allowReplaceOnShrink` is set, and the target's
 * size is passed on (as `configurationSize`) so that diff can turn the change into a replacement.
 */
export async function check(ctx: HandlerContext | undefined, olds: Props, news: Props): Promise<CheckResult<Props>> {
  const { adopt, ...given } = news;
  const result = checkInputs(VirtualMachineInputs, given, crossChecks, inputFields);
  if (adopt !== undefined) {
    result.failures.push({
      property: "adopt",
      reason:
        "VM names are not unique in the API, so an existing VM cannot be taken over by name; remove `adopt` " +
        "(this program creates its own VM), or give the id of the VM to take over in `adoptId`",
    });
  }
  const inputs: Props = { ...result.inputs };
  if (inputs.networkInterfaces !== undefined) inputs.networkInterfaces = normalizeInterfaces(inputs.networkInterfaces);
  const target = inputs.configurationId;
  const previous = olds.configurationId;
  if (
    result.failures.length === 0 &&
    typeof target === "number" &&
    typeof previous === "number" &&
    target !== previous
  ) {
    const [from, to] = await Promise.all([sizeOf(ctx, previous), sizeOf(ctx, target)]);
    if (to) inputs.configurationSize = to;
    const shrinking = from && to ? shrinks(from, to) : [];
    if (shrinking.length > 0 && inputs.allowReplaceOnShrink !== true && inputs.allowReplaceOnShrink !== UNKNOWN) {
      result.failures.push({ property: "configurationId", reason: shrinkMessage(previous, target, shrinking) });
    }
  }
  return { inputs, failures: result.failures };
}
