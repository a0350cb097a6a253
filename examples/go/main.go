// The quickstart in Go: a private network, a virtual machine on it, and a block storage volume of a size the data
// center offers (found by the getVolumeSizes lookup), attached to the VM.
//
// Stack config (all optional; the defaults match the emulator's catalog): `name` (prefix of every name, default
// `quickstart-go`), `datacenterId` (default fra-1), `imageId` (default 1, ubuntu-24.04), `configurationId` (default
// 1, 2 vCPU / 4 GB). The provider's own settings are `cloudinfra:baseUrl` and `cloudinfra:apiKey` (a secret).
package main

import (
	"fmt"

	"github.com/cloudinfra/pulumi-cloudinfra/sdk/go/cloudinfra"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
	"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
)

// fra1 is the emulator's fra-1 data center (its catalog is fixed); on the real API, set `datacenterId`.
const fra1 = "6f1c2a3b-4d5e-4f60-8a71-b2c3d4e5f601"

func main() {
	pulumi.Run(func(ctx *pulumi.Context) error {
		cfg := config.New(ctx, "")
		name := orDefault(cfg.Get("name"), "quickstart-go")
		datacenterID := orDefault(cfg.Get("datacenterId"), fra1)
		imageID, configurationID := 1, 1
		if v, err := cfg.TryInt("imageId"); err == nil {
			imageID = v
		}
		if v, err := cfg.TryInt("configurationId"); err == nil {
			configurationID = v
		}

		// The lookup: the volume types and sizes this data center offers; the volume takes the first of them.
		sizes, err := cloudinfra.GetVolumeSizes(ctx, &cloudinfra.GetVolumeSizesArgs{DatacenterId: datacenterID})
		if err != nil {
			return err
		}
		if len(sizes.VolumeTypes) == 0 || len(sizes.VolumeTypes[0].AvailableSizes) == 0 {
			return fmt.Errorf("data center %s offers no volume sizes", datacenterID)
		}
		volumeType := sizes.VolumeTypes[0]
		size := volumeType.AvailableSizes[0]

		network, err := cloudinfra.NewNetwork(ctx, "network", &cloudinfra.NetworkArgs{
			Name:         pulumi.String(name + "-net"),
			DatacenterId: pulumi.String(datacenterID),
			NetworkType:  pulumi.String("standard"),
			Description:  pulumi.String("quickstart network, managed by Pulumi (Go)"),
			CidrBlock:    pulumi.String("10.20.0.0/24"),
		})
		if err != nil {
			return err
		}

		vm, err := cloudinfra.NewVirtualMachine(ctx, "vm", &cloudinfra.VirtualMachineArgs{
			Name:            pulumi.String(name + "-vm"),
			DatacenterId:    pulumi.String(datacenterID),
			ImageId:         pulumi.Int(imageID),
			ConfigurationId: pulumi.Int(configurationID),
			NetworkInterfaces: cloudinfra.VirtualMachineNetworkInterfacesArray{
				cloudinfra.VirtualMachineNetworkInterfacesArgs{NetworkId: network.ID().ToStringOutput(), Primary: pulumi.Bool(true)},
			},
		})
		if err != nil {
			return err
		}

		volume, err := cloudinfra.NewVolume(ctx, "data", &cloudinfra.VolumeArgs{
			Name:         pulumi.String(name + "-data"),
			DatacenterId: pulumi.String(datacenterID),
			VolumeTypeId: pulumi.Int(volumeType.Id),
			SizeGb:       pulumi.Int(size.SizeGb),
		})
		if err != nil {
			return err
		}

		attachment, err := cloudinfra.NewVolumeAttachment(ctx, "data-on-vm", &cloudinfra.VolumeAttachmentArgs{
			VolumeId:         volume.ID().ToStringOutput(),
			VirtualMachineId: vm.ID().ToStringOutput(),
		})
		if err != nil {
			return err
		}

		ctx.Export("networkId", network.ID())
		ctx.Export("gateway", network.Gateway)
		ctx.Export("vmId", vm.ID())
		ctx.Export("vmStatus", vm.Status)
		ctx.Export("privateIp", vm.PrivateIp)
		ctx.Export("volumeId", volume.ID())
		ctx.Export("volumeSizeGb", volume.SizeGb)
		ctx.Export("attachmentId", attachment.ID())
		return nil
	})
}

func orDefault(value, fallback string) string {
	if value == "" {
		return fallback
	}
	return value
}
