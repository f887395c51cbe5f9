/**
 * `src/hook/crypto-lite.ts`, the bin's `node:crypto`: the same SHA-256 as `node:crypto` for any
 * input fed in any number of pieces, the same digest encodings, other algorithms handed to
 * `node:crypto`, random bytes of the asked length, version 4 UUIDs.
 */
import * as nodeCrypto from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createHash, randomBytes, randomUUID, timingSafeEqual } from "../src/hook/crypto-lite.js";

describe("crypto-lite", () => {
  it("SHA-256 equals node:crypto's for strings and bytes, fed in pieces", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.string({ unit: "grapheme", maxLength: 50 }), fc.uint8Array({ maxLength: 200 })), { maxLength: 5 }),
        (pieces) => {
          const lite = createHash("sha256");
          const real = nodeCrypto.createHash("sha256");
          for (const piece of pieces) {
            lite.update(piece);
            real.update(piece);
          }
          return lite.digest("hex") === real.digest("hex");
        },
      ),
      { numRuns: 200 },
    );
  });

  it("digests as a Buffer, hex, base64 and base64url; string input in another encoding; a second digest throws", () => {
    const text = "state:8f0d6c2e-3b1a-4c55-9d7e-2a6b1f4e9c01 — ünïcödé";
    const real = () => nodeCrypto.createHash("sha256").update(text);
    expect(createHash("sha256").update(text).digest().equals(real().digest())).toBe(true);
    for (const encoding of ["hex", "base64", "base64url"] as const)
      expect(createHash("SHA256").update(text).digest(encoding)).toBe(real().digest(encoding));
    expect(createHash("sha256").update("68656c6c6f", "hex").digest("hex")).toBe(
      nodeCrypto.createHash("sha256").update("hello").digest("hex"),
    );
    const once = createHash("sha256").update("x");
    once.digest("hex");
    expect(() => once.digest("hex")).toThrow(/Digest already called/);
    expect(() => once.update("y")).toThrow(/Digest already called/);
  });

  it("other algorithms come from node:crypto", () => {
    expect(createHash("md5").update("abc").digest("hex")).toBe("900150983cd24fb0d6963f7d28e17f72");
    expect(createHash("sha512").update("abc").digest("hex")).toBe(nodeCrypto.createHash("sha512").update("abc").digest("hex"));
    expect(timingSafeEqual(Buffer.from("abc"), Buffer.from("abc"))).toBe(true);
    expect(timingSafeEqual(Buffer.from("abc"), Buffer.from("abd"))).toBe(false);
  });

  it("random bytes of the asked length, never twice the same; UUIDs are version 4", () => {
    for (const size of [0, 1, 4, 16, 1000]) expect(randomBytes(size)).toHaveLength(size);
    expect(randomBytes(16).equals(randomBytes(16))).toBe(false);
    expect(() => randomBytes(-1)).toThrow(RangeError);
    expect(() => randomBytes(1.5)).toThrow(RangeError);
    const ids = new Set(Array.from({ length: 200 }, () => randomUUID()));
    expect(ids.size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
