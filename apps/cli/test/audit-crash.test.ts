/**
 * The harness killed (SIGKILL) while agents have requests and batches in flight, over every
 * transport, several times each. Oracles:
 * - every call pending at the agent fails promptly after the death (as the agent process
 *   observes it; well before its own timeout) with a typed local error naming the connection loss;
 * - the audit log verifies, or ends in exactly one torn record (reported as such, not as tampering);
 * - every decision an agent received is in the log, with the same decision (matched by the call
 *   id inside each recorded payload, not by counts); over HTTP also every notification the
 *   harness answered (by its trace id).
 * AHP_CRASH_SUMMARY=1 prints the figures of each run; AHP_CRASH_SYNC=none runs the harness with
 * `--audit-sync none` (the old behaviour: expect the last oracle to fail).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { auditLogFiles, verifyAuditLog } from "@ahp/audit";
import { AhpClient, type Transport } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";
import { StdioClientTransport } from "@ahp/transport-stdio";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import { WebSocketClientTransport } from "@ahp/transport-ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BIN,
  LoadAgent,
  deferred,
  isConnectionLoss,
  missingFromLog,
  readRecords,
  startServe,
  within,
  type ServeProcess,
} from "./crash-kit.js";

const KEY_HEX = "5e".repeat(32);
const RUNS = 3;
/** Decisions acknowledged before the kill: enough that batches and requests are in flight. */
const KILL_AFTER = 300;
/**
 * How soon after the death a pending call must have failed: below the client's 30 s timeout (a
 * call left waiting for it is caught), and far above what a loaded machine's scheduling adds.
 * The figures of each run: AHP_CRASH_SUMMARY=1 (tens of ms on an idle machine).
 */
const RELEASE_MS = 20_000;

let root: string;
let keyFile: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "ahp-crash-"));
  keyFile = join(root, "audit.key");
  await writeFile(keyFile, KEY_HEX);
});
afterAll(() => rm(root, { recursive: true, force: true }));

type Kind = "stdio" | "unix" | "http" | "ws";

interface Setup {
  clients: { client: AhpClient; transport: Transport }[];
  kill: () => void;
  /** When the agent process saw the harness die. */
  death: () => Promise<number>;
  serve?: ServeProcess;
}

async function setUp(kind: Kind, dir: string, auditArgs: string[], agents: number): Promise<Setup> {
  const clientFor = async (transport: Transport) => {
    const client = new AhpClient({ timeoutMs: 30_000 });
    await client.connect(transport);
    return { client, transport };
  };
  if (kind === "stdio") {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "serve", "--stdio", "--log-level", "warn", ...auditArgs],
      stderr: "ignore",
    });
    const pair = await clientFor(transport);
    return {
      clients: [pair],
      kill: () => process.kill(transport.pid!, "SIGKILL"),
      // The agent spawned the harness: its transport is what observes the death.
      death: () => transport.closed.then(() => performance.now()),
    };
  }
  const listen = kind === "unix" ? ["--unix", join(dir, "h.sock")] : [`--${kind}`, "127.0.0.1:0"];
  const serve = await startServe([...listen, ...auditArgs], 1);
  const url = serve.urls[0]!;
  const make = (): Transport =>
    kind === "unix"
      ? new UnixSocketClientTransport({ path: url.slice("unix:".length) })
      : kind === "http"
        ? new HttpClientTransport(url, { timeoutMs: 30_000 })
        : new WebSocketClientTransport(url);
  const clients = await Promise.all(Array.from({ length: agents }, () => clientFor(make())));
  return { clients, serve, kill: () => serve.child.kill("SIGKILL"), death: () => serve.exited.then((e) => e.at) };
}

async function crashRun(kind: Kind, run: number, extraArgs: string[] = []) {
  const dir = await mkdtemp(join(root, `${kind}-${run}-`));
  const log = join(dir, "audit.log");
  const auditArgs = ["--audit", log, "--audit-key-file", keyFile, "--audit-payloads", ...extraArgs];
  const agents = kind === "stdio" ? 1 : 8;
  const setup = await setUp(kind, dir, auditArgs, agents);
  const killed = deferred<number>();
  let total = 0;
  const loads: LoadAgent[] = [];
  const onProgress = () => {
    if (++total === KILL_AFTER) {
      setup.kill();
      killed.resolve(performance.now());
    }
  };
  for (const { client } of setup.clients) {
    loads.push(
      new LoadAgent(
        client,
        { concurrency: kind === "stdio" ? 16 : 4, batchEvery: 3, batchSize: 8, notifyEvery: kind === "http" ? 5 : 0 },
        () => onProgress(),
      ),
    );
  }
  for (const load of loads) load.start();
  await within(killed.promise, 30_000, `${kind}: ${KILL_AFTER} decisions were not acknowledged`);
  const pendingAtKill = loads.reduce((n, l) => n + l.pending.size, 0);
  const batchesAtKill = loads.reduce((n, l) => n + [...l.pending].filter((ids) => ids.length > 1).length, 0);
  const killedAt = await killed.promise;
  const diedAt = await within(setup.death(), 10_000, `${kind}: the agent did not see the harness die`);
  await within(Promise.all(loads.map((l) => l.done)), 10_000, `${kind}: calls still pending after the harness died`);
  for (const { client } of setup.clients) await client.close().catch(() => undefined);

  const failures = loads.flatMap((l) => l.failures);
  const acknowledged = new Map<string, string>();
  for (const l of loads) for (const [id, d] of l.acknowledged) acknowledged.set(id, d);
  const files = await auditLogFiles(log);
  const records = await readRecords(files);
  const missing = missingFromLog(acknowledged, records);
  const notified = loads.flatMap((l) => [...l.notified]);
  const events = new Set(records.filter((r) => r.kind === "event").map((r) => r.trace_id));
  const missingNotifications = notified.filter((id) => !events.has(id));
  const report = await verifyAuditLog(log, KEY_HEX);
  return { pendingAtKill, batchesAtKill, killedAt, diedAt, failures, acknowledged, missing, missingNotifications, report, records, loads };
}

describe.each(["stdio", "unix", "http", "ws"] as const)("harness killed mid-batch and mid-stream over %s", (kind) => {
  it(`${RUNS} runs: pending calls fail promptly, the log verifies, nothing acknowledged is missing`, async () => {
    let batchesInFlight = 0;
    for (let run = 1; run <= RUNS; run++) {
      const r = await crashRun(kind, run, process.env.AHP_CRASH_SYNC === undefined ? [] : ["--audit-sync", process.env.AHP_CRASH_SYNC]);
      const where = `${kind} run ${run}`;
      batchesInFlight += r.batchesAtKill;
      if (process.env.AHP_CRASH_SUMMARY === "1") {
        const slowest = Math.max(0, ...r.failures.map((f) => f.at - r.diedAt));
        const fromKill = Math.max(0, ...r.failures.map((f) => f.at - r.killedAt));
        console.log(
          `${where}: ${r.acknowledged.size} decisions acknowledged, ${r.missing.length} missing from the log; ` +
            `${r.pendingAtKill} calls (${r.batchesAtKill} batches) in flight at the kill, ${r.failures.length} failed, ` +
            `slowest ${slowest.toFixed(1)} ms after the death (${fromKill.toFixed(1)} ms after the SIGKILL); log ${r.report.status}, ${r.report.records} records`,
        );
      }
      // Every call was either answered or failed; the ones that failed did so promptly, with the cause.
      expect(
        r.loads.every((l) => l.pending.size === 0),
        where,
      ).toBe(true);
      expect(r.failures.length, `${where}: calls in flight at the kill`).toBeGreaterThan(0);
      for (const f of r.failures) {
        expect(isConnectionLoss(f.error), `${where}: ${String(f.error)}`).toBe(true);
        expect(f.at - r.diedAt, `${where}: failed ${Math.round(f.at - r.diedAt)} ms after the death`).toBeLessThanOrEqual(RELEASE_MS);
      }
      expect(["intact", "torn_tail"], `${where}: ${JSON.stringify(r.report.break)}`).toContain(r.report.status);
      if (r.report.status === "torn_tail") expect(r.report.tornTail?.lines, `${where}: torn lines`).toBe(1);
      expect(r.missing, `${where}: ${r.missing.length} of ${r.acknowledged.size} acknowledged decisions missing`).toEqual([]);
      expect(r.missingNotifications, `${where}: answered notifications missing`).toEqual([]);
    }
    expect(batchesInFlight, `${kind}: no batch was in flight at any kill`).toBeGreaterThan(0);
  }, 120_000);
});
