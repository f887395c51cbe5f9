/**
 * Decisions through AhpServer with withAudit, for `node --cpu-prof`: AUDIT_SYNC (off, none,
 * write, fsync), AUDIT_INFLIGHT (default 64), AUDIT_N (default 20000). Prints CPU µs per decision.
 *
 *   node --cpu-prof --cpu-prof-dir=prof --import tsx scripts/profile-decisions.ts
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AhpClient, AhpServer, createLinkedPair, type AhpServerHandlers } from "@ahp/core";
import { openAuditLog, withAudit, type AuditSyncMode } from "../src/index.js";

const sync = (process.env.AUDIT_SYNC ?? "write") as AuditSyncMode | "off";
const inflight = Number(process.env.AUDIT_INFLIGHT ?? 64);
const total = Number(process.env.AUDIT_N ?? 20_000);
const payload = { action_type: "tool_call", tool_name: "bash", arguments: { command: "npm test", cwd: "/workspace" } };
const handlers: AhpServerHandlers = { onEvent: () => ({ decision: "allow" }) };

const dir = await mkdtemp(join(tmpdir(), "ahp-audit-profile-"));
const log = sync === "off" ? undefined : await openAuditLog({ key: "4d".repeat(32), path: join(dir, "a.log"), sync });
const server = new AhpServer({ handlers: log === undefined ? handlers : withAudit(handlers, log) });
const [agentSide, harnessSide] = createLinkedPair();
await server.connect(harnessSide);
const client = new AhpClient({ timeoutMs: 0 });
await client.connect(agentSide);

async function run(n: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      await client.send("pre_action", payload);
    }
  };
  await Promise.all(Array.from({ length: inflight }, worker));
}

await run(2000);
const cpu = process.cpuUsage();
const t0 = performance.now();
await run(total);
const used = process.cpuUsage(cpu);
const ms = performance.now() - t0;
process.stdout.write(
  `sync ${sync}, ${inflight} in flight: ${(((used.user + used.system) / total) | 0).toString()} µs CPU/decision ` +
    `(user ${(used.user / total).toFixed(1)}, system ${(used.system / total).toFixed(1)}), ${((total / ms) * 1000).toFixed(0)}/s\n`,
);
await client.close();
await server.close();
await log?.close();
await rm(dir, { recursive: true, force: true });
