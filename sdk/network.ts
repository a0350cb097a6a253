// Written by `npm run sdk-gen` from provider/resources/network.ts: never edit it by hand.

import * as pulumi from "@pulumi/pulumi";
import { dynamicProvider } from "../provider/dynamic-providers/of-kind";

const provider = dynamicProvider("Network");

/**
 * Every input and output of a Network, each `undefined`: passed to Pulumi beside the arguments, so that each one is
 * an Output on the resource, set or not.
 */
const outputPlaceholders = {
  name: undefined,
  datacenterId: undefined,
  networkType: undefined,
  snatEnabled: undefined,
  description: undefined,
  cidrBlock: undefined,
  dhcpServerEnabled: undefined,
  dhcpStartAddress: undefined,
  dhcpEndAddress: undefined,
  defaultRouteEnabled: undefined,
  defaultRoute: undefined,
  serveDNSServersEnabled: undefined,
  dnsServers: undefined,
  adopt: undefined,
  datacenterName: undefined,
  status: undefined,
  gateway: undefined,
  allocationPools: undefined,
  createdAt: undefined,
  updatedAt: undefined,
};

/** The arguments of a {@link Network}. */
export interface NetworkArgs {
  /** Name, unique within the entity. Changed in place. */
  name: pulumi.Input<string>;
  /** Data center (UUID). Changing it replaces the network. */
  datacenterId: pulumi.Input<string>;
  /** `standard` or `custom`. Changing it replaces the network. */
  networkType: pulumi.Input<"standard" | "custom">;
  /** Source NAT, standard networks only. Default true on standard networks. Changing it replaces the network. */
  snatEnabled?: pulumi.Input<boolean>;
  /** Free text. Changed in place. */
  description?: pulumi.Input<string>;
  /** IPv4 CIDR block. Default 10.0.0.0/24. Changed in place (refused by the API while VMs are connected). */
  cidrBlock?: pulumi.Input<string>;
  /** DHCP server. Default true. Changed in place. */
  dhcpServerEnabled?: pulumi.Input<boolean>;
  /** First address of the DHCP range (inside the CIDR block). Changed in place. */
  dhcpStartAddress?: pulumi.Input<string>;
  /** Last address of the DHCP range (inside the CIDR block). Changed in place. */
  dhcpEndAddress?: pulumi.Input<string>;
  /** Announce a default route. Default false. Changed in place. */
  defaultRouteEnabled?: pulumi.Input<boolean>;
  /** Gateway of the default route (inside the CIDR block). Changed in place. */
  defaultRoute?: pulumi.Input<string>;
  /** Announce DNS servers by DHCP. Default false. Changed in place. */
  serveDNSServersEnabled?: pulumi.Input<boolean>;
  /** DNS server addresses, at most 8. Changed in place. */
  dnsServers?: pulumi.Input<pulumi.Input<string>[]>;
  /**
   * When a network of this name already exists, take it over instead of failing (its data center and type must match;
   * the other properties are aligned to the program). The way to bring existing networks under management.
   */
  adopt?: pulumi.Input<boolean>;
}

/** A private network. Deleting it waits while VMs being deleted still hold it, then names the VMs that remain. */
export class Network extends pulumi.dynamic.Resource {
  /** Name, unique within the entity. */
  declare readonly name: pulumi.Output<string>;
  /** Data center (UUID). */
  declare readonly datacenterId: pulumi.Output<string>;
  /** `standard` or `custom`. */
  declare readonly networkType: pulumi.Output<"standard" | "custom">;
  /** Free text, if any. */
  declare readonly description: pulumi.Output<string | undefined>;
  /** IPv4 CIDR block, e.g. 10.0.0.0/24. */
  declare readonly cidrBlock: pulumi.Output<string>;
  /** Whether source NAT is on (standard networks). */
  declare readonly snatEnabled: pulumi.Output<boolean>;
  /** Whether the DHCP server is on. */
  declare readonly dhcpServerEnabled: pulumi.Output<boolean>;
  /** First address of the DHCP range, if set. */
  declare readonly dhcpStartAddress: pulumi.Output<string | undefined>;
  /** Last address of the DHCP range, if set. */
  declare readonly dhcpEndAddress: pulumi.Output<string | undefined>;
  /** Whether a default route is announced. */
  declare readonly defaultRouteEnabled: pulumi.Output<boolean>;
  /** Gateway of the announced default route, if set. */
  declare readonly defaultRoute: pulumi.Output<string | undefined>;
  /** Whether DNS servers are announced by DHCP. */
  declare readonly serveDNSServersEnabled: pulumi.Output<boolean>;
  /** DNS server addresses announced by DHCP (at most 8). */
  declare readonly dnsServers: pulumi.Output<string[]>;
  /**
   * When a network of this name already exists, take it over instead of failing (its data center and type must match;
   * the other properties are aligned to the program). The way to bring existing networks under management.
   */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /** Data center name, e.g. fra-1. */
  declare readonly datacenterName: pulumi.Output<string>;
  /** Status reported by the API (Active once created). */
  declare readonly status: pulumi.Output<string>;
  /** Gateway address of the network (the first host of the CIDR block). */
  declare readonly gateway: pulumi.Output<string>;
  /** Address ranges the API hands out to interfaces on this network. */
  declare readonly allocationPools: pulumi.Output<
    {
      /** First address of the range. */
      start: string;
      /** Last address of the range. */
      end: string;
    }[]
  >;
  /** Creation time (ISO 8601). */
  declare readonly createdAt: pulumi.Output<string>;
  /** Last change (ISO 8601). */
  declare readonly updatedAt: pulumi.Output<string>;

  constructor(name: string, args: NetworkArgs, opts?: pulumi.CustomResourceOptions) {
    super(provider, name, { ...outputPlaceholders, ...args }, opts, "cloudinfra", "Network");
  }
}
