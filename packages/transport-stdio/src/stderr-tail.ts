/** A byte ring that keeps the last `capacity` bytes written to it (the tail of a child's stderr). */
export class ByteTail {
  readonly #capacity: number;
  #chunks: Buffer[] = [];
  #bytes = 0;

  constructor(capacity: number) {
    this.#capacity = Math.max(0, Math.floor(capacity));
  }

  push(chunk: Buffer): void {
    if (this.#capacity === 0 || chunk.length === 0) return;
    if (chunk.length >= this.#capacity) {
      // Copy: the stream may reuse its buffer.
      this.#chunks = [Buffer.from(chunk.subarray(chunk.length - this.#capacity))];
      this.#bytes = this.#capacity;
      return;
    }
    this.#chunks.push(Buffer.from(chunk));
    this.#bytes += chunk.length;
    while (this.#bytes > this.#capacity) {
      const first = this.#chunks[0]!;
      const excess = this.#bytes - this.#capacity;
      if (first.length <= excess) {
        this.#chunks.shift();
        this.#bytes -= first.length;
      } else {
        this.#chunks[0] = first.subarray(excess);
        this.#bytes -= excess;
      }
    }
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The kept bytes as UTF-8 text; a character cut in half at the start is dropped. */
  text(): string {
    if (this.#bytes === 0) return "";
    let buf = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks, this.#bytes);
    // Skip UTF-8 continuation bytes (10xxxxxx) left over from a character cut by the ring.
    let start = 0;
    while (start < buf.length && start < 3 && (buf[start]! & 0xc0) === 0x80) start++;
    if (start > 0) buf = buf.subarray(start);
    return buf.toString("utf8");
  }
}
