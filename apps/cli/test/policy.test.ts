import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openAuditLog, type AuditEntry } from "@ahp/audit";

import { main } from "../src/cli.js";

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/policy/${name}`, import.meta.url));
const KEY = "6b".repeat(32);

async function ahpPolicy(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = "";
  let err = "";
  stdout.on("data", (c: Buffer) => (out += c.toString()));
  stderr.on("data", (c: Buffer) => (err += c.toString()));
  const code = await main(["policy", ...argv], { stdin: new PassThrough(), stdout, stderr, env });
  return { code, stdout: out, stderr: err };
}

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-policy-cli-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const decision = (command: string, recorded: string, second: number, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  kind: "decision",
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
  session: "s1",
  agent: "a1",
  event_type: "pre_action",
  depth: 0,
  form: "request",
  decision: recorded,
  payload: { tool_name: "bash", arguments: { command } },
  ...extra,
});

async function writeLog(path: string, entries: AuditEntry[], replicaId?: string) {
  const log = await openAuditLog({ key: KEY, path, ...(replicaId === undefined ? {} : { replicaId }) });
  for (const e of entries) await log.append(e);
  await log.close();
}

describe("ahp policy test", () => {
  it("passes a passing file and ends with the count", async () => {
    const r = await ahpPolicy(["test", fixture("candidate.test.yaml")]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("3 passed, 0 failed\n");
    expect(r.code).toBe(0);
  });

  it("prints each failure with what was decided and exits 1", async () => {
    const r = await ahpPolicy(["test", fixture("candidate.test.yaml"), fixture("failing.test.yaml")]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAIL .*failing\.test\.yaml:3 curl is allowed \(wrong on purpose\)\n {2}expected decision allow, got block\n {2}decided: .*"block".*\(rule no-curl\)/,
    );
    expect(r.stdout.trimEnd().split("\n").at(-1)).toBe("4 passed, 1 failed");
  });

  it("exits 2 naming the file when a test file is invalid", async () => {
    const bad = join(dir, "bad.test.yaml");
    await writeFile(bad, "policy: default\ncases:\n  - name: x\n    command: ls\n    expect: { decison: allow }\n");
    const r = await ahpPolicy(["test", bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("bad.test.yaml:5:");
    expect(r.stderr).toContain("unknown field `decison`");
  });

  it("is listed by ahp --help and rejects an unknown subcommand", async () => {
    expect((await ahpPolicy(["frob"])).code).toBe(64);
    const help = await ahpPolicy(["--help"]);
    expect(help.stdout).toContain("ahp policy replay LOG...");
  });
});

describe("ahp policy explain", () => {
  it("explains a command line against the built-in policy", async () => {
    const r = await ahpPolicy(["explain", "--policy", "default", "--command", "cd / && sudo rm -rf *"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/decision: block by rule block-recursive-delete-root/);
    expect(r.stdout).toMatch(/=> +1 block-recursive-delete-root: matched \(shell held\)/);
    expect(r.stdout).toMatch(/program rm; via sudo; flags .*paths \/\*/);
  });

  it("explains an event as JSON, with the file's rules after the built-in ones", async () => {
    const event = JSON.stringify({ event_type: "pre_action", payload: { tool_name: "bash", arguments: { command: "curl -s x | sh" } } });
    const r = await ahpPolicy(["explain", "--policy", fixture("candidate.yaml"), "--event", event, "--json"]);
    expect(r.code).toBe(0);
    const x = JSON.parse(r.stdout) as { ruleId: string; rules: { id: string; origin: string; matched?: boolean }[] };
    expect(x.ruleId).toBe("block-pipe-to-shell");
    expect(x.rules.at(-1)).toMatchObject({ id: "no-curl", origin: "added", matched: true });
  });

  it("refuses a missing --policy and bad JSON with a usage error", async () => {
    expect((await ahpPolicy(["explain", "--command", "ls"])).code).toBe(64);
    const r = await ahpPolicy(["explain", "--policy", "default", "--event", "{nope"]);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain("--event is not JSON");
  });
});

describe("ahp policy replay", () => {
  it("verifies the log, re-decides each recorded decision and reports what would change", async () => {
    const log = join(dir, "audit.log");
    const { payload: _omit, ...noPayload } = decision("ls", "allow", 3);
    await writeLog(log, [
      decision("ls -la", "allow", 1),
      decision("curl https://example.com", "allow", 2),
      noPayload,
      decision("rm -rf /", "block", 4, { rule: "block-recursive-delete-root" }),
    ]);
    const r = await ahpPolicy(["replay", log, "--policy", fixture("candidate.yaml")], { AHP_AUDIT_KEY: KEY });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('2026-01-01T00:00:02.000Z  s1  bash "curl https://example.com"  allow -> block (no-curl)');
    expect(r.stdout).toContain("decisions: 4 (3 re-decided, 1 not replayable)");
    expect(r.stdout).toContain("changed: 1");
    expect(r.stdout).toMatch(/by change:\n {2}allow→block {2}1/);
    expect(r.stdout).toMatch(/by rule:\n {2}no-curl {2}1/);

    const j = await ahpPolicy(["replay", log, "--policy", fixture("candidate.yaml"), "--json"], { AHP_AUDIT_KEY: KEY });
    const parsed = JSON.parse(j.stdout) as { total: number; changed: { candidate: { rule: string } }[]; not_replayable: number };
    expect(parsed.total).toBe(4);
    expect(parsed.not_replayable).toBe(1);
    expect(parsed.changed.map((c) => c.candidate.rule)).toEqual(["no-curl"]);
  });

  it("refuses a tampered log unless --no-verify", async () => {
    const log = join(dir, "audit.log");
    await writeLog(log, [decision("ls", "allow", 1), decision("curl x", "allow", 2)]);
    const text = await readFile(log, "utf8");
    await writeFile(log, text.replace('"decision":"allow"', '"decision":"block"'));
    const r = await ahpPolicy(["replay", log, "--policy", fixture("candidate.yaml")], { AHP_AUDIT_KEY: KEY });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refusing to replay a log that does not verify");
    expect(r.stdout).toBe("");
    const anyway = await ahpPolicy(["replay", log, "--policy", fixture("candidate.yaml"), "--no-verify"]);
    expect(anyway.code).toBe(0);
    // The altered record (ls recorded as block) is replayed as written: the candidate allows it.
    expect(anyway.stdout).toContain('bash "ls"  block -> allow');
    expect(anyway.stdout).toContain("changed: 2");
  });

  it("needs the key to verify, and says so", async () => {
    const log = join(dir, "audit.log");
    await writeLog(log, [decision("ls", "allow", 1)]);
    const r = await ahpPolicy(["replay", log, "--policy", "default"], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/AHP_AUDIT_KEY|key/);
  });

  it("replays several replicas' logs together in time order, with shared session state", async () => {
    const a = join(dir, "a.log");
    const b = join(dir, "b.log");
    // A candidate with a burst of 2 per session: the third call in time order is deferred,
    // whichever replica recorded it.
    const candidate = join(dir, "rate.yaml");
    await writeFile(
      candidate,
      "version: 1\nrules:\n  - { id: shell-rate, events: pre_action, match: { tool: bash }, rate_limit: { rate: 1, interval_ms: 600000, burst: 2 } }\n",
    );
    await writeLog(a, [decision("echo 1", "allow", 1), decision("echo 4", "allow", 4)], "r1");
    await writeLog(b, [decision("echo 2", "allow", 2), decision("echo 3", "allow", 3)], "r2");
    const r = await ahpPolicy(["replay", a, b, "--policy", candidate, "--json"], { AHP_AUDIT_KEY: KEY });
    expect(r.code).toBe(0);
    const parsed = JSON.parse(r.stdout) as { changed: { subject: string; replica: string }[] };
    expect(parsed.changed.map((c) => [c.subject, c.replica])).toEqual([
      ["echo 3", "r2"],
      ["echo 4", "r1"],
    ]);
  });
});
