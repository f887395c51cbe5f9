/**
 * `node:crypto` as the one-file bin (`dist/bin.cjs`) sees it: the bin's build aliases
 * `node:crypto` to this module (tsup.config.ts). Loading `node:crypto` costs a hook process about
 * a tenth of Node's own start-up, and a hook answering a tool call needs only SHA-256 (state file
 * names, file hashes) and random bytes (temporary file names, request ids): SHA-256 comes from
 * `@noble/hashes`, random bytes from the operating system's generator (`/dev/urandom`).
 * Anything else, and random bytes where `/dev/urandom` cannot be read, come from `node:crypto`,
 * loaded on first use. Results are the same as `node:crypto`'s (tested).
 */
import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { sha256 } from "@noble/hashes/sha2.js";

type NodeCrypto = typeof import("node:crypto");
let real: NodeCrypto | undefined;
/** The real `node:crypto`, loaded on first use. */
function nodeCrypto(): NodeCrypto {
  real ??= createRequire(__filename)("node:crypto") as NodeCrypto;
  return real;
}

type Input = string | NodeJS.ArrayBufferView;
const bytesOf = (data: Input, encoding?: BufferEncoding): Uint8Array =>
  typeof data === "string" ? Buffer.from(data, encoding ?? "utf8") : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** The part of `node:crypto`'s `Hash` the bundled code uses. */
export interface LiteHash {
  update(data: Input, encoding?: BufferEncoding): LiteHash;
  digest(): Buffer;
  digest(encoding: BufferEncoding): string;
}

/** `createHash`: SHA-256 without `node:crypto`; other algorithms from `node:crypto`. */
export function createHash(algorithm: string): LiteHash {
  if (algorithm.toLowerCase() !== "sha256") return nodeCrypto().createHash(algorithm);
  const state = sha256.create();
  let done = false;
  const hash: LiteHash = {
    update(data: Input, encoding?: BufferEncoding) {
      if (done) throw new Error("Digest already called");
      state.update(bytesOf(data, encoding));
      return hash;
    },
    digest(encoding?: BufferEncoding): never {
      if (done) throw new Error("Digest already called");
      done = true;
      const out = Buffer.from(state.digest());
      return (encoding === undefined ? out : out.toString(encoding)) as never;
    },
  };
  return hash;
}

let urandom: number | undefined | false;
/** `randomBytes` (synchronous form): the operating system's generator, else `node:crypto`. */
export function randomBytes(size: number): Buffer {
  if (!Number.isInteger(size) || size < 0) throw new RangeError(`randomBytes: size must be a non-negative integer, got ${size}`);
  if (urandom === undefined) {
    try {
      urandom = openSync("/dev/urandom", "r");
    } catch {
      urandom = false;
    }
  }
  if (urandom !== false) {
    const out = Buffer.allocUnsafe(size);
    try {
      for (let filled = 0; filled < size; ) {
        const n = readSync(urandom, out, filled, size - filled, null);
        if (n <= 0) throw new Error("short read");
        filled += n;
      }
      return out;
    } catch {
      try {
        closeSync(urandom);
      } catch {
        // already closed
      }
      urandom = false;
    }
  }
  return nodeCrypto().randomBytes(size);
}

/** `randomUUID`: a version 4 UUID from {@link randomBytes}. */
export function randomUUID(): string {
  const b = randomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString("hex");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** `timingSafeEqual`, from `node:crypto` (loaded on first use). */
export function timingSafeEqual(a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView): boolean {
  return nodeCrypto().timingSafeEqual(a, b);
}
