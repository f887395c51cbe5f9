import { defineConfig } from "tsup";

/**
 * Two outputs: the `ahp` command (`dist/main.js`, ESM, run through `bin/ahp.cjs`, or `bin/ahp.js` as an ES module) and the harness
 * composition `@ahp/cli/harness` (ESM + CJS + types) that the demo and embedders reuse.
 */
export default defineConfig([
  {
    entry: ["src/main.ts"],
    format: ["esm"],
    sourcemap: true,
    clean: true,
    target: "node20",
    banner: { js: "#!/usr/bin/env node" },
  },
  {
    entry: ["src/harness.ts"],
    format: ["esm", "cjs"],
    dts: { banner: '/// <reference types="node" />' },
    sourcemap: true,
    target: "node20",
  },
]);
