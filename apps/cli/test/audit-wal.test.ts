/**
 * `ahp serve` audit options and `ahp audit verify` over checkpoints and replicas, through the
 * built binary: flag validation,
 * an unwritable log refused at start, a removed tail found by the checkpoint, one report per
 * replica log.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAuditLog, type AuditEntry } from "@ahp/audit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAhp, startServe, within } from "./crash-kit.js";

const KEY_HEX = "6b".repeat(32);
let dir: string;
let keyFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-audit-wal-"));
  keyFile = join(dir, "audit.key");
  await writeFile(keyFile, KEY_HEX);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const ahp = (args: string[]) => runAhp(args);

const entry = (i: number): AuditEntry => ({
  kind: "decision",
  session: "s",
  agent: "a",
  event_type: "pre_action",
  form: "request",
  decision: "allow",
  latency_us: i,
});

async function writeLog(path: string, records: number, replicaId?: string): Promise<void> {
  const log = await openAuditLog({ key: KEY_HEX, path, ...(replicaId === undefined ? {} : { replicaId }) });
  for (let i = 0; i < records; i++) await log.append(entry(i));
  await log.close();
}

describe("ahp serve audit flags", () => {
  it("rejects a bad --audit-sync, --audit-failure or --audit-replica-id, and audit flags without --audit", async () => {
    const log = join(dir, "flags.log");
    const base = ["serve", "--stdio", "--audit", log, "--audit-key-file", keyFile];
    const bad = await ahp([...base, "--audit-sync", "sometimes"]);
    expect(bad.code).toBe(64);
    expect(bad.stderr).toContain("--audit-sync must be one of none, write, fsync");
    expect((await ahp([...base, "--audit-failure", "maybe"])).stderr).toContain("--audit-failure must be closed or open");
    expect((await ahp([...base, "--audit-replica-id", "no spaces"])).stderr).toContain("--audit-replica-id must be");
    const alone = await ahp(["serve", "--stdio", "--audit-sync", "fsync"]);
    expect(alone.code).toBe(64);
    expect(alone.stderr).toContain("--audit-sync needs --audit FILE");
  });

  it.skipIf(!existsSync("/dev/full"))(
    "an unwritable log (/dev/full): ahp serve refuses to start, with one line naming the cause",
    async () => {
      const log = join(dir, "full.log");
      await symlink("/dev/full", log);
      const sock = join(dir, "full.sock");
      const started = await within(
        ahp(["serve", "--unix", sock, "--audit", log, "--audit-key-file", keyFile]),
        20_000,
        "ahp serve did not exit",
      );
      expect(started.code).toBe(74);
      // A device, FIFO or directory is refused before the log is opened; a regular file that cannot be
      // written is refused by the audit log opening itself (packages/audit tests).
      expect(started.stderr).toContain(`ahp serve: --audit ${log}: cannot write the audit log there: not a regular file`);
      expect(started.stderr).not.toContain('"msg":"listening"');
      expect(existsSync(sock)).toBe(false);
    },
  );
});

describe("ahp.config.yaml audit settings", () => {
  it("sync, failure, checkpoint_ms and replica_id are read from the file; flags win", async () => {
    const log = join(dir, "config.log");
    const config = join(dir, "ahp.config.yaml");
    await writeFile(
      config,
      `audit: { file: ${JSON.stringify(log)}, key_file: ${JSON.stringify(keyFile)}, sync: fsync, failure: open, checkpoint_ms: 250, replica_id: edge-1 }\n`,
    );
    const sock = join(dir, "config.sock");
    const serve = await startServe(["--unix", sock, "--config", config, "--audit-failure", "closed"], 1);
    try {
      expect(serve.logLines().find((l) => l.msg === "audit log open")).toMatchObject({
        sync: "fsync",
        failure: "closed",
        checkpoint_ms: 250,
        replica_id: "edge-1",
        checkpoint: `${log}.checkpoint`,
      });
    } finally {
      serve.child.kill("SIGKILL");
      await within(serve.exited, 10_000, "ahp serve did not exit");
    }
  });
});

describe("ahp audit verify", () => {
  it("checks the signed checkpoint by default: records removed from the end are found", async () => {
    const log = join(dir, "cut.log");
    await writeLog(log, 6);
    expect((await ahp(["audit", "verify", log, "--key-file", keyFile])).code).toBe(0);
    const lines = (await readFile(log, "utf8")).split("\n");
    await writeFile(log, `${lines.slice(0, 4).join("\n")}\n`);
    const cut = await ahp(["audit", "verify", log, "--key-file", keyFile]);
    expect(cut.code).toBe(1);
    expect(cut.stdout).toMatch(
      /ends at seq 4, but its signed checkpoint \(taken .*\) names seq 6: records 5\.\.6 are missing \(truncated\)/,
    );
    expect((await ahp(["audit", "verify", log, "--key-file", keyFile, "--no-checkpoint"])).code).toBe(0);
  });

  it("several replica logs: each chain verified and reported on its own line", async () => {
    const a = join(dir, "replica-a.log");
    const b = join(dir, "replica-b.log");
    await writeLog(a, 3, "a");
    await writeLog(b, 5, "b");
    const ok = await ahp(["audit", "verify", a, b, "--key-file", keyFile]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`${a}: OK, 3 records, head 3, replica a, checkpoint verified (seq 3)`);
    expect(ok.stdout).toContain(`${b}: OK, 5 records, head 5, replica b, checkpoint verified (seq 5)`);
    expect(ok.stdout).toContain("OK: 2 chains verified");
    const lines = (await readFile(b, "utf8")).split("\n");
    await writeFile(b, `${lines.slice(0, 2).join("\n")}\n`);
    const bad = await ahp(["audit", "verify", a, b, "--key-file", keyFile]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`${a}: OK`);
    expect(bad.stdout).toContain(`${b}: TAMPERED (truncated)`);
    const json = JSON.parse((await ahp(["audit", "verify", a, b, "--key-file", keyFile, "--json"])).stdout) as {
      ok: boolean;
      logs: unknown[];
    };
    expect(json).toMatchObject({ ok: false, logs: [{ path: a }, { path: b }] });
  });
});
