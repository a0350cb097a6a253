import { gpuTraining } from "./program";

export = gpuTraining();
