/** Runs the demo session against a harness behind the chosen transport and prints the timeline. */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AuditKey, verifyAuditLog, type AuditVerifyReport } from "@ahp/audit";
import { startHarness, type TransportKind } from "./harness.js";
import { runSession, type TimelineEntry } from "./session.js";
import { createStyle, pad, type Style } from "./style.js";

export interface DemoOptions {
  transport: TransportKind;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  color?: boolean;
  /** Keep the temporary directory (audit log, key, policy). */
  keep?: boolean;
  /** Directory for the audit log; default a fresh temporary one. */
  dir?: string;
  /** Write the audit log here (kept) instead of into the temporary directory. */
  auditFile?: string;
}

export interface DemoResult {
  entries: TimelineEntry[];
  audit: AuditVerifyReport;
  auditFile: string;
  counts: Record<string, number>;
}

const OUTCOME_STYLE: Record<string, keyof Style> = {
  allow: "green",
  ok: "green",
  modify: "cyan",
  block: "red",
  escalate: "magenta",
  defer: "yellow",
  notified: "dim",
};

/** The key of a kept audit log lives next to it (`FILE.key`, mode 0600), so a later run continues the chain. */
async function auditKeyFor(auditFile: string): Promise<Buffer> {
  try {
    return Buffer.from((await readFile(`${auditFile}.key`, "utf8")).trim(), "hex");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const bytes = randomBytes(32);
  await writeFile(`${auditFile}.key`, bytes.toString("hex"), { mode: 0o600, flag: "wx" });
  return bytes;
}

export async function runDemo(options: DemoOptions): Promise<DemoResult> {
  const s = createStyle(options.out, options.env, options.color);
  const out = (line = "") => options.out.write(`${line}\n`);
  const dir = options.dir ?? (await mkdtemp(join(tmpdir(), "ahp-demo-")));
  const keyBytes = options.auditFile === undefined ? randomBytes(32) : await auditKeyFor(options.auditFile);
  const key = AuditKey.fromBytes(keyBytes);

  out(s.bold("AHP 2.4 demo: a coding agent fixing a parser bug, supervised by a harness"));
  const harness = await startHarness(options.transport, {
    dir,
    key,
    keyHex: keyBytes.toString("hex"),
    stderr: options.err,
    ...(options.auditFile === undefined ? {} : { auditFile: options.auditFile }),
  });
  out(`${s.dim("harness:")} ${harness.where}`);
  out(`${s.dim("policy: ")} built-in default policy + one demo rate limit (web_fetch: 2 per 1.5 s)`);
  out("");
  const widths = { step: 3, event: 15, detail: 44, outcome: 9 };
  out(
    s.dim(
      `${pad("#", widths.step)} ${pad("event", widths.event)} ${pad("what", widths.detail)} ${pad("decision", widths.outcome)} reason [rule] -> agent`,
    ),
  );

  let session;
  try {
    session = await runSession(harness.transport, (e) => {
      const colour = s[OUTCOME_STYLE[e.outcome] ?? "bold"];
      const detail = e.detail.length > widths.detail ? `${e.detail.slice(0, widths.detail - 1)}…` : e.detail;
      const why = [
        e.reason,
        e.rule === undefined ? undefined : s.dim(`[${e.rule}]`),
        e.enforcement === undefined ? undefined : `-> ${e.enforcement}`,
      ]
        .filter(Boolean)
        .join(" ");
      out(
        `${pad(String(e.step), widths.step)} ${pad(e.eventType, widths.event)} ${pad(detail, widths.detail)} ${pad(colour(e.outcome), widths.outcome)} ${why}`,
      );
    });
  } finally {
    await harness.close();
  }

  const counts: Record<string, number> = {};
  for (const e of session.entries) counts[e.outcome] = (counts[e.outcome] ?? 0) + 1;
  const blocking = session.entries.filter((e) => e.outcome !== "notified" && e.outcome !== "ok");
  const latencies = blocking.map((e) => e.latencyMs).sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length / 2)] ?? 0;

  out("");
  out(s.bold("Summary"));
  const order = ["allow", "modify", "block", "escalate", "defer", "notified"];
  for (const kind of order) {
    if (counts[kind] === undefined) continue;
    out(`  ${pad(s[OUTCOME_STYLE[kind] ?? "bold"](kind), 10)} ${String(counts[kind]).padStart(3)}`);
  }
  out(
    `  ${pad("events", 10)} ${String(session.entries.length - 1).padStart(3)}  (decision p50 ${p50.toFixed(2)} ms over ${options.transport})`,
  );

  const audit = await verifyAuditLog(harness.auditFile, key);
  out("");
  out(s.bold("Audit log"));
  out(`  file     ${harness.auditFile}`);
  const verdict = audit.ok
    ? s.green(`${audit.status}: ${audit.records} records, HMAC chain verified`)
    : s.red(`${audit.status}: ${audit.break?.message ?? ""}`);
  out(`  verify   ${verdict}`);
  const kept = options.keep === true || options.dir !== undefined;
  if (kept) out(`  kept in  ${dir}`);
  else if (options.auditFile === undefined)
    out(s.dim("  (temporary: deleted now; --audit FILE writes the log where you want it, --keep keeps the directory)"));
  if (options.auditFile !== undefined)
    out(`  key      ${options.auditFile}.key (verify: ahp audit verify ${options.auditFile} --key-file ${options.auditFile}.key)`);
  if (!kept) await rm(dir, { recursive: true, force: true });
  return { entries: session.entries, audit, auditFile: harness.auditFile, counts };
}
