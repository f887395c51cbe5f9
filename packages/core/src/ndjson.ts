/**
 * Newline-delimited JSON framing (spec §13.1), shared by the stdio and Unix socket transports:
 * one JSON text per line, split on `\n` only, `\r\n` and surrounding whitespace tolerated,
 * blank lines skipped, a maximum message size enforced without buffering past it.
 */
import { AhpError, AhpErrorCode } from "./errors.js";
import { parseJsonText } from "./json-text.js";
import { markFrameLimit } from "./limits.js";
import type { JsonRpcId } from "./schema/jsonrpc.js";
import { SNIFF_HEAD_BYTES, sniffJsonRpcId } from "./sniff-id.js";
import { DEFAULT_MAX_MESSAGE_BYTES, type MessageLimits } from "./transport.js";

/**
 * One decoded line. A line refused for its size or nesting carries the message's `id` when it
 * could be read from the line's start ({@link sniffJsonRpcId}).
 */
export type NdjsonFrame = { ok: true; value: unknown } | { ok: false; error: AhpError; id?: JsonRpcId };

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into NDJSON frames (spec §13.1): push() chunks and get the completed lines as values or per-line errors. A
 * line over `maxMessageBytes` is refused without buffering it whole.
 */
export class NdjsonDecoder {
  readonly #limits: Required<Pick<MessageLimits, "maxMessageBytes">> & MessageLimits;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** True while skipping the rest of an oversized line. */
  #discarding = false;

  /** The size was checked already; only the nesting limit is left to the parser. */
  readonly #parseLimits: MessageLimits;

  constructor(limits: MessageLimits = {}) {
    this.#limits = { ...limits, maxMessageBytes: limits.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES };
    this.#parseLimits = { ...limits, maxMessageBytes: Number.MAX_SAFE_INTEGER };
  }

  /** Feeds bytes; returns the frames completed by them, in order. */
  push(chunk: Uint8Array | string): NdjsonFrame[] {
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    const frames: NdjsonFrame[] = [];
    let start = 0;
    const last = buf.lastIndexOf(NEWLINE);
    if (last !== -1) {
      if (this.#pendingBytes > 0 || this.#discarding) {
        // The first line continues bytes buffered from earlier chunks.
        const nl = buf.indexOf(NEWLINE);
        this.#finishLine(buf.subarray(0, nl), frames);
        start = nl + 1;
      }
      // Every complete line left is decoded in one go: a newline byte never occurs inside a
      // multi-byte UTF-8 sequence, so the text splits exactly where the bytes do.
      if (start <= last) this.#decodeLines(buf.toString("utf8", start, last), frames);
      start = last + 1;
    }
    if (start < buf.length) this.#append(buf.subarray(start), frames);
    return frames;
  }

  /** Decodes complete lines given as one text (without the final newline). */
  #decodeLines(text: string, frames: NdjsonFrame[]): void {
    let from = 0;
    for (;;) {
      const nl = text.indexOf("\n", from);
      this.#decodeText(nl === -1 ? text.slice(from) : text.slice(from, nl), frames);
      if (nl === -1) return;
      from = nl + 1;
    }
  }

  /** Flushes a final line that had no newline (end of stream). */
  end(): NdjsonFrame[] {
    const frames: NdjsonFrame[] = [];
    if (this.#pendingBytes > 0 && !this.#discarding) this.#decode(this.#take(), frames);
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#discarding = false;
    return frames;
  }

  /** Bytes buffered for an unfinished line. */
  get bufferedBytes(): number {
    return this.#pendingBytes;
  }

  #append(part: Buffer, frames: NdjsonFrame[]): void {
    if (this.#discarding) return;
    this.#pendingBytes += part.length;
    if (this.#pendingBytes > this.#limits.maxMessageBytes) {
      const head = this.#head(part);
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#discarding = true;
      frames.push(limitFrame(tooLarge(this.#limits.maxMessageBytes), head));
      return;
    }
    // Copy: the caller's chunk may be reused by the stream.
    this.#pending.push(Buffer.from(part));
  }

  #finishLine(tail: Buffer, frames: NdjsonFrame[]): void {
    if (this.#discarding) {
      this.#discarding = false;
      return;
    }
    let line: Buffer;
    if (this.#pendingBytes === 0) line = tail;
    else {
      this.#pending.push(tail);
      this.#pendingBytes += tail.length;
      line = this.#take();
    }
    this.#decode(line, frames);
  }

  /** The first bytes of the line made of the pending chunks followed by `part`. */
  #head(part: Buffer): string {
    const parts: Buffer[] = [];
    let bytes = 0;
    for (const chunk of [...this.#pending, part]) {
      if (bytes >= SNIFF_HEAD_BYTES) break;
      const piece = chunk.subarray(0, SNIFF_HEAD_BYTES - bytes);
      parts.push(piece);
      bytes += piece.length;
    }
    return Buffer.concat(parts, bytes).toString("utf8");
  }

  #take(): Buffer {
    const line = this.#pending.length === 1 ? this.#pending[0]! : Buffer.concat(this.#pending, this.#pendingBytes);
    this.#pending = [];
    this.#pendingBytes = 0;
    return line;
  }

  #decode(line: Buffer, frames: NdjsonFrame[]): void {
    if (line.length > this.#limits.maxMessageBytes) {
      frames.push(limitFrame(tooLarge(this.#limits.maxMessageBytes), line.subarray(0, SNIFF_HEAD_BYTES).toString("utf8")));
      return;
    }
    this.#decodeText(line.toString("utf8"), frames, line.length);
  }

  /** Decodes one line's text; `byteLength` when known (otherwise measured only when it could matter). */
  #decodeText(line: string, frames: NdjsonFrame[], byteLength?: number): void {
    const max = this.#limits.maxMessageBytes;
    if (byteLength === undefined && line.length * 3 > max && Buffer.byteLength(line, "utf8") > max) {
      frames.push(limitFrame(tooLarge(max), line.slice(0, SNIFF_HEAD_BYTES)));
      return;
    }
    const text = line.trim();
    if (text.length === 0) return; // blank lines are skipped
    try {
      frames.push({ ok: true, value: parseJsonText(text, this.#parseLimits) });
    } catch (error) {
      const e = error as AhpError;
      // Too deep: the id can still be read. A parse error keeps id null (JSON-RPC 2.0).
      frames.push(e.code === AhpErrorCode.MessageTooLarge ? limitFrame(e, text.slice(0, SNIFF_HEAD_BYTES)) : { ok: false, error: e });
    }
  }
}

function limitFrame(error: AhpError, head: string): NdjsonFrame {
  const id = sniffJsonRpcId(head);
  return id === undefined ? { ok: false, error } : { ok: false, error, id };
}

function tooLarge(limit: number): AhpError {
  return markFrameLimit(new AhpError(AhpErrorCode.MessageTooLarge, `Message too large: line exceeds limit ${limit} bytes`), {
    limit: "max_message_bytes",
    value: limit,
  });
}

/** Encodes one message as a line. Compact JSON never contains a raw newline. */
export function encodeNdjsonLine(text: string): string {
  return `${text}\n`;
}
