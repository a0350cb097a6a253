import { randomUUID } from "node:crypto";
import type { RoleName } from "../provider/api";
import { hashSecret } from "./http";
import { hashPassword, keyStart, newApiKeySecret, newTotpSecret } from "./secrets";
import { type Bootstrap, type Catalog, emptyState, type SeedUser, type State } from "./state";

/** The fixed catalog: ids are stable so examples and docs can name them. */
export function seedCatalog(): Catalog {
  const fra = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601";
  const ams = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f602";
  const nyc = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f603";
  const datacenters = [
    { id: fra, name: "fra-1", region: "eu-central", regionId: 1, country: "DE" },
    { id: ams, name: "ams-1", region: "eu-west", regionId: 2, country: "NL" },
    { id: nyc, name: "nyc-1", region: "us-east", regionId: 3, country: "US" },
  ];
  const gpuSeries = [
    { id: 1, name: "NVIDIA A100", code: "a100", startSupported: true },
    { id: 2, name: "NVIDIA H100", code: "h100", startSupported: false },
  ];
  const gpuAvailability: Catalog["gpuAvailability"] = [];
  for (const s of gpuSeries) {
    for (const dc of datacenters) {
      for (const gpuCount of [1, 2, 4, 8] as const) {
        // Unavailable by design: every H100 8-GPU box, and anything in nyc-1 above 2 GPUs.
        const available = !(s.code === "h100" && gpuCount === 8) && !(dc.id === nyc && gpuCount > 2);
        gpuAvailability.push({ seriesId: s.id, datacenterId: dc.id, gpuCount, available });
      }
    }
  }
  return {
    datacenters,
    images: [
      { id: 1, name: "ubuntu-24.04", osFamily: "linux" },
      { id: 2, name: "debian-12", osFamily: "linux" },
      { id: 3, name: "windows-2022", osFamily: "windows" },
    ],
    rescueImages: [
      { id: "9a7b6c5d-1e2f-4a3b-9c4d-5e6f7a8b9c01", name: "rescue-linux", osFamily: "linux" },
      { id: "9a7b6c5d-1e2f-4a3b-9c4d-5e6f7a8b9c02", name: "rescue-windows", osFamily: "windows" },
    ],
    configurations: [
      { id: 1, name: "s-2vcpu-4gb", cpu: 2, ram: 4, disk: 50, categoryCode: "general", maxVolumes: 4 },
      { id: 2, name: "m-4vcpu-8gb", cpu: 4, ram: 8, disk: 100, categoryCode: "general", maxVolumes: 8 },
      { id: 3, name: "l-8vcpu-32gb", cpu: 8, ram: 32, disk: 200, categoryCode: "memory", maxVolumes: 16 },
      { id: 4, name: "xl-16vcpu-64gb", cpu: 16, ram: 64, disk: 400, categoryCode: "compute", maxVolumes: 16 },
    ],
    gpuSeries,
    gpuAvailability,
    volumeTypes: [
      {
        id: 1,
        name: "ssd",
        description: "General purpose SSD",
        sizes: [10, 20, 50, 100, 200, 500].map((sizeGb, i) => ({
          id: 101 + i,
          sizeGb,
          displayName: `${sizeGb} GB`,
          maxVolumesPerVm: 8,
        })),
      },
      {
        id: 2,
        name: "nvme",
        description: null,
        sizes: [50, 100, 250, 500, 1000].map((sizeGb, i) => ({
          id: 201 + i,
          sizeGb,
          displayName: sizeGb >= 1000 ? `${sizeGb / 1000} TB` : `${sizeGb} GB`,
          maxVolumesPerVm: 4,
        })),
      },
    ],
  };
}

const seedPasswords = {
  admin: "Admin-Passw0rd!2024",
  member: "Member-Passw0rd!2024",
  outsider: "Outsider-Passw0rd!2024",
};

function seedUser(
  state: State,
  now: number,
  entityId: string,
  email: string,
  password: string,
  roles: RoleName[],
  firstName: string,
): SeedUser {
  const id = randomUUID();
  const totpSecret = newTotpSecret();
  state.users[id] = {
    id,
    entityId,
    email,
    firstName,
    lastName: "Seed",
    passwordHash: hashPassword(password),
    roles,
    inviteStatus: "activated",
    invitedAt: null,
    totpSecret,
    twoFactorSetupAt: now,
    backupCodeHashes: [],
    platformAdmin: false,
    createdAt: now,
    updatedAt: now,
    deletedAt: null,
  };
  const apiKey = newApiKeySecret();
  const keyId = randomUUID();
  state.apiKeys[keyId] = {
    id: keyId,
    userId: id,
    entityId,
    name: `${firstName.toLowerCase()}-bootstrap`,
    secretHash: hashSecret(apiKey),
    start: keyStart(apiKey),
    roleId: null,
    metadata: { seeded: true },
    enabled: true,
    expiresAt: now + 365 * 24 * 3600_000,
    createdAt: now,
    lastUsedAt: null,
    rateLimit: null,
  };
  return { id, email, password, totpSecret, apiKey };
}

/** A fresh state: the catalog, a main entity with a child, another unrelated entity, and the three seeded users. */
export function seedState(now: number): State {
  const state = emptyState(seedCatalog());
  const main = randomUUID();
  const child = randomUUID();
  const other = randomUUID();
  state.entities[main] = { id: main, name: "Acme Corp", parentId: null, createdAt: now };
  state.entities[child] = { id: child, name: "Acme Research", parentId: main, createdAt: now };
  state.entities[other] = { id: other, name: "Globex", parentId: null, createdAt: now };
  const { catalog } = state;
  const bootstrap: Bootstrap = {
    baseUrl: "",
    entityId: main,
    childEntityId: child,
    users: {
      admin: seedUser(state, now, main, "admin@acme.example", seedPasswords.admin, ["tenant-admin"], "Ada"),
      member: seedUser(state, now, main, "member@acme.example", seedPasswords.member, ["tenant-user"], "Max"),
      outsider: seedUser(state, now, other, "admin@globex.example", seedPasswords.outsider, ["tenant-admin"], "Olga"),
    },
    fixtures: {
      datacenters: catalog.datacenters.map(({ id, name, region, country }) => ({ id, name, region, country })),
      images: catalog.images,
      rescueImages: catalog.rescueImages,
      configurations: catalog.configurations.map(({ id, name, cpu, ram, disk, categoryCode }) => ({
        id,
        name,
        cpu,
        ram,
        disk,
        categoryCode,
      })),
      gpuSeries: catalog.gpuSeries.map(({ id, name, code }) => ({ id, name, code })),
    },
  };
  state.bootstrap = bootstrap;
  return state;
}
