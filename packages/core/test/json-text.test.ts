import { describe, expect, it } from "vitest";
import {
  AhpError,
  AhpErrorCode,
  DEFAULT_MAX_JSON_DEPTH,
  DEFAULT_MAX_MESSAGE_BYTES,
  jsonNestingExceeds,
  parseJsonText,
  stringifyMessage,
} from "../src/index.js";

function thrown(fn: () => unknown): AhpError {
  try {
    fn();
  } catch (error) {
    expect(AhpError.isInstance(error), `not an AhpError: ${String(error)}`).toBe(true);
    return error as AhpError;
  }
  throw new Error("expected a throw");
}

const nested = (depth: number) => `${"[".repeat(depth)}1${"]".repeat(depth)}`;

describe("parseJsonText", () => {
  it("parses JSON text", () => {
    expect(parseJsonText('{"jsonrpc":"2.0","id":"1","result":{"decision":"allow"}}')).toEqual({
      jsonrpc: "2.0",
      id: "1",
      result: { decision: "allow" },
    });
  });

  it("turns malformed JSON into -32700 Parse error", () => {
    const error = thrown(() => parseJsonText('{"a":'));
    expect(error.code).toBe(AhpErrorCode.ParseError);
    expect(error.message).toMatch(/^Parse error: /);
  });

  describe("size limit", () => {
    it("accepts a text of exactly maxMessageBytes and rejects one byte more with -32002", () => {
      const text = JSON.stringify("a".repeat(98)); // 100 bytes
      expect(parseJsonText(text, { maxMessageBytes: 100 })).toBe("a".repeat(98));
      const error = thrown(() => parseJsonText(JSON.stringify("a".repeat(99)), { maxMessageBytes: 100 }));
      expect(error.code).toBe(AhpErrorCode.MessageTooLarge);
      expect(error.message).toBe("Message too large: 101 bytes exceeds limit 100");
    });

    it("measures UTF-8 bytes, not UTF-16 units", () => {
      const text = JSON.stringify("€".repeat(40)); // 42 units, 122 bytes
      expect(text.length).toBeLessThan(100);
      expect(thrown(() => parseJsonText(text, { maxMessageBytes: 100 })).code).toBe(AhpErrorCode.MessageTooLarge);
      expect(parseJsonText(text, { maxMessageBytes: 122 })).toBe("€".repeat(40));
    });

    it("trusts a byteLength the caller already knows", () => {
      const text = JSON.stringify("a".repeat(40));
      expect(thrown(() => parseJsonText(text, { maxMessageBytes: 100 }, 101)).code).toBe(AhpErrorCode.MessageTooLarge);
    });

    it("defaults to 8 MiB", () => {
      expect(DEFAULT_MAX_MESSAGE_BYTES).toBe(8 * 1024 * 1024);
      const big = JSON.stringify("b".repeat(DEFAULT_MAX_MESSAGE_BYTES - 2));
      expect((parseJsonText(big) as string).length).toBe(DEFAULT_MAX_MESSAGE_BYTES - 2);
      expect(thrown(() => parseJsonText(JSON.stringify("b".repeat(DEFAULT_MAX_MESSAGE_BYTES - 1)))).code).toBe(
        AhpErrorCode.MessageTooLarge,
      );
    });
  });

  describe("nesting limit", () => {
    it("accepts the default depth of 128 and rejects 129", () => {
      expect(DEFAULT_MAX_JSON_DEPTH).toBe(128);
      expect(() => parseJsonText(nested(128))).not.toThrow();
      const error = thrown(() => parseJsonText(nested(129)));
      expect(error.code).toBe(AhpErrorCode.MessageTooLarge);
      expect(error.message).toBe("Message nested deeper than limit 128");
    });

    it("counts objects and arrays alike", () => {
      expect(() => parseJsonText('{"a":[{"b":[1]}]}', { maxJsonDepth: 4 })).not.toThrow();
      expect(thrown(() => parseJsonText('{"a":[{"b":[{}]}]}', { maxJsonDepth: 4 })).code).toBe(AhpErrorCode.MessageTooLarge);
    });

    it("ignores brackets inside strings, including after escaped quotes and backslashes", () => {
      expect(parseJsonText('{"a":"[[[[[[[[[[{{{{{{"}', { maxJsonDepth: 2 })).toEqual({ a: "[[[[[[[[[[{{{{{{" });
      expect(parseJsonText('{"a":"\\"[[[[[[[[[["}', { maxJsonDepth: 2 })).toEqual({ a: '"[[[[[[[[[[' });
      // An escaped backslash ends right before the closing quote: the brackets after it are real.
      expect(thrown(() => parseJsonText('["\\\\",[[[[[1]]]]]]', { maxJsonDepth: 3 })).code).toBe(AhpErrorCode.MessageTooLarge);
    });

    it("accepts a shallow text with more brackets than the limit, and rejects one bracket too deep among few", () => {
      const wide = JSON.stringify(Array.from({ length: 300 }, (_, i) => [i, { i }]));
      expect(parseJsonText(wide)).toHaveLength(300);
      expect(thrown(() => parseJsonText(`{"pad":"${"x".repeat(20)}","a":[[[1]]]}`, { maxJsonDepth: 3 })).code).toBe(
        AhpErrorCode.MessageTooLarge,
      );
      expect(parseJsonText(`{"pad":"${"x".repeat(20)}","a":[[1]]}`, { maxJsonDepth: 3 })).toEqual({ pad: "x".repeat(20), a: [[1]] });
    });

    it("is checked before parsing, so a deeply nested text never reaches JSON.parse", () => {
      const deep = nested(100_000);
      expect(thrown(() => parseJsonText(deep)).code).toBe(AhpErrorCode.MessageTooLarge);
    });
  });
});

describe("jsonNestingExceeds", () => {
  it("reports whether the nesting passes the limit", () => {
    expect(jsonNestingExceeds(nested(3), 3)).toBe(false);
    expect(jsonNestingExceeds(nested(4), 3)).toBe(true);
    expect(jsonNestingExceeds("[1],[2],[3]", 1)).toBe(false);
    expect(jsonNestingExceeds('"[[[["', 0)).toBe(false);
    expect(jsonNestingExceeds("[]", 0)).toBe(true);
  });
});

describe("stringifyMessage", () => {
  it("returns compact JSON", () => {
    expect(stringifyMessage({ jsonrpc: "2.0", id: "1", result: { decision: "allow" } })).toBe(
      '{"jsonrpc":"2.0","id":"1","result":{"decision":"allow"}}',
    );
  });

  it("turns a cycle into AhpError -32603", () => {
    const message: Record<string, unknown> = { jsonrpc: "2.0", method: "ahp/event" };
    message.params = message;
    const error = thrown(() => stringifyMessage(message));
    expect(error.code).toBe(AhpErrorCode.InternalError);
    expect(error.message).toMatch(/^Internal error: /);
  });

  it("turns BigInt and values without a JSON form into -32603", () => {
    expect(thrown(() => stringifyMessage({ n: 1n })).code).toBe(AhpErrorCode.InternalError);
    expect(thrown(() => stringifyMessage(undefined)).message).toBe("Internal error: message is not JSON");
    expect(thrown(() => stringifyMessage(() => 1)).code).toBe(AhpErrorCode.InternalError);
  });

  it("enforces the size limit in UTF-8 bytes", () => {
    expect(stringifyMessage("a".repeat(8), 10)).toBe('"aaaaaaaa"');
    const error = thrown(() => stringifyMessage("a".repeat(9), 10));
    expect(error.code).toBe(AhpErrorCode.MessageTooLarge);
    expect(error.message).toBe("Message too large: 11 bytes exceeds limit 10");
    expect(thrown(() => stringifyMessage("€€€", 10)).code).toBe(AhpErrorCode.MessageTooLarge); // 5 units, 11 bytes
  });
});
