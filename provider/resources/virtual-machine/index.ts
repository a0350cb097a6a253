import { defineKind } from "../kind";
import { check } from "./check";
import { inputFields, VirtualMachineInputs, VirtualMachineOutputs } from "./declaration";
import { remove } from "./delete";
import { diff } from "./diff";
import { read } from "./read";
import { convergeRescue, createWithRescue, rescueChecks, withRescue } from "./rescue";
import { update } from "./update";
import { vmPermissions } from "../preflight";

export { VirtualMachineInputs, VirtualMachineOutputs, type VirtualMachineState } from "./declaration";
export { create } from "./create";
export { observe, outputsOf, type ObservedVm } from "./observe";
export { read, remove, update };

export const virtualMachine = defineKind({
  name: "VirtualMachine",
  description:
    "A virtual machine (one per resource). Adoption by name (`adopt`) does not apply: VM names are not unique in the API, so a program creates its own VM, unless it names one to take over by id (`adoptId`). Its creation waits for the create job; a failed job records the VM (status Error) in the stack, and the next `pulumi up` replaces it.",
  inputs: { schema: VirtualMachineInputs, fields: inputFields },
  outputs: VirtualMachineOutputs,
  secretOutputs: ["sshPrivateKey"],
  check: async (olds, news, ctx) => rescueChecks(news, await check(ctx, olds, news)),
  preflight: vmPermissions,
  diff,
  create: createWithRescue,
  read: async (ctx, id, props) => {
    const found = await read(ctx, id, props);
    return found && { ...found, props: await withRescue(ctx, id, props, found.props) };
  },
  // The rescue first: a VM leaving it comes back Running, and a power change then applies to it.
  update: async (ctx, id, olds, news) => {
    await convergeRescue(ctx, id, news.rescue);
    return withRescue(ctx, id, news, await update(ctx, id, olds, news));
  },
  delete: (ctx, id, props) => remove(ctx, id, props),
});
