/**
 * Newline-delimited JSON over Node streams (a process's stdin/stdout, a child's pipes, a
 * socket), as the ACP `Stream` the SDK's apps connect to. Same wire behaviour as the SDK's
 * `ndJsonStream` (LF or CRLF lines, blank lines skipped, `-32700` for a line that is not JSON,
 * `-32600` for a batch or a non-object, an error once a line exceeds the size limit), without
 * its per-message plumbing: lines are split on Buffers and decoded once, and every message
 * written in one turn of the event loop (all the reads it handled) leaves in a single write to
 * the Node stream. A direct writer lets the bridge write past the SDK's send chain.
 */
import type { AnyMessage, Stream } from "@agentclientprotocol/sdk";

/** The SDK's default limit on one incoming line (32 MiB). */
export const DEFAULT_MAX_LINE_BYTES = 32 * 1024 * 1024;

export interface NodeStreamOptions {
  /** Longest accepted incoming line in bytes; a longer one errors the readable side. Default 32 MiB. */
  maxMessageBytes?: number;
}

/** Raised on the readable side when an incoming line is longer than `maxMessageBytes`. */
export class LineTooLongError extends Error {
  override name = "LineTooLongError";
  constructor(readonly maxMessageBytes: number) {
    super(`Incoming ACP data exceeds the configured ${maxMessageBytes} byte limit`);
  }
}

/**
 * Key of the hook on a stream made by {@link ndJsonNodeStream} that installs a raw reader: it
 * sees each incoming message object before the SDK does, at read time and in wire order, and
 * takes it by returning true (the SDK then never sees it).
 */
export const RAW_READER = Symbol("ahp.acp-bridge.raw-reader");

/**
 * A raw reader (see {@link RAW_READER}); returns true when it took the message. `line` is the
 * message's line as received (trimmed, valid JSON), for a byte-for-byte pass-through.
 */
export type RawReader = (message: Record<string, unknown>, line: string) => boolean;

/** A stream that lets a raw reader in (see {@link RAW_READER}). */
export interface RawReadableStream extends Stream {
  [RAW_READER]: (reader: RawReader | undefined) => void;
}

/**
 * Key of the direct writer on a stream made by {@link ndJsonNodeStream}: it writes a message in
 * line with what the SDK writes, without the SDK's per-message promise chain, but only while
 * nothing the SDK was asked to send is still on its way to the stream (see {@link DirectWriter}).
 */
export const DIRECT_WRITER = Symbol("ahp.acp-bridge.direct-writer");

/** The direct writer of a stream (see {@link DIRECT_WRITER}). */
export interface DirectWriter {
  /**
   * Counts a message the SDK was just asked to send as on its way until `sent` settles (the SDK
   * settles it once the message has been handed to this stream).
   */
  sdkSend(sent: Promise<unknown>): void;
  /** Writes `message` now when no SDK message is on its way and the stream is open; false otherwise. */
  write(message: unknown): boolean;
  /** As `write`, for a message that is already one JSON line (no line break in it). */
  writeLine(line: string): boolean;
}

/** A stream with a raw reader and a direct writer. */
export interface DirectStream extends RawReadableStream {
  [DIRECT_WRITER]: DirectWriter;
}

const LF = 0x0a;
const CR = 0x0d;
/** Messages queued on the readable side before the input is paused. */
const READ_HIGH_WATER = 256;

const protocolError = (code: number, message: string, data?: unknown): AnyMessage =>
  ({ jsonrpc: "2.0", id: null, error: data === undefined ? { code, message } : { code, message, data } }) as unknown as AnyMessage;

/**
 * An ACP stream over Node streams: messages read from `input` one JSON line each, messages
 * written to `output` one JSON line each (coalesced per event-loop turn). The output is never ended by the
 * stream; closing it is the owner's business, as with the SDK's `ndJsonStream`.
 */
export function ndJsonNodeStream(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  options: NodeStreamOptions = {},
): DirectStream {
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_LINE_BYTES;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) throw new RangeError("maxMessageBytes must be a positive safe integer");
  const out = output as NodeJS.WritableStream & { writableNeedDrain?: boolean; destroyed?: boolean };

  // ---- writing: one string per event-loop turn (flushed in its check phase), handed to the Node stream in one write
  let pending = "";
  let scheduled = false;
  let failed: Error | undefined;
  const fail = (error: unknown) => {
    failed ??= error instanceof Error ? error : new Error(`the output stream failed: ${String(error)}`);
  };
  out.on("error", fail);
  const flush = () => {
    scheduled = false;
    if (pending === "" || failed !== undefined) return;
    const text = pending;
    pending = "";
    try {
      out.write(text, (error?: Error | null) => {
        if (error) fail(error);
      });
    } catch (error) {
      fail(error);
    }
  };
  const send = (message: unknown): void => {
    sendLine(JSON.stringify(message));
  };
  const sendLine = (line: string): void => {
    if (failed !== undefined) throw failed;
    if (out.destroyed === true) throw new Error("the output stream is closed");
    pending += `${line}\n`;
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const writable = new WritableStream<AnyMessage>({
    write(message) {
      send(message);
      // Back-pressure: the next message waits while the Node stream's buffer is full.
      if (out.writableNeedDrain === true) {
        return new Promise<void>((resolve) => {
          const done = () => {
            out.off("drain", done);
            out.off("close", done);
            resolve();
          };
          out.once("drain", done);
          out.once("close", done);
        });
      }
      return undefined;
    },
    close() {
      flush();
    },
  });

  // ---- reading: split Buffers on LF, decode each line once, parse, hand objects to the SDK
  let reading: ReadableStreamDefaultController<AnyMessage> | undefined;
  let carry: Buffer[] = [];
  let carryBytes = 0;
  let ended = false;
  let raw: RawReader | undefined;
  /** The line ending at `end` of `chunk` (plus what was carried over), its LF excluded. */
  const lineOf = (chunk: Buffer, start: number, end: number): string => {
    const whole = carry.length === 0 ? chunk.subarray(start, end) : Buffer.concat([...carry, chunk.subarray(start, end)]);
    carry = [];
    carryBytes = 0;
    // A CR before the LF is not part of the line.
    const bytes = whole.length > 0 && whole[whole.length - 1] === CR ? whole.length - 1 : whole.length;
    if (bytes > maxBytes) throw new LineTooLongError(maxBytes);
    return whole.toString("utf8");
  };
  const deliver = (c: ReadableStreamDefaultController<AnyMessage>, line: string) => {
    const text = line.trim();
    if (text === "") return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      sendQuietly(protocolError(-32700, "Parse error"));
      return;
    }
    if (Array.isArray(message)) sendQuietly(protocolError(-32600, "Invalid request: JSON-RPC batches are not supported"));
    else if (typeof message === "object" && message !== null) {
      if (raw === undefined || !raw(message as Record<string, unknown>, text)) c.enqueue(message as AnyMessage);
    } else sendQuietly(protocolError(-32600, "Invalid request", message));
  };
  const sendQuietly = (message: AnyMessage) => {
    try {
      send(message);
    } catch {
      // the output is gone: nobody to tell
    }
  };
  const onData = (data: Buffer | string) => {
    const c = reading;
    if (c === undefined) return;
    const chunk = typeof data === "string" ? Buffer.from(data) : data;
    try {
      let start = 0;
      let lf = chunk.indexOf(LF, start);
      while (lf !== -1) {
        deliver(c, lineOf(chunk, start, lf));
        start = lf + 1;
        lf = chunk.indexOf(LF, start);
      }
      if (start < chunk.length) {
        const rest = chunk.subarray(start);
        if (carryBytes + rest.length > maxBytes + 1) throw new LineTooLongError(maxBytes);
        carry.push(rest);
        carryBytes += rest.length;
      }
    } catch (error) {
      stop();
      carry = [];
      carryBytes = 0;
      c.error(error);
      return;
    }
    if ((c.desiredSize ?? 1) <= 0) input.pause();
  };
  const onEnd = () => {
    const c = reading;
    if (c === undefined || ended) return;
    ended = true;
    stop();
    try {
      if (carry.length > 0) {
        const whole = Buffer.concat(carry);
        carry = [];
        carryBytes = 0;
        deliver(c, whole.toString("utf8"));
      }
      c.close();
    } catch (error) {
      c.error(error);
    }
  };
  const onError = (error: unknown) => {
    const c = reading;
    if (c === undefined || ended) return;
    ended = true;
    stop();
    c.error(error);
  };
  const stop = () => {
    input.off("data", onData);
    input.off("end", onEnd);
    input.off("close", onEnd);
    input.off("error", onError);
  };
  const readable = new ReadableStream<AnyMessage>(
    {
      start(controller) {
        reading = controller;
        input.on("data", onData);
        input.on("end", onEnd);
        input.on("close", onEnd);
        input.on("error", onError);
      },
      pull() {
        if (!ended && input.isPaused()) input.resume();
      },
      cancel() {
        ended = true;
        stop();
        reading = undefined;
        (input as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      },
    },
    { highWaterMark: READ_HIGH_WATER },
  );
  let sdkOnItsWay = 0;
  const settled = () => {
    sdkOnItsWay--;
  };
  const direct: DirectWriter = {
    sdkSend(sent) {
      sdkOnItsWay++;
      sent.then(settled, settled);
    },
    write(message) {
      if (sdkOnItsWay > 0 || failed !== undefined || out.destroyed === true) return false;
      send(message);
      return true;
    },
    writeLine(line) {
      if (sdkOnItsWay > 0 || failed !== undefined || out.destroyed === true) return false;
      sendLine(line);
      return true;
    },
  };
  return {
    readable,
    writable,
    [DIRECT_WRITER]: direct,
    [RAW_READER]: (reader: RawReader | undefined) => {
      raw = reader;
    },
  };
}
