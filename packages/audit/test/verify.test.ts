import { appendFile, readFile, truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  auditHead,
  auditLogFiles,
  formatAuditHead,
  formatVerifyReport,
  openAuditLog,
  genesisHash,
  parseAuditHead,
  recordHash,
  recordLine,
  rotationPathFor,
  sealRecord,
  sealRotationManifest,
  toAuditKey,
  verifyAuditLog,
  writeRotationManifest,
  type AuditKey,
  type AuditRecord,
} from "../src/index.js";
import { entry, key, otherKey, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
let path: string;

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  path = join(dir, "audit.log");
});
afterEach(() => cleanup());

async function writeLog(count: number, file = path, options: { checkpoint?: false } = {}): Promise<string[]> {
  const log = await openAuditLog({ key, path: file, file: { fsync: "never" }, ...options });
  for (let i = 0; i < count; i++) await log.append(entry(i, { reason: `r${i}` }));
  await log.close();
  return (await readFile(file, "utf8")).split("\n").slice(0, -1);
}

const save = (lines: string[], file = path) => writeFile(file, lines.map((l) => `${l}\n`).join(""));

describe("verifyAuditLog", () => {
  it("accepts an untouched log and reports its head", async () => {
    await writeLog(10);
    const report = await verifyAuditLog(path, key);
    expect(report).toMatchObject({ status: "intact", ok: true, records: 10, startsAtGenesis: true, keyId: key.id });
    expect(report.head?.seq).toBe(10);
    expect(report.break).toBeUndefined();
    expect(formatVerifyReport(report)).toContain("OK: chain intact");
  });

  it("altered field: MAC mismatch on that record", async () => {
    const lines = await writeLog(10);
    const record = JSON.parse(lines[4]!) as AuditRecord;
    record.decision = record.decision === "allow" ? "block" : "allow";
    lines[4] = JSON.stringify(record);
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.status).toBe("broken");
    expect(report.break).toMatchObject({ kind: "altered", line: 5, seq: 5, file: path });
    expect(report.records).toBe(4);
    expect(formatVerifyReport(report)).toContain("TAMPERED (altered)");
  });

  it("altered last record is altered, not a torn tail", async () => {
    const lines = await writeLog(4);
    lines[3] = lines[3]!.replace('"r3"', '"r9"');
    await writeFile(path, lines.join("\n")); // no trailing newline either
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "altered", line: 4 });
  });

  it("deleted line: seq gap and prev mismatch", async () => {
    const lines = await writeLog(10);
    lines.splice(6, 1); // seq 7
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "deleted", line: 7, seq: 8, expectedSeq: 7 });
  });

  it("deleted range of lines", async () => {
    const lines = await writeLog(10);
    lines.splice(2, 3); // seq 3..5
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "deleted", seq: 6, expectedSeq: 3 });
    expect(report.break!.message).toContain("3..5");
  });

  it("inserted forged line (invalid MAC, chain continues around it)", async () => {
    const lines = await writeLog(10);
    const forged = { ...(JSON.parse(lines[3]!) as AuditRecord), decision: "allow", reason: "forged" };
    lines.splice(4, 0, JSON.stringify(forged));
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "inserted", line: 5 });
  });

  it("inserted forged record sealed with a different key", async () => {
    const lines = await writeLog(6);
    const forged = sealRecord({ ...entry(0), time: new Date().toISOString() }, { seq: 3, prev: "0".repeat(64), key: otherKey });
    lines.splice(2, 0, JSON.stringify(forged));
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "inserted", line: 3 });
  });

  it("inserted garbage line", async () => {
    const lines = await writeLog(5);
    lines.splice(2, 0, "this is not a record");
    await save(lines);
    expect((await verifyAuditLog(path, key)).break).toMatchObject({ kind: "inserted", line: 3 });
  });

  it("inserted copy of an earlier (valid) record", async () => {
    const lines = await writeLog(8);
    lines.splice(5, 0, lines[2]!);
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "inserted", line: 6, seq: 3 });
  });

  it("swapped lines: reordered", async () => {
    const lines = await writeLog(10);
    [lines[3], lines[4]] = [lines[4]!, lines[3]!];
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "reordered", line: 4, seq: 5, expectedSeq: 4 });
  });

  it("record moved backwards: reordered", async () => {
    const lines = await writeLog(10);
    const [moved] = lines.splice(8, 1);
    lines.splice(2, 0, moved!);
    await save(lines);
    expect((await verifyAuditLog(path, key)).break).toMatchObject({ kind: "reordered", line: 3, seq: 9 });
  });

  it("cut mid-record after the last checkpoint (a crash): torn_tail, not tampering", async () => {
    await writeLog(10, path, { checkpoint: false });
    const text = await readFile(path, "utf8");
    await truncate(path, Buffer.byteLength(text) - 40);
    const report = await verifyAuditLog(path, key);
    expect(report).toMatchObject({ status: "torn_tail", ok: true, records: 9, checkpoint: { status: "none" } });
    expect(report.tornTail).toEqual({ file: path, line: 10, bytes: expect.any(Number) as unknown, lines: 1 });
    expect(report.break).toBeUndefined();
    expect(formatVerifyReport(report)).toContain(`OK with warning (torn_tail): the last record at ${path}:10 is incomplete`);
    expect(formatVerifyReport(report)).toContain("a crash, not tampering");
  });

  it("cut mid-record that a checkpoint covers: truncated, not a crash", async () => {
    await writeLog(10);
    const text = await readFile(path, "utf8");
    await truncate(path, Buffer.byteLength(text) - 40);
    const report = await verifyAuditLog(path, key);
    expect(report).toMatchObject({ status: "broken", ok: false, break: { kind: "truncated", expectedSeq: 10 } });
    expect(report.tornTail).toBeUndefined();
    expect(report.break!.message).toMatch(/ends at seq 9, but its signed checkpoint .* names seq 10: record 10 is missing/);
    expect(report.break!.message).toContain("this is not a crash");
  });

  it("a trailing line that is complete JSON, or empty, is not a torn record", async () => {
    await writeLog(3, path, { checkpoint: false });
    await appendFile(path, '{"seq":4,"note":"added"}');
    expect((await verifyAuditLog(path, key)).break?.kind).toBe("altered");
    await writeLog(3, join(dir, "b.log"), { checkpoint: false });
    await appendFile(join(dir, "b.log"), "}\n");
    expect((await verifyAuditLog(join(dir, "b.log"), key)).status).toBe("torn_tail");
    await appendFile(join(dir, "b.log"), "\n");
    expect((await verifyAuditLog(join(dir, "b.log"), key)).break?.kind).toBe("altered");
  });

  it("whole trailing records removed: caught by the signed checkpoint; without it only against a published head", async () => {
    await writeLog(10);
    const head = await auditHead(path, key);
    expect(head?.seq).toBe(10);
    const lines = (await readFile(path, "utf8")).split("\n").slice(0, -1);
    await save(lines.slice(0, 7));
    const byCheckpoint = await verifyAuditLog(path, key);
    expect(byCheckpoint).toMatchObject({ status: "broken", break: { kind: "truncated", expectedSeq: 10, line: 7 } });
    expect(byCheckpoint.break!.message).toMatch(
      /ends at seq 7, but its signed checkpoint \(taken .*\) names seq 10: records 8\.\.10 are missing \(truncated\)/,
    );
    expect(formatVerifyReport(byCheckpoint)).toContain("TAMPERED (truncated)");
    expect((await verifyAuditLog(path, key, { checkpoint: false })).status).toBe("intact");
    const report = await verifyAuditLog(path, key, { checkpoint: false, expectHead: formatAuditHead(head!) });
    expect(report.break).toMatchObject({ kind: "truncated", expectedSeq: 10 });
    expect(report.expectedHead).toMatchObject({ matched: false });
  });

  it("expectHead matches an intact log, and rejects a head from another history", async () => {
    await writeLog(5);
    const head = (await auditHead(path, key))!;
    expect((await verifyAuditLog(path, key, { expectHead: head })).expectedHead).toMatchObject({ matched: true });
    const bad = formatAuditHead({ seq: 3, hash: "ab".repeat(32) });
    expect((await verifyAuditLog(path, key, { expectHead: bad })).break).toMatchObject({ kind: "altered", seq: 3 });
    expect(parseAuditHead("nonsense")).toBeUndefined();
    await expect(verifyAuditLog(path, key, { expectHead: "nonsense" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("wrong key is reported as such, not as tampering", async () => {
    await writeLog(5);
    const report = await verifyAuditLog(path, otherKey);
    expect(report).toMatchObject({ status: "wrong_key", ok: false });
    expect(report.break).toMatchObject({ kind: "wrong_key", line: 1 });
    expect(formatVerifyReport(report)).toContain("WRONG KEY");
  });

  it("no MAC verifies but the chain's hashes are consistent: wrong key; the same with a broken chain: tampering", async () => {
    // Records that carry this key's id but were MACed with another key (as a key with a colliding id would).
    const impostor = { id: key.id, mac: (data: string) => otherKey.mac(data) } as unknown as AuditKey;
    const chain: string[] = [];
    let prev = genesisHash(key.id);
    for (let i = 0; i < 4; i++) {
      const record = sealRecord({ ...entry(i), time: new Date().toISOString() }, { seq: i + 1, prev, key: impostor });
      chain.push(recordLine(record).trimEnd());
      prev = recordHash(record);
    }
    await save(chain);
    const report = await verifyAuditLog(path, key, { checkpoint: false });
    expect(report).toMatchObject({ status: "wrong_key", break: { kind: "wrong_key", line: 1 } });
    expect(report.break!.message).toMatch(/hashes are consistent: wrong key, not tampering/);
    // One record dropped from the middle: the chain no longer holds together, so it is not a key problem.
    await save([chain[0]!, chain[1]!, chain[3]!]);
    const broken = await verifyAuditLog(path, key, { checkpoint: false });
    expect(broken).toMatchObject({ status: "broken", break: { kind: "altered", line: 1 } });
  });

  it("a changed key id on one record is tampering", async () => {
    const lines = await writeLog(5);
    lines[2] = lines[2]!.replace(`"kid":"${key.id}"`, '"kid":"00000000"');
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.break).toMatchObject({ kind: "altered", line: 3 });
    expect(report.break!.message).toContain("key id");
  });

  it("deleting the first records of a log that was never rotated is caught; allowMissingHead accepts a log cut on purpose", async () => {
    const lines = await writeLog(5);
    await save(lines.slice(2));
    const strict = await verifyAuditLog(path, key);
    expect(strict).toMatchObject({ status: "broken", ok: false, break: { kind: "deleted", seq: 3, expectedSeq: 1 } });
    expect(strict.break!.message).toMatch(/records 1\.\.2 are missing and no rotation manifest says they were rotated away/);
    expect(formatVerifyReport(strict)).toContain("TAMPERED (deleted)");
    const lenient = await verifyAuditLog(path, key, { allowMissingHead: true });
    expect(lenient).toMatchObject({ status: "intact", startsAtGenesis: false, headUnchecked: true, first: { seq: 3 } });
    expect(formatVerifyReport(lenient)).toContain("starts at seq 3: earlier records missing, accepted unchecked");
  });

  it("rejects files that do not exist", async () => {
    await expect(verifyAuditLog([join(dir, "missing.log")], key)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    await expect(verifyAuditLog(join(dir, "missing.log"), key)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("rotation", () => {
  it("keeps the chain across files and verifies the rotated set in order", async () => {
    const log = await openAuditLog({ key, path, file: { maxBytes: 2000, maxFiles: 100, fsync: "never" } });
    for (let i = 0; i < 60; i++) await log.append(entry(i));
    await log.close();
    const files = await auditLogFiles(path);
    expect(files.length).toBeGreaterThan(3);
    expect(files[0]).toBe(`${path}.1`);
    expect(files.at(-1)).toBe(path);
    for (const f of files.slice(0, -1)) {
      const size = (await readFile(f)).length;
      expect(size).toBeLessThanOrEqual(2000);
    }
    // The first record of each new file chains to the last record of the previous one.
    const second = JSON.parse((await readFile(files[1]!, "utf8")).split("\n")[0]!) as AuditRecord;
    const firstLines = (await readFile(files[0]!, "utf8")).split("\n").slice(0, -1);
    expect(second.seq).toBe(firstLines.length + 1);
    const report = await verifyAuditLog(path, key);
    expect(report).toMatchObject({ status: "intact", records: 60, startsAtGenesis: true });
    expect(report.files).toEqual(files);
  });

  it("detects a missing middle file (deleted) and files in the wrong order (reordered)", async () => {
    const log = await openAuditLog({ key, path, file: { maxBytes: 1500, maxFiles: 100, fsync: "never" } });
    for (let i = 0; i < 40; i++) await log.append(entry(i));
    await log.close();
    const files = await auditLogFiles(path);
    expect(files.length).toBeGreaterThan(3);
    const withoutSecond = files.filter((_, i) => i !== 1);
    expect((await verifyAuditLog(withoutSecond, key)).break).toMatchObject({ kind: "deleted", file: files[2], line: 1 });
    const swapped = [files[1]!, files[0]!, ...files.slice(2)];
    expect((await verifyAuditLog(swapped, key)).break?.kind).toBe("reordered");
  });

  it("maxFiles deletes the oldest files; the rest verifies from a later start", async () => {
    const log = await openAuditLog({ key, path, file: { maxBytes: 1500, maxFiles: 3, fsync: "never" } });
    for (let i = 0; i < 60; i++) await log.append(entry(i));
    await log.close();
    const files = await auditLogFiles(path);
    expect(files).toHaveLength(3);
    const report = await verifyAuditLog(path, key);
    expect(report).toMatchObject({ status: "intact", startsAtGenesis: false, rotation: { file: `${path}.rotation` } });
    expect(report.head?.seq).toBe(60);
    // The manifest names exactly the records that left: the first one present follows them.
    expect(report.rotation!.removedThrough).toBe(report.first!.seq - 1);
    expect(formatVerifyReport(report)).toContain(`records 1..${report.first!.seq - 1} rotated away`);
  });

  it("a rotation manifest covers the removed records only: cutting one more is caught; a forged manifest is refused", async () => {
    const log = await openAuditLog({ key, path, file: { maxBytes: 1500, maxFiles: 3, fsync: "never" } });
    for (let i = 0; i < 60; i++) await log.append(entry(i));
    await log.close();
    const files = await auditLogFiles(path);
    const oldest = (await readFile(files[0]!, "utf8")).split("\n");
    await writeFile(files[0]!, oldest.slice(1).join("\n"));
    const cut = await verifyAuditLog(path, key);
    expect(cut.break).toMatchObject({ kind: "deleted" });
    expect(cut.break!.message).toMatch(/rotation manifest .* says only records 1\.\.\d+ were rotated away/);
    // Restore the file, then forge the manifest (claims more records left than did).
    await writeFile(files[0]!, oldest.join("\n"));
    const manifest = JSON.parse(await readFile(`${path}.rotation`, "utf8")) as Record<string, unknown>;
    await writeFile(`${path}.rotation`, JSON.stringify({ ...manifest, removed_through: (manifest.removed_through as number) + 5 }));
    await writeFile(files[0]!, oldest.slice(3).join("\n"));
    const forged = await verifyAuditLog(path, key);
    expect(forged.break).toMatchObject({ kind: "deleted" });
    expect(forged.break!.message).toMatch(/does not verify/);
  });

  it("a manifest written through the API lets a log whose head was rotated away verify", async () => {
    const lines = await writeLog(8);
    const third = JSON.parse(lines[2]!) as AuditRecord;
    await writeRotationManifest(
      rotationPathFor(path),
      sealRotationManifest({ seq: 3, hash: recordHash(third) }, toAuditKey(key), { time: new Date().toISOString() }),
    );
    await save(lines.slice(3));
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", rotation: { removedThrough: 3 }, first: { seq: 4 } });
    // Cutting record 4 as well is caught: the manifest accounts for 1..3 only.
    await save(lines.slice(4));
    expect((await verifyAuditLog(path, key)).break).toMatchObject({ kind: "deleted", seq: 5 });
  });

  it("a crash right after rotation continues the chain from the rotated file", async () => {
    await writeLog(5);
    const { rename } = await import("node:fs/promises");
    await rename(path, `${path}.1`);
    const log = await openAuditLog({ key, path, file: { fsync: "never" } });
    const next = await log.append(entry(99));
    expect(next.seq).toBe(6);
    await log.close();
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 6 });
  });
});

describe("torn lines and recovery", () => {
  it("reopening after a torn tail records a recovery and the log verifies", async () => {
    await writeLog(5);
    await appendFile(path, '{"agent":"a-1","decision":"al'); // a writer died mid-line
    expect((await verifyAuditLog(path, key)).status).toBe("torn_tail");
    const log = await openAuditLog({ key, path, file: { fsync: "never" } });
    const after = await log.append(entry(7));
    await log.close();
    const lines = (await readFile(path, "utf8")).split("\n").slice(0, -1);
    expect(lines).toHaveLength(8);
    const recovery = JSON.parse(lines[6]!) as AuditRecord;
    expect(recovery).toMatchObject({ kind: "recovery", seq: 6, torn: [{ bytes: 29 }] });
    expect(after.seq).toBe(7);
    const report = await verifyAuditLog(path, key);
    expect(report).toMatchObject({ status: "intact", records: 7 });
    expect(report.recovered).toEqual([{ file: path, line: 6, bytes: 29 }]);
    expect(formatVerifyReport(report)).toContain("recovered torn line");
  });

  it("a torn line without its recovery record in the middle is tampering", async () => {
    await writeLog(3);
    await appendFile(path, '{"broken\n');
    const log = await openAuditLog({ key, path, file: { fsync: "never" } });
    await log.append(entry(1));
    await log.close();
    const lines = (await readFile(path, "utf8")).split("\n").slice(0, -1);
    lines.splice(4, 1); // drop the recovery record
    await save(lines);
    const report = await verifyAuditLog(path, key);
    expect(report.status).toBe("broken");
    expect(report.break?.line).toBe(4);
  });

  it("a complete last record without its newline is accepted and continued", async () => {
    const lines = await writeLog(3);
    await writeFile(path, lines.join("\n"));
    expect((await verifyAuditLog(path, key)).status).toBe("intact");
    const log = await openAuditLog({ key, path, file: { fsync: "never" } });
    expect((await log.append(entry(3))).seq).toBe(4);
    await log.close();
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 4, recovered: [] });
  });
});
