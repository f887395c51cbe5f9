/**
 * A {@link Transport} over any pair of byte streams with NDJSON framing. The stdio and Unix
 * socket transports are thin wrappers around it.
 */
import type { Readable, Writable } from "node:stream";
import { AhpLocalError, toError } from "./errors.js";
import { stringifyMessage } from "./json-text.js";
import { NdjsonDecoder } from "./ndjson.js";
import type { JsonRpcMessage } from "./schema/jsonrpc.js";
import {
  DEFAULT_MAX_MESSAGE_BYTES,
  type MessageLimits,
  type Transport,
  type TransportInfo,
  type TransportSendOptions,
} from "./transport.js";

export interface NdjsonStreamTransportOptions extends MessageLimits {
  readable: Readable;
  writable: Writable;
  info?: TransportInfo;
  /** Called by close() after the streams are released (e.g. to end a socket or kill a child). */
  onClose?: () => Promise<void> | void;
  /** When true (default) the end of the readable stream closes the transport. */
  closeOnEnd?: boolean;
}

export class NdjsonStreamTransport implements Transport {
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  readonly info?: TransportInfo;

  readonly #readable: Readable;
  readonly #writable: Writable;
  readonly #decoder: NdjsonDecoder;
  readonly #maxMessageBytes: number;
  readonly #onCloseHook?: () => Promise<void> | void;
  readonly #closeOnEnd: boolean;
  #started = false;
  #closed = false;
  #closing?: Promise<void>;
  /** Serializes writes so concurrent sends never interleave. */
  #writeChain: Promise<void> = Promise.resolve();
  /** Writes handed to the writable and not yet confirmed; close() fails them instead of leaving them pending. */
  readonly #unconfirmed = new Set<(error: Error) => void>();
  #closeCause?: Error;

  constructor(options: NdjsonStreamTransportOptions) {
    this.#readable = options.readable;
    this.#writable = options.writable;
    this.#decoder = new NdjsonDecoder(options);
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    if (options.info !== undefined) this.info = options.info;
    if (options.onClose !== undefined) this.#onCloseHook = options.onClose;
    this.#closeOnEnd = options.closeOnEnd ?? true;
  }

  get closed(): boolean {
    return this.#closed;
  }

  async start(): Promise<void> {
    if (this.#started) throw new AhpLocalError("INVALID_ARGUMENT", "transport already started");
    this.#started = true;
    this.#readable.on("data", this.#onData);
    this.#readable.on("error", this.#onStreamError);
    this.#readable.on("end", this.#onEnd);
    this.#readable.on("close", this.#onEnd);
    this.#writable.on("error", this.#onStreamError);
  }

  readonly #onData = (chunk: Buffer | string): void => {
    for (const frame of this.#decoder.push(chunk)) this.#deliver(frame);
  };

  #deliver(frame: ReturnType<NdjsonDecoder["push"]>[number]): void {
    if (this.#closed) return;
    if (frame.ok) {
      try {
        this.onmessage?.(frame.value);
      } catch (error) {
        this.onerror?.(toError(error));
      }
    } else if (this.onparseerror !== undefined) {
      if (frame.id === undefined) this.onparseerror(frame.error);
      else this.onparseerror(frame.error, { id: frame.id });
    }
    else this.onerror?.(frame.error);
  }

  readonly #onEnd = (): void => {
    for (const frame of this.#decoder.end()) this.#deliver(frame);
    if (this.#closeOnEnd) void this.#shutdown(this.#closeCause);
  };

  readonly #onStreamError = (error: Error): void => {
    this.#closeCause ??= new AhpLocalError("CONNECTION_CLOSED", `stream error: ${error.message}`, { cause: error });
    this.onerror?.(error);
    void this.#shutdown(this.#closeCause);
  };

  /** Marks the cause that the next close reports (used by wrappers, e.g. "child exited with code 1"). */
  setCloseCause(error: Error): void {
    this.#closeCause ??= error;
  }

  #closedError(): Error {
    return this.#closeCause ?? new AhpLocalError("CONNECTION_CLOSED", "Connection closed");
  }

  async send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    if (this.#closed) throw this.#closedError();
    const line = `${stringifyMessage(message, this.#maxMessageBytes)}\n`;
    const previous = this.#writeChain;
    const write = previous.then(() => this.#write(line, options?.signal));
    this.#writeChain = write.catch(() => undefined);
    return write;
  }

  #write(line: string, signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    if (signal?.aborted) return Promise.reject(new AhpLocalError("ABORTED", "send aborted", { cause: signal.reason }));
    return new Promise<void>((resolve, reject) => {
      let removeListeners = () => {};
      const settle = (error?: Error) => {
        this.#unconfirmed.delete(settle);
        removeListeners();
        if (error === undefined) resolve();
        else reject(error);
      };
      this.#unconfirmed.add(settle);
      let ok: boolean;
      try {
        ok = this.#writable.write(line, (error) => {
          if (error) settle(new AhpLocalError("SEND_FAILED", `write failed: ${error.message}`, { cause: error }));
          else if (ok) settle();
        });
      } catch (error) {
        settle(new AhpLocalError("SEND_FAILED", `write failed: ${toError(error).message}`, { cause: error }));
        return;
      }
      if (ok) return;
      // Backpressure: wait for drain (or close / abort) before the next write.
      const onDrain = () => settle();
      const onClose = () => settle(this.#closedError());
      const onAbort = () => settle(new AhpLocalError("ABORTED", "send aborted", { cause: signal?.reason }));
      removeListeners = () => {
        this.#writable.off("drain", onDrain);
        this.#writable.off("close", onClose);
        signal?.removeEventListener("abort", onAbort);
      };
      this.#writable.once("drain", onDrain);
      this.#writable.once("close", onClose);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    await this.#shutdown();
  }

  #shutdown(cause?: Error): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      // Sends still waiting for the writable (drain, write callback) fail now with the close cause.
      const error = cause ?? this.#closedError();
      for (const settle of [...this.#unconfirmed]) settle(error);
      this.#readable.off("data", this.#onData);
      this.#readable.off("end", this.#onEnd);
      this.#readable.off("close", this.#onEnd);
      try {
        await this.#onCloseHook?.();
      } catch (error) {
        this.onerror?.(toError(error));
      }
      this.onclose?.(cause ?? this.#closeCause);
    })();
    return this.#closing;
  }
}
