import { project } from "../../vitest.shared.js";

export default project("example-policy-rollout");
