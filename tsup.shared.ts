/**
 * The build every library package shares: ESM + CJS with type declarations and source maps, for
 * Node 20. A package's `tsup.config.ts` passes only what differs (entries, externals).
 */
import { defineConfig, type Options } from "tsup";

export const LIBRARY_BUILD: Options = {
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  dts: true,
  sourcemap: true,
  clean: true,
  target: "node20",
};

export function libraryConfig(overrides: Options = {}) {
  return defineConfig({ ...LIBRARY_BUILD, ...overrides });
}
