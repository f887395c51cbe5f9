/** Building the connection URL exactly as the reference client does (spec §13.3, checklist item 91). */
import { AhpLocalError } from "@ahp/core";
import type { ClientAuth } from "@ahp/core";

const UNRESERVED = /[*\-.0-9A-Z_a-z]/;

/**
 * `application/x-www-form-urlencoded` byte serialization: ASCII letters, digits and `*-._`
 * stay, a space becomes `+`, every other UTF-8 byte becomes `%XX` (upper-case hex).
 */
export function formEncode(value: string): string {
  let out = "";
  for (const byte of Buffer.from(value, "utf8")) {
    const char = String.fromCharCode(byte);
    if (byte === 0x20) out += "+";
    else if (byte < 0x80 && UNRESERVED.test(char)) out += char;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * The URL a client connects to. In `query` mode (the reference) `api_key=<key>` or
 * `token=<token>` is appended form-encoded after any query already present, which is kept
 * byte for byte; a path-less URL is normalized to end in `/`
 * (`ws://h:8080` → `ws://h:8080/?api_key=k`). In `header` mode the URL is only normalized.
 */
export function buildWebSocketUrl(url: string | URL, auth?: ClientAuth, authMode: "query" | "header" = "query"): URL {
  const result = new URL(url);
  if (result.protocol !== "ws:" && result.protocol !== "wss:") {
    throw new AhpLocalError("INVALID_ARGUMENT", `WebSocket transport needs a ws: or wss: URL, got ${result.protocol}`);
  }
  if (authMode !== "query" || auth === undefined) return result;
  let pair: string | undefined;
  if (auth.type === "api_key") pair = `api_key=${formEncode(auth.key)}`;
  else if (auth.type === "bearer") pair = `token=${formEncode(auth.token)}`;
  if (pair === undefined) return result;
  const existing = result.search.startsWith("?") ? result.search.slice(1) : result.search;
  result.search = existing === "" ? `?${pair}` : `?${existing}&${pair}`;
  return result;
}

/** The URL without query, fragment or user info (safe to show: no credentials). */
export function publicUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}
