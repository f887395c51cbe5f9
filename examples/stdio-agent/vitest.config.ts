import { project } from "../../vitest.shared.js";

// The examples start processes and servers: bounded generously for a busy machine.
export default project("example-stdio-agent", { testTimeout: 180_000, hookTimeout: 60_000 });
