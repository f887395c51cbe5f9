/**
 * The test client: speaks the Agent Host wire over a real `ws` socket, reuses the package's
 * reducers through `AgentHostClient`/`ClientState` (write-ahead reconciliation), records every
 * frame the host sent and checks each against the vendored schemas.
 */
import { WebSocket } from "ws";
import { AgentHostClient, type SocketLike } from "../../src/client/connection.js";
import type { ActionEnvelope } from "../../src/wire/types.js";
import { frameProblems } from "./schema.js";

export type Frame = Record<string, unknown> & { method?: string; params?: any; result?: any; error?: any; id?: unknown };

/** Every frame problem seen by any test client in this file (asserted empty by S27). */
export const allProblems: string[] = [];
export let framesChecked = 0;
let rawIds = 0;

export interface OpenOptions {
  token: string;
  clientId: string;
  /** Put the token in the query instead of the Authorization header. */
  query?: boolean;
}

export class TestClient {
  readonly frames: Frame[] = [];
  readonly api: AgentHostClient;
  readonly #methods = new Map<unknown, string>();
  #waiters: Array<{ test: (f: Frame) => boolean; resolve: (f: Frame) => void; from: number }> = [];
  closed?: { code: number; reason: string };
  #closeWaiters: Array<(c: { code: number; reason: string }) => void> = [];
  ws!: WebSocket;

  private constructor(
    readonly url: string,
    readonly options: OpenOptions,
  ) {
    this.api = new AgentHostClient(undefined, {
      clientId: options.clientId,
      onframe: (frame) => this.#onFrame(frame),
      onclose: (code, reason) => {
        this.closed = { code, reason };
        for (const w of this.#closeWaiters.splice(0)) w(this.closed);
      },
    });
  }

  static async open(url: string, options: OpenOptions): Promise<TestClient> {
    const client = new TestClient(url, options);
    await client.connect();
    return client;
  }

  /** Opens (or re-opens) the socket; keeps the client state. */
  async connect(): Promise<void> {
    const target = this.options.query ? `${this.url}?token=${encodeURIComponent(this.options.token)}` : this.url;
    const ws = new WebSocket(target, this.options.query ? {} : { headers: { authorization: `Bearer ${this.options.token}` } });
    this.closed = undefined;
    // Wrap send so that request ids map to their method (for result validation).
    const socket: SocketLike = Object.assign(ws, {}) as unknown as SocketLike;
    const send = ws.send.bind(ws);
    (ws as unknown as { send: (d: unknown, o?: unknown) => void }).send = (data: unknown, opts?: unknown) => {
      if (typeof data === "string") {
        try {
          const m = JSON.parse(data) as { id?: unknown; method?: string };
          if (m.id !== undefined && m.method !== undefined) this.#methods.set(m.id, m.method);
        } catch {
          // Deliberately malformed frames in the bad-input tests.
        }
      }
      send(data as string, opts as never);
    };
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
    this.ws = ws;
    this.api.replaceSocket(socket);
  }

  #onFrame(frame: Frame): void {
    const method = frame.method === undefined ? this.#methods.get(frame.id) : undefined;
    const problems = frameProblems(frame, method);
    framesChecked++;
    for (const p of problems) allProblems.push(`${JSON.stringify(frame).slice(0, 300)}: ${p}`);
    const index = this.frames.push(frame) - 1;
    for (const w of [...this.#waiters]) {
      if (index >= w.from && w.test(frame)) {
        this.#waiters.splice(this.#waiters.indexOf(w), 1);
        w.resolve(frame);
      }
    }
  }

  /** Resolves with the first frame (from position `from`, default 0) matching `test`. */
  next(test: (f: Frame) => boolean, from = 0): Promise<Frame> {
    const found = this.frames.slice(from).find(test);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ test, resolve, from }));
  }

  /** The next envelope whose action has `type` (optionally on `channel`). */
  action(type: string, channel?: string, from = 0): Promise<ActionEnvelope> {
    return this.next(
      (f) => f.method === "action" && f.params.action.type === type && (channel === undefined || f.params.channel === channel),
      from,
    ).then((f) => f.params as ActionEnvelope);
  }

  notification(method: string, from = 0): Promise<Frame> {
    return this.next((f) => f.method === method, from);
  }

  envelopes(): ActionEnvelope[] {
    return this.frames.filter((f) => f.method === "action").map((f) => f.params as ActionEnvelope);
  }

  get mark(): number {
    return this.frames.length;
  }

  /** Raw request (bypassing the helper), resolving with the whole response frame. */
  async raw(method: string, params: unknown, id: number | string = `raw-${++rawIds}`): Promise<Frame> {
    this.ws.send(JSON.stringify({ jsonrpc: "2.0", id, method, params }));
    return this.next((f) => f.id === id);
  }

  send(text: string | Buffer, binary = false): void {
    this.ws.send(text, { binary });
  }

  whenClosed(): Promise<{ code: number; reason: string }> {
    if (this.closed !== undefined) return Promise.resolve(this.closed);
    return new Promise((resolve) => this.#closeWaiters.push(resolve));
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
  }
}
