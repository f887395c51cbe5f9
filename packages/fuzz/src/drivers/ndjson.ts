/** Fuzz driver for the NDJSON transports: the harness's stdin/stdout, or one Unix socket connection. */
import { connect, type Socket } from "node:net";
import type { Readable, Writable } from "node:stream";
import { canaries, checkCanaries } from "../canary.js";
import { expectNdjson, matchAnswers, type ExpectedAnswer } from "../expect.js";
import type { FuzzInput } from "../mutate.js";
import { DEFAULT_BATCH_TIMEOUT_MS, type BatchResult, type Driver, type TransportName } from "./types.js";

export class NdjsonDriver implements Driver {
  readonly transport: TransportName;
  readonly #writable: Writable;
  readonly #onClose: () => Promise<void>;
  readonly #timeoutMs: number;
  #answers: unknown[] = [];
  #garbage: string[] = [];
  #pending = "";
  #wake: (() => void) | undefined;
  #ended = false;

  constructor(
    transport: TransportName,
    readable: Readable,
    writable: Writable,
    onClose: () => Promise<void>,
    timeoutMs = DEFAULT_BATCH_TIMEOUT_MS,
  ) {
    this.transport = transport;
    this.#writable = writable;
    this.#onClose = onClose;
    this.#timeoutMs = timeoutMs;
    readable.setEncoding("utf8");
    readable.on("data", (chunk: string) => this.#onData(chunk));
    const ended = () => {
      this.#ended = true;
      this.#wake?.();
    };
    readable.on("end", ended);
    readable.on("close", ended);
    writable.on("error", () => undefined);
  }

  /** One connection to the harness's Unix socket. */
  static async unix(path: string, timeoutMs?: number): Promise<NdjsonDriver> {
    const socket: Socket = await new Promise((resolve, reject) => {
      const s = connect(path, () => resolve(s));
      s.once("error", reject);
    });
    socket.on("error", () => undefined);
    return new NdjsonDriver(
      "unix",
      socket,
      socket,
      () =>
        new Promise<void>((resolve) => {
          if (socket.closed) return resolve();
          socket.once("close", () => resolve());
          socket.end();
          setTimeout(() => socket.destroy(), 2000).unref();
        }),
      timeoutMs,
    );
  }

  #onData(chunk: string): void {
    this.#pending += chunk;
    for (let nl = this.#pending.indexOf("\n"); nl !== -1; nl = this.#pending.indexOf("\n")) {
      const line = this.#pending.slice(0, nl);
      this.#pending = this.#pending.slice(nl + 1);
      try {
        this.#answers.push(JSON.parse(line));
      } catch {
        this.#garbage.push(line.slice(0, 200));
      }
    }
    this.#wake?.();
  }

  async #write(data: Buffer | string): Promise<void> {
    if (this.#writable.write(data)) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        this.#writable.off("drain", done);
        this.#writable.off("close", done);
        resolve();
      };
      this.#writable.on("drain", done);
      this.#writable.on("close", done);
    });
  }

  async run(units: readonly FuzzInput[], tag: string): Promise<BatchResult> {
    const started = performance.now();
    const expected: ExpectedAnswer[] = [];
    for (const unit of units) {
      const e = expectNdjson(unit.bytes);
      if (e.kind === "answers") expected.push(...e.answers);
    }
    const list = canaries(tag);
    this.#answers = [];
    this.#garbage = [];
    // Pipelined: everything goes out before anything is read back, in chunks of a few units.
    let chunk: Buffer[] = [];
    let size = 0;
    for (const unit of units) {
      chunk.push(Buffer.from(unit.bytes), Buffer.from("\n"));
      size += unit.bytes.length + 1;
      if (size > 64 * 1024) {
        await this.#write(Buffer.concat(chunk));
        chunk = [];
        size = 0;
      }
    }
    chunk.push(Buffer.from(list.map((c) => `${c.text}\n`).join("")));
    await this.#write(Buffer.concat(chunk));
    const want = expected.length + list.length;
    const deadline = Date.now() + this.#timeoutMs;
    while (this.#answers.length < want && !this.#ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
        setTimeout(resolve, Math.max(1, Math.min(1000, deadline - Date.now()))).unref();
      });
      this.#wake = undefined;
    }
    const answers = this.#answers;
    this.#answers = [];
    const { problems, rest } = checkCanaries(list, answers);
    const mismatches = matchAnswers(expected, rest);
    problems.push(...mismatches);
    if (this.#garbage.length > 0) problems.push(`harness wrote ${this.#garbage.length} non-JSON line(s): ${this.#garbage[0]}`);
    if (this.#ended) problems.push("the connection ended");
    return {
      problems,
      unanswered: mismatches.filter((p) => p.startsWith("no answer")).length + problems.filter((p) => p.endsWith("got no answer")).length,
      elapsedMs: performance.now() - started,
    };
  }

  close(): Promise<void> {
    return this.#onClose();
  }
}
