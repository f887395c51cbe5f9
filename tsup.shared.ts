/**
 * The build every library package shares: ESM + CJS with type declarations and source maps, for
 * Node 20. A package's `tsup.config.ts` passes only what differs (entries, externals).
 */
import { defineConfig, type Options } from "tsup";

export const LIBRARY_BUILD: Options = {
  entry: ["src/index.ts"],
  format: ["esm", "cjs"],
  // Our declarations use Node's types (node:stream, node:http, Buffer): the reference makes them
  // load for consumers whose tsconfig lists no "types" (the default from TypeScript 6.0 on).
  dts: { banner: '/// <reference types="node" />' },
  sourcemap: true,
  clean: true,
  target: "node20",
};

export function libraryConfig(overrides: Options = {}) {
  return defineConfig({ ...LIBRARY_BUILD, ...overrides });
}
