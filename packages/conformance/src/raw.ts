/** Building blocks for {@link RawChannel} implementations (used by transports' conformance factories). */
import type { Readable, Writable } from "node:stream";
import type { RawChannel, RawFrame } from "./types.js";

/** A FIFO of received frames with a timed `next()`. */
export class RawFrameQueue {
  #frames: RawFrame[] = [];
  #waiters: Array<(frame: RawFrame | undefined) => void> = [];
  #closed = false;

  push(frame: RawFrame): void {
    if (this.#closed) return;
    const waiter = this.#waiters.shift();
    if (waiter !== undefined) waiter(frame);
    else this.#frames.push(frame);
  }

  /** The next frame, or `undefined` when none arrives within `timeoutMs` (default 5000) or the queue closes. */
  next(timeoutMs = 5000): Promise<RawFrame | undefined> {
    const frame = this.#frames.shift();
    if (frame !== undefined) return Promise.resolve(frame);
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter = (value: RawFrame | undefined) => {
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        const index = this.#waiters.indexOf(waiter);
        if (index !== -1) this.#waiters.splice(index, 1);
        resolve(undefined);
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Frames received and not yet taken. */
  get size(): number {
    return this.#frames.length;
  }

  close(): void {
    this.#closed = true;
    for (const waiter of this.#waiters.splice(0)) waiter(undefined);
  }
}

export interface NdjsonRawChannelOptions {
  /** Bytes from the harness (its stdout, the socket). */
  readable: Readable;
  /** Bytes to the harness (its stdin, the socket). */
  writable: Writable;
  /** Releases the underlying resources (end the socket, kill the child). */
  close?: () => Promise<void> | void;
}

/**
 * A raw channel over a newline-delimited byte stream: `send(text)` writes `text` plus `\n`
 * exactly; every line read (without its `\n` and a trailing `\r`; blank lines skipped) is a frame.
 * Lines are split on `\n` only, never on U+2028/U+2029.
 */
export function createNdjsonRawChannel(options: NdjsonRawChannelOptions): RawChannel {
  const queue = new RawFrameQueue();
  let pending = "";
  const decoder = new TextDecoder("utf-8");
  const onData = (chunk: Buffer | string) => {
    pending += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const line = pending.slice(0, nl).replace(/\r$/, "");
      pending = pending.slice(nl + 1);
      if (line.trim().length > 0) queue.push({ text: line });
    }
  };
  const onEnd = () => queue.close();
  options.readable.on("data", onData);
  options.readable.on("end", onEnd);
  options.readable.on("close", onEnd);
  let closed = false;
  return {
    framing: "ndjson",
    send: (text) =>
      new Promise<void>((resolve, reject) => {
        if (closed) {
          reject(new Error("raw channel is closed"));
          return;
        }
        options.writable.write(`${text}\n`, (error) => (error ? reject(error) : resolve()));
      }),
    next: (timeoutMs) => queue.next(timeoutMs),
    close: async () => {
      if (closed) return;
      closed = true;
      options.readable.off("data", onData);
      options.readable.off("end", onEnd);
      options.readable.off("close", onEnd);
      queue.close();
      await options.close?.();
    },
  };
}
