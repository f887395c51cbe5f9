/**
 * A minimal Agent Host client for the CLI tests: JSON-RPC over one WebSocket, every frame kept,
 * `next(test)` resolving with the first frame (already received or later) that passes `test`.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import { spawn, type ChildProcess } from "node:child_process";
import { WebSocket } from "ws";

/** A harness process started by {@link serveWithAgentHost}. */
export interface ServedHarness {
  child: ChildProcess;
  /** URL of the WebSocket (agent) listener. */
  ws: string;
  /** URL of the Agent Host listener. */
  agentHost: string;
  /** The JSON log lines written to stderr so far. */
  logs: () => Array<Record<string, unknown>>;
}

/**
 * Runs `node <bin> <args>` (an `ahp serve` with a ws and an agent-host listener), adds the child
 * to `running` (the caller stops it), and resolves once both listeners logged their URLs;
 * rejects with the stderr text when the process exits first.
 */
export async function serveWithAgentHost(bin: string, args: string[], running: ChildProcess[]): Promise<ServedHarness> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ["ignore", "ignore", "pipe"] });
  running.push(child);
  let stderr = "";
  const logs = () =>
    stderr
      .split("\n")
      .filter((l) => l.trim().startsWith("{"))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const urls = await new Promise<{ ws: string; agentHost: string }>((resolve, reject) => {
    child.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
      const listening = logs().filter((l) => l.msg === "listening");
      const ws = listening.find((l) => l.transport === "ws")?.url as string | undefined;
      const agentHost = listening.find((l) => l.transport === "agent-host")?.url as string | undefined;
      if (ws !== undefined && agentHost !== undefined) resolve({ ws, agentHost });
    });
    child.on("exit", (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  return { child, ...urls, logs };
}

export type Frame = Record<string, any>;

/** Opens an Agent Host socket with `token` and resolves once it is open. */
export async function agentHostSocket(url: string, token: string) {
  const ws = new WebSocket(`${url}?token=${token}`);
  const frames: Frame[] = [];
  const waiters: Array<{ test: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  ws.on("message", (data: Buffer) => {
    const f = JSON.parse(data.toString()) as Frame;
    frames.push(f);
    for (const w of [...waiters]) {
      if (!w.test(f)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(f);
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  let id = 0;
  const next = (test: (f: Frame) => boolean) => {
    const found = frames.find(test);
    return found !== undefined ? Promise.resolve(found) : new Promise<Frame>((resolve) => waiters.push({ test, resolve }));
  };
  const request = async (method: string, params: Record<string, unknown>) => {
    const rid = ++id;
    ws.send(JSON.stringify({ jsonrpc: "2.0", id: rid, method, params }));
    return next((f) => f.id === rid);
  };
  return { ws, frames, next, request, send: (m: unknown) => ws.send(JSON.stringify(m)) };
}
