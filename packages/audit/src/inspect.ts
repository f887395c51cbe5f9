/** Tools for humans: the head of a log, its last records (optionally following), and statistics. */
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

/** The last `n` complete lines of one file. */
async function lastLines(file: string, n: number): Promise<Buffer[]> {
  if (n <= 0) return [];
  const handle = await open(file, "r");
  try {
    const size = (await handle.stat()).size;
    let window = Math.min(size, 64 * 1024);
    for (;;) {
      const start = size - window;
      const buffer = Buffer.alloc(window);
      await handle.read(buffer, 0, window, start);
      const parts: Buffer[] = [];
      let end = buffer.length;
      if (end > 0 && buffer[end - 1] !== 0x0a) {
        // an unterminated last line (still being written, or torn) is not shown
        const nl = buffer.lastIndexOf(0x0a);
        end = nl < 0 ? (start === 0 ? 0 : -1) : nl + 1;
        if (end < 0) {
          if (window >= size) return [];
          window = Math.min(size, window * 4);
          continue;
        }
      }
      let lineEnd = end - 1; // index of the '\n' that ends the current line
      while (lineEnd >= 0 && parts.length < n) {
        const nl = lineEnd === 0 ? -1 : buffer.lastIndexOf(0x0a, lineEnd - 1);
        if (nl < 0 && start > 0) break;
        parts.push(buffer.subarray(nl + 1, lineEnd));
        lineEnd = nl;
      }
      if (parts.length >= n || start === 0) return parts.reverse();
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
export async function* tailAuditLog(
  file: string,
  n = 10,
  follow: boolean | TailFollowOptions = false,
): AsyncGenerator<AuditTailEntry> {
  const files = await auditLogFiles(file);
  if (!files.includes(file)) files.push(file);
  const collected: AuditTailEntry[] = [];
  for (let k = files.length - 1; k >= 0 && collected.length < n; k--) {
    const f = files[k]!;
    const exists = await stat(f).then(
      () => true,
      () => false,
    );
    if (!exists) continue;
    const lines = await lastLines(f, n - collected.length);
    collected.unshift(...lines.map((bytes) => toEntry(f, bytes)));
  }
  yield* collected;
  if (follow === false) return;
  const options: TailFollowOptions = follow === true ? {} : follow;
  yield* followFile(file, options);
}

async function* followFile(file: string, options: TailFollowOptions): AsyncGenerator<AuditTailEntry> {
  const { signal } = options;
  const interval = options.pollIntervalMs ?? 200;
  let handle: FileHandle | undefined;
  let ino = 0;
  let position = 0;
  let partial = Buffer.alloc(0);
  const openLive = async (fromEnd: boolean): Promise<void> => {
    try {
      handle = await open(file, "r");
    } catch {
      handle = undefined;
      return;
    }
    const st = await handle.stat();
    ino = st.ino;
    // Start at the last complete line when following from the end.
    position = fromEnd ? st.size : 0;
    if (fromEnd && st.size > 0) {
      const probe = Buffer.alloc(Math.min(st.size, 64 * 1024));
      await handle.read(probe, 0, probe.length, st.size - probe.length);
      const nl = probe.lastIndexOf(0x0a);
      position = nl < 0 ? st.size - probe.length : st.size - probe.length + nl + 1;
    }
    partial = Buffer.alloc(0);
  };
  const drain = async function* (): AsyncGenerator<AuditTailEntry> {
    if (handle === undefined) return;
    for (;;) {
      const chunk = Buffer.alloc(256 * 1024);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      let data = Buffer.concat([partial, chunk.subarray(0, bytesRead)]);
      let nl = data.indexOf(0x0a);
      while (nl >= 0) {
        yield toEntry(file, data.subarray(0, nl));
        data = data.subarray(nl + 1);
        nl = data.indexOf(0x0a);
      }
      partial = Buffer.from(data);
    }
  };
  try {
    await openLive(true);
    while (signal?.aborted !== true) {
      yield* drain();
      const current = await stat(file).catch(() => undefined);
      if (handle === undefined || (current !== undefined && current.ino !== ino)) {
        // Rotated: the old handle was drained above; continue with the new live file.
        if (current !== undefined) {
          await handle?.close();
          await openLive(false);
          continue;
        }
      } else if (current !== undefined && current.size < position) {
        position = 0; // truncated in place (not something the writer does)
        partial = Buffer.alloc(0);
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

export interface LatencySummary {
  count: number;
  meanUs: number;
  p50Us: number;
  p90Us: number;
  p99Us: number;
  maxUs: number;
}

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
