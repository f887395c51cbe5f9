/**
 * The HMAC key of an audit log. The key bytes never leave this object: it prints, inspects and
 * serializes as its key id only (first 8 hex digits of SHA-256 of the key).
 */
import { createHash, createHmac, createSecretKey, hash, type KeyObject } from "node:crypto";
import { readFile } from "node:fs/promises";
import { inspect } from "node:util";
import { AuditError } from "./errors.js";

/** SHA-256's block size: HMAC pads (or hashes) the key to this length. */
const BLOCK = 64;
/**
 * Messages up to this many UTF-16 code units are MACed through the reusable buffer (three bytes
 * of UTF-8 each at most); longer ones through a `Hmac` object.
 */
const SCRATCH_CHARS = 8 * 1024;

/** Shortest accepted key (bytes). */
export const MIN_AUDIT_KEY_BYTES = 32;
/** Environment variable read by {@link loadAuditKey}. */
export const AUDIT_KEY_ENV = "AHP_AUDIT_KEY";

/**
 * The HMAC key of an audit log (at least 32 bytes). Its bytes never leave the object: records and
 * messages name it by {@link AuditKey.id}, the first 8 hex digits of its SHA-256.
 */
export class AuditKey {
  /** The key imported once: an HMAC over a KeyObject skips importing the bytes on every call. */
  readonly #secret: KeyObject;
  /**
   * HMAC's inner block (the padded key XOR 0x36) followed by room for the message: the inner
   * hash is one one-shot SHA-256 over this buffer's start.
   */
  #inner: Buffer | undefined;
  /** HMAC's outer block (the padded key XOR 0x5c) followed by the inner hash's 32 bytes. */
  #outer: Buffer | undefined;
  /** First 8 hex digits of SHA-256(key): names the key in records without revealing it. */
  readonly id: string;

  private constructor(bytes: Buffer) {
    this.#secret = createSecretKey(bytes);
    this.id = createHash("sha256").update(bytes).digest("hex").slice(0, 8);
  }

  /** A key from raw bytes (at least 32). The bytes are copied. */
  static fromBytes(bytes: Uint8Array): AuditKey {
    if (bytes.byteLength < MIN_AUDIT_KEY_BYTES) {
      throw new AuditError("INVALID_KEY", `audit key must be at least ${MIN_AUDIT_KEY_BYTES} bytes, got ${bytes.byteLength}`);
    }
    return new AuditKey(Buffer.from(bytes));
  }

  /**
   * A key from text: `hex:<hex>` / `base64:<b64>` / `raw:<text>` prefixes are explicit; without a
   * prefix, text that is all hex (even length) is hex, text that is valid base64 is base64,
   * anything else is taken as raw UTF-8 bytes. The decoded key must be at least 32 bytes.
   */
  static fromText(text: string): AuditKey {
    const value = text.trim();
    if (value.length === 0) throw new AuditError("INVALID_KEY", "audit key is empty");
    const explicit = /^(hex|base64|raw):/.exec(value);
    if (explicit !== null) {
      const body = value.slice(explicit[0].length);
      if (explicit[1] === "hex") {
        if (!HEX.test(body)) throw new AuditError("INVALID_KEY", "audit key marked hex: is not valid hex");
        return AuditKey.fromBytes(Buffer.from(body, "hex"));
      }
      if (explicit[1] === "base64") {
        if (!BASE64_ANY.test(body)) throw new AuditError("INVALID_KEY", "audit key marked base64: is not valid base64");
        return AuditKey.fromBytes(Buffer.from(body, "base64"));
      }
      return AuditKey.fromBytes(Buffer.from(body, "utf8"));
    }
    if (HEX.test(value) && value.length / 2 >= MIN_AUDIT_KEY_BYTES) return AuditKey.fromBytes(Buffer.from(value, "hex"));
    if (BASE64.test(value) && value.length % 4 === 0) {
      const decoded = Buffer.from(value, "base64");
      if (decoded.byteLength >= MIN_AUDIT_KEY_BYTES) return AuditKey.fromBytes(decoded);
    }
    return AuditKey.fromBytes(Buffer.from(value, "utf8"));
  }

  /**
   * HMAC-SHA256 of `data` with this key, lower-case hex. Computed as RFC 2104 defines it, with two
   * one-shot SHA-256 digests over buffers made once per key: a `Hmac` object per call cost about
   * as much again as the digests themselves.
   */
  mac(data: string): string {
    if (data.length > SCRATCH_CHARS) return createHmac("sha256", this.#secret).update(data, "utf8").digest("hex");
    if (this.#inner === undefined || this.#outer === undefined) this.#pads();
    const inner = this.#inner!;
    const outer = this.#outer!;
    const length = inner.write(data, BLOCK, "utf8");
    const digest = hash("sha256", inner.subarray(0, BLOCK + length), "buffer") as unknown as Buffer;
    digest.copy(outer, BLOCK);
    return hash("sha256", outer, "hex");
  }

  /** The padded key's inner and outer blocks (RFC 2104): a key longer than a block is hashed first. */
  #pads(): void {
    const raw = this.#secret.export();
    const key = raw.length > BLOCK ? createHash("sha256").update(raw).digest() : raw;
    const inner = Buffer.alloc(BLOCK + SCRATCH_CHARS * 3);
    const outer = Buffer.alloc(BLOCK + 32);
    inner.fill(0x36, 0, BLOCK);
    outer.fill(0x5c, 0, BLOCK);
    for (let i = 0; i < key.length; i++) {
      inner[i] = inner[i]! ^ key[i]!;
      outer[i] = outer[i]! ^ key[i]!;
    }
    if (key !== raw) key.fill(0);
    raw.fill(0);
    this.#inner = inner;
    this.#outer = outer;
  }

  toString(): string {
    return `AuditKey(${this.id})`;
  }
  toJSON(): { id: string } {
    return { id: this.id };
  }
  [inspect.custom](): string {
    return this.toString();
  }
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const BASE64_ANY = /^[A-Za-z0-9+/]+={0,2}$|^[A-Za-z0-9_-]+={0,2}$/;

/** Anything that names a key: an {@link AuditKey}, raw bytes, or text as in {@link AuditKey.fromText}. */
export type AuditKeyInput = AuditKey | Uint8Array | string;

/** An {@link AuditKey} from a key, raw bytes or text (as {@link AuditKey.fromText}); throws `INVALID_KEY` otherwise. */
export function toAuditKey(input: AuditKeyInput): AuditKey {
  if (input instanceof AuditKey) return input;
  if (typeof input === "string") return AuditKey.fromText(input);
  if (input instanceof Uint8Array) return AuditKey.fromBytes(input);
  throw new AuditError("INVALID_KEY", "audit key must be an AuditKey, bytes or text");
}

/** Where {@link loadAuditKey} reads the key: a key file, else the `AHP_AUDIT_KEY` environment variable. */
export interface LoadAuditKeyOptions {
  /** Path of a key file (`--audit-key-file`): hex, base64 or raw bytes (at least 32). Wins over the environment. */
  keyFile?: string;
  /** Environment to read `AHP_AUDIT_KEY` from. Default `process.env`. */
  env?: Record<string, string | undefined>;
}

/**
 * Loads the key from `keyFile`, else from `AHP_AUDIT_KEY`. Throws `INVALID_KEY` (never echoing
 * key material) when neither is set or the key is unusable.
 */
export async function loadAuditKey(options: LoadAuditKeyOptions = {}): Promise<AuditKey> {
  if (options.keyFile !== undefined) {
    let bytes: Buffer;
    try {
      bytes = await readFile(options.keyFile);
    } catch (error) {
      throw new AuditError(
        "INVALID_KEY",
        `cannot read audit key file ${options.keyFile}: ${(error as NodeJS.ErrnoException).code ?? "error"}`,
      );
    }
    const text = bytes.toString("utf8");
    // A text file (hex, base64, passphrase) is decoded as text; anything else is raw key bytes.
    if (Buffer.from(text, "utf8").equals(bytes) && !text.includes("\u0000")) return AuditKey.fromText(text);
    return AuditKey.fromBytes(bytes);
  }
  const env = options.env ?? process.env;
  const value = env[AUDIT_KEY_ENV];
  if (value === undefined || value.trim() === "") {
    throw new AuditError("INVALID_KEY", `no audit key: pass a key file or set ${AUDIT_KEY_ENV}`);
  }
  return AuditKey.fromText(value);
}
