import { appendFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditStats, formatAuditRecord, formatAuditStats, openAuditLog, tailAuditLog, type AuditTailEntry } from "../src/index.js";
import { entry, key, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
let path: string;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  path = join(dir, "audit.log");
});
afterEach(() => cleanup());

async function collect(iterable: AsyncIterable<AuditTailEntry>): Promise<AuditTailEntry[]> {
  const out: AuditTailEntry[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("tailAuditLog", () => {
  it("returns the last n records, reaching into rotated files, skipping an unterminated line", async () => {
    const log = await openAuditLog({ key, path, file: { maxBytes: 1200, maxFiles: 100, fsync: "never" } });
    for (let i = 0; i < 30; i++) await log.append(entry(i));
    await log.close();
    await appendFile(path, '{"partial');
    const last = await collect(tailAuditLog(path, 12));
    expect(last.map((e) => e.record?.seq)).toEqual(Array.from({ length: 12 }, (_, i) => 19 + i));
    expect(new Set(last.map((e) => e.file)).size).toBeGreaterThan(1);
    expect(await collect(tailAuditLog(path, 0))).toEqual([]);
    expect(formatAuditRecord(last[0]!.record!)).toMatch(/#19 decision pre_action -> (allow|block) session=s-1 \d+us/);
  });

  for (const pollIntervalMs of [2, 40]) {
    it(`follows new records across rotations until aborted (poll ${pollIntervalMs} ms)`, async () => {
      const log = await openAuditLog({ key, path, file: { maxBytes: 1000, maxFiles: 100, fsync: "never" } });
      for (let i = 0; i < 2; i++) await log.append(entry(i));
      const controller = new AbortController();
      const seen: number[] = [];
      let firstSeen!: () => void;
      const first = new Promise<void>((resolve) => (firstSeen = resolve));
      const consumer = (async () => {
        for await (const item of tailAuditLog(path, 1, { signal: controller.signal, pollIntervalMs })) {
          seen.push(item.record!.seq);
          firstSeen();
          if (item.record!.seq === 40) controller.abort();
        }
      })();
      await first; // the historic record was delivered; everything after it must follow
      for (let i = 2; i < 40; i++) await log.append(entry(i));
      await consumer;
      await log.close();
      expect(seen).toEqual(Array.from({ length: 39 }, (_, i) => i + 2));
    });
  }
});

describe("auditStats", () => {
  it("counts by kind, decision, rule and event type, failures, and latency percentiles", async () => {
    const log = await openAuditLog({ key, path, file: { fsync: "never" } });
    for (let i = 1; i <= 100; i++) {
      await log.append(entry(i, { latency_us: i, session: `s-${i % 4}`, ...(i % 10 === 0 ? { rule: "r.ten" } : {}) }));
    }
    await log.append({ kind: "failure", event_type: "pre_prompt", error: "boom", latency_us: 1000 });
    await log.append({ kind: "event", event_type: "post_action" });
    await log.close();
    await appendFile(path, "torn");
    const stats = await auditStats(path);
    expect(stats).toMatchObject({
      records: 102,
      otherLines: 1,
      failures: 1,
      sessions: 4,
      byKind: { decision: 100, failure: 1, event: 1 },
      byDecision: { block: 33, allow: 67 },
      byRule: { "r.ten": 10 },
      byEventType: { pre_action: 100, pre_prompt: 1, post_action: 1 },
      failuresByEventType: { pre_prompt: 1 },
    });
    expect(stats.latency).toMatchObject({ count: 101, p50Us: 51, p90Us: 91, p99Us: 100, maxUs: 1000 });
    const text = formatAuditStats(stats);
    expect(text).toContain("records: 102");
    expect(text).toMatch(/latency \(us\): p50 51\s+p90 91\s+p99 100\s+max 1000/);
  });
});
