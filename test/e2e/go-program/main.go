// A Pulumi program in Go against this repository's Go SDK (sdk/go, what `pulumi package gen-sdk --language go` makes of
// the plugin's schema): the lookups, a list with filters and getCaller, in their plain and Output forms, feeding a VM.
// test/e2e/lookups-yaml.test.ts builds it (examples/go is the program the Go suite runs).
package main

import (
	"github.com/cloudinfra/pulumi-cloudinfra/sdk/go/cloudinfra"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
)

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		caller, err := cloudinfra.GetCaller(ctx, &cloudinfra.GetCallerArgs{})
		if err != nil {
			return err
		}
		shared, err := cloudinfra.LookupNetwork(ctx, &cloudinfra.LookupNetworkArgs{Name: pulumi.StringRef("shared-net")})
		if err != nil {
			return err
		}
		sameNetwork := cloudinfra.LookupNetworkOutput(ctx, cloudinfra.LookupNetworkOutputArgs{Id: pulumi.String(shared.Id)})
		volumes, err := cloudinfra.GetVolumes(ctx, &cloudinfra.GetVolumesArgs{DatacenterId: pulumi.StringRef(*shared.DatacenterId)})
		if err != nil {
			return err
		}
		vm, err := cloudinfra.NewVirtualMachine(ctx, "app", &cloudinfra.VirtualMachineArgs{
			Name:              pulumi.String("app"),
			DatacenterId:      sameNetwork.DatacenterId().Elem(),
			ConfigurationId:   pulumi.Int(1),
			ImageId:           pulumi.Int(1),
			NetworkInterfaces: cloudinfra.VirtualMachineNetworkInterfacesArray{cloudinfra.VirtualMachineNetworkInterfacesArgs{NetworkId: sameNetwork.Id()}},
		})
		if err != nil {
			return err
		}
		ctx.Export("entityId", pulumi.String(caller.EntityId))
		ctx.Export("volumeCount", pulumi.Int(volumes.Count))
		ctx.Export("vmName", vm.Name)
		return nil
	})
}
