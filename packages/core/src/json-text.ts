/** Decoding of one JSON text with size and nesting limits. */
import { AhpError, AhpErrorCode } from "./errors.js";
import { isUnsafeIntegerId, keepLargeId, LargeIntegerId } from "./large-id.js";
import { markFrameLimit } from "./limits.js";
import { DEFAULT_MAX_JSON_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, type MessageLimits } from "./transport.js";

/**
 * Returns the nesting depth of arrays/objects in a JSON text, stopping early once `limit` is
 * passed. Brackets inside strings are not counted. Runs in one pass without allocation.
 */
export function jsonNestingExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/**
 * Whether `text` has more than `limit` opening brackets, inside strings or not: an upper bound of
 * its nesting depth, found with native searches. Most messages have a handful of brackets, so
 * this settles the depth check without the character-by-character scan of jsonNestingExceeds.
 */
function openingBracketsExceed(text: string, limit: number): boolean {
  let count = 0;
  for (let i = text.indexOf("{"); i !== -1; i = text.indexOf("{", i + 1)) if (++count > limit) return true;
  for (let i = text.indexOf("["); i !== -1; i = text.indexOf("[", i + 1)) if (++count > limit) return true;
  return false;
}

/**
 * Parses one JSON text. Throws {@link AhpError} -32700 for malformed JSON and
 * {@link AhpErrorCode.MessageTooLarge} for a text past the size or nesting limit.
 * `byteLength` may be passed when the caller already knows it.
 */
export function parseJsonText(text: string, limits: MessageLimits = {}, byteLength?: number): unknown {
  const maxBytes = limits.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  // A UTF-8 text has at least as many bytes as UTF-16 units / 1 and at most 3x; measure only when needed.
  if (text.length * 3 > maxBytes) {
    const bytes = byteLength ?? Buffer.byteLength(text, "utf8");
    if (bytes > maxBytes) {
      throw markFrameLimit(new AhpError(AhpErrorCode.MessageTooLarge, `Message too large: ${bytes} bytes exceeds limit ${maxBytes}`), {
        limit: "max_message_bytes",
        value: maxBytes,
      });
    }
  }
  const maxDepth = limits.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  if (text.length > maxDepth * 2 && openingBracketsExceed(text, maxDepth) && jsonNestingExceeds(text, maxDepth)) {
    throw markFrameLimit(new AhpError(AhpErrorCode.MessageTooLarge, `Message nested deeper than limit ${maxDepth}`), {
      limit: "max_json_depth",
      value: maxDepth,
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new AhpError(AhpErrorCode.ParseError, `Parse error: ${(error as Error).message}`);
  }
  // An integer id past 2^53 was rounded by JSON.parse: keep its text so that it is echoed exactly.
  if (typeof value === "object" && value !== null && isUnsafeIntegerId((value as { id?: unknown }).id)) {
    keepLargeId(value, text);
  }
  return value;
}

/** JSON text of a message whose `id` is a {@link LargeIntegerId}: the id's original text, envelope members first. */
function stringifyWithLargeId(message: Record<string, unknown>, id: LargeIntegerId): string {
  const { jsonrpc, id: _id, ...rest } = message;
  const head = `{${jsonrpc === undefined ? "" : `"jsonrpc":${JSON.stringify(jsonrpc)},`}"id":${id.text}`;
  const body = JSON.stringify(rest);
  return body === "{}" ? `${head}}` : `${head},${body.slice(1)}`;
}

/**
 * Serializes one message. Throws {@link AhpError} -32603 when the value cannot be encoded
 * (cycles, BigInt) and {@link AhpErrorCode.MessageTooLarge} past the size limit.
 */
export function stringifyMessage(message: unknown, maxMessageBytes = DEFAULT_MAX_MESSAGE_BYTES): string {
  let text: string | undefined;
  try {
    const id = typeof message === "object" && message !== null ? (message as { id?: unknown }).id : undefined;
    text = id instanceof LargeIntegerId ? stringifyWithLargeId(message as Record<string, unknown>, id) : JSON.stringify(message);
  } catch (error) {
    throw new AhpError(AhpErrorCode.InternalError, `Internal error: ${(error as Error).message}`);
  }
  if (text === undefined) throw new AhpError(AhpErrorCode.InternalError, "Internal error: message is not JSON");
  if (text.length * 3 > maxMessageBytes) {
    const bytes = Buffer.byteLength(text, "utf8");
    if (bytes > maxMessageBytes) {
      throw new AhpError(AhpErrorCode.MessageTooLarge, `Message too large: ${bytes} bytes exceeds limit ${maxMessageBytes}`);
    }
  }
  return text;
}
