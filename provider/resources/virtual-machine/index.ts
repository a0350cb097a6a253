import type { HandlerContext } from "../context";
import type { OutputName, ResourceKind } from "../kind";
import type { Props } from "../props";
import { check } from "./check";
import { VirtualMachineInputs, VirtualMachineOutputs, inputFields } from "./declaration";
import { remove } from "./delete";
import { diff } from "./diff";
import { read } from "./read";
import { convergeRescue, createWithRescue, rescueChecks, withRescue } from "./rescue";
import { update } from "./update";

export { VirtualMachineInputs, VirtualMachineOutputs } from "./declaration";
export { create } from "./create";
export { observe, outputsOf, type ObservedVm } from "./observe";
export { read, remove, update };

export const virtualMachine: ResourceKind = {
  name: "VirtualMachine",
  description:
    "A virtual machine (one per resource). Adoption by name (`adopt`) does not apply: VM names are not unique in the API, so a program creates its own VM, unless it names one to take over by id (`adoptId`). Its creation waits for the create job; a failed job records the VM (status Error) in the stack, and the next `pulumi up` replaces it.",
  inputs: { schema: VirtualMachineInputs, fields: inputFields },
  outputs: VirtualMachineOutputs,
  secretOutputs: ["sshPrivateKey"] satisfies OutputName<typeof VirtualMachineInputs, typeof VirtualMachineOutputs>[],
  check: async (olds: Props, news: Props, ctx?: HandlerContext) => rescueChecks(news, await check(ctx, olds, news)),
  diff: (id: string, olds: Props, news: Props) => diff(id, olds, news),
  create: (ctx: HandlerContext, inputs: Props) => createWithRescue(ctx, inputs as VirtualMachineInputs),
  read: async (ctx: HandlerContext, id: string, props: Props) => {
    const found = await read(ctx, id, props);
    return found && { ...found, props: await withRescue(ctx, id, props, found.props) };
  },
  // The rescue first: a VM leaving it comes back Running, and a power change then applies to it.
  update: async (ctx: HandlerContext, id: string, olds: Props, news: Props) => {
    await convergeRescue(ctx, id, (news as VirtualMachineInputs).rescue);
    return withRescue(ctx, id, news, await update(ctx, id, olds, news as VirtualMachineInputs));
  },
  delete: (ctx: HandlerContext, id: string, props: Props) => remove(ctx, id, props),
};
