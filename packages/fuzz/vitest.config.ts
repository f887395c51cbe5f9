import { project } from "../../vitest.shared.js";

// The fuzz campaigns drive real harness processes; their files run one at a time so that they do
// not compete for the two cores with each other. A campaign (10,000 inputs on five transports) takes
// about a minute on a quiet machine and several on a loaded one: the limit only catches a hang.
export default project("fuzz", { testTimeout: 900_000, hookTimeout: 120_000, fileParallelism: false });
