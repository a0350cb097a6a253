/** IPv4 arithmetic (addresses as unsigned 32-bit numbers), shared by the emulator and the provider's checks. */

const octet = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export function parseIp(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => octet.test(p))) return null;
  return parts.reduce((n, p) => n * 256 + Number(p), 0);
}

export const formatIp = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");

export interface Block {
  prefixLength: number;
  network: number;
  broadcast: number;
  firstUsable: number;
  lastUsable: number;
  usable: number;
}

export type ParsedCidr = { ok: true; block: Block } | { ok: false; reason: string };

/** Parses `a.b.c.d/n`; refuses malformed text and blocks with host bits set (naming the aligned block). */
export function parseCidr(text: string): ParsedCidr {
  const match = /^([^/]+)\/(\d{1,2})$/.exec(text);
  const address = match ? parseIp(match[1]) : null;
  const prefixLength = match ? Number(match[2]) : NaN;
  if (!match || address === null || prefixLength > 32 || (match[2].length > 1 && match[2].startsWith("0"))) {
    return { ok: false, reason: `"${text}" is not an IPv4 CIDR block a.b.c.d/n with n from 0 to 32` };
  }
  const size = 2 ** (32 - prefixLength);
  const network = Math.floor(address / size) * size;
  if (network !== address) {
    return {
      ok: false,
      reason: `host bits are set: the block of ${formatIp(address)}/${prefixLength} starts at ${formatIp(network)} (use ${formatIp(network)}/${prefixLength})`,
    };
  }
  const broadcast = network + size - 1;
  const small = prefixLength >= 31;
  return {
    ok: true,
    block: {
      prefixLength,
      network,
      broadcast,
      firstUsable: small ? network : network + 1,
      lastUsable: small ? broadcast : broadcast - 1,
      usable: prefixLength === 32 ? 1 : prefixLength === 31 ? 2 : size - 2,
    },
  };
}
