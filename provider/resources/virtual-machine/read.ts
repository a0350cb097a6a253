import type { VmDetail, VmListItem } from "../../api";
import type { HandlerContext } from "../context";
import { isNotFound } from "../errors";
import { batchedRead } from "../jobs";
import type { Props } from "../props";
import type { ObservedState } from "./declaration";
import { exposedKey, getVm, observe, type ObservedVm, outputsOf } from "./observe";

/** A VM as a read finds it: its list item (read in batches through the list), or its detail when the list missed it. */
interface FoundVm {
  id: string;
  item?: VmListItem;
  detail?: VmDetail;
}

/** VMs are read in batches through the list endpoint (pages gathered across reads); a VM it misses, by id. */
const vmReads = (ctx: HandlerContext) =>
  batchedRead<FoundVm>(ctx, "vms", (api) => ({
    list: async (page, limit) => {
      const { data, meta } = await api.listVms({ query: { page, limit, sort: "createdAt:asc" } });
      return { data: data.map((item) => ({ id: item.id, item })), meta };
    },
    get: async (id) => ({ id, detail: await api.getVm({ params: { id } }) }),
  }));

/**
 * The VM's detail as it stands when its list item shows it unchanged since the outputs were read (same `updatedAt`,
 * which every change of the VM's settings moves): the fields the list lacks (team, configuration id and name, category
 * code, console and hotplug flags) are those outputs, the rest (name, status, size, image name, data center, addresses) is the list's. Undefined
 * when the list item cannot vouch for them: the detail is read then.
 */
function unchangedDetail(props: Props, item: VmListItem): ObservedVm | undefined {
  const { teamId, configurationId, configurationName, configurationCategoryCode } = props;
  if (
    typeof props.updatedAt !== "string" ||
    Date.parse(props.updatedAt) !== Date.parse(item.updatedAt) ||
    (teamId !== null && typeof teamId !== "number") ||
    typeof configurationId !== "number" ||
    typeof configurationName !== "string" ||
    typeof configurationCategoryCode !== "string" ||
    typeof props.consoleEnabled !== "boolean" ||
    typeof props.networkHotplug !== "boolean"
  ) {
    return undefined;
  }
  const detail: VmDetail = {
    status: item.status,
    virtualMachine: {
      id: item.id,
      name: item.name,
      teamId,
      cpu: item.configuration.cpu,
      ram: item.configuration.ram,
      disk: item.configuration.disk,
      configurationId,
      configuration: configurationName,
      configurationCategoryCode,
      image: item.imageName,
      datacenter: { id: item.datacenter.id, name: item.datacenter.name },
      createdAt: item.createdAt,
      updatedAt: item.updatedAt,
    },
    usage: props.usage,
    consoleEnabled: props.consoleEnabled,
    networkHotplug: props.networkHotplug,
  };
  return { detail, addresses: { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp } };
}

/**
 * Reads the VM through the batched list reader: when its list item shows it unchanged since the outputs (and the key
 * is known, when `exposePrivateKey` asks for it), no other request; else its detail (and addresses from the item).
 * Without `exposePrivateKey` the outputs hold no key: one an earlier version kept is dropped, without a request.
 */
export async function read(
  ctx: HandlerContext,
  id: string,
  props: Props,
): Promise<{ id: string; props: ObservedState } | null> {
  const found = await vmReads(ctx).read(id);
  if (!found) return null;
  const keyMissing = props.exposePrivateKey === true && typeof props.sshPrivateKey !== "string";
  const fromList = found.item && !keyMissing ? unchangedDetail(props, found.item) : undefined;
  if (fromList) return { id, props: outputsOf(props, fromList, await exposedKey(ctx, id, props, props)) };
  try {
    const detail = found.detail ?? (await getVm(ctx, id));
    const key = await exposedKey(ctx, id, props, props);
    const item = found.item;
    const observed: ObservedVm = item
      ? { detail, addresses: { privateIp: item.primaryPrivateIp, publicIp: item.primaryPublicIp } }
      : await observe(ctx, detail);
    return { id, props: outputsOf(props, observed, key) };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}
