import { defineConfig } from "tsup";

export default defineConfig({
  // `server` is a separate entry so that harness child processes can load the scripted
  // harness without loading vitest.
  entry: { index: "src/index.ts", server: "src/server-entry.ts" },
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  external: ["vitest", "zod", "@ahp/core"],
});
