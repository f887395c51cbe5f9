/**
 * A handler that never returns, over a real Unix socket: the server answers at the handler time
 * limit (a fail-closed decision, or -32603 for a query), and the timeout is logged, counted in
 * `ahp_handler_timeouts_total`, audited (the record says the call timed out and what the agent
 * was answered), and leaves `ahp_inflight_requests`.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAuditLog, withAudit, type AuditLog } from "@ahp/audit";
import { AhpServer, applyHandlerMiddleware, composeMiddleware, type AhpServerHandlers } from "@ahp/core";
import { createAhpMetrics, createLogger, timeoutLogging } from "@ahp/observability";
import { listenUnix, type UnixSocketServer } from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";

const TIMEOUT_MS = 200;
const cleanup: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const event = (id: string, session = "s") => ({
  jsonrpc: "2.0",
  id,
  method: "ahp/event",
  params: {
    event_type: "pre_action",
    session_id: session,
    agent_id: "a",
    timestamp: "t",
    depth: 0,
    payload: { tool_name: "bash", arguments: { command: "ls" } },
  },
});

/** A line-oriented client on a real Unix socket: answers by id. */
async function client(
  path: string,
): Promise<{ socket: Socket; send(message: unknown): void; answer(id: string): Promise<Record<string, unknown>> }> {
  const socket = await new Promise<Socket>((resolve, reject) => {
    const s = connect(path, () => resolve(s));
    s.once("error", reject);
  });
  cleanup.push(async () => void socket.destroy());
  const answers = new Map<string, Record<string, unknown>>();
  const waiters = new Map<string, (answer: Record<string, unknown>) => void>();
  let pending = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    for (let nl = pending.indexOf("\n"); nl !== -1; nl = pending.indexOf("\n")) {
      const answer = JSON.parse(pending.slice(0, nl)) as Record<string, unknown>;
      pending = pending.slice(nl + 1);
      const id = String(answer.id);
      answers.set(id, answer);
      waiters.get(id)?.(answer);
    }
  });
  return {
    socket,
    send: (message) => socket.write(`${JSON.stringify(message)}\n`),
    answer: (id) => {
      const known = answers.get(id);
      return known !== undefined ? Promise.resolve(known) : new Promise((resolve) => waiters.set(id, resolve));
    },
  };
}

async function setUp(handlers: AhpServerHandlers): Promise<{
  path: string;
  metrics: ReturnType<typeof createAhpMetrics>;
  logs: Array<Record<string, unknown>>;
  audit: AuditLog;
  auditFile: string;
}> {
  const dir = await mkdtemp(join(tmpdir(), "ahp-timeouts-"));
  cleanup.push(() => rm(dir, { recursive: true, force: true }));
  const auditFile = join(dir, "audit.log");
  const audit = await openAuditLog({ path: auditFile, key: randomBytes(32), checkpoint: false });
  cleanup.push(() => audit.close());
  const logs: Array<Record<string, unknown>> = [];
  const log = createLogger({ stream: { write: (line: string) => logs.push(JSON.parse(line) as Record<string, unknown>) } });
  const metrics = createAhpMetrics();
  let wrapped = applyHandlerMiddleware(
    handlers,
    composeMiddleware(metrics.middleware(), timeoutLogging(log, { handlerFailure: "decision" })),
  );
  wrapped = withAudit(wrapped, audit, { handlerFailure: "decision" });
  const server = new AhpServer({ handlers: wrapped, handlerTimeoutMs: TIMEOUT_MS, handlerFailure: "decision" });
  cleanup.push(() => server.close({ graceMs: 0 }));
  const path = join(dir, "ahp.sock");
  const listener: UnixSocketServer = await listenUnix(server, { path });
  cleanup.push(() => listener.close());
  return { path, metrics, logs, audit, auditFile };
}

async function sample(metrics: ReturnType<typeof createAhpMetrics>, name: string, labels = ""): Promise<number | undefined> {
  const text = await metrics.metrics();
  const escaped = labels.replace(/[{}]/g, "\\$&");
  const match = new RegExp(`^${name}${escaped} (\\S+)$`, "m").exec(text);
  return match === null ? undefined : Number(match[1]);
}

async function auditRecords(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, "utf8");
  return text
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const never = () => new Promise<never>(() => undefined);

describe("handler timeouts", () => {
  it("an event whose handler never returns: answered block at the limit, logged, counted, audited, and out of the in-flight gauge", async () => {
    const { path, metrics, logs, auditFile } = await setUp({ onEvent: never });
    const agent = await client(path);
    agent.send(event("e1"));
    const answer = await agent.answer("e1");
    expect(answer.result).toEqual({ decision: "block", reason: `Handler error: Timeout after ${TIMEOUT_MS}ms` });

    expect(await sample(metrics, "ahp_handler_timeouts_total", '{event_type="pre_action"}')).toBe(1);
    expect(await sample(metrics, "ahp_inflight_requests")).toBe(0);

    const lines = logs.filter((l) => l.msg === "handler timeout");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "warn",
      event_type: "pre_action",
      form: "request",
      session: "s",
      request_id: "e1",
      transport: "unix",
      timeout_ms: TIMEOUT_MS,
      answered: "block",
    });
    expect(JSON.stringify(lines)).not.toContain("ls");

    // The answer waited for the record (write-ahead), so it is in the file now.
    const failures = (await auditRecords(auditFile)).filter((r) => r.kind === "failure");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      event_type: "pre_action",
      request_id: "e1",
      timeout_ms: TIMEOUT_MS,
      decision: "block",
      reason: `Handler error: Timeout after ${TIMEOUT_MS}ms`,
      error: `Timeout after ${TIMEOUT_MS}ms`,
    });
  });

  it("a query whose handler never returns: answered -32603, and the record names that error code", async () => {
    const { path, metrics, logs, auditFile } = await setUp({ onQuery: never });
    const agent = await client(path);
    agent.send({
      jsonrpc: "2.0",
      id: "q1",
      method: "ahp/query",
      params: { query_type: "budget", session_id: "s", agent_id: "a", payload: {} },
    });
    const answer = await agent.answer("q1");
    expect(answer.error).toEqual({ code: -32603, message: `Handler error: Timeout after ${TIMEOUT_MS}ms` });
    expect(await sample(metrics, "ahp_handler_timeouts_total", '{event_type="query"}')).toBe(1);
    expect(await sample(metrics, "ahp_inflight_requests")).toBe(0);
    expect(logs.filter((l) => l.msg === "handler timeout")[0]).toMatchObject({ event_type: "query", answered: "error -32603" });
    const failure = (await auditRecords(auditFile)).find((r) => r.kind === "failure");
    expect(failure).toMatchObject({ query_type: "budget", timeout_ms: TIMEOUT_MS, answer_error: -32603 });
    expect(failure?.decision).toBeUndefined();
  });

  it("a handler that fails at once is not counted, logged or audited as a timeout", async () => {
    const { path, metrics, logs, auditFile } = await setUp({
      onEvent: () => {
        throw new Error("broken");
      },
    });
    const agent = await client(path);
    agent.send(event("f1"));
    expect((await agent.answer("f1")).result).toEqual({ decision: "block", reason: "Handler error: broken" });
    expect(await sample(metrics, "ahp_handler_timeouts_total", '{event_type="pre_action"}')).toBeUndefined();
    expect(logs.filter((l) => l.msg === "handler timeout")).toEqual([]);
    const failure = (await auditRecords(auditFile)).find((r) => r.kind === "failure");
    expect(failure?.timeout_ms).toBeUndefined();
  });

  it("while one connection's handlers never return, an agent on another connection keeps getting answers", async () => {
    const { path } = await setUp({
      onEvent: (e) => (e.session_id === "stuck" ? never() : { decision: "allow" }),
    });
    const stuck = await client(path);
    for (let i = 0; i < 50; i++) stuck.send(event(`stuck-${i}`, "stuck"));
    const good = await client(path);
    for (let i = 0; i < 20; i++) {
      good.send(event(`good-${i}`, "good"));
      expect((await good.answer(`good-${i}`)).result).toEqual({ decision: "allow" });
    }
    expect((await stuck.answer("stuck-49")).result).toMatchObject({ decision: "block" });
  });
});
