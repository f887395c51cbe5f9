/** Reads a file as raw lines (bytes without `\n`), noting whether the last one was terminated. */
import { createReadStream } from "node:fs";

export interface RawLine {
  file: string;
  /** 1-based line number. */
  line: number;
  bytes: Buffer;
  /** False only for a last line without `\n`. */
  terminated: boolean;
}

export async function* readRawLines(file: string, start = 0): AsyncGenerator<RawLine> {
  const stream = createReadStream(file, { start, highWaterMark: 1024 * 1024 });
  let pending: Buffer[] = [];
  let line = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let from = 0;
    for (;;) {
      const at = chunk.indexOf(0x0a, from);
      if (at < 0) break;
      const piece = chunk.subarray(from, at);
      const bytes = pending.length === 0 ? Buffer.from(piece) : Buffer.concat([...pending, piece]);
      pending = [];
      yield { file, line: ++line, bytes, terminated: true };
      from = at + 1;
    }
    if (from < chunk.length) pending.push(Buffer.from(chunk.subarray(from)));
  }
  if (pending.length > 0) yield { file, line: line + 1, bytes: Buffer.concat(pending), terminated: false };
}
