import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { inspect } from "node:util";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  AuditError,
  AuditKey,
  FileAuditSink,
  MemoryAuditSink,
  canonicalJson,
  checkRecordMac,
  genesisHash,
  loadAuditKey,
  openAuditLog,
  recordHash,
  verifyAuditLog,
  type AuditRecord,
  type AuditSink,
} from "../src/index.js";
import { KEY_HEX, entry, key, otherKey, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
let path: string;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  path = join(dir, "audit.log");
});
afterEach(() => cleanup());

describe("canonical JSON", () => {
  it("sorts keys recursively, drops undefined, no whitespace", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, "x", null], c: true }, u: undefined })).toBe('{"a":{"c":true,"d":[1,"x",null]},"b":1}');
    expect(canonicalJson({ é: 1, Z: 2, a: 3 })).toBe('{"Z":2,"a":3,"é":1}');
    expect(canonicalJson("line\nbreak \u2028")).toBe(JSON.stringify("line\nbreak \u2028"));
  });
  it("rejects values without a JSON form", () => {
    expect(() => canonicalJson({ n: Number.NaN })).toThrow(AuditError);
    expect(() => canonicalJson({ n: 1n })).toThrow(/bigint/);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalJson(cyclic)).toThrow(/circular/);
  });
});

describe("AuditKey", () => {
  it("decodes hex, base64 and raw text and derives the key id from the bytes", () => {
    const bytes = Buffer.from(KEY_HEX, "hex");
    const fromHex = AuditKey.fromText(KEY_HEX);
    const fromB64 = AuditKey.fromText(bytes.toString("base64"));
    const fromBytes = AuditKey.fromBytes(bytes);
    expect(fromHex.id).toMatch(/^[0-9a-f]{8}$/);
    expect(fromB64.id).toBe(fromHex.id);
    expect(fromBytes.id).toBe(fromHex.id);
    expect(AuditKey.fromText(`hex:${KEY_HEX}`).id).toBe(fromHex.id);
    const raw = AuditKey.fromText("correct horse battery staple, forty chars!");
    expect(raw.id).not.toBe(fromHex.id);
    expect(AuditKey.fromText("raw:correct horse battery staple, forty chars!").id).toBe(raw.id);
  });

  it("rejects short or empty keys without echoing them", () => {
    expect(() => AuditKey.fromText("short-secret")).toThrow(expect.objectContaining({ code: "INVALID_KEY" }));
    expect(() => AuditKey.fromText("   ")).toThrow(/empty/);
    expect(() => AuditKey.fromText("hex:zz")).toThrow(/hex/);
    try {
      AuditKey.fromText("tiny-secret-value");
    } catch (error) {
      expect(String((error as Error).message)).not.toContain("tiny-secret-value");
    }
  });

  it("never reveals the key bytes when printed or serialized", () => {
    const text = [String(key), JSON.stringify({ key }), inspect(key), inspect({ key }, { depth: 5, showHidden: true })].join(" ");
    expect(text).toContain(key.id);
    expect(text).not.toContain(KEY_HEX.slice(0, 16));
    expect(text).not.toContain(Buffer.from(KEY_HEX, "hex").toString("base64").slice(0, 12));
  });

  it("loads from a key file (text or binary) or AHP_AUDIT_KEY, file first", async () => {
    const textFile = join(dir, "key.txt");
    await writeFile(textFile, `${KEY_HEX}\n`);
    expect((await loadAuditKey({ keyFile: textFile })).id).toBe(key.id);
    const binFile = join(dir, "key.bin");
    await writeFile(binFile, Buffer.from(KEY_HEX, "hex"));
    expect((await loadAuditKey({ keyFile: binFile })).id).toBe(key.id);
    expect((await loadAuditKey({ env: { AHP_AUDIT_KEY: KEY_HEX } })).id).toBe(key.id);
    expect((await loadAuditKey({ keyFile: textFile, env: { AHP_AUDIT_KEY: "3c".repeat(32) } })).id).toBe(key.id);
    await expect(loadAuditKey({ env: {} })).rejects.toMatchObject({ code: "INVALID_KEY" });
    await expect(loadAuditKey({ keyFile: join(dir, "none") })).rejects.toMatchObject({
      code: "INVALID_KEY",
      message: expect.stringContaining("ENOENT") as unknown,
    });
  });
});

describe("AuditLog", () => {
  it("chains records from the genesis value with seq, prev and mac", async () => {
    const sink = new MemoryAuditSink();
    const log = await openAuditLog({ key, sink });
    const a = await log.append(entry(0));
    const b = await log.append(entry(1));
    expect(a).toMatchObject({ v: 1, seq: 1, kid: key.id, prev: genesisHash(key.id) });
    expect(b.prev).toBe(recordHash(a));
    expect(checkRecordMac(a, key)).toBe(true);
    expect(checkRecordMac({ ...a, decision: "allow" === a.decision ? "block" : "allow" }, key)).toBe(false);
    expect(checkRecordMac(a, otherKey)).toBe(false);
    expect(log.head).toEqual({ seq: 2, hash: recordHash(b) });
    expect(new Date(a.time).toISOString()).toBe(a.time);
    expect(sink.text()).toBe(`${canonicalJson(a)}\n${canonicalJson(b)}\n`);
  });

  it("keeps call order and the chain with 1000 concurrent appends (group commit)", async () => {
    const log = await openAuditLog({ key, path, file: { fsync: "always" } });
    const records = await Promise.all(Array.from({ length: 1000 }, (_, i) => log.append(entry(i, { request_id: `r-${i}` }))));
    await log.close();
    expect(records.map((r) => r.seq)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    expect(records.map((r) => r.request_id)).toEqual(Array.from({ length: 1000 }, (_, i) => `r-${i}`));
    const lines = (await readFile(path, "utf8")).split("\n");
    expect(lines).toHaveLength(1001);
    expect((JSON.parse(lines[999]!) as AuditRecord).request_id).toBe("r-999");
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 1000 });
  });

  it("reopening continues the chain", async () => {
    let log = await openAuditLog({ key, path });
    await log.append(entry(0));
    await log.append(entry(1));
    const head = log.head;
    await log.close();
    log = await openAuditLog({ key, path });
    expect(log.head).toEqual(head);
    const third = await log.append(entry(2));
    expect(third).toMatchObject({ seq: 3, prev: head!.hash });
    await log.close();
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 3 });
  });

  it("refuses to continue a log written with another key, or whose last record was altered", async () => {
    const log = await openAuditLog({ key, path });
    await log.append(entry(0));
    await log.close();
    await expect(openAuditLog({ key: otherKey, path })).rejects.toMatchObject({ code: "KEY_MISMATCH" });
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace('"block"', '"allow"'));
    await expect(openAuditLog({ key, path })).rejects.toMatchObject({ code: "CHAIN_BROKEN" });
    await writeFile(path, '{"hello":"world"}\n');
    await expect(openAuditLog({ key, path })).rejects.toMatchObject({ code: "CHAIN_BROKEN" });
  });

  it("holds a lock so two writers cannot fork the chain; a stale lock is taken over", async () => {
    const log = await openAuditLog({ key, path });
    await expect(openAuditLog({ key, path })).rejects.toMatchObject({ code: "LOCKED" });
    await log.close();
    await writeFile(`${path}.lock`, "999999999\n"); // a pid that does not exist
    const again = await openAuditLog({ key, path });
    await again.append(entry(1));
    await again.close();
    await expect(readFile(`${path}.lock`)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("creates files with mode 0600 and missing directories", async () => {
    const nested = join(dir, "a", "b", "audit.log");
    const log = await openAuditLog({ key, path: nested });
    await log.append(entry(0));
    await log.close();
    const { stat } = await import("node:fs/promises");
    expect((await stat(nested)).mode & 0o777).toBe(0o600);
  });

  it("a failed write rejects its records and leaves no gap in the chain", async () => {
    let fail = false;
    const memory = new MemoryAuditSink();
    const sink: AuditSink = {
      open: () => memory.open(),
      append: (r) => memory.append(r),
      appendBatch: async (records) => {
        if (fail) throw new Error("disk full");
        await memory.appendBatch(records);
      },
      close: () => memory.close(),
    };
    const log = await openAuditLog({ key, sink });
    await log.append(entry(0));
    fail = true;
    await expect(log.append(entry(1))).rejects.toMatchObject({
      code: "WRITE_FAILED",
      message: expect.stringContaining("disk full") as unknown,
    });
    fail = false;
    const next = await log.append(entry(2));
    expect(next.seq).toBe(2);
    const file = join(dir, "copy.log");
    await writeFile(file, memory.text());
    expect(await verifyAuditLog([file], key)).toMatchObject({ status: "intact", records: 2 });
  });

  it.skipIf(!existsSync("/dev/full"))("a sink that cannot write (ENOSPC) is refused when the log opens", async () => {
    const sink = new FileAuditSink({ path: "/dev/full", fsync: "never", lock: false });
    await expect(openAuditLog({ key, sink })).rejects.toMatchObject({
      code: "WRITE_FAILED",
      message: "audit log /dev/full is not writable: ENOSPC: no space left on device, write",
    });
  });

  it("rejects appends after close, oversize records and values without a JSON form", async () => {
    const log = await openAuditLog({ key, sink: new MemoryAuditSink(), maxRecordBytes: 2048 });
    await expect(log.append(entry(0, { reason: "x".repeat(5000) }))).rejects.toMatchObject({ code: "RECORD_TOO_LARGE" });
    const trimmed = await log.append(entry(0, { payload: { big: "y".repeat(5000) } }));
    expect(trimmed).toMatchObject({ payload_truncated: true });
    expect(trimmed.payload).toBeUndefined();
    await expect(log.append(entry(0, { data: { n: Number.POSITIVE_INFINITY } }))).rejects.toMatchObject({ code: "NOT_CANONICAL" });
    await log.close();
    await log.close();
    await expect(log.append(entry(1))).rejects.toMatchObject({ code: "CLOSED" });
  });

  it("validates file sink options", () => {
    expect(() => new FileAuditSink({ path: "" })).toThrow(AuditError);
    expect(() => new FileAuditSink({ path, fsync: "sometimes" as never })).toThrow(/fsync/);
    expect(() => new FileAuditSink({ path, maxFiles: 0 })).toThrow(/maxFiles/);
  });

  it("interval fsync policy writes and closes cleanly", async () => {
    const errors: Error[] = [];
    const log = await openAuditLog({ key, path, file: { fsync: "interval", fsyncIntervalMs: 5, onerror: (e) => errors.push(e) } });
    for (let i = 0; i < 20; i++) await log.append(entry(i));
    await log.close();
    expect(errors).toEqual([]);
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 20 });
  });
});

describe("MemoryAuditSink", () => {
  it("reopens from existing text with a torn tail and records the recovery", async () => {
    const first = new MemoryAuditSink();
    const log = await openAuditLog({ key, sink: first });
    await log.append(entry(0));
    await log.append(entry(1));
    await log.close();
    const sink = new MemoryAuditSink(`${first.text()}{"torn`);
    const reopened = await openAuditLog({ key, sink });
    expect(reopened.head?.seq).toBe(3);
    expect(sink.records().map((r) => r.kind)).toEqual(["decision", "decision", "recovery"]);
    await reopened.close();
    const file = join(dir, "memory.log");
    await writeFile(file, sink.text());
    expect(await verifyAuditLog([file], key)).toMatchObject({ status: "intact", records: 3, recovered: [{ line: 3, bytes: 6 }] });
  });
});
