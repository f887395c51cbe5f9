import { fileURLToPath } from "node:url";
import { defineConfig, type Options } from "tsup";

/**
 * Three outputs:
 * - `index` (ESM + CJS + d.ts): the library; `@ahp/core` and zod stay external.
 * - `hook` (ESM + CJS + d.ts): the hook command for CLIs (`@ahp/aarts/hook`).
 * - `bin` (CommonJS, one file): the `ahp-aarts-hook` executable. CommonJS because Node's ESM loader
 *   costs about 8 ms of CPU per start-up that a hook spawned for every tool call would pay.
 *   `launch` (CommonJS, Node built-ins only) is what `bin/ahp-aarts-hook.cjs` runs: it loads
 *   `bin` through V8's code cache (ADR 0168). In `bin`, `node:crypto` is `src/hook/crypto-lite.ts`.
 *   `admin` (`install`, `doctor`, the usage text) is a file of its own that `bin` requires only
 *   when asked for, so that answering a hook does not read, compile or run it (ADR 0173).
 * `hook` and `bin` bundle the few `@ahp/core` modules they use from source, so that starting the
 * hook never loads zod or the wire schemas (cold start; measured by `pnpm bench`), and bundle
 * `@ahp/shell` (dependency-free) so that the hook loads one file.
 */
const coreSource = fileURLToPath(new URL("../core/src/index.ts", import.meta.url));
const bundleCore: Options["esbuildOptions"] = (options) => {
  options.alias = { ...(options.alias ?? {}), "@ahp/core": coreSource };
};
const cryptoLite = fileURLToPath(new URL("./src/hook/crypto-lite.ts", import.meta.url));
const hookCommand = fileURLToPath(new URL("./src/hook/command.ts", import.meta.url));

export default defineConfig([
  {
    entry: { index: "src/index.ts" },
    format: ["esm", "cjs"],
    dts: { banner: '/// <reference types="node" />' },
    sourcemap: true,
    target: "node20",
  },
  {
    entry: { hook: "src/hook/index.ts" },
    format: ["esm", "cjs"],
    dts: { banner: '/// <reference types="node" />' },
    sourcemap: true,
    target: "node20",
    noExternal: ["@ahp/core", "@ahp/shell"],
    esbuildOptions: bundleCore,
  },
  {
    entry: { bin: "src/bin.ts", launch: "src/hook/launch.ts", admin: "src/hook/admin.ts" },
    format: ["cjs"],
    sourcemap: false,
    target: "node20",
    noExternal: ["@ahp/core", "@ahp/shell", "@noble/hashes"],
    esbuildOptions: (options, context) => {
      bundleCore?.(options, context);
      // import() becomes require(): the launcher runs the bin as a vm.Script, where a dynamic
      // import would need a loader of its own.
      options.supported = { ...(options.supported ?? {}), "dynamic-import": false };
      // Smaller and one byte per character: less to read and decode at every start-up.
      options.charset = "ascii";
      options.minifyWhitespace = true;
    },
    // SHA-256 and random bytes without loading node:crypto (src/hook/crypto-lite.ts); tsup's own
    // rewriting of `node:` imports would mark node:crypto external before this plugin sees it.
    removeNodeProtocol: false,
    esbuildPlugins: [
      {
        name: "crypto-lite",
        setup(build) {
          build.onResolve({ filter: /^(node:)?crypto$/ }, (args) => (args.importer === cryptoLite ? undefined : { path: cryptoLite }));
        },
      },
      {
        // The hook command's `import("./admin.js")` loads dist/admin.cjs (next to dist/bin.cjs).
        name: "admin-apart",
        setup(build) {
          build.onResolve({ filter: /^\.\/admin\.js$/ }, (args) =>
            args.importer === hookCommand ? { path: "./admin.cjs", external: true } : undefined,
          );
        },
      },
    ],
    banner: { js: "#!/usr/bin/env node" },
  },
]);
