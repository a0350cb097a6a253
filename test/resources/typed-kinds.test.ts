/**
 * The kinds are typed end to end: what a kind's declaration says the API reports cannot be left out of its outputs,
 * and what the contract's request body carries cannot be left out of the request. The slips that once passed every
 * suite are written here and must not compile (`npm run lint` type-checks this file).
 */
import { describe, expect, it } from "vitest";
import { CreateNetworkBody, CreateVolumeBody, UpdateNetworkBody } from "../../provider/api";
import { bodyFrom } from "../../provider/resources/kind";
import { type NetworkState, NetworkInputs } from "../../provider/resources/network";
import { type VolumeState, VolumeInputs } from "../../provider/resources/volume";

const volumeOutputs = {
  name: "data",
  datacenterId: "7d1c0f2e-0000-4000-8000-000000000001",
  datacenterName: "fra-1",
  volumeTypeId: 1,
  volumeTypeName: "ssd",
  sizeGb: 10,
  volumeSizeId: 2,
  failed: false,
  createdAt: "2026-11-28T00:00:00Z",
};

describe("a kind's outputs", () => {
  it("cannot leave out an input the API documents (Volume's teamId, Network's description)", () => {
    const complete: VolumeState = { ...volumeOutputs, teamId: null };
    // @ts-expect-error: teamId is reported by the API (documented): outputsOf must say what it is.
    const withoutTeam: VolumeState = volumeOutputs;
    const network = {
      name: "net",
      datacenterId: "7d1c0f2e-0000-4000-8000-000000000001",
      datacenterName: "fra-1",
      networkType: "custom",
      cidrBlock: "10.0.0.0/24",
      snatEnabled: false,
      dhcpServerEnabled: true,
      dhcpStartAddress: undefined,
      dhcpEndAddress: undefined,
      defaultRouteEnabled: false,
      defaultRoute: undefined,
      serveDNSServersEnabled: false,
      dnsServers: [],
      status: "Active",
      gateway: "10.0.0.1",
      allocationPools: [],
      createdAt: "2026-11-28T00:00:00Z",
      updatedAt: "2026-11-28T00:00:00Z",
    };
    const described: NetworkState = { ...network, description: null };
    // @ts-expect-error: description is reported by the API (documented): outputsOf must say what it is.
    const undescribed: NetworkState = network;
    expect([complete, withoutTeam, described, undescribed]).toHaveLength(4);
  });

  it("cannot leave out an output beyond the inputs", () => {
    const { createdAt: _createdAt, ...rest } = volumeOutputs;
    // @ts-expect-error: createdAt is an output of Volume.
    const withoutCreatedAt: VolumeState = { ...rest, teamId: 3 };
    expect(withoutCreatedAt.teamId).toBe(3);
  });
});

describe("a request body", () => {
  it("carries every member of the contract's body that the inputs give, optional ones included", () => {
    const inputs = VolumeInputs.parse({
      name: "data",
      datacenterId: volumeOutputs.datacenterId,
      volumeTypeId: 1,
      sizeGb: 10,
      teamId: "7",
      adopt: true,
    });
    expect(bodyFrom(CreateVolumeBody, { ...inputs, volumeSizeId: 2 })).toEqual({
      name: "data",
      datacenterId: volumeOutputs.datacenterId,
      volumeTypeId: 1,
      volumeSizeId: 2,
      sizeGb: 10,
      teamId: 7,
    });
    // @ts-expect-error: the create body needs volumeSizeId, which the inputs may leave out: the handler must give it.
    expect(() => CreateVolumeBody.parse(bodyFrom(CreateVolumeBody, inputs))).toThrow();
  });

  it("of every member the contract's body has: a network's inputs are its create body and adopt", () => {
    const bodyMembers = Object.keys(CreateNetworkBody.shape);
    expect(Object.keys(NetworkInputs.shape).filter((k) => !bodyMembers.includes(k))).toEqual(["adopt"]);
    const inputs = NetworkInputs.parse({
      name: "net",
      datacenterId: volumeOutputs.datacenterId,
      networkType: "standard",
      description: "d",
      dnsServers: ["10.0.0.2"],
      adopt: false,
    });
    const { adopt: _adopt, ...body } = inputs;
    expect(bodyFrom(CreateNetworkBody, inputs)).toEqual(body);
    expect(Object.keys(bodyFrom(UpdateNetworkBody, inputs)).sort()).toEqual(["description", "dnsServers", "name"]);
  });
});
