import { project } from "../../vitest.shared.js";

// Demo runs start harnesses and processes: bounded generously for a busy machine.
export default project("demo", { testTimeout: 60_000, hookTimeout: 60_000 });
