import { usageReport } from "./program";

export = usageReport();
