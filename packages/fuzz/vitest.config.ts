import { project } from "../../vitest.shared.js";

// The fuzz campaigns drive real harness processes; their files run one at a time so that they do
// not compete for the two cores with each other.
export default project("fuzz", { testTimeout: 180_000, hookTimeout: 60_000, fileParallelism: false });
