import * as pulumi from "@pulumi/pulumi";
import * as cloudinfra from "@cloudinfra/pulumi";

const config = new pulumi.Config();
const datacenterId = config.require("datacenterId");
const project = pulumi.getProject();

// Network names are unique in an entity: the project's name keeps them apart.
const network = new cloudinfra.Network("network", {
  name: `${project}-net`,
  datacenterId,
  networkType: "standard",
});

const vm = new cloudinfra.VirtualMachine("vm", {
  name: `${project}-vm`,
  datacenterId,
  imageId: config.requireNumber("imageId"),
  configurationId: config.requireNumber("configurationId"),
  networkInterfaces: [{ networkId: network.id, primary: true }],
});

export const networkId = network.id;
export const gateway = network.gateway;
export const vmId = vm.id;
export const privateIp = vm.privateIp;
