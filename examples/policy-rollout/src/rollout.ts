/**
 * The worked example of docs/guides/changing-a-policy-safely.md, as code: a harness enforcing
 * policies/current.yaml records its traffic in an audit log (with payloads, so that it can be
 * replayed), then runs policies/candidate.yaml in shadow beside it, then enforces it.
 *
 * `pnpm start` runs the whole story in a temporary directory and prints what each step saw;
 * the commands between the steps (`ahp policy test|replay|explain`) are in the guide.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openAuditLog, withAudit, type AuditRecord } from "@ahp/audit";
import { AhpClient, AhpServer, createLinkedPair, type Decision } from "@ahp/core";
import { PolicyEngine, createPolicyHandler, type ShadowDisagreement } from "@ahp/policy";

export const POLICIES = fileURLToPath(new URL("../policies/", import.meta.url));
export const CURRENT = join(POLICIES, "current.yaml");
export const CANDIDATE = join(POLICIES, "candidate.yaml");

/** What the agent asks, in order (one session): tool calls as the reference payload convention writes them. */
export const TRAFFIC: Record<string, unknown>[] = [
  { tool_name: "bash", arguments: { command: "git status --short" }, working_directory: "/home/dev/project" },
  {
    tool_name: "bash",
    arguments: { command: "curl -fsSL https://example.com/data.json -o data.json" },
    working_directory: "/home/dev/project",
  },
  { action_type: "tool_call", arguments: { thought: "plan the next step" } },
  { tool_name: "bash", arguments: { command: "npm test" }, working_directory: "/home/dev/project" },
  { tool_name: "write_file", arguments: { path: "src/index.ts", content: "export {};\n" }, working_directory: "/home/dev/project" },
  {
    tool_name: "bash",
    arguments: { command: "curl -fsSL https://mirror.internal/data.json -o data.json" },
    working_directory: "/home/dev/project",
  },
  { tool_name: "bash", arguments: { command: "rm -rf /" }, working_directory: "/home/dev/project" },
];

export interface RunOptions {
  /** The audit log to write (created). */
  log: string;
  /** The audit key (text of at least 32 bytes, or hex). */
  key: string;
  /** The policy engine to enforce (its shadow, if any, runs beside it). */
  engine: PolicyEngine;
}

/** Sends {@link TRAFFIC} through an `AhpServer` enforcing `engine`, audited with payloads. Returns the decisions. */
export async function runTraffic({ log: path, key, engine }: RunOptions): Promise<Decision[]> {
  const log = await openAuditLog({ key, path, checkpoint: false });
  const server = new AhpServer({ handlers: withAudit(createPolicyHandler(engine), log, { includePayloads: true }) });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient({ sessionId: "s1" });
  await client.connect(agentSide);
  const decisions: Decision[] = [];
  try {
    for (const payload of TRAFFIC) decisions.push(await client.send("pre_action", payload));
  } finally {
    await client.close();
    await server.close();
    await log.close();
  }
  return decisions;
}

/** The enforced policy with the candidate in shadow: each disagreement is counted (and recorded by the audit log). */
export async function shadowEngine(onDisagreement: (d: ShadowDisagreement) => void): Promise<PolicyEngine> {
  const candidate = await PolicyEngine.fromFile(CANDIDATE);
  const current = await PolicyEngine.fromFile(CURRENT, { shadow: candidate, onShadowDisagreement: onDisagreement });
  return current;
}

/** The `shadow` members of a log's decision records (from the records `withAudit` wrote). */
export const shadowOf = (records: AuditRecord[]) => records.filter((r) => r.kind === "decision" && r.shadow !== undefined);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "policy-rollout-"));
  const key = "6b".repeat(32);
  try {
    const recorded = join(dir, "recorded.log");
    const today = await runTraffic({ log: recorded, key, engine: await PolicyEngine.fromFile(CURRENT) });
    process.stdout.write(`1. recorded ${today.length} decisions with ${CURRENT} in ${recorded}\n`);
    process.stdout.write(`   replay them: AHP_AUDIT_KEY=${key.slice(0, 8)}… ahp policy replay ${recorded} --policy ${CANDIDATE}\n`);

    const seen: ShadowDisagreement[] = [];
    const shadowed = join(dir, "shadow.log");
    await runTraffic({ log: shadowed, key, engine: await shadowEngine((d) => seen.push(d)) });
    process.stdout.write(`2. shadow: ${seen.length} disagreements\n`);
    for (const d of seen) process.stdout.write(`   ${d.from} -> ${d.to} (${d.shadowRule ?? "default"})\n`);

    const enforced = await PolicyEngine.fromFile(CURRENT);
    await enforced.reload(CANDIDATE);
    const after = await runTraffic({ log: join(dir, "enforced.log"), key, engine: enforced });
    process.stdout.write(`3. enforced ${enforced.policy.name}: ${after.map((d) => d.decision).join(" ")}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) await main();
