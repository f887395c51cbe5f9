import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "bench", "examples/*/vitest.config.ts"],
  },
});
