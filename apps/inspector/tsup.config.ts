import { defineConfig } from "tsup";

// The Node entry only (where the built page is, and the `whoami.json` route); the page itself is
// bundled by scripts/build-page.mjs into dist/www/.
export default defineConfig({
  entry: { server: "src/server.ts" },
  format: ["esm", "cjs"],
  // `import.meta.url` in the CommonJS build (where the page is).
  shims: true,
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
  external: ["@ahp/agent-host"],
});
