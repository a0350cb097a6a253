import { drift } from "./program";

export = drift();
