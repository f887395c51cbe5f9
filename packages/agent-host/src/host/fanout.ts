/**
 * The outbound side of every client connection (spec §3, §5.4): frames are WebSocket-framed once
 * and the same bytes are queued for every subscriber; each connection's queue is written to its
 * socket in one `write` when the event-loop turn that produced the frames is over (or earlier,
 * once a queue holds {@link FLUSH_BYTES}). One JSON-RPC message per text frame, in order per
 * connection; only the number of socket writes changes.
 *
 * Server-to-client WebSocket frames are never masked and the host sends no compressed frames, so
 * the bytes of a frame are the same for every connection: a text frame is a 2-, 4- or 10-byte
 * header (RFC 6455 §5.2) followed by the UTF-8 payload.
 */

/** A queue this large is written at once instead of at the end of the turn. */
export const FLUSH_BYTES = 64 * 1024;

/** One encoded JSON-RPC message; its WebSocket frame is built on first use and shared. */
export class OutFrame {
  #wire?: Buffer;

  constructor(readonly text: string) {}

  /** The complete WebSocket text frame (header and UTF-8 payload), built once. */
  get wire(): Buffer {
    return (this.#wire ??= textFrame(this.text));
  }
}

/** A final, unmasked WebSocket text frame carrying `text` (RFC 6455 §5.2). */
export function textFrame(text: string): Buffer {
  const length = Buffer.byteLength(text, "utf8");
  const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
  const out = Buffer.allocUnsafe(header + length);
  out[0] = 0x81; // FIN, opcode 1 (text)
  if (header === 2) out[1] = length;
  else if (header === 4) {
    out[1] = 126;
    out.writeUInt16BE(length, 2);
  } else {
    out[1] = 127;
    out.writeUInt32BE(Math.floor(length / 2 ** 32), 2);
    out.writeUInt32BE(length >>> 0, 6);
  }
  out.write(text, header, "utf8");
  return out;
}

/** A connection's outbound queue, as the flusher sees it. */
export interface Outbox {
  /** Writes the queued frames; `shared` lets connections that queued the same frames share one buffer. */
  flush(shared: SharedBatch): void;
}

/** The last concatenation made in one flush, reused by the next connection that queued the same frames. */
export interface SharedBatch {
  frames?: readonly Buffer[];
  joined?: Buffer;
}

/** Joins `frames` into one buffer, reusing the previous join when the frames are the same objects. */
export function joinFrames(frames: readonly Buffer[], shared: SharedBatch): Buffer {
  if (frames.length === 1) return frames[0]!;
  const last = shared.frames;
  if (last !== undefined && shared.joined !== undefined && last.length === frames.length) {
    let same = true;
    for (let i = 0; i < frames.length; i++) {
      if (last[i] !== frames[i]) {
        same = false;
        break;
      }
    }
    if (same) return shared.joined;
  }
  const joined = Buffer.concat(frames);
  shared.frames = frames;
  shared.joined = joined;
  return joined;
}

/** Writes every connection that queued frames in this turn, once, after the turn. */
export class Flusher {
  #dirty: Outbox[] = [];
  #scheduled = false;
  #soon = false;

  /** Marks `outbox` as holding frames; it is flushed when the current turn is over. */
  enqueue(outbox: Outbox): void {
    this.#dirty.push(outbox);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#onTurnEnd);
    }
  }

  /**
   * A queue passed {@link FLUSH_BYTES}: flush every connection at the end of the current
   * synchronous run (after the broadcast in progress reached every subscriber, so that
   * connections with the same frames still share one buffer).
   */
  soon(): void {
    if (this.#soon) return;
    this.#soon = true;
    queueMicrotask(this.flush);
  }

  readonly #onTurnEnd = (): void => {
    this.#scheduled = false;
    this.flush();
  };

  /** Flushes every dirty connection now. */
  readonly flush = (): void => {
    this.#soon = false;
    if (this.#dirty.length === 0) return;
    const dirty = this.#dirty;
    this.#dirty = [];
    const shared: SharedBatch = {};
    for (const outbox of dirty) outbox.flush(shared);
  };
}
