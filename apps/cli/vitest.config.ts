import { project } from "../../vitest.shared.js";

// Every test here drives the built binary: several `ahp` processes, each a cold Node start with
// its own listeners. On a loaded machine one such test takes well over the shared 20 s; the
// tests bound each step with their own deadlines, so the per-test limit only has to be generous.
export default project("cli", { testTimeout: 120_000, hookTimeout: 60_000 });
