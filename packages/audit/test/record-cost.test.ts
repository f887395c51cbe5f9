import { createHmac } from "node:crypto";
import { copyFile, readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { AuditKey, checkRecordMac, openAuditLog, recordLine, sealRecord, verifyAuditLog, type AuditRecord } from "../src/index.js";
import { SAMPLES, entry, key, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(() => cleanup());

describe("AuditKey.mac", () => {
  const messages = [
    "",
    "{}",
    '{"kind":"decision","reason":"é ü 🙂 \\u2028"}',
    "x".repeat(8 * 1024),
    "ä".repeat(8 * 1024),
    "🙂".repeat(4 * 1024),
    "y".repeat(8 * 1024 + 1),
    "z".repeat(200_000),
  ];
  const keys: Array<[string, Buffer]> = [
    ["32 bytes", Buffer.alloc(32, 0x4d)],
    ["64 bytes (one block)", Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 37) & 0xff))],
    ["100 bytes (hashed first)", Buffer.from(Array.from({ length: 100 }, (_, i) => (i * 91 + 7) & 0xff))],
  ];
  it.each(keys)("is HMAC-SHA256 for a key of %s, for short, non-ASCII and long messages", (_name, bytes) => {
    const k = AuditKey.fromBytes(bytes);
    for (const message of messages) {
      expect(k.mac(message)).toBe(createHmac("sha256", bytes).update(message, "utf8").digest("hex"));
      // Twice: what the first message left in the reusable buffer must not change the next digest.
      expect(k.mac(message.slice(0, 3))).toBe(createHmac("sha256", bytes).update(message.slice(0, 3), "utf8").digest("hex"));
    }
  });
});

describe("the log's redaction and time", () => {
  it("writes hex ids unchanged and still redacts secrets in any member", async () => {
    const path = join(dir, "audit.log");
    const log = await openAuditLog({ key, path });
    const uuid = "3f2c8a5e-9b1d-4c7e-a2f0-6d4b8e1c9a7f";
    const digest = "ab".repeat(32);
    const first = await log.append(entry(1, { request_id: uuid, payload_sha256: digest, trace_id: "0af7651916cd43dd8448eb211c80319c" }));
    const second = await log.append(entry(2, { request_id: SAMPLES.github_classic, reason: `key ${SAMPLES.aws_access_key_id}` }));
    const third = await log.append(
      entry(3, {
        conn: { id: 7, transport: "unix", remote: SAMPLES.stripe, principal: "alice" },
        shadow: { decision: "block", rule: SAMPLES.openai },
      }),
    );
    await log.close();
    expect(first.request_id).toBe(uuid);
    expect(first.payload_sha256).toBe(digest);
    expect(first.trace_id).toBe("0af7651916cd43dd8448eb211c80319c");
    expect(second.request_id).toBe("[REDACTED:github_token]");
    expect(second.reason).toBe("key [REDACTED:aws_access_key_id]");
    expect(third.conn).toEqual({ id: 7, transport: "unix", remote: "[REDACTED:stripe_key]", principal: "alice" });
    expect(third.shadow).toEqual({ decision: "block", rule: "[REDACTED:openai_api_key]" });
    const text = await readFile(path, "utf8");
    expect(text).toContain(uuid);
    for (const secret of [SAMPLES.github_classic, SAMPLES.aws_access_key_id, SAMPLES.stripe, SAMPLES.openai])
      expect(text).not.toContain(secret);
    for (const record of [first, second, third]) expect(checkRecordMac(record, key)).toBe(true);
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 3 });
  });

  it("runs a custom redactor over hex ids too", async () => {
    const seen: string[] = [];
    const log = await openAuditLog({
      key,
      path: join(dir, "custom.log"),
      redactor: (text) => {
        seen.push(text);
        return /^[0-9a-f-]{36}$/.test(text) ? "[REDACTED:uuid]" : text;
      },
    });
    const record = await log.append(entry(1, { request_id: "3f2c8a5e-9b1d-4c7e-a2f0-6d4b8e1c9a7f" }));
    await log.close();
    expect(seen).toContain("3f2c8a5e-9b1d-4c7e-a2f0-6d4b8e1c9a7f");
    expect(record.request_id).toBe("[REDACTED:uuid]");
  });

  it("stamps records with the time they were appended, or with the given clock", async () => {
    const log = await openAuditLog({ key, path: join(dir, "time.log") });
    const before = Date.now();
    const first = await log.append(entry(1));
    const second = await log.append(entry(2));
    const after = Date.now();
    await log.close();
    for (const record of [first, second]) {
      const at = Date.parse(record.time);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(after);
      expect(record.time).toBe(new Date(at).toISOString());
    }
    const fixed = await openAuditLog({ key, path: join(dir, "fixed.log"), clock: () => new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 6)) });
    expect((await fixed.append(entry(1))).time).toBe("2030-01-02T03:04:05.006Z");
    await fixed.close();
  });
});

describe("a log written before the one-shot HMAC", () => {
  const fixture = fileURLToPath(new URL("./fixtures/v1-log-before-one-shot-hmac.jsonl", import.meta.url));

  it("verifies, seals to the same bytes, and is continued", async () => {
    expect(await verifyAuditLog(fixture, key)).toMatchObject({ status: "intact", records: 3 });
    const lines = (await readFile(fixture, "utf8")).split("\n").filter((line) => line !== "");
    for (const line of lines) {
      const { v: _v, seq, kid: _kid, prev, mac: _mac, ...rest } = JSON.parse(line) as AuditRecord;
      const again = sealRecord(rest, { seq, prev, key });
      expect(recordLine(again)).toBe(`${line}\n`);
    }
    const path = join(dir, "continued.log");
    await copyFile(fixture, path);
    const log = await openAuditLog({ key, path, checkpoint: false });
    const next = await log.append(entry(4, { request_id: "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b" }));
    await log.close();
    expect(next.seq).toBe(4);
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 4 });
  });
});
