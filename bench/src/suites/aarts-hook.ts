/**
 * The hook's cost per tool call as an agent host pays it: one process spawned per call, a
 * Claude Code `PreToolUse` piped in, answered through a harness kept running on a Unix socket
 * (an `AhpServer` in this process that allows everything), `{}` read back.
 *
 * Rows, spawned interleaved round by round so that machine noise hits all alike:
 * - floor: `node -e` that reads stdin and prints `{}` (the cost of starting Node at all);
 * - limit: `node -e` that reads stdin, connects to the socket, does the AHP handshake and prints
 *   `{}` (what no hook reaching a harness can go below);
 * - the installer's command (`ahp-aarts-hook claude-code --connect unix:… --host-timeout-ms
 *   60000`, through `bin/ahp-aarts-hook.cjs`, the launcher with the code cache);
 * - the one-file bin run directly (`node dist/bin.cjs …`: no code cache);
 * - `ahp hook claude-code …` through the `ahp` CLI's installed bin (`bin/ahp.cjs`, which hands a
 *   host's hook to the same launcher before Node's ESM loader starts, ADR 0176).
 * Every process is `node <args>`, as the floor is; a host adds its shell in front of all alike.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpServer, NdjsonStreamTransport } from "@ahp/core";
import { percentile, type Measurement, type Row, type Suite } from "../harness.js";

const repo = fileURLToPath(new URL("../../../", import.meta.url));
const aarts = join(repo, "packages", "aarts");
const launcher = join(aarts, "bin", "ahp-aarts-hook.cjs");
const bin = join(aarts, "dist", "bin.cjs");
const cli = join(repo, "apps", "cli", "bin", "ahp.cjs");

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

/** Reads stdin to its end, prints `{}`. */
const FLOOR = "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>process.stdout.write('{}\\n'))";

/** Reads stdin, connects to the socket in argv[1], handshakes, prints `{}` on the answer. */
const HANDSHAKE_LIMIT = [
  "const n=require('net');let s='',a='';",
  "const k=n.createConnection(process.argv[1]);",
  "process.stdin.on('data',c=>s+=c).on('end',()=>k.write(JSON.stringify({jsonrpc:'2.0',id:1,method:'ahp/handshake',",
  "params:{protocol_version:'2.4',agent_info:{framework:'limit',version:'0',capabilities:['pre_action']},session_id:'limit',agent_id:'limit'}})+'\\n'));",
  "k.on('data',c=>{a+=c;if(a.includes('\\n')){if(!a.includes('\"result\"'))process.exitCode=3;process.stdout.write('{}\\n');k.destroy()}})",
].join("");

interface Contender {
  readonly name: string;
  readonly args: string[];
  readonly samples: number[];
}

function timeOnce(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { env, stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    child.on("error", reject);
    child.on("close", (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0 || out.trim() !== "{}") {
        reject(new Error(`unexpected answer from node ${args.join(" ")}: exit ${code}, ${JSON.stringify(out)} ${err}`));
      } else resolve(ms);
    });
    child.stdin.end(input);
  });
}

function summarise(samples: number[]): Measurement & { p50Ms: number; p90Ms: number; p95Ms: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 0.5);
  return {
    opsPerSec: 1000 / p50,
    p50Us: p50 * 1000,
    p99Us: percentile(sorted, 0.99) * 1000,
    p50Ms: p50,
    p90Ms: percentile(sorted, 0.9),
    p95Ms: percentile(sorted, 0.95),
  };
}

/** Modification time of the newest file under `dir` (0 when there is none). */
function newestUnder(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** Builds what is missing or older than its package's sources: a stale build would be measured as the current one. */
function ensureBuilt(): void {
  const cliSources = join(repo, "apps", "cli", "src");
  const aartsSources = join(aarts, "src");
  for (const [file, pkg, sources] of [
    [bin, "@ahp/aarts", aartsSources],
    [join(aarts, "dist", "launch.cjs"), "@ahp/aarts", aartsSources],
    [join(repo, "apps", "cli", "dist", "main.js"), "@ahp/cli", cliSources],
  ] as const) {
    if (existsSync(file) && statSync(file).mtimeMs >= newestUnder(sources)) continue;
    const built = spawnSync("pnpm", ["turbo", "run", "build", `--filter=${pkg}...`], { cwd: repo, stdio: "ignore" });
    if (built.status !== 0 || !existsSync(file)) throw new Error(`${file} is missing or older than its sources and could not be built`);
  }
}

export const suite: Suite = {
  name: "aarts-hook",
  async run({ quick }) {
    ensureBuilt();
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
    // A fresh home: the code cache is written by the first run (a warm-up round), as it is on a
    // user's first tool call.
    const env = { PATH: process.env.PATH ?? "", HOME: dir, AHP_HOOK_STATE_DIR: join(dir, "state"), XDG_CACHE_HOME: join(dir, "cache") };
    const hookArgs = ["claude-code", "--connect", `unix:${socketPath}`, "--host-timeout-ms", "60000"];
    const contenders: Contender[] = [
      { name: "floor", args: ["-e", FLOOR], samples: [] },
      { name: "limit", args: ["-e", HANDSHAKE_LIMIT, socketPath], samples: [] },
      { name: "installer", args: [launcher, ...hookArgs], samples: [] },
      { name: "bin", args: [bin, ...hookArgs], samples: [] },
      { name: "cli", args: [cli, "hook", ...hookArgs], samples: [] },
    ];
    const runs = quick ? 5 : 40;
    try {
      for (let i = 0; i < 3; i++) for (const c of contenders) await timeOnce(c.args, payload, env);
      for (let i = 0; i < runs; i++) for (const c of contenders) c.samples.push(await timeOnce(c.args, payload, env));
    } finally {
      await server.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    }
    const [floor, limit, installer, direct, viaCli] = contenders.map((c) => summarise(c.samples)) as [
      ReturnType<typeof summarise>,
      ReturnType<typeof summarise>,
      ReturnType<typeof summarise>,
      ReturnType<typeof summarise>,
      ReturnType<typeof summarise>,
    ];
    const against = (m: ReturnType<typeof summarise>) =>
      `p50 ${m.p50Ms.toFixed(1)} ms, p90 ${m.p90Ms.toFixed(1)} ms (${(m.p90Ms / floor.p90Ms).toFixed(2)}x), p95 ${m.p95Ms.toFixed(1)} ms; +${(m.p50Ms - floor.p50Ms).toFixed(1)} ms over the floor`;
    const row = (name: string, m: ReturnType<typeof summarise>, note: string, target?: string): Row => ({
      suite: "aarts-hook",
      case: name,
      measurement: m,
      floor,
      ratio: m.p50Ms / floor.p50Ms,
      ...(target === undefined ? {} : { target }),
      note,
    });
    return [
      {
        suite: "aarts-hook",
        case: "floor: node -e (read stdin, print {})",
        measurement: floor,
        note: `${runs} spawns of each row, interleaved; p50 ${floor.p50Ms.toFixed(1)} ms, p90 ${floor.p90Ms.toFixed(1)} ms, p95 ${floor.p95Ms.toFixed(1)} ms`,
      },
      row("limit: node -e (read stdin, connect, AHP handshake, print {})", limit, against(limit)),
      row(
        "claude-code PreToolUse, allow: installer command (ahp-aarts-hook, code cache)",
        installer,
        `${against(installer)}; ${((installer.p50Ms - limit.p50Ms) / floor.p50Ms).toFixed(2)}x of the floor over the limit`,
        "<= 1.25x p50",
      ),
      row("claude-code PreToolUse, allow: node dist/bin.cjs (no code cache)", direct, against(direct)),
      row("claude-code PreToolUse, allow: ahp hook claude-code", viaCli, against(viaCli)),
    ];
  },
};
