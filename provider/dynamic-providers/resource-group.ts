// The ResourceGroup provider as this module's exports: see ../dynamic.ts, dynamicProvider.
import { providerOf } from "./provider";

export = providerOf("ResourceGroup");
