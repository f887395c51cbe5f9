import { defineConfig } from "tsup";

export default defineConfig({
  entry: ["src/main.ts", "src/harness.ts"],
  format: ["esm"],
  sourcemap: true,
  clean: true,
  target: "node20",
  banner: { js: "#!/usr/bin/env node" },
});
