// The VolumeAttachment provider as this module's exports: see ../dynamic.ts, dynamicProvider.
import { providerOf } from "./provider";

module.exports = providerOf("VolumeAttachment");
