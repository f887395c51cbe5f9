/**
 * Well-behaved agents for the fault-injection tests and the soak: one connection each (stdio
 * has one connection, which its agents share), one request at a time, every answer checked and
 * its latency recorded. Raw JSON-RPC over the wire (no client library in the measured path), so
 * that the agents cost the two shared cores as little as possible.
 */
import * as http from "node:http";
import { connect, type Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import WebSocket from "ws";
import type { HarnessProcess } from "./harness-process.js";

/** Latencies in milliseconds, with percentiles. */
export class Latencies {
  readonly values: number[] = [];

  add(ms: number): void {
    this.values.push(ms);
  }

  get count(): number {
    return this.values.length;
  }

  /** The `p`-th percentile (0–100), nearest rank; NaN when empty. */
  percentile(p: number, values: readonly number[] = this.values): number {
    if (values.length === 0) return Number.NaN;
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
  }

  summary(): string {
    return `${this.count} requests, p50 ${this.percentile(50).toFixed(2)} ms, p99 ${this.percentile(99).toFixed(2)} ms, max ${this.percentile(100).toFixed(2)} ms`;
  }
}

/** One agent connection speaking raw JSON-RPC. */
export interface RpcConnection {
  /** Sends a request and resolves with its answer (rejects when the connection dies or `timeoutMs` passes). */
  call(method: string, params: unknown, timeoutMs?: number): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

let nextId = 1;
const newId = () => `agent-${process.pid}-${nextId++}`;

type Pending = Map<string, { resolve: (a: Record<string, unknown>) => void; reject: (e: Error) => void }>;

function withTimeout<T>(promise: Promise<T>, ms: number, what: string, onTimeout: () => void): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        onTimeout();
        reject(new Error(`${what}: no answer within ${ms} ms`));
      }, ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Requests and answers as NDJSON lines over a stream pair (stdio, a Unix socket). */
export class StreamRpc implements RpcConnection {
  readonly #pending: Pending = new Map();
  readonly #writable: Writable;
  readonly #onClose: () => Promise<void>;
  #buffer = "";
  #dead: Error | undefined;

  constructor(readable: Readable, writable: Writable, onClose: () => Promise<void> = async () => undefined) {
    this.#writable = writable;
    this.#onClose = onClose;
    readable.setEncoding("utf8");
    readable.on("data", (chunk: string) => {
      this.#buffer += chunk;
      let nl: number;
      while ((nl = this.#buffer.indexOf("\n")) !== -1) {
        const line = this.#buffer.slice(0, nl);
        this.#buffer = this.#buffer.slice(nl + 1);
        let answer: Record<string, unknown>;
        try {
          answer = JSON.parse(line) as Record<string, unknown>;
        } catch {
          continue;
        }
        const id = answer.id;
        const waiter = typeof id === "string" ? this.#pending.get(id) : undefined;
        if (waiter !== undefined) {
          this.#pending.delete(id as string);
          waiter.resolve(answer);
        }
      }
    });
    const die = () => this.#fail(new Error("connection closed"));
    readable.on("close", die);
    readable.on("end", die);
    readable.on("error", (e: Error) => this.#fail(e));
    writable.on("error", (e: Error) => this.#fail(e));
  }

  static async unix(path: string): Promise<StreamRpc> {
    const socket: Socket = await new Promise((resolve, reject) => {
      const s = connect(path, () => resolve(s));
      s.once("error", reject);
    });
    return new StreamRpc(socket, socket, async () => {
      socket.destroy();
    });
  }

  #fail(error: Error): void {
    this.#dead ??= error;
    for (const w of this.#pending.values()) w.reject(error);
    this.#pending.clear();
  }

  call(method: string, params: unknown, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    const id = newId();
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.#writable.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
    return withTimeout(answer, timeoutMs, method, () => this.#pending.delete(id));
  }

  close(): Promise<void> {
    return this.#onClose();
  }
}

/** One kept-alive HTTP connection. */
export class HttpRpc implements RpcConnection {
  readonly #url: URL;
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

  constructor(url: string) {
    this.#url = new URL(url);
  }

  call(method: string, params: unknown, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    const body = JSON.stringify({ jsonrpc: "2.0", id: newId(), method, params });
    return new Promise((resolve, reject) => {
      const req = http.request(
        this.#url,
        {
          method: "POST",
          agent: this.#agent,
          timeout: timeoutMs,
          headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>);
            } catch {
              reject(new Error(`HTTP ${res.statusCode}: not JSON`));
            }
          });
          res.on("error", reject);
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method}: no answer within ${timeoutMs} ms`)));
      req.on("error", reject);
      req.end(body);
    });
  }

  async close(): Promise<void> {
    this.#agent.destroy();
  }
}

/** One WebSocket connection. */
export class WsRpc implements RpcConnection {
  readonly #pending: Pending = new Map();
  readonly ws: WebSocket;
  #dead: Error | undefined;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data: Buffer) => {
      let answer: Record<string, unknown>;
      try {
        answer = JSON.parse(data.toString("utf8")) as Record<string, unknown>;
      } catch {
        return;
      }
      const id = answer.id;
      const waiter = typeof id === "string" ? this.#pending.get(id) : undefined;
      if (waiter !== undefined) {
        this.#pending.delete(id as string);
        waiter.resolve(answer);
      }
    });
    ws.on("close", (code) => {
      this.#dead ??= new Error(`WebSocket closed (${code})`);
      for (const w of this.#pending.values()) w.reject(this.#dead);
      this.#pending.clear();
    });
    ws.on("error", () => undefined);
  }

  static open(url: string): Promise<WsRpc> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      ws.once("open", () => resolve(new WsRpc(ws)));
      ws.once("error", reject);
    });
  }

  call(method: string, params: unknown, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    const id = newId();
    const answer = new Promise<Record<string, unknown>>((resolve, reject) => this.#pending.set(id, { resolve, reject }));
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return withTimeout(answer, timeoutMs, method, () => this.#pending.delete(id));
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.once("close", () => resolve());
      this.ws.close(1000);
      setTimeout(() => this.ws.terminate(), 2000).unref();
    });
  }
}

const stdioConnections = new WeakMap<HarnessProcess, StreamRpc>();

/** A connection to `harness` over `transport` (stdio: the one shared connection). */
export async function connectAgent(harness: HarnessProcess, transport: "stdio" | "unix" | "http" | "ws"): Promise<RpcConnection> {
  switch (transport) {
    case "stdio": {
      let rpc = stdioConnections.get(harness);
      if (rpc === undefined) {
        rpc = new StreamRpc(harness.child.stdout!, harness.child.stdin!);
        stdioConnections.set(harness, rpc);
      }
      return rpc;
    }
    case "unix":
      return StreamRpc.unix(harness.urls.unix!);
    case "http":
      return new HttpRpc(harness.urls.http!);
    case "ws":
      return WsRpc.open(harness.urls.ws!);
  }
}

/** A `pre_action` event for a shell command (the default policy allows `ls`, blocks `rm -rf /`). */
export function preAction(command: string, session = "agent"): Record<string, unknown> {
  return {
    event_type: "pre_action",
    session_id: session,
    agent_id: session,
    timestamp: new Date().toISOString(),
    depth: 0,
    payload: { action_type: "tool_call", tool_name: "bash", arguments: { command } },
  };
}

export interface GoodAgentResult {
  latencies: Latencies;
  errors: string[];
}

/**
 * A well-behaved agent: sends `pre_action` events one at a time until `stop` aborts, and checks
 * each decision (`ls -la` allowed, `rm -rf /` blocked).
 */
export async function goodAgent(rpc: RpcConnection, stop: AbortSignal, options: { maxRequests?: number } = {}): Promise<GoodAgentResult> {
  const latencies = new Latencies();
  const errors: string[] = [];
  const max = options.maxRequests ?? Number.POSITIVE_INFINITY;
  for (let i = 0; !stop.aborted && i < max; i++) {
    const destructive = i % 10 === 9;
    const started = performance.now();
    try {
      const answer = await rpc.call("ahp/event", preAction(destructive ? "rm -rf /" : "ls -la"), 20_000);
      latencies.add(performance.now() - started);
      const decision = (answer.result as { decision?: unknown } | undefined)?.decision;
      if (decision !== (destructive ? "block" : "allow")) errors.push(`unexpected answer: ${JSON.stringify(answer).slice(0, 200)}`);
    } catch (error) {
      errors.push((error as Error).message);
      if (errors.length > 20) break;
    }
  }
  return { latencies, errors };
}
