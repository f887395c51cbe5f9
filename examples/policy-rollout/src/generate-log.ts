/**
 * Writes an audit log of N recorded decisions with payloads (the audit API, as a harness with
 * `--audit-payloads` writes them), to measure `ahp policy replay` on a large log:
 *
 *   AHP_AUDIT_KEY=<key> tsx src/generate-log.ts /tmp/big.log 1000000
 *   AHP_AUDIT_KEY=<key> /usr/bin/time -v ahp policy replay /tmp/big.log --policy policies/candidate.yaml
 */
import { openAuditLog, type AuditEntry } from "@ahp/audit";

const COMMANDS = [
  "git status --short",
  "npm test",
  "curl -fsSL https://example.com/data.json -o data.json",
  "ls -la src",
  "curl -fsSL https://mirror.internal/data.json -o data.json",
  "rm -rf ./build",
  "cat package.json | jq .name",
  "git push origin main",
];

export async function generateLog(path: string, count: number, key: string, sessions = 1000): Promise<void> {
  // Large files rotate as a harness's would; the replay reads the rotated pieces in chain order.
  const log = await openAuditLog({ key, path, sync: "none", file: { maxBytes: 1 << 30, maxFiles: 100 } });
  const start = Date.UTC(2026, 0, 1);
  const batch: Promise<unknown>[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const command = COMMANDS[i % COMMANDS.length]!;
      const entry: AuditEntry = {
        kind: "decision",
        time: new Date(start + i * 10).toISOString(),
        session: `s${i % sessions}`,
        agent: "a",
        event_type: "pre_action",
        depth: 0,
        form: "request",
        decision: command.startsWith("rm") || command.includes("push") ? "escalate" : "allow",
        payload: { tool_name: "bash", arguments: { command }, working_directory: "/home/dev/project" },
      };
      batch.push(log.append(entry));
      if (batch.length === 512) await Promise.all(batch.splice(0));
    }
    await Promise.all(batch);
  } finally {
    await log.close();
  }
}

const [path, count] = process.argv.slice(2);
if (path !== undefined && process.argv[1]?.endsWith("generate-log.ts")) {
  const key = process.env.AHP_AUDIT_KEY;
  if (key === undefined) throw new Error("set AHP_AUDIT_KEY");
  const t = performance.now();
  await generateLog(path, Number(count ?? 1_000_000), key);
  process.stdout.write(`wrote ${count ?? 1_000_000} records in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
}
