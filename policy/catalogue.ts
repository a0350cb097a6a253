/** The size of one VM configuration. */
export interface ConfigurationSize {
  /** Configuration name, e.g. `m-4vcpu-8gb` (allow-lists may name configurations by it). */
  name?: string;
  /** Virtual CPUs. */
  cpu: number;
  /** RAM in GB. */
  ram: number;
  /** Disk in GB. */
  disk: number;
}

/**
 * VM configurations by id (`configurationId`, as a string key, since policy config is JSON). The API lists no
 * configurations, so the policies that judge a VM by its configuration before it exists read sizes from here.
 */
export type ConfigurationCatalogue = Record<string, ConfigurationSize>;

/** GPU series codes by series id (`seriesId`, as a string key), so allow-lists may name series by code. */
export type GpuSeriesCatalogue = Record<string, string>;

/**
 * The configurations of the local emulator's fixed catalog (`npm run emulator`), the default catalogue. On the real
 * API, give the pack your account's catalogue (see the README).
 */
export const defaultConfigurations: ConfigurationCatalogue = {
  "1": { name: "s-2vcpu-4gb", cpu: 2, ram: 4, disk: 50 },
  "2": { name: "m-4vcpu-8gb", cpu: 4, ram: 8, disk: 100 },
  "3": { name: "l-8vcpu-32gb", cpu: 8, ram: 32, disk: 200 },
  "4": { name: "xl-16vcpu-64gb", cpu: 16, ram: 64, disk: 400 },
};

/** The GPU series of the local emulator's fixed catalog, the default series catalogue. */
export const defaultGpuSeries: GpuSeriesCatalogue = { "1": "a100", "2": "h100" };
