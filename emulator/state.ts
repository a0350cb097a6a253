import type { GpuCount, RoleName } from "../provider/api";

/**
 * The emulator's whole state: plain JSON, so `--state FILE` can persist it as it is.
 * Ids are UUIDs except teams (integers, as the API has them). Times are epoch milliseconds.
 */
export interface State {
  version: 1;
  catalog: Catalog;
  entities: Record<string, EntityRec>;
  users: Record<string, UserRec>;
  sessions: Record<string, SessionRec>;
  /** Sign-ins waiting for their second factor, keyed by the temporary 2FA cookie's token. */
  pendingTwoFactor: Record<string, PendingTwoFactorRec>;
  apiKeys: Record<string, ApiKeyRec>;
  vms: Record<string, VmRec>;
  gpuVms: Record<string, GpuVmRec>;
  volumes: Record<string, VolumeRec>;
  networks: Record<string, NetworkRec>;
  teams: Record<string, TeamRec>;
  nextTeamId: number;
  jobs: Record<string, JobRec>;
  resetTokens: Record<string, { userId: string; expiresAt: number }>;
  audit: AuditRec[];
  outbox: OutboxRec[];
  /** What `--json` prints: the seeded users' credentials and the catalog, kept so a restart prints the same. */
  bootstrap: Bootstrap | null;
}

export interface SeedUser {
  id: string;
  email: string;
  password: string;
  totpSecret: string;
  apiKey: string;
}

export interface Bootstrap {
  baseUrl: string;
  entityId: string;
  /** A child entity of the main one, for `entityId` tests. */
  childEntityId: string;
  users: { admin: SeedUser; member: SeedUser; outsider: SeedUser };
  fixtures: {
    datacenters: { id: string; name: string; region: string; country: string }[];
    images: { id: number; name: string; osFamily: string }[];
    rescueImages: { id: string; name: string; osFamily: string }[];
    configurations: { id: number; name: string; cpu: number; ram: number; disk: number; categoryCode: string }[];
    gpuSeries: { id: number; name: string; code: string }[];
  };
}

export interface Catalog {
  datacenters: { id: string; name: string; region: string; regionId: number; country: string }[];
  images: { id: number; name: string; osFamily: string }[];
  rescueImages: { id: string; name: string; osFamily: string }[];
  configurations: {
    id: number;
    name: string;
    cpu: number;
    ram: number;
    disk: number;
    categoryCode: string;
    maxVolumes: number;
  }[];
  gpuSeries: { id: number; name: string; code: string; startSupported: boolean }[];
  /** Availability per series, data center and count; a missing entry means unavailable. */
  gpuAvailability: { seriesId: number; datacenterId: string; gpuCount: GpuCount; available: boolean }[];
  volumeTypes: {
    id: number;
    name: string;
    description: string | null;
    sizes: { id: number; sizeGb: number; displayName: string; maxVolumesPerVm: number }[];
  }[];
}

export interface EntityRec {
  id: string;
  name: string;
  parentId: string | null;
  createdAt: number;
}

export interface UserRec {
  id: string;
  entityId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  passwordHash: string | null;
  roles: RoleName[];
  inviteStatus: "activated" | "pending" | "expired";
  invitedAt: number | null;
  /** Base32 TOTP secret; null when TOTP is not configured (then the email code is the second factor). */
  totpSecret: string | null;
  twoFactorSetupAt: number | null;
  /** Hashes of the unused backup codes. */
  backupCodeHashes: string[];
  /** Platform administrators may override per-key rate limits; no seeded user is one. */
  platformAdmin: boolean;
  createdAt: number;
  updatedAt: number;
  deletedAt: number | null;
}

export interface SessionRec {
  /** SHA-256 of the session token; the token itself is never stored. */
  tokenHash: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  rememberMe: boolean;
}

export interface PendingTwoFactorRec {
  tokenHash: string;
  userId: string;
  createdAt: number;
  rememberMe: boolean;
  /** The emailed one-time code (its SHA-256 in `code`), when one was sent. */
  otp: { code: string; expiresAt: number } | null;
  /** Wrong codes entered so far; the fifth discards the pending sign-in. */
  failedAttempts: number;
}

export interface ApiKeyRec {
  id: string;
  userId: string;
  entityId: string;
  name: string;
  /** SHA-256 of the full secret. */
  secretHash: string;
  start: string;
  roleId: RoleName | null;
  metadata: Record<string, unknown> | null;
  enabled: boolean;
  expiresAt: number;
  createdAt: number;
  lastUsedAt: number | null;
  rateLimit: { requestsPerWindow: number; windowSeconds: number } | null;
}

export interface NicRec {
  id: string;
  networkId: string;
  primary: boolean;
  privateIp: string;
}

export interface VmRec {
  id: string;
  entityId: string;
  name: string;
  /** Creating, Running, Stopped, Resizing, Rescuing, Rescued, Unrescuing, Deleting, Error. */
  status: string;
  datacenterId: string;
  imageId: number;
  configurationId: number;
  teamId: number | null;
  publicIp: string | null;
  nics: NicRec[];
  sshKeyIds: string[];
  privateKey: string;
  rescueImageId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface GpuVmRec {
  id: string;
  entityId: string;
  name: string;
  /** Creating, Running, Stopped, Deleting, Error. */
  status: string;
  datacenterId: string;
  seriesId: number;
  gpuCount: GpuCount;
  teamId: number | null;
  imageName: string | null;
  imageId: number | null;
  publicIp: string | null;
  privateKey: string;
  createdAt: number;
  updatedAt: number;
}

export interface VolumeRec {
  id: string;
  entityId: string;
  name: string;
  status: string;
  sizeGb: number;
  volumeTypeId: number;
  volumeSizeId: number;
  datacenterId: string;
  virtualMachineId: string | null;
  teamId: number | null;
  createdAt: number;
  updatedAt: number;
}

export interface NetworkRec {
  id: string;
  entityId: string;
  name: string;
  description: string | null;
  /** Creating, Active, Error. */
  status: string;
  datacenterId: string;
  networkType: "standard" | "custom";
  cidrBlock: string;
  snatEnabled: boolean;
  dhcpServerEnabled: boolean;
  dhcpStartAddress: string | null;
  dhcpEndAddress: string | null;
  defaultRouteEnabled: boolean;
  defaultRoute: string | null;
  serveDNSServersEnabled: boolean;
  dnsServers: string[];
  createdAt: number;
  updatedAt: number;
}

export interface TeamRec {
  id: number;
  entityId: string;
  name: string;
  parentTeamId: number | null;
  memberIds: string[];
  createdAt: number;
  updatedAt: number;
}

export interface JobRec {
  id: string;
  entityId: string;
  /** vm, volume, network or gpu. */
  resourceType: string;
  /** Operation name, e.g. vm.create, volume.attach: selects the effect applied when the job completes. */
  operation: string;
  /** The resource the job acts on (known from the start, unlike `resourceId`). */
  targetId: string;
  /** Operation-specific input kept for the effect. */
  payload: Record<string, unknown>;
  status: "pending" | "in_progress" | "completed" | "failed";
  progress: number;
  resourceId: string | null;
  error: string | null;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
  /** When processing begins and ends (epoch ms). */
  startsAt: number;
  endsAt: number;
  /** Injected outcome: fail with this message at the end, or stall (never finish until the stall timeout). */
  inject: { kind: "fail"; error: string } | { kind: "stall" } | null;
}

export interface AuditRec {
  at: number;
  event: string;
  userId: string | null;
  email: string | null;
  ip: string;
  success: boolean;
  detail: string | null;
}

export interface OutboxRec {
  at: number;
  to: string;
  kind: "two-factor-otp" | "password-reset" | "invite";
  subject: string;
  /** The code or token the mail carries, so tests can read it. */
  secret: string;
}

export function emptyState(catalog: Catalog): State {
  return {
    version: 1,
    catalog,
    entities: {},
    users: {},
    sessions: {},
    pendingTwoFactor: {},
    apiKeys: {},
    vms: {},
    gpuVms: {},
    volumes: {},
    networks: {},
    teams: {},
    nextTeamId: 1,
    jobs: {},
    resetTokens: {},
    audit: [],
    outbox: [],
    bootstrap: null,
  };
}
