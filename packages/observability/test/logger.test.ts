import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger, withLogging, type LogStream } from "../src/index.js";

const memory = () => {
  const lines: string[] = [];
  const stream: LogStream = { write: (chunk: string) => lines.push(chunk) };
  return { stream, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
};
const j = (...parts: string[]) => parts.join("");
const STRIPE = j("sk_live_", "4eC39HqLyjWDarjtT1zdp7dc");
const GH = j("ghp_", "a".repeat(20), "B".repeat(16));

afterEach(() => vi.restoreAllMocks());

describe("createLogger", () => {
  it("writes one JSON object per line with time, level, msg, bindings and fields", () => {
    const out = memory();
    const logger = createLogger({ stream: out.stream, bindings: { app: "harness" }, clock: () => new Date("2026-01-02T03:04:05.000Z") });
    logger.info("hello", { n: 1, nested: { ok: true } });
    expect(out.lines).toEqual([
      '{"time":"2026-01-02T03:04:05.000Z","level":"info","msg":"hello","app":"harness","n":1,"nested":{"ok":true}}\n',
    ]);
  });

  it("filters by level; child loggers add bindings", () => {
    const out = memory();
    const logger = createLogger({ stream: out.stream, level: "warn" });
    logger.debug("d");
    logger.info("i");
    logger.warn("w");
    logger.error("e");
    logger.child({ session: "s-1" }).child({ depth: 1 }).error("nested", { session: "override" });
    expect(out.records().map((r) => r.level)).toEqual(["warn", "error", "error"]);
    expect(out.records()[2]).toMatchObject({ msg: "nested", session: "override", depth: 1 });
    expect(logger.isLevelEnabled("info")).toBe(false);
    expect(logger.isLevelEnabled("error")).toBe(true);
    const silent = memory();
    createLogger({ stream: silent.stream, level: "silent" }).error("x");
    expect(silent.lines).toEqual([]);
    expect(() => createLogger({ stream: out.stream, level: "loud" as never })).toThrow(/unknown log level/);
  });

  it("redacts secrets in messages, fields, bindings and error stacks; reserved keys cannot be overwritten", () => {
    const out = memory();
    const logger = createLogger({ stream: out.stream, bindings: { token: "bound-secret-value" } });
    logger.error(`calling with ${STRIPE}`, {
      headers: { authorization: "Bearer abc.def.ghi", accept: "json" },
      command: `git clone https://x:${GH}@github.com/o/r`,
      error: new Error(`failed with password=hunter2-Secret!`),
      level: "fake",
    });
    const text = out.lines.join("");
    for (const secret of [STRIPE, GH, "bound-secret-value", "abc.def.ghi", "hunter2-Secret!"]) expect(text).not.toContain(secret);
    const record = out.records()[0]!;
    expect(record).toMatchObject({
      level: "error",
      field_level: "fake",
      token: "[REDACTED:token]",
      headers: { authorization: "[REDACTED:authorization]", accept: "json" },
    });
    expect(record.error).toMatchObject({ name: "Error", message: "failed with password=[REDACTED:generic_secret]" });
    expect(String((record.error as { stack: string }).stack)).toContain("[REDACTED:generic_secret]");
  });

  it("takes a pluggable redactor; a throwing stream goes to onerror, never to the caller", () => {
    const out = memory();
    createLogger({ stream: out.stream, redactor: (t) => t.replace(/ACME-\d+/g, "[REDACTED:acme]") }).info("id ACME-42");
    expect(out.records()[0]!.msg).toBe("id [REDACTED:acme]");
    const errors: Error[] = [];
    const logger = createLogger({
      stream: {
        write: () => {
          throw new Error("EPIPE");
        },
      },
      onerror: (e) => errors.push(e),
    });
    expect(() => logger.info("x")).not.toThrow();
    expect(errors.map((e) => e.message)).toEqual(["EPIPE"]);
  });

  it("defaults to stderr and never writes to stdout; refuses stdout explicitly", () => {
    const stdout = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const logger = createLogger({ level: "debug" });
    logger.debug("d");
    logger.error("e");
    expect(stderr).toHaveBeenCalledTimes(2);
    expect(stdout).not.toHaveBeenCalled();
    expect(() => createLogger({ stream: process.stdout })).toThrow(/refuses stdout/);
    expect(() => createLogger({ stream: { fd: 1, write: () => true } as LogStream })).toThrow(/refuses stdout/);
  });

  it("a real child process logging with the defaults leaves stdout empty", async () => {
    const fixture = fileURLToPath(new URL("./fixtures/log-child.ts", import.meta.url));
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, ["--import", "tsx", fixture], { cwd: fileURLToPath(new URL("..", import.meta.url)) });
      let out = "";
      let err = "";
      child.stdout.on("data", (c: Buffer) => (out += c.toString()));
      child.stderr.on("data", (c: Buffer) => (err += c.toString()));
      child.on("error", reject);
      child.on("close", (exitCode) => resolve({ code: exitCode, stdout: out, stderr: err }));
    });
    expect(code).toBe(0);
    expect(stdout).toBe("");
    const records = stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((r) => r.msg)).toEqual(["starting", "decided", "slow handler", "failed", "child line"]);
    expect(records[4]).toMatchObject({ component: "child", session: "s-1" });
  }, 120_000); // a child that loads TypeScript through tsx: slow to start on a busy machine
});

describe("withLogging", () => {
  it("logs decisions at debug and failures at warn, with rule ids", async () => {
    const out = memory();
    const logger = createLogger({ stream: out.stream, level: "debug" });
    const server = new AhpServer({
      handlers: withLogging(
        {
          onEvent: (event) => {
            if ((event.payload as { fail?: boolean }).fail) throw new Error(`bad ${STRIPE}`);
            return { decision: "block", reason: "no", metadata: { rule: "r.1" } };
          },
        },
        logger,
        { observeMissing: false },
      ),
    });
    const [a, h] = createLinkedPair();
    await server.connect(h);
    const client = new AhpClient({ sessionId: "s-9" });
    await client.connect(a);
    await client.send("pre_action", { fail: false });
    await expect(client.send("pre_action", { fail: true })).rejects.toThrow();
    await client.close();
    await server.close();
    const records = out.records();
    expect(records).toHaveLength(2);
    expect(records[0]).toMatchObject({
      level: "debug",
      msg: "ahp decision",
      event_type: "pre_action",
      session: "s-9",
      decision: "block",
      rule: "r.1",
      form: "request",
    });
    expect(records[1]).toMatchObject({ level: "warn", msg: "ahp handler failed", error: "bad [REDACTED:stripe_key]" });
    expect(typeof records[0]!.latency_ms).toBe("number");
  });
});
