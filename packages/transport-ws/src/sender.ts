/**
 * Writes text frames to one WebSocket with bounded buffering. While `ws.bufferedAmount` is
 * below `maxBufferedBytes` a frame is handed to `ws` at once; above it, frames wait in order
 * until the socket drains (each write's completion callback re-checks the level). A peer that
 * does not read for `drainTimeoutMs` while frames wait is reported through `onStall` (the owner
 * then drops the connection). Optionally the socket stops reading while frames wait, so a peer
 * cannot pile up requests whose answers it does not take.
 *
 * Given the socket under the WebSocket, the frames sent during one job (a burst of requests, the
 * answers to the frames of one received chunk) leave in two writes at most: the first frame is
 * written at once, then the socket is corked and a microtask queued that uncorks it, so the
 * frames sent after the first until that microtask runs go out together. A lone frame is never
 * held back.
 */
import { AhpLocalError, toError } from "@ahp/core";
import type { WebSocket } from "ws";

export interface FrameSenderOptions {
  maxBufferedBytes: number;
  /** `0` disables stall detection. */
  drainTimeoutMs: number;
  /** Pause reading from the peer while frames wait (server side). */
  pauseReading: boolean;
  /** How to pause and resume reading (default `ws.pause()` / `ws.resume()`); lets an owner combine several reasons to pause. */
  readGate?: { pause(): void; resume(): void };
  onStall: (error: AhpLocalError) => void;
  /**
   * The socket under the WebSocket (the upgrade's `req.socket` or `res.socket`): when given,
   * the frames sent in one job are written together (see the class comment).
   */
  socket?: Corkable | undefined;
}

/** What the sender needs of the socket under the WebSocket. */
export interface Corkable {
  cork(): void;
  uncork(): void;
}

interface Waiting {
  text: string;
  resolve: () => void;
  reject: (error: Error) => void;
  signal?: AbortSignal | undefined;
  onAbort?: (() => void) | undefined;
}

const RESOLVED = Promise.resolve();

export class FrameSender {
  readonly #ws: WebSocket;
  readonly #options: FrameSenderOptions;
  #queue: Waiting[] = [];
  #stallTimer: ReturnType<typeof setTimeout> | undefined;
  #paused = false;
  #failure: Error | undefined;
  /** The socket is corked until the microtask queued after the first frame of this job runs. */
  #corked = false;

  constructor(ws: WebSocket, options: FrameSenderOptions) {
    this.#ws = ws;
    this.#options = options;
  }

  /** Hands one frame to `ws`; after the first of a job the socket is corked until the job is done. */
  #write(text: string): void {
    this.#ws.send(text, this.#onWritten);
    const socket = this.#options.socket;
    if (socket !== undefined && !this.#corked) {
      this.#corked = true;
      socket.cork();
      queueMicrotask(this.#uncork);
    }
  }

  readonly #uncork = (): void => {
    this.#corked = false;
    this.#options.socket?.uncork();
  };

  /** Frames waiting for the socket to drain. */
  get waiting(): number {
    return this.#queue.length;
  }

  send(text: string, signal?: AbortSignal): Promise<void> {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    if (this.#queue.length === 0 && this.#ws.bufferedAmount < this.#options.maxBufferedBytes) {
      this.#write(text);
      return RESOLVED;
    }
    if (signal?.aborted) return Promise.reject(new AhpLocalError("ABORTED", "send aborted", { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      const entry: Waiting = { text, resolve, reject, signal };
      if (signal !== undefined) {
        entry.onAbort = () => {
          const index = this.#queue.indexOf(entry);
          if (index >= 0) this.#queue.splice(index, 1);
          reject(new AhpLocalError("ABORTED", "send aborted", { cause: signal.reason }));
          if (this.#queue.length === 0) this.#drained();
        };
        signal.addEventListener("abort", entry.onAbort, { once: true });
      }
      this.#queue.push(entry);
      if (this.#queue.length === 1) this.#congested();
    });
  }

  /**
   * Like `send()` without a promise when the frame can go out at once (the common case);
   * `onFailure(error, context)` is called, after this returned, only when the frame cannot be
   * written (see `Transport.post`). A frame that must wait takes `send()`'s path.
   */
  post<C>(text: string, onFailure: (error: Error, context: C) => void, context: C): void {
    if (this.#failure === undefined && this.#queue.length === 0 && this.#ws.bufferedAmount < this.#options.maxBufferedBytes) {
      this.#write(text);
      return;
    }
    this.send(text).then(undefined, (error: unknown) => onFailure(toError(error), context));
  }

  /** Rejects every waiting frame (the connection is gone) and refuses further sends. */
  fail(error: Error): void {
    this.#failure ??= error;
    this.#clearStallTimer();
    const queue = this.#queue;
    this.#queue = [];
    for (const entry of queue) {
      if (entry.onAbort !== undefined) entry.signal?.removeEventListener("abort", entry.onAbort);
      entry.reject(error);
    }
  }

  readonly #onWritten = (error?: Error | null): void => {
    // A write error closes the socket; `fail()` follows from the close handler. (Streams pass `null` on success.)
    if (!error && this.#queue.length > 0) this.#flush();
  };

  #flush(): void {
    const max = this.#options.maxBufferedBytes;
    let progressed = false;
    while (this.#queue.length > 0 && this.#ws.bufferedAmount < max && this.#ws.readyState === 1) {
      const entry = this.#queue.shift()!;
      if (entry.onAbort !== undefined) entry.signal?.removeEventListener("abort", entry.onAbort);
      this.#write(entry.text);
      entry.resolve();
      progressed = true;
    }
    if (this.#queue.length === 0) this.#drained();
    else if (progressed) this.#armStallTimer();
  }

  #congested(): void {
    if (this.#options.pauseReading && !this.#paused) {
      this.#paused = true;
      if (this.#options.readGate !== undefined) this.#options.readGate.pause();
      else this.#ws.pause();
    }
    this.#armStallTimer();
  }

  #drained(): void {
    this.#clearStallTimer();
    if (this.#paused) {
      this.#paused = false;
      if (this.#options.readGate !== undefined) this.#options.readGate.resume();
      else if (this.#ws.readyState === 1) this.#ws.resume();
    }
  }

  #armStallTimer(): void {
    this.#clearStallTimer();
    const ms = this.#options.drainTimeoutMs;
    if (ms <= 0 || !Number.isFinite(ms)) return;
    this.#stallTimer = setTimeout(() => {
      this.#stallTimer = undefined;
      const buffered = this.#ws.bufferedAmount;
      this.#options.onStall(
        new AhpLocalError(
          "TIMEOUT",
          `WebSocket peer is not reading: ${buffered} bytes buffered and ${this.#queue.length} frames waiting for ${ms}ms`,
          {
            details: { bufferedBytes: buffered, waitingFrames: this.#queue.length, drainTimeoutMs: ms },
          },
        ),
      );
    }, ms);
    this.#stallTimer.unref?.();
  }

  #clearStallTimer(): void {
    if (this.#stallTimer !== undefined) {
      clearTimeout(this.#stallTimer);
      this.#stallTimer = undefined;
    }
  }
}
