import { project } from "../../vitest.shared.js";

// Browser tests start a real `ahp serve` and a headless chromium: give them room on a busy machine.
export default project("inspector", { testTimeout: 240_000, hookTimeout: 120_000 });
