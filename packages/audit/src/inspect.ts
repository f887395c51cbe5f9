/** Tools for humans: the head of a log, its last records (optionally following), and statistics. */
import type { Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { open, stat } from "node:fs/promises";
import { AuditError } from "./errors.js";
import { auditLogFiles } from "./file-sink.js";
import type { AuditKeyInput } from "./key.js";
import { readRawLines } from "./lines.js";
import { parseRecord, type AuditHead, type AuditRecord } from "./record.js";
import { verifyAuditLog } from "./verify.js";

/**
 * The verified head (seq + hash of the last record) of a log, to publish elsewhere as an
 * anchor against truncation (`verifyAuditLog(..., { expectHead })`). Throws `CHAIN_BROKEN`
 * when the log does not verify; a torn last line is ignored.
 */
export async function auditHead(files: string | readonly string[], key: AuditKeyInput): Promise<AuditHead | undefined> {
  const report = await verifyAuditLog(files, key);
  if (!report.ok) throw new AuditError("CHAIN_BROKEN", `audit log does not verify: ${report.break?.message ?? report.status}`);
  return report.head;
}

/** One line shown by {@link tailAuditLog}. */
export interface AuditTailEntry {
  file: string;
  /** The record, when the line is one (not verified: use `verifyAuditLog` for that). */
  record?: AuditRecord;
  /** The raw text of a line that is not a record. */
  raw?: string;
}

/** How {@link tailAuditLog} follows a growing log: until `signal` aborts, checking every `pollIntervalMs`. */
export interface TailFollowOptions {
  /** Stops following. */
  signal?: AbortSignal;
  /** How often the file is checked for growth and rotation. Default 200 ms. */
  pollIntervalMs?: number;
}

const toEntry = (file: string, bytes: Buffer): AuditTailEntry => {
  const text = bytes.toString("utf8");
  const parsed = parseRecord(text);
  return parsed.ok ? { file, record: parsed.record } : { file, raw: text };
};

/** The last `n` complete lines of one file, and the offset just after the last complete line. */
async function lastLines(file: string, n: number): Promise<{ lines: Buffer[]; end: number; ino: number }> {
  const handle = await open(file, "r");
  try {
    const st = await handle.stat();
    const size = st.size;
    let window = Math.min(size, 64 * 1024);
    for (;;) {
      const start = size - window;
      const buffer = Buffer.alloc(window);
      await handle.read(buffer, 0, window, start);
      // An unterminated last line (still being written, or torn) is not shown.
      const lastNewline = buffer.lastIndexOf(0x0a);
      if (lastNewline < 0 && start > 0) {
        window = Math.min(size, window * 4);
        continue;
      }
      const end = start + lastNewline + 1;
      const parts: Buffer[] = [];
      let lineEnd = lastNewline; // index of the '\n' that ends the current line
      let complete = lineEnd < 0 || n <= 0;
      while (!complete) {
        const nl = lineEnd === 0 ? -1 : buffer.lastIndexOf(0x0a, lineEnd - 1);
        if (nl < 0 && start > 0) break;
        parts.push(buffer.subarray(nl + 1, lineEnd));
        lineEnd = nl;
        complete = parts.length >= n || lineEnd < 0;
      }
      if (complete || start === 0) return { lines: parts.reverse(), end, ino: st.ino };
      window = Math.min(size, window * 4);
    }
  } finally {
    await handle.close();
  }
}

/**
 * Yields the last `n` records of a log (its rotated files included when the live file has
 * fewer), then, with `follow`, every new record as it is appended, across rotations, until the
 * signal aborts or the consumer stops iterating.
 */
export async function* tailAuditLog(file: string, n = 10, follow: boolean | TailFollowOptions = false): AsyncGenerator<AuditTailEntry> {
  const files = await auditLogFiles(file);
  const collected: AuditTailEntry[] = [];
  let liveEnd = 0;
  let liveIno: number | undefined;
  for (let k = files.length - 1; k >= 0; k--) {
    const f = files[k]!;
    const result = await lastLines(f, n - collected.length).catch(() => undefined);
    if (result === undefined) continue;
    if (f === file) {
      liveEnd = result.end;
      liveIno = result.ino;
    }
    collected.unshift(...result.lines.map((bytes) => toEntry(f, bytes)));
    if (collected.length >= n) break;
  }
  if (follow === false) {
    yield* collected;
    return;
  }
  const options: TailFollowOptions = follow === true ? {} : follow;
  yield* collected;
  yield* followFile(file, liveIno, liveEnd, options);
}

interface FileId {
  path: string;
  ino: number;
}

/** The log's files with their inodes; listed again when a file moved between readdir and stat. */
async function listFiles(file: string): Promise<FileId[]> {
  for (let attempt = 0; ; attempt++) {
    const paths = await auditLogFiles(file);
    const out: FileId[] = [];
    let moved = false;
    for (const path of paths) {
      const st = await stat(path).catch(() => undefined);
      if (st === undefined) moved = true;
      else out.push({ path, ino: st.ino });
    }
    if (!moved || attempt >= 20) return out;
  }
}

async function* followFile(
  file: string,
  startIno: number | undefined,
  startAt: number,
  options: TailFollowOptions,
): AsyncGenerator<AuditTailEntry> {
  const { signal } = options;
  const interval = options.pollIntervalMs ?? 200;
  let handle: FileHandle | undefined;
  let handlePath = file;
  let ino = startIno;
  let position = startAt;
  let partial = Buffer.alloc(0);

  async function* drain(path: string, h: FileHandle): AsyncGenerator<AuditTailEntry> {
    for (;;) {
      const chunk = Buffer.alloc(256 * 1024);
      const { bytesRead } = await h.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      let data = partial.length === 0 ? chunk.subarray(0, bytesRead) : Buffer.concat([partial, chunk.subarray(0, bytesRead)]);
      let nl = data.indexOf(0x0a);
      while (nl >= 0) {
        yield toEntry(path, data.subarray(0, nl));
        data = data.subarray(nl + 1);
        nl = data.indexOf(0x0a);
      }
      partial = Buffer.from(data);
    }
  }

  /** After a rotation: reads the rotated files written since `ino`, then opens the new live file. */
  async function* catchUp(): AsyncGenerator<AuditTailEntry> {
    for (;;) {
      const rotated = (await listFiles(file)).filter((f) => f.path !== file);
      const from = ino === undefined ? rotated.length : rotated.findIndex((f) => f.ino === ino) + 1;
      // Rotated files never change again: read each one completely.
      for (const f of rotated.slice(from > 0 ? from : rotated.length)) {
        const h = await open(f.path, "r").catch(() => undefined);
        if (h === undefined) continue;
        try {
          position = 0;
          partial = Buffer.alloc(0);
          yield* drain(f.path, h);
        } finally {
          await h.close();
        }
        ino = f.ino;
      }
      const h = await open(file, "r").catch(() => undefined);
      if (h === undefined) return; // between a rename and the new file: the next poll retries
      const st = await h.stat();
      // Another rotation may have slipped in between the listing and the open: if a rotated
      // file exists that was neither read nor is the one just opened, read it first.
      if (ino !== undefined) {
        const again = (await listFiles(file)).filter((f) => f.path !== file);
        const after = again.slice(again.findIndex((f) => f.ino === ino) + 1);
        if (after.length > 1 || (after.length === 1 && after[0]!.ino !== st.ino)) {
          await h.close();
          continue;
        }
      }
      handle = h;
      handlePath = file;
      ino = st.ino;
      position = 0;
      partial = Buffer.alloc(0);
      return;
    }
  }

  try {
    if (startIno !== undefined) {
      // Continue exactly where the historic read stopped, even if that file was rotated since.
      for (let attempt = 0; attempt < 5 && handle === undefined; attempt++) {
        const start: FileId | undefined = (await listFiles(file)).find((f) => f.ino === startIno);
        if (start === undefined) continue; // moving right now, or deleted by retention
        const h: FileHandle | undefined = await open(start.path, "r").catch(() => undefined);
        const st: Stats | undefined = await h?.stat();
        if (h !== undefined && st?.ino === startIno) {
          handle = h;
          handlePath = start.path;
        } else await h?.close();
      }
    }
    if (handle === undefined) yield* catchUp();
    while (signal?.aborted !== true) {
      if (handle !== undefined) yield* drain(handlePath, handle);
      const current = await stat(file).catch(() => undefined);
      if (current !== undefined && current.ino !== ino) {
        // Rotated: the renamed file is complete now; read what was appended to it since the drain above.
        if (handle !== undefined) yield* drain(handlePath, handle);
        await handle?.close();
        handle = undefined;
        yield* catchUp();
        continue;
      }
      await sleep(interval, signal);
    }
  } finally {
    await handle?.close();
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** One-line human form of a record. */
export function formatAuditRecord(record: AuditRecord): string {
  const parts = [record.time, `#${record.seq}`, record.kind];
  if (record.event_type !== undefined) parts.push(record.event_type);
  if (record.decision !== undefined) parts.push(`-> ${record.decision}`);
  if (record.rule !== undefined) parts.push(`rule=${record.rule}`);
  if (record.session !== undefined) parts.push(`session=${record.session}`);
  if (record.depth !== undefined && record.depth > 0) parts.push(`depth=${record.depth}`);
  if (record.latency_us !== undefined) parts.push(`${record.latency_us}us`);
  if (record.reason !== undefined) parts.push(`reason=${JSON.stringify(record.reason)}`);
  if (record.error !== undefined) parts.push(`error=${JSON.stringify(record.error)}`);
  return parts.join(" ");
}

/** Handler latency over a set of records, in microseconds: count, mean and percentiles. */
export interface LatencySummary {
  count: number;
  meanUs: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
}

/** What {@link auditStats} counts in a log: records by kind, decision, rule and event type, failures, sessions, latency. */
export interface AuditStats {
  files: string[];
  records: number;
  /** Lines that are not records (torn lines). */
  otherLines: number;
  byKind: Record<string, number>;
  byDecision: Record<string, number>;
  byRule: Record<string, number>;
  byEventType: Record<string, number>;
  failures: number;
  failuresByEventType: Record<string, number>;
  sessions: number;
  firstTime?: string;
  lastTime?: string;
  /** Handler latency over decisions, events, queries and failures. */
  latency?: LatencySummary;
}

const bump = (map: Record<string, number>, key: string) => {
  map[key] = (map[key] ?? 0) + 1;
};

/** Nearest-rank percentile of sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[rank]!;
}

/** Counts by kind, decision, rule, event type; failures; latency percentiles. Does not verify MACs. */
export async function auditStats(files: string | readonly string[]): Promise<AuditStats> {
  const list = typeof files === "string" ? await auditLogFiles(files) : [...files];
  const stats: AuditStats = {
    files: list,
    records: 0,
    otherLines: 0,
    byKind: {},
    byDecision: {},
    byRule: {},
    byEventType: {},
    failures: 0,
    failuresByEventType: {},
    sessions: 0,
  };
  const sessions = new Set<string>();
  let latencies = new Float64Array(1024);
  let count = 0;
  let sum = 0;
  for (const file of list) {
    for await (const raw of readRawLines(file)) {
      const parsed = parseRecord(raw.bytes.toString("utf8"));
      if (!parsed.ok) {
        stats.otherLines++;
        continue;
      }
      const r = parsed.record;
      stats.records++;
      stats.firstTime ??= r.time;
      stats.lastTime = r.time;
      bump(stats.byKind, r.kind);
      if (r.decision !== undefined) bump(stats.byDecision, r.decision);
      if (r.rule !== undefined) bump(stats.byRule, r.rule);
      if (r.event_type !== undefined) bump(stats.byEventType, r.event_type);
      if (r.kind === "failure") {
        stats.failures++;
        bump(stats.failuresByEventType, r.event_type ?? "unknown");
      }
      if (r.session !== undefined) sessions.add(r.session);
      if (typeof r.latency_us === "number" && Number.isFinite(r.latency_us)) {
        if (count === latencies.length) {
          const grown = new Float64Array(latencies.length * 2);
          grown.set(latencies);
          latencies = grown;
        }
        latencies[count++] = r.latency_us;
        sum += r.latency_us;
      }
    }
  }
  stats.sessions = sessions.size;
  if (count > 0) {
    const sorted = latencies.slice(0, count).sort();
    stats.latency = {
      count,
      meanUs: sum / count,
      p50Us: percentile(sorted, 0.5),
      p90Us: percentile(sorted, 0.9),
      p99Us: percentile(sorted, 0.99),
      maxUs: sorted[count - 1]!,
    };
  }
  return stats;
}

/** Human-readable statistics (for `ahp audit stats`). */
export function formatAuditStats(stats: AuditStats): string {
  const table = (title: string, map: Record<string, number>) => {
    const rows = Object.entries(map).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    if (rows.length === 0) return [];
    return [`${title}:`, ...rows.map(([k, v]) => `  ${k.padEnd(28)} ${v}`)];
  };
  const lines = [
    `records: ${stats.records} in ${stats.files.length} file(s)${stats.otherLines > 0 ? `, ${stats.otherLines} other line(s)` : ""}`,
    ...(stats.firstTime === undefined ? [] : [`time: ${stats.firstTime} .. ${stats.lastTime}`]),
    `sessions: ${stats.sessions}`,
    `failures: ${stats.failures}`,
    ...table("by kind", stats.byKind),
    ...table("by decision", stats.byDecision),
    ...table("by rule", stats.byRule),
    ...table("by event type", stats.byEventType),
    ...table("failures by event type", stats.failuresByEventType),
  ];
  if (stats.latency !== undefined) {
    const l = stats.latency;
    lines.push(`latency (us): p50 ${l.p50Us}  p90 ${l.p90Us}  p99 ${l.p99Us}  max ${l.maxUs}  mean ${l.meanUs.toFixed(1)}  (n=${l.count})`);
  }
  return `${lines.join("\n")}\n`;
}
