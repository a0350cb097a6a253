package main

import (
	"github.com/cloudinfra/pulumi-cloudinfra/sdk/go/cloudinfra"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		datacenterID := cfg.Require("datacenterId")

		network, err := cloudinfra.NewNetwork(ctx, "network", &cloudinfra.NetworkArgs{
			Name:         pulumi.String(ctx.Project() + "-net"),
			DatacenterId: pulumi.String(datacenterID),
			NetworkType:  pulumi.String("standard"),
		})
		if err != nil {
			return err
		}

		vm, err := cloudinfra.NewVirtualMachine(ctx, "vm", &cloudinfra.VirtualMachineArgs{
			Name:            pulumi.String(ctx.Project() + "-vm"),
			DatacenterId:    pulumi.String(datacenterID),
			ImageId:         pulumi.Int(1), // ubuntu-24.04 in the emulator's catalog
			ConfigurationId: pulumi.Int(1), // 2 vCPU, 4 GB RAM
			NetworkInterfaces: cloudinfra.VirtualMachineNetworkInterfacesArray{
				cloudinfra.VirtualMachineNetworkInterfacesArgs{NetworkId: network.ID().ToStringOutput()},
			},
		})
		if err != nil {
			return err
		}

		ctx.Export("networkId", network.ID())
		ctx.Export("vmId", vm.ID())
		ctx.Export("vmStatus", vm.Status)
		ctx.Export("privateIp", vm.PrivateIp)
		return nil
	})
}
