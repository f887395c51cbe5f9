/**
 * `ahp audit verify` through the built binary: a cut head fails unless rotation's signed manifest
 * accounts for it (or --allow-missing-head), the external anchor finds a tail cut behind an old
 * checkpoint put back, and a wrong key exits 77 with one line, apart from tampering (1).
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAuditLog, type AuditEntry } from "@ahp/audit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAhp } from "./crash-kit.js";

const KEY_HEX = "4d".repeat(32);
let dir: string;
let keyFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-audit-verify-"));
  keyFile = join(dir, "audit.key");
  await writeFile(keyFile, KEY_HEX);
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const ahp = (args: string[]) => runAhp(args);

const entry = (i: number): AuditEntry => ({ kind: "decision", session: "s", event_type: "pre_action", decision: "allow", latency_us: i });

async function writeLog(path: string, records: number, options: { anchor?: string; file?: { maxBytes: number; maxFiles: number } } = {}) {
  const log = await openAuditLog({ key: KEY_HEX, path, ...options });
  for (let i = 0; i < records; i++) await log.append(entry(i));
  await log.close();
}

const lines = async (file: string) => (await readFile(file, "utf8")).split("\n").filter((l) => l !== "");

describe("ahp audit verify: the head", () => {
  it("deleting the first records of a log never rotated fails (exit 1, one clear message); --allow-missing-head accepts it", async () => {
    const log = join(dir, "head.log");
    await writeLog(log, 6);
    expect((await ahp(["audit", "verify", log, "--key-file", keyFile])).code).toBe(0);
    await writeFile(log, `${(await lines(log)).slice(2).join("\n")}\n`);
    const cut = await ahp(["audit", "verify", log, "--key-file", keyFile]);
    expect(cut.code).toBe(1);
    expect(cut.stdout).toContain(
      "TAMPERED (deleted) at " +
        `${log}:1: the log starts at seq 3: records 1..2 are missing and no rotation manifest says they were rotated away: ` +
        "the head of the log was cut (--allow-missing-head accepts a log cut on purpose)",
    );
    const allowed = await ahp(["audit", "verify", log, "--key-file", keyFile, "--allow-missing-head"]);
    expect(allowed.code).toBe(0);
    expect(allowed.stdout).toContain("starts at seq 3: earlier records missing, accepted unchecked (--allow-missing-head)");
  });

  it("a log whose oldest files rotation deleted verifies through its signed manifest", async () => {
    const log = join(dir, "rotated.log");
    await writeLog(log, 80, { file: { maxBytes: 1500, maxFiles: 2 } });
    const ok = await ahp(["audit", "verify", log, "--key-file", keyFile]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/records 1\.\.\d+ rotated away \(.*rotated\.log\.rotation/);
    await rm(`${log}.rotation`);
    const without = await ahp(["audit", "verify", log, "--key-file", keyFile]);
    expect(without.code).toBe(1);
    expect(without.stdout).toContain("no rotation manifest says they were rotated away");
  });
});

describe("ahp audit verify --anchor", () => {
  it("records cut behind the anchor are found, although the old checkpoint was put back", async () => {
    const log = join(dir, "anchored.log");
    const anchor = join(dir, "anchor.json");
    await writeLog(log, 4, { anchor });
    await copyFile(`${log}.checkpoint`, join(dir, "old.checkpoint"));
    // A second writer continues the log (and the anchor).
    await writeLog(log, 4, { anchor });
    expect((await ahp(["audit", "verify", log, "--key-file", keyFile, "--anchor", anchor])).stdout).toContain(`anchor: ${anchor}: seq 8`);
    await writeFile(log, `${(await lines(log)).slice(0, 4).join("\n")}\n`);
    await copyFile(join(dir, "old.checkpoint"), `${log}.checkpoint`);
    expect((await ahp(["audit", "verify", log, "--key-file", keyFile])).code).toBe(0);
    const cut = await ahp(["audit", "verify", log, "--key-file", keyFile, "--anchor", anchor]);
    expect(cut.code).toBe(1);
    expect(cut.stdout).toMatch(/TAMPERED \(truncated\).*the log ends at seq 4, but the checkpoint published to the anchor .* names seq 8/);
  });

  it("an anchor for several logs, or an empty one, is a usage error (64)", async () => {
    const a = join(dir, "u-a.log");
    const b = join(dir, "u-b.log");
    await writeLog(a, 1);
    await writeLog(b, 1);
    expect((await ahp(["audit", "verify", a, b, "--key-file", keyFile, "--anchor", join(dir, "x")])).code).toBe(64);
    expect((await ahp(["audit", "verify", a, "--key-file", keyFile, "--anchor", " "])).code).toBe(64);
  });
});

describe("ahp audit verify: wrong key", () => {
  it("exits 77 with one line naming both key ids; tampering stays 1", async () => {
    const log = join(dir, "key.log");
    await writeLog(log, 3);
    const other = join(dir, "other.key");
    await writeFile(other, "cd".repeat(32));
    const wrong = await ahp(["audit", "verify", log, "--key-file", other]);
    expect(wrong.code).toBe(77);
    expect(wrong.stdout).toBe("");
    expect(wrong.stderr.trim().split("\n")).toHaveLength(1);
    expect(wrong.stderr).toMatch(
      /^ahp audit verify: wrong key: the records were written with key [0-9a-f]{8}; the given key is [0-9a-f]{8}/,
    );
    const second = join(dir, "key-2.log");
    await writeLog(second, 2);
    const several = await ahp(["audit", "verify", log, second, "--each", "--key-file", other]);
    expect(several.code).toBe(77);
    const text = await readFile(log, "utf8");
    await writeFile(log, text.replace('"latency_us":1', '"latency_us":2'));
    expect((await ahp(["audit", "verify", log, "--key-file", keyFile])).code).toBe(1);
    expect((await ahp(["audit", "verify", log, "--key-file", other])).code).toBe(77);
  });
});
