import { describe, expect, it } from "vitest";
import { AhpError, AhpErrorCode, encodeNdjsonLine, NdjsonDecoder, type NdjsonFrame } from "../src/index.js";

const values = (frames: NdjsonFrame[]) => frames.map((f) => (f.ok ? f.value : { error: f.error.code }));
const line = (value: unknown) => Buffer.from(encodeNdjsonLine(JSON.stringify(value)), "utf8");

describe("NdjsonDecoder", () => {
  const message = { jsonrpc: "2.0", method: "ahp/event", params: { text: "héllo wörld, 世界, emoji 🎉, ∑ ≠ ∞" } };

  it("decodes a multi-byte UTF-8 message split at every byte boundary", () => {
    const bytes = line(message);
    // The message has 2-, 3- and 4-byte sequences, so many splits cut through a character.
    expect(bytes.length).toBeGreaterThan(JSON.stringify(message).length + 10);
    for (let i = 0; i <= bytes.length; i++) {
      const decoder = new NdjsonDecoder();
      const frames = [...decoder.push(bytes.subarray(0, i)), ...decoder.push(bytes.subarray(i))];
      expect(values(frames), `split at byte ${i}`).toEqual([message]);
      expect(decoder.bufferedBytes).toBe(0);
    }
  });

  it("decodes a message fed one byte at a time", () => {
    const decoder = new NdjsonDecoder();
    const bytes = Buffer.concat([line(message), line({ n: 2 })]);
    const frames: NdjsonFrame[] = [];
    for (const byte of bytes) frames.push(...decoder.push(Uint8Array.of(byte)));
    expect(values(frames)).toEqual([message, { n: 2 }]);
  });

  it("returns every complete line of one chunk, in order", () => {
    const decoder = new NdjsonDecoder();
    expect(values(decoder.push('{"a":1}\n{"b":2}\n{"c":'))).toEqual([{ a: 1 }, { b: 2 }]);
    expect(values(decoder.push("3}\n"))).toEqual([{ c: 3 }]);
  });

  it("accepts strings and plain Uint8Arrays as chunks", () => {
    const decoder = new NdjsonDecoder();
    expect(values(decoder.push('{"s":"ü"}\n'))).toEqual([{ s: "ü" }]);
    expect(values(decoder.push(new Uint8Array(line({ u: 8 }))))).toEqual([{ u: 8 }]);
  });

  it("tolerates \\r\\n line endings", () => {
    const decoder = new NdjsonDecoder();
    expect(values(decoder.push('{"a":1}\r\n{"b":2}\r\n'))).toEqual([{ a: 1 }, { b: 2 }]);
    // The \r arriving alone at the end of a chunk.
    expect(values(decoder.push('{"c":3}\r'))).toEqual([]);
    expect(values(decoder.push("\n"))).toEqual([{ c: 3 }]);
  });

  it("skips blank lines and surrounding whitespace", () => {
    const decoder = new NdjsonDecoder();
    expect(values(decoder.push('\n\n   \n\t\r\n  {"a":1}  \t\n\r\n \n'))).toEqual([{ a: 1 }]);
  });

  it("reports a non-JSON line as -32700 and decodes the next line", () => {
    const decoder = new NdjsonDecoder();
    const frames = decoder.push('not json\n{"ok":true}\n');
    expect(frames).toHaveLength(2);
    const [bad, good] = frames;
    expect(bad?.ok).toBe(false);
    if (bad?.ok === false) {
      expect(AhpError.isInstance(bad.error)).toBe(true);
      expect(bad.error.code).toBe(AhpErrorCode.ParseError);
      expect(bad.error.message).toMatch(/^Parse error/);
    }
    expect(good).toEqual({ ok: true, value: { ok: true } });
  });

  it("does not split on U+2028 / U+2029 inside strings", () => {
    const decoder = new NdjsonDecoder();
    const text = `{"s":"a\u2028b\u2029c"}\n`;
    expect(text).not.toContain("\\u2028");
    expect(values(decoder.push(text))).toEqual([{ s: "a\u2028b\u2029c" }]);
  });

  it("accepts a line of exactly the limit and rejects one byte more", () => {
    const exact = JSON.stringify({ pad: "x".repeat(50) });
    const limit = Buffer.byteLength(exact);
    const decoder = new NdjsonDecoder({ maxMessageBytes: limit });
    expect(values(decoder.push(`${exact}\n`))).toEqual([JSON.parse(exact)]);
    const over = JSON.stringify({ pad: "x".repeat(51) });
    expect(values(decoder.push(`${over}\n`))).toEqual([{ error: AhpErrorCode.MessageTooLarge }]);
  });

  it("skips an oversized line with one error, never buffers past the limit, then decodes the next line", () => {
    const limit = 64;
    const decoder = new NdjsonDecoder({ maxMessageBytes: limit });
    const frames: NdjsonFrame[] = [];
    // 1000 bytes of one line, in chunks of 10, with no newline yet.
    for (let i = 0; i < 100; i++) {
      frames.push(...decoder.push("y".repeat(10)));
      expect(decoder.bufferedBytes).toBeLessThanOrEqual(limit);
    }
    expect(values(frames)).toEqual([{ error: AhpErrorCode.MessageTooLarge }]);
    const failed = frames[0];
    if (failed?.ok === false) expect(failed.error.message).toContain(String(limit));
    // The rest of the oversized line, its newline, then a good line in the same chunk.
    expect(values(decoder.push('yyyy\n{"next":1}\n'))).toEqual([{ next: 1 }]);
    expect(decoder.bufferedBytes).toBe(0);
  });

  it("rejects an oversized line that arrives complete in one chunk", () => {
    const decoder = new NdjsonDecoder({ maxMessageBytes: 16 });
    expect(values(decoder.push(`${JSON.stringify({ long: "z".repeat(40) })}\n{"a":1}\n`))).toEqual([
      { error: AhpErrorCode.MessageTooLarge },
      { a: 1 },
    ]);
  });

  it("decodes many multi-byte lines of one chunk, with an oversized one in the middle, in order and with its id", () => {
    const small = { jsonrpc: "2.0", id: "a", params: { s: "世界 🎉" } };
    const big = { jsonrpc: "2.0", id: "big-1", params: { s: "€".repeat(40) } }; // < 200 characters, > 120 bytes
    const decoder = new NdjsonDecoder({ maxMessageBytes: 120 });
    const chunk = [small, big, { ...small, id: "b" }, small].map((m) => JSON.stringify(m)).join("\r\n") + "\n\n";
    const frames = decoder.push(chunk);
    expect(values(frames)).toEqual([small, { error: AhpErrorCode.MessageTooLarge }, { ...small, id: "b" }, small]);
    expect(frames[1]).toMatchObject({ ok: false, id: "big-1" });
  });

  it("counts the size in UTF-8 bytes, not characters", () => {
    const text = JSON.stringify({ s: "€".repeat(10) }); // 16 characters, 36 bytes
    const decoder = new NdjsonDecoder({ maxMessageBytes: 30 });
    expect(text.length).toBeLessThan(30);
    expect(values(decoder.push(`${text}\n`))).toEqual([{ error: AhpErrorCode.MessageTooLarge }]);
  });

  it("rejects a line nested deeper than maxJsonDepth and keeps going", () => {
    const decoder = new NdjsonDecoder({ maxJsonDepth: 4 });
    expect(values(decoder.push("[[[[[1]]]]]\n[[[[1]]]]\n"))).toEqual([{ error: AhpErrorCode.MessageTooLarge }, [[[[1]]]]]);
  });

  it("copies buffered bytes, so a reused chunk buffer does not corrupt the line", () => {
    const decoder = new NdjsonDecoder();
    const chunk = Buffer.from('{"a":"first"');
    expect(decoder.push(chunk)).toEqual([]);
    chunk.fill(0x20); // the stream reuses its buffer
    expect(values(decoder.push("}\n"))).toEqual([{ a: "first" }]);
  });

  describe("end()", () => {
    it("flushes a final line without a newline", () => {
      const decoder = new NdjsonDecoder();
      expect(decoder.push('{"a":1}\n{"last":true}')).toHaveLength(1);
      expect(values(decoder.end())).toEqual([{ last: true }]);
      expect(decoder.bufferedBytes).toBe(0);
      expect(decoder.end()).toEqual([]);
    });

    it("reports a truncated final line as a parse error", () => {
      const decoder = new NdjsonDecoder();
      decoder.push('{"a":');
      expect(values(decoder.end())).toEqual([{ error: AhpErrorCode.ParseError }]);
    });

    it("yields nothing for trailing whitespace or the rest of an oversized line", () => {
      const blank = new NdjsonDecoder();
      blank.push("  \r");
      expect(blank.end()).toEqual([]);
      const oversized = new NdjsonDecoder({ maxMessageBytes: 8 });
      expect(values(oversized.push("x".repeat(20)))).toEqual([{ error: AhpErrorCode.MessageTooLarge }]);
      expect(oversized.end()).toEqual([]);
      // The decoder is reusable afterwards.
      expect(values(oversized.push('{"a":1}\n'))).toEqual([{ a: 1 }]);
    });
  });
});

describe("encodeNdjsonLine", () => {
  it("terminates the text with one newline; compact JSON never contains a raw newline", () => {
    const text = JSON.stringify({ s: "line1\nline2\r\n", u: "\u2028" });
    expect(text).not.toMatch(/[\n\r]/);
    const encoded = encodeNdjsonLine(text);
    expect(encoded).toBe(`${text}\n`);
    expect(values(new NdjsonDecoder().push(encoded))).toEqual([{ s: "line1\nline2\r\n", u: "\u2028" }]);
  });
});
