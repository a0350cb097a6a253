import { team } from "./program";

export = team();
