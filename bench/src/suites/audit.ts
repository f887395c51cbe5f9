/**
 * The cost of the write-ahead audit log: `pre_action` decisions per second through AhpClient ->
 * in-memory transport -> AhpServer with `withAudit` writing a real file (temp directory), in each
 * sync mode, against the same server with audit off measured in the same run (the floor).
 *
 * - 64 calls in flight (an agent fleet): group commit puts the records of one event-loop turn in
 *   one write (and, with `fsync`, one fdatasync), so the ratio shows what write-ahead costs at load;
 * - 1 call in flight (one agent, sequential): every record is its own group, the worst case.
 *
 * `fsync` figures depend on the disk (and on tmpfs are not durable at all): read them with the
 * note saying where the file was.
 *
 * The record floor: what a record needs at the least, in a bare loop without server, promises or
 * redaction: canonical JSON of a record like the ones `withAudit` writes, one HMAC-SHA256, the
 * SHA-256 that chains the next record, and the line appended to a buffer written with one
 * `write(2)` per group (64 records, or 1). Each sync row's note gives the CPU it adds per decision
 * over audit off, as a multiple of this floor: the limit the log can aim at.
 */
import { createHash } from "node:crypto";
import { closeSync, openSync, writeSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AUDIT_SYNC_MODES, AuditKey, canonicalJson, openAuditLog, withAudit, type AuditLog, type AuditSyncMode } from "@ahp/audit";
import { AhpClient, AhpServer, createLinkedPair, type AhpServerHandlers } from "@ahp/core";
import { measurePipelined, measureSequential, throughputRatio, type Measurement, type Row, type Suite } from "../harness.js";

const KEY = "4d".repeat(32);
const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };
const handlers: AhpServerHandlers = {
  onEvent: (event) =>
    String((event.payload as typeof payload).arguments.command).includes("rm -rf")
      ? { decision: "block", reason: "no" }
      : { decision: "allow" },
};

interface Setup {
  client: AhpClient;
  log?: AuditLog;
  close(): Promise<void>;
}

async function setUp(dir: string, sync: AuditSyncMode | "off"): Promise<Setup> {
  let log: AuditLog | undefined;
  let h = handlers;
  if (sync !== "off") {
    log = await openAuditLog({ key: KEY, path: join(dir, `${sync}.log`), sync, checkpoint: { intervalMs: 1000 } });
    h = withAudit(handlers, log);
  }
  const server = new AhpServer({ handlers: h });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient({ timeoutMs: 0 });
  await client.connect(agentSide);
  return {
    client,
    ...(log === undefined ? {} : { log }),
    async close() {
      await client.close();
      await server.close();
      await log?.close();
    },
  };
}

/**
 * The record floor (see the module comment): `count` records, `group` per write(2), in a bare
 * loop; CPU per record from process.cpuUsage.
 */
function recordFloor(file: string, count: number, group: number): Measurement {
  const key = AuditKey.fromText(KEY);
  const fd = openSync(file, "a", 0o600);
  let prev = createHash("sha256").update("genesis").digest("hex");
  const payloadSha = createHash("sha256").update(canonicalJson(payload)).digest("hex");
  let buffer = "";
  const one = (seq: number) => {
    const record: Record<string, unknown> = {
      kind: "decision",
      session: "session-1",
      agent: "agent-1",
      event_type: "pre_action",
      form: "request",
      request_id: seq,
      decision: "allow",
      latency_us: 12,
      depth: 0,
      conn: { id: 1, transport: "memory" },
      payload_sha256: payloadSha,
      time: new Date().toISOString(),
      v: 1,
      seq,
      kid: key.id,
      prev,
    };
    record.mac = key.mac(canonicalJson(record));
    const line = canonicalJson(record);
    prev = createHash("sha256").update(line).digest("hex");
    buffer += `${line}\n`;
    if (seq % group === 0) {
      writeSync(fd, buffer);
      buffer = "";
    }
  };
  try {
    for (let i = 1; i <= Math.min(2000, count); i++) one(i);
    const cpu = process.cpuUsage();
    const start = process.hrtime.bigint();
    for (let i = 1; i <= count; i++) one(i);
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const used = process.cpuUsage(cpu);
    return { opsPerSec: count / seconds, cpuUsPerOp: (used.user + used.system) / count };
  } finally {
    closeSync(fd);
  }
}

const perWrite = (log: AuditLog | undefined) => {
  const s = log?.stats;
  return s === undefined || s.groups === 0 ? "" : `, ${(s.records / s.groups).toFixed(1)} records per write`;
};

export const suite: Suite = {
  name: "audit",
  async run({ quick }) {
    const dir = await mkdtemp(join(tmpdir(), "ahp-bench-audit-"));
    const total = quick ? 400 : 20_000;
    const sequential = quick ? 100 : 3_000;
    const rows: Row[] = [];
    try {
      const modes = ["off", ...AUDIT_SYNC_MODES] as const;
      for (const [label, measure, group] of [
        [
          "64 in flight",
          (s: Setup) =>
            measurePipelined(() => s.client.send("pre_action", payload), {
              total,
              concurrency: 64,
              runs: quick ? 1 : 3,
              warmup: quick ? 100 : 2000,
            }),
          64,
        ],
        [
          "1 in flight",
          (s: Setup) =>
            measureSequential(() => s.client.send("pre_action", payload), {
              iterations: sequential,
              runs: quick ? 1 : 3,
              warmup: quick ? 50 : 500,
            }),
          1,
        ],
      ] as const) {
        let floor: Measurement | undefined;
        let none: Measurement | undefined;
        const bare = recordFloor(join(dir, `floor-${group}.log`), quick ? 2000 : 50_000, group);
        rows.push({
          suite: "audit",
          case: `record floor (bare loop), ${group} per write`,
          measurement: bare,
          note: "canonical JSON + HMAC-SHA256 + SHA-256 chain + append, one write(2) per group; no server",
        });
        for (const mode of modes) {
          const setup = await setUp(dir, mode);
          let m: Measurement;
          try {
            m = await measure(setup);
          } finally {
            await setup.close();
          }
          if (mode === "off") {
            floor = m;
            rows.push({
              suite: "audit",
              case: `audit off (floor), ${label}`,
              measurement: m,
              note: "AhpClient -> linked pair -> AhpServer, pre_action",
            });
            continue;
          }
          if (mode === "none") none = m;
          // What waiting for the write adds, over recording without waiting (the record's own CPU cost).
          const overNone = mode === "none" || none === undefined ? "" : `, ${throughputRatio(m, none).toFixed(2)}x of sync none`;
          const added = (m.cpuUsPerOp ?? Number.NaN) - (floor!.cpuUsPerOp ?? Number.NaN);
          const overBare = `, adds ${added.toFixed(1)} µs CPU/decision = ${(added / (bare.cpuUsPerOp ?? Number.NaN)).toFixed(1)}x the record floor`;
          rows.push({
            suite: "audit",
            case: `withAudit sync ${mode}, ${label}`,
            measurement: m,
            floor: floor!,
            ratio: throughputRatio(m, floor!),
            target: "report",
            note: `ratio: decisions/s over audit off${overNone}${overBare}${perWrite(setup.log)}`,
          });
        }
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    return rows;
  },
};
