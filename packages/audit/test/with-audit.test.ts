import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { AhpClient, AhpServer, annotate, createLinkedPair, type AhpServerHandlers, type AhpServerOptions } from "@ahp/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  canonicalJson,
  openAuditLog,
  sha256Hex,
  verifyAuditLog,
  withAudit,
  type AuditEntry,
  type AuditLog,
  type AuditRecord,
  type AuditRecorder,
  type WithAuditOptions,
} from "../src/index.js";
import { SAMPLES, key, tempDir } from "./helpers.js";

/** Wraps a log and lets a test wait until n records were appended (no sleeps). */
function counting(log: AuditLog) {
  const appended: Promise<AuditRecord>[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const recorder: AuditRecorder = {
    append(entry: AuditEntry) {
      const p = log.append(entry);
      appended.push(p);
      for (const w of waiters.filter((w) => appended.length >= w.n)) w.resolve();
      return p;
    },
  };
  const until = (n: number) =>
    appended.length >= n
      ? Promise.all(appended)
      : new Promise<void>((resolve) => waiters.push({ n, resolve })).then(() => Promise.all(appended));
  return { recorder, until };
}

let dir: string;
let cleanup: () => Promise<void>;
let path: string;
let log: AuditLog;
const closers: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
  path = join(dir, "audit.log");
  log = await openAuditLog({ key, path, file: { fsync: "never" } });
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  await log.close();
  await cleanup();
});

async function session(
  handlers: AhpServerHandlers,
  options: WithAuditOptions = {},
  serverOptions: Omit<AhpServerOptions, "handlers"> = {},
) {
  const counter = counting(log);
  const server = new AhpServer({ ...serverOptions, handlers: withAudit(handlers, counter.recorder, options) });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient({ sessionId: "sess-1", agentId: "agent-1", timeoutMs: 5000 });
  await client.connect(agentSide);
  closers.push(
    () => client.close(),
    () => server.close(),
  );
  return { client, until: counter.until };
}

const fileRecords = async () =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as AuditRecord);

describe("withAudit through AhpServer", () => {
  it("records a scripted session: handshake, decisions, notification, batch, typed, query", async () => {
    const { client, until } = await session({
      onEvent: (event) => {
        const command = (event.payload as { arguments?: { command?: string } } | null)?.arguments?.command ?? "";
        if (command.includes("rm -rf")) return { decision: "block", reason: "destructive", metadata: { rule: "shell.rm-root" } };
        if (event.event_type === "pre_prompt") return { decision: "defer", retry_after_ms: 100, reason: "slow down [rule: rate.burst]" };
        return { decision: "allow" };
      },
      onNotification: () => undefined,
      onQuery: (query) => ({ answer: query.query_type === "approval_check", reason: "ok" }),
      typed: {
        confirmation: (_payload, event) => {
          annotate(event, { ruleId: "confirm.auto", latencyNs: 12_000 });
          return { decision: "approve" };
        },
      },
    });
    const payload = { tool_name: "bash", arguments: { command: "rm -rf /" } };
    expect(await client.send("pre_action", payload, { metadata: { trace_id: "0af7651916cd43dd8448eb211c80319c" } })).toMatchObject({
      decision: "block",
    });
    expect(await client.send("pre_action", { tool_name: "ls" }, { depth: 2 })).toEqual({ decision: "allow" });
    expect(await client.send("pre_prompt", { prompt: "hi" })).toMatchObject({ decision: "defer" });
    await client.send("post_action", { tool_name: "ls", result: "ok" });
    const pre = {
      event_type: "pre_action" as const,
      session_id: "sess-1",
      agent_id: "agent-1",
      timestamp: "t",
      depth: 0,
      payload: { tool_name: "cat" },
    };
    const post = { ...pre, event_type: "post_action" as const };
    expect(await client.batch([pre, post])).toHaveLength(2);
    expect(await client.send("confirmation", { session_id: "sess-1", confirmation_type: "user_confirm", message: "deploy?" })).toEqual({
      decision: "approve",
    });
    expect(await client.query("approval_check", { x: 1 })).toMatchObject({ answer: true });
    await until(9);
    await log.flush();

    const records = await fileRecords();
    expect(records.map((r) => [r.kind, r.event_type, r.form, r.decision])).toEqual([
      ["handshake", "handshake", "request", undefined],
      ["decision", "pre_action", "request", "block"],
      ["decision", "pre_action", "request", "allow"],
      ["decision", "pre_prompt", "request", "defer"],
      ["event", "post_action", "notification", undefined],
      expect.arrayContaining(["decision", "batch"]),
      expect.arrayContaining(["decision", "batch"]),
      ["decision", "confirmation", "request", "approve"],
      ["query", "query", "request", undefined],
    ]);
    const [handshake, blocked, allowed, deferred, , b0, b1, confirm, query] = records as AuditRecord[] &
      [AuditRecord, AuditRecord, AuditRecord, AuditRecord, AuditRecord, AuditRecord, AuditRecord, AuditRecord, AuditRecord];
    expect(handshake).toMatchObject({
      session: "sess-1",
      agent: "agent-1",
      agent_framework: "@ahp/core",
      conn: { transport: "memory", id: 1 },
    });
    expect(blocked).toMatchObject({
      session: "sess-1",
      agent: "agent-1",
      depth: 0,
      reason: "destructive",
      rule: "shell.rm-root",
      trace_id: "0af7651916cd43dd8448eb211c80319c",
      payload_sha256: sha256Hex(canonicalJson(payload)),
      conn: { transport: "memory" },
    });
    expect(typeof blocked.request_id).toBe("string");
    expect(blocked.payload).toBeUndefined();
    expect(blocked.latency_us).toBeGreaterThanOrEqual(0);
    expect(allowed).toMatchObject({ depth: 2 });
    expect(allowed.rule).toBeUndefined();
    expect(deferred).toMatchObject({ rule: "rate.burst" });
    expect([b0.batch, b1.batch]).toEqual(
      expect.arrayContaining([
        { index: 0, size: 2 },
        { index: 1, size: 2 },
      ]),
    );
    expect(confirm).toMatchObject({ rule: "confirm.auto", policy_us: 12 });
    expect(query).toMatchObject({ query_type: "approval_check", reason: "ok", payload_sha256: sha256Hex('{"x":1}') });
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", records: 9 });
  });

  it("records failures, then lets the server fail closed", async () => {
    const { client, until } = await session(
      {
        onEvent: (event) => {
          if (event.event_type === "pre_prompt") throw new Error(`upstream said password=${SAMPLES.password}`);
          return { decision: "allow" };
        },
      },
      {},
      { handlerFailure: "decision" },
    );
    expect(await client.send("pre_prompt", { prompt: "x" })).toMatchObject({
      decision: "block",
      reason: expect.stringContaining("Handler error") as unknown,
    });
    await until(2);
    await log.flush();
    const records = await fileRecords();
    const failure = records.find((r) => r.kind === "failure")!;
    expect(failure).toMatchObject({ event_type: "pre_prompt", form: "request", error: "upstream said password=[REDACTED:generic_secret]" });
    expect(JSON.stringify(records)).not.toContain(SAMPLES.password);
  });

  it("a failure in a batch slot is recorded and the slot becomes block", async () => {
    const { client, until } = await session({
      onEvent: (event) => {
        if ((event.payload as { n: number }).n === 1) throw new Error("bad slot");
        return { decision: "allow" };
      },
    });
    const ev = (n: number) => ({
      event_type: "pre_action" as const,
      session_id: "s",
      agent_id: "a",
      timestamp: "t",
      depth: 0,
      payload: { n },
    });
    const decisions = await client.batch([ev(0), ev(1), ev(2)]);
    expect(decisions.map((d) => d.decision)).toEqual(["allow", "block", "allow"]);
    await until(4);
    await log.flush();
    const failure = (await fileRecords()).find((r) => r.kind === "failure");
    expect(failure).toMatchObject({ form: "batch", batch: { index: 1, size: 3 }, error: "bad slot" });
  });

  it("records a handler timeout when the server gives up", async () => {
    const { client, until } = await session(
      { onEvent: (_event, ctx) => new Promise((resolve) => ctx.signal.addEventListener("abort", () => resolve({ decision: "allow" }))) },
      {},
      { handlerTimeoutMs: 50 },
    );
    await expect(client.send("pre_action", { tool_name: "slow" })).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining("Timeout") as unknown,
    });
    await until(2);
    await log.flush();
    const failure = (await fileRecords()).find((r) => r.kind === "failure");
    expect(failure).toMatchObject({ event_type: "pre_action", error: "Timeout after 50ms" });
  });

  it("leaves absent handlers absent (server defaults unchanged)", async () => {
    const { client, until } = await session({});
    await expect(client.send("pre_action", { tool_name: "x" })).rejects.toMatchObject({ code: -32603 });
    expect(await client.send("idle", { idle_duration_ms: 5, idle_reason: "waiting" })).toEqual({ decision: "allow" });
    await client.send("session_end", {});
    await until(2); // handshake + notification; the unhandled request and default idle are not handler calls
    await log.flush();
    expect((await fileRecords()).map((r) => r.kind)).toEqual(["handshake", "event"]);
  });

  it("includePayloads writes the redacted payload; no secret reaches the file", async () => {
    const { client, until } = await session({ onEvent: () => ({ decision: "allow" }) }, { includePayloads: true });
    const payload = {
      tool_name: "bash",
      arguments: {
        command: `curl -H "Authorization: Bearer ${SAMPLES.openai}" https://api`,
        env: { AWS_ACCESS_KEY_ID: SAMPLES.aws_access_key_id, password: SAMPLES.password },
        notes: [SAMPLES.github_classic, SAMPLES.pem, SAMPLES.jwt, SAMPLES.stripe, SAMPLES.slack, SAMPLES.google, SAMPLES.anthropic],
      },
    };
    await client.send("pre_action", payload);
    await until(2);
    await log.flush();
    const text = await readFile(path, "utf8");
    for (const secret of Object.values(SAMPLES)) expect(text).not.toContain(secret);
    const record = (await fileRecords())[1]!;
    expect(record.payload).toMatchObject({ tool_name: "bash", arguments: { env: { password: "[REDACTED:password]" } } });
    expect(record.payload_sha256).toBe(sha256Hex(canonicalJson(payload))); // digest of the original payload
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact" });
  });

  it("write-ahead: a call whose record cannot be written fails closed", async () => {
    await log.close();
    const broken: AuditRecorder = { append: () => Promise.reject(Object.assign(new Error("disk gone"), { code: "ENOSPC" })) };
    const server = new AhpServer({
      handlers: withAudit({ onEvent: () => ({ decision: "allow" }) }, broken, { awaitWrites: true, observeMissing: false }),
    });
    const [a, h] = createLinkedPair();
    await server.connect(h);
    const client = new AhpClient();
    await client.connect(a);
    closers.push(
      () => client.close(),
      () => server.close(),
    );
    expect(await client.send("pre_action", { tool_name: "x" })).toEqual({
      decision: "block",
      reason: "audit log unavailable (ENOSPC): the decision is withheld",
    });
    log = await openAuditLog({ key, path, file: { fsync: "never" } });
  });

  it("sync none: a write failure goes to onerror and the decision is unaffected", async () => {
    const errors: Error[] = [];
    const broken: AuditRecorder = { append: () => Promise.reject(new Error("disk gone")) };
    const server = new AhpServer({
      handlers: withAudit({ onEvent: () => ({ decision: "allow" }) }, broken, { sync: "none", onerror: (e) => errors.push(e) }),
    });
    const [a, h] = createLinkedPair();
    await server.connect(h);
    const client = new AhpClient();
    await client.connect(a);
    closers.push(
      () => client.close(),
      () => server.close(),
    );
    expect(await client.send("pre_action", { tool_name: "x" })).toEqual({ decision: "allow" });
    // The record follows the answer: wait (with a generous deadline) until both failures were reported.
    const deadline = Date.now() + 30_000;
    while (errors.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(errors.map((e) => e.message)).toEqual(["disk gone", "disk gone"]);
  });
});
