import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "bench", "examples/*/vitest.config.ts"],
    // Vitest's default is one worker fewer than the cores (one on a 2-core machine), but most of
    // the slow test files wait on child processes, sockets and timers: two files at a time on
    // two cores finish the suite sooner without starving either.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
