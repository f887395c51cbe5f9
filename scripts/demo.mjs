#!/usr/bin/env node
/**
 * `pnpm demo [options]`: builds what the demo needs, then runs it with the options given.
 * The build is quiet (turbo's banner and logs are shown only when it fails); when it takes more
 * than a moment (the first run builds every package, later runs hit turbo's cache) one line says
 * what is happening.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));

function build() {
  return new Promise((resolve, reject) => {
    const child = spawn("turbo", ["run", "build", "--filter=@ahp/demo...", "--output-logs=errors-only"], {
      cwd: root,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1", DO_NOT_TRACK: "1" },
    });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    const notice = setTimeout(
      () => {
        process.stderr.write("demo: building the packages it needs (about 30 s on the first run; later runs use the cache)...\n");
      },
      Number(process.env.AHP_DEMO_NOTICE_MS ?? 1500),
    );
    child.on("error", (error) => {
      clearTimeout(notice);
      reject(error);
    });
    child.on("close", (code) => {
      clearTimeout(notice);
      resolve({ code: code ?? 1, output });
    });
  });
}

const built = await build();
if (built.code !== 0) {
  process.stderr.write(built.output);
  process.stderr.write(`demo: the build failed (exit ${built.code}); the output above says why\n`);
  process.exit(built.code);
}
const demo = spawn(process.execPath, [fileURLToPath(new URL("../apps/demo/dist/main.js", import.meta.url)), ...process.argv.slice(2)], {
  stdio: "inherit",
});
demo.on("close", (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
