import type { Stack } from "../resources/helpers";

/** Ids of everything the main entity holds in the emulator, per kind, sorted: compared before up and after destroy. */
export async function inventory(stack: Stack) {
  const { api } = stack;
  const ids = (items: { id: string | number }[]) => items.map((i) => String(i.id)).sort();
  const query = { query: { limit: 100 } };
  return {
    networks: ids((await api.listNetworks(query)).data),
    vms: ids((await api.listVms(query)).data),
    gpuVms: ids((await api.listGpuVms(query)).data),
    volumes: ids((await api.listVolumes(query)).data),
    resourceGroups: ids((await api.listTeams(query)).data),
    users: ids((await api.listUsers(query)).data.filter((u) => u.deletedAt === null)),
    apiKeys: ids((await api.listApiKeys(query)).data),
  };
}
