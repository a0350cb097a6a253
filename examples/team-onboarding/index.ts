import { teamOnboarding } from "./program";

export = teamOnboarding();
