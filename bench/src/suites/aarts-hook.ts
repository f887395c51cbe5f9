/**
 * Cold start of the AARTS hook command (`@ahp/aarts`, `dist/bin.cjs`): time from spawn to
 * answer, as an agent host experiences it for every tool call. A Claude Code PreToolUse payload
 * is piped in; the hook connects to a local harness (AhpServer on a Unix socket in this
 * process), handshakes, evaluates, prints `{}` and exits.
 *
 * Floor (same run): `node -e` that reads stdin and prints `{}` — the cost of starting Node at all.
 * Middle row: `dist/bin.cjs --version`, the hook's own start-up without any I/O.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpServer, NdjsonStreamTransport } from "@ahp/core";
import { percentile, type Measurement, type Row, type Suite } from "../harness.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const bin = join(repo, "packages", "aarts", "dist", "bin.cjs");

const payload = JSON.stringify({
  session_id: "8f0d6c2e-3b1a-4c55-9d7e-2a6b1f4e9c01",
  transcript_path: "/home/dev/.claude/projects/-home-dev-shop/8f0d6c2e.jsonl",
  cwd: "/home/dev/shop",
  permission_mode: "default",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "npm install left-pad@1.3.0 && npm test", description: "install" },
  tool_use_id: "toolu_01ABCDEF1234567890abcdef",
});

const FLOOR = "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>process.stdout.write('{}\\n'))";

function timeOnce(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "ignore"] });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0 || (args[0] !== bin || args[1] !== "--version" ? out.trim() !== "{}" : out.trim() === "")) {
        reject(new Error(`unexpected answer from ${args.join(" ")}: exit ${code}, ${JSON.stringify(out)}`));
      } else resolve(ms);
    });
    child.stdin.end(input);
  });
}

function summarise(samples: number[]): Measurement & { p95Ms: number; p50Ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 0.5);
  return {
    opsPerSec: 1000 / p50,
    p50Us: p50 * 1000,
    p99Us: percentile(sorted, 0.99) * 1000,
    p50Ms: p50,
    p95Ms: percentile(sorted, 0.95),
  };
}

export const suite: Suite = {
  name: "aarts-hook",
  async run({ quick }) {
    if (!existsSync(bin)) {
      const built = spawnSync("pnpm", ["--filter", "@ahp/aarts", "build"], { cwd: repo, stdio: "ignore" });
      if (built.status !== 0 || !existsSync(bin)) throw new Error("packages/aarts/dist/bin.cjs is missing and could not be built");
    }
    const dir = mkdtempSync(join(tmpdir(), "aarts-bench-"));
    const socketPath = join(dir, "h.sock");
    const server = new AhpServer({
      harnessInfo: { name: "bench", capabilities: ["pre_action", "pre_prompt", "post_action", "session_end"] },
      handlers: { onEvent: () => ({ decision: "allow" }) },
    });
    const sockets = new Set<Socket>();
    const listener = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
      socket.on("error", () => undefined);
      void server.connect(new NdjsonStreamTransport({ readable: socket, writable: socket, onClose: () => void socket.destroy() }));
    });
    await new Promise<void>((resolve) => listener.listen(socketPath, resolve));
    const env = { PATH: process.env.PATH ?? "", HOME: dir, AHP_HOOK_STATE_DIR: join(dir, "state") };
    const hookArgs = [bin, "claude-code", "--connect", `unix:${socketPath}`];
    const runs = quick ? 5 : 20;
    const floor: number[] = [];
    const version: number[] = [];
    const hook: number[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        await timeOnce(["-e", FLOOR], payload, env);
        await timeOnce(hookArgs, payload, env);
      }
      // Interleaved so that machine noise hits all three alike.
      for (let i = 0; i < runs; i++) {
        floor.push(await timeOnce(["-e", FLOOR], payload, env));
        version.push(await timeOnce([bin, "--version"], "", env));
        hook.push(await timeOnce(hookArgs, payload, env));
      }
    } finally {
      await server.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    }
    const f = summarise(floor);
    const v = summarise(version);
    const h = summarise(hook);
    const rows: Row[] = [
      {
        suite: "aarts-hook",
        case: "floor: node -e (read stdin, print {})",
        measurement: f,
        note: `${runs} spawns; p50 ${f.p50Ms.toFixed(1)} ms, p95 ${f.p95Ms.toFixed(1)} ms`,
      },
      {
        suite: "aarts-hook",
        case: "hook bin start-up only (--version)",
        measurement: v,
        floor: f,
        ratio: v.p50Ms / f.p50Ms,
        note: `p50 ${v.p50Ms.toFixed(1)} ms, p95 ${v.p95Ms.toFixed(1)} ms; +${(v.p50Ms - f.p50Ms).toFixed(1)} ms over the floor: loading the one-file bin`,
      },
      {
        suite: "aarts-hook",
        case: "claude-code PreToolUse, unix socket harness, allow",
        measurement: h,
        floor: f,
        ratio: h.p50Ms / f.p50Ms,
        target: "< 150 ms p50",
        note: `p50 ${h.p50Ms.toFixed(1)} ms, p95 ${h.p95Ms.toFixed(1)} ms; +${(h.p50Ms - v.p50Ms).toFixed(1)} ms over start-up: connect, handshake, event, state file, audit`,
      },
    ];
    return rows;
  },
};
