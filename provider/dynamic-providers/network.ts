// The Network provider as this module's exports: see ../dynamic.ts, dynamicProvider.
import { providerOf } from "./provider";

export = providerOf("Network");
