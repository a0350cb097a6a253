// The ResourceGroup provider as this module's exports: see ./of-kind.ts, dynamicProvider.
import { providerOf } from "./provider";

module.exports = providerOf("ResourceGroup");
