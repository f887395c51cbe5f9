/**
 * The lines of a log as verification sees them, read as a stream: one {@link Entry} at a time
 * (parsed, hashed, MAC checked), so that memory stays flat whatever the log's length. The rare
 * questions about other lines (does seq 1 appear later? is this a copy of an earlier record?)
 * are answered by reading the files again.
 */
import { createHash, hash, timingSafeEqual } from "node:crypto";
import { stat } from "node:fs/promises";
import { canonicalJson } from "./canonical.js";
import { AuditError } from "./errors.js";
import type { AuditKey } from "./key.js";
import { readRawLines } from "./lines.js";
import type { AuditRecord } from "./record.js";
import type { Entry } from "./verify-types.js";

/** An entry and its position among all lines of the log (0-based, across files). */
export interface IndexedEntry extends Entry {
  index: number;
}

/** Throws `INVALID_ARGUMENT` for the first file that cannot be read. */
export async function checkReadable(files: readonly string[]): Promise<void> {
  for (const file of files) {
    try {
      await stat(file);
    } catch {
      throw new AuditError("INVALID_ARGUMENT", `cannot read audit file ${file}`);
    }
  }
}

/**
 * The entries of `files` in order. `want(record)`, when given, picks the records worth their
 * hash and MAC check (the others come back with `macOk: false` and no `hash`): for the searches
 * that look for one seq.
 */
export async function* readEntries(
  files: readonly string[],
  key: AuditKey,
  want?: (record: AuditRecord) => boolean,
): AsyncGenerator<IndexedEntry> {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  let index = 0;
  for (const file of files) {
    for await (const raw of readRawLines(file)) {
      const entry: IndexedEntry = {
        index: index++,
        file,
        line: raw.line,
        bytes: raw.bytes.length,
        terminated: raw.terminated,
        macOk: false,
      };
      const parsed = parseLine(raw.bytes, decoder);
      if (parsed.record !== undefined) {
        entry.record = parsed.record;
        if (want === undefined || want(parsed.record)) {
          const checked = hashAndMac(parsed.record, key);
          entry.hash = checked.hash;
          entry.macOk = checked.macOk;
        }
      } else {
        entry.problem = parsed.problem;
        entry.sha256 = createHash("sha256").update(raw.bytes).digest("hex");
      }
      yield entry;
    }
  }
}

/** The first entry after (or before) `index` that `match` accepts; `want` as for {@link readEntries}. */
export async function findEntry(
  files: readonly string[],
  key: AuditKey,
  range: { after: number } | { before: number },
  want: (record: AuditRecord) => boolean,
  match: (entry: IndexedEntry) => boolean,
): Promise<IndexedEntry | undefined> {
  for await (const entry of readEntries(files, key, want)) {
    if ("before" in range && entry.index >= range.before) return undefined;
    if ("after" in range && entry.index <= range.after) continue;
    if (match(entry)) return entry;
  }
  return undefined;
}

/** An iterator that can look one entry ahead. */
export class EntryStream {
  readonly #source: AsyncGenerator<IndexedEntry>;
  #peeked: IndexedEntry | undefined;
  #hasPeeked = false;

  constructor(source: AsyncGenerator<IndexedEntry>) {
    this.#source = source;
  }

  async peek(): Promise<IndexedEntry | undefined> {
    if (!this.#hasPeeked) {
      const next = await this.#source.next();
      this.#peeked = next.done === true ? undefined : next.value;
      this.#hasPeeked = true;
    }
    return this.#peeked;
  }

  async next(): Promise<IndexedEntry | undefined> {
    const entry = await this.peek();
    this.#hasPeeked = false;
    this.#peeked = undefined;
    return entry;
  }

  /** Stops reading (closes the file being read). */
  async close(): Promise<void> {
    await this.#source.return(undefined);
  }
}

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The record's hash (SHA-256 of its canonical JSON) and whether its MAC verifies (HMAC of the
 * canonical JSON without `mac`, compared in constant time). The members are serialized once:
 * both texts are joined from the same sorted parts, as the writer does when it seals.
 */
function hashAndMac(record: AuditRecord, key: AuditKey): { hash: string; macOk: boolean } {
  const source = record as unknown as Record<string, unknown>;
  const keys = Object.keys(source).sort();
  const withMac: string[] = [];
  const withoutMac: string[] = [];
  for (const k of keys) {
    const value = source[k];
    if (value === undefined) continue;
    const part = `${JSON.stringify(k)}:${canonicalJson(value)}`;
    withMac.push(part);
    if (k !== "mac") withoutMac.push(part);
  }
  const digest = hash("sha256", `{${withMac.join(",")}}`, "hex");
  const mac = record.mac;
  if (record.kid !== key.id || typeof mac !== "string" || !HEX64.test(mac)) return { hash: digest, macOk: false };
  const expected = key.mac(`{${withoutMac.join(",")}}`);
  return { hash: digest, macOk: timingSafeEqual(Buffer.from(expected, "hex"), Buffer.from(mac, "hex")) };
}

function parseLine(bytes: Buffer, decoder: { decode(input: Uint8Array): string }): { record?: AuditRecord; problem?: string } {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return { problem: "not valid UTF-8" };
  }
  if (text.length === 0) return { problem: "empty line" };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: "not valid JSON" };
  }
  return checkStructure(value);
}

function checkStructure(value: unknown): { record?: AuditRecord; problem?: string } {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return { problem: "not a JSON object" };
  const r = value as Record<string, unknown>;
  if (typeof r.seq !== "number" || !Number.isSafeInteger(r.seq) || r.seq < 1) return { problem: "seq is not a positive integer" };
  if (typeof r.prev !== "string" || !HEX64.test(r.prev)) return { problem: "prev is not a SHA-256 hex digest" };
  if (typeof r.mac !== "string" || !HEX64.test(r.mac)) return { problem: "mac is not a SHA-256 hex digest" };
  if (typeof r.kid !== "string") return { problem: "kid is missing" };
  // A structurally odd but complete record still goes through the MAC check (and fails it).
  return { record: value as AuditRecord };
}
