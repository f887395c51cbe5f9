#!/usr/bin/env node
// The `ahp` command. CommonJS, so that `ahp hook <host> …`, which an agent host runs for every
// tool call, reaches @ahp/aarts's hook launcher (its one-file bin through V8's code cache) before
// Node starts its ESM loader or the CLI loads any module; everything else imports the CLI
// (dist/main.js). Checked in (the build writes dist/), so that installing the workspace can link
// the bin before anything is built. The hosts are those of `ahp hook` (src/commands/hook.ts).
"use strict";

const path = require("node:path");

const HOOK_HOSTS = new Set(["claude-code", "cursor", "copilot-cli", "vscode", "cline", "windsurf"]);

/** Runs `ahp hook <host> …` through the launcher; false (nothing done) for anything else. */
function launchHook(argv) {
  if (argv[2] !== "hook" || !HOOK_HOSTS.has(argv[3])) return false;
  for (let i = 4; i < argv.length; i++) if (argv[i] === "--help" || argv[i] === "-h" || argv[i] === "--version") return false;
  let launcher;
  let dist;
  try {
    dist = path.join(path.dirname(require.resolve("@ahp/aarts/package.json")), "dist");
    launcher = require(path.join(dist, "launch.cjs"));
  } catch {
    return false; // the CLI's own dispatch runs the hook command
  }
  argv.splice(2, 1); // the hook command reads `<host> [options]`
  launcher.launch(path.join(dist, "bin.cjs"));
  return true;
}

if (!launchHook(process.argv)) {
  import("../dist/main.js").catch((error) => {
    process.stderr.write(`ahp: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
