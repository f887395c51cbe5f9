/**
 * Throughput of the audit log and the cost of the handler middleware, each as a ratio against
 * a floor measured in the same run:
 * - appends: `AuditLog.append` (redact, seal, chain, group commit) vs. raw `write`s of the same
 *   lines in the same batch sizes;
 * - middleware: `AhpServer` round trips over an in-memory pair with `withAudit` vs. bare handlers.
 *
 * Run: pnpm --filter @ahp/audit exec tsx scripts/measure.ts
 */
import { mkdtemp, open, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AhpClient, AhpServer, createLinkedPair, type AhpServerHandlers } from "@ahp/core";
import { AuditKey, openAuditLog, recordLine, sealRecord, withAudit, type AuditEntry } from "../src/index.js";

const key = AuditKey.fromText("7f".repeat(32));
const entry = (i: number): AuditEntry => ({
  kind: "decision",
  session: "4b0e6e8e-7a39-4c1b-9f0c-1f1a2b3c4d5e",
  agent: "0c8f6d1e-2b3a-4c5d-8e9f-a0b1c2d3e4f5",
  event_type: "pre_action",
  depth: 0,
  form: "request",
  request_id: `req-${i}`,
  decision: i % 10 === 0 ? "block" : "allow",
  reason: i % 10 === 0 ? "destructive command" : undefined,
  rule: i % 10 === 0 ? "shell.rm-root" : undefined,
  latency_us: 42,
  conn: { id: 1, transport: "stdio" },
  payload_sha256: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
});

async function appends(fsync: "never" | "always", total: number, concurrency: number) {
  const dir = await mkdtemp(join(tmpdir(), "ahp-audit-measure-"));
  try {
    // Floor: the same lines, pre-built, written in batches of `concurrency` with one write each.
    const lines = Array.from({ length: total }, (_, i) =>
      recordLine(sealRecord({ ...entry(i), time: new Date().toISOString() }, { seq: i + 1, prev: "0".repeat(64), key })),
    );
    const handle = await open(join(dir, "floor.log"), "a");
    let start = process.hrtime.bigint();
    for (let i = 0; i < total; i += concurrency) {
      await handle.write(lines.slice(i, i + concurrency).join(""));
      if (fsync === "always") await handle.datasync();
    }
    const floorSeconds = Number(process.hrtime.bigint() - start) / 1e9;
    await handle.close();

    const log = await openAuditLog({ key, path: join(dir, "audit.log"), file: { fsync } });
    start = process.hrtime.bigint();
    for (let i = 0; i < total; i += concurrency) {
      const batch: Promise<unknown>[] = [];
      for (let k = i; k < Math.min(total, i + concurrency); k++) batch.push(log.append(entry(k)));
      await Promise.all(batch);
    }
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    await log.close();
    return { floor: total / floorSeconds, measured: total / seconds };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function roundTrips(handlers: AhpServerHandlers, total: number): Promise<number> {
  const server = new AhpServer({ handlers });
  const [a, h] = createLinkedPair({ encoding: "none" });
  await server.connect(h);
  const client = new AhpClient({ validateEvents: false });
  await client.connect(a);
  const payload = { tool_name: "bash", arguments: { command: "ls -la" } };
  for (let i = 0; i < 2000; i++) await client.send("pre_action", payload);
  const start = process.hrtime.bigint();
  for (let i = 0; i < total; i++) await client.send("pre_action", payload);
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await client.close();
  await server.close();
  return total / seconds;
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
const rows: string[] = [];
for (const [fsync, total, concurrency] of [
  ["never", 50_000, 64],
  ["always", 5_000, 64],
  ["always", 500, 1],
] as const) {
  const r = await appends(fsync, total, concurrency);
  rows.push(
    `append fsync=${fsync} concurrency=${concurrency}: ${fmt(r.measured)} rec/s, floor ${fmt(r.floor)} lines/s, ratio ${(r.measured / r.floor).toFixed(2)}`,
  );
}
const base: AhpServerHandlers = { onEvent: () => ({ decision: "allow" }) };
const bare = await roundTrips(base, 20_000);
const dir = await mkdtemp(join(tmpdir(), "ahp-audit-measure-"));
const log = await openAuditLog({ key, path: join(dir, "audit.log"), file: { fsync: "never" } });
const audited = await roundTrips(withAudit(base, log), 20_000);
await log.close();
await rm(dir, { recursive: true, force: true });
rows.push(
  `round trip bare: ${fmt(bare)} req/s; withAudit (file, fsync=never): ${fmt(audited)} req/s, ratio ${(audited / bare).toFixed(2)}`,
);
process.stdout.write(`${rows.join("\n")}\n`);
