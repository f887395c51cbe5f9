import { project } from "../../vitest.shared.js";

// Real hosts start slowly (a first run installs them into the cache), so the limits are generous.
export default project("real-hosts", { testTimeout: 240_000, hookTimeout: 600_000 });
