import { project } from "../vitest.shared.js";

// The suites run as a child process on the built packages, as `pnpm bench` runs them.
export default project("bench", { testTimeout: 620_000 });
