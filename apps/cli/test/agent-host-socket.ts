/**
 * A minimal Agent Host client for the CLI tests: JSON-RPC over one WebSocket, every frame kept,
 * `next(test)` resolving with the first frame (already received or later) that passes `test`.
 */
// Frames from the wire are read as untyped JSON in assertions; a wrong shape fails the expectation.

import { WebSocket } from "ws";

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
