// The least any proxy process can cost: the agent as a child and its bytes copied both ways
// with `pipe()`, nothing parsed, nothing checked, nothing written but what arrived. The acp
// suite runs it beside the bridge to show what the extra process hop costs on its own.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const child = spawn(process.execPath, [fileURLToPath(new URL("./acp-agent.mjs", import.meta.url))], {
  stdio: ["pipe", "pipe", "inherit"],
});
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
process.stdin.on("end", () => child.stdin.end());
child.on("exit", () => process.exit(0));
