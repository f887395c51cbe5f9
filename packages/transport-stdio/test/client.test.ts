/**
 * StdioClientTransport against real child processes (the fixtures import the BUILT packages:
 * run `pnpm --filter @ahp/transport-stdio... build` first; the root `pnpm test` does).
 */
import { AhpClient, AhpError, AhpLocalError } from "@ahp/core";
import { StdioClientTransport, type StdioClientTransportOptions, type StdioExitDetails } from "@ahp/transport-stdio";
import { afterEach, describe, expect, it } from "vitest";
import { deferred, fixture, nodeFixture, runNode, since, untilSteady, WAIT_MS } from "./helpers.js";

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.allSettled(open.splice(0).map((c) => c.close()));
});

async function connect(options: StdioClientTransportOptions, clientOptions: ConstructorParameters<typeof AhpClient>[0] = {}) {
  const errors: Error[] = [];
  const transport = new StdioClientTransport({ stderr: "ignore", ...options });
  // A spawned harness may need far longer than the default 10 s to start on a busy machine.
  const client = new AhpClient({ timeoutMs: WAIT_MS, onerror: (e) => errors.push(e), ...clientOptions });
  open.push(client);
  await client.connect(transport);
  return { transport, client, errors };
}

const exitDetails = (error: unknown) => (error as AhpLocalError).details as unknown as StdioExitDetails;

describe("StdioClientTransport: round trips", () => {
  it("handshakes with a spawned harness and matches answers to requests", async () => {
    const { transport, client } = await connect(nodeFixture("harness.mjs"));
    expect(client.handshakeResponse?.protocol_version).toBe("2.4");
    expect(transport.info).toEqual({ transport: "stdio", remote: `pid:${transport.pid}` });
    expect(await client.send("pre_action", { n: 7 })).toEqual({ decision: "allow", metadata: { n: 7 } });
  });

  it("answers 1000 concurrent in-flight requests, each matched by id (out of order)", async () => {
    const { client } = await connect(nodeFixture("harness.mjs"));
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, n) => client.send("pre_action", n % 3 === 0 ? { do: "delay", ms: (n * 7) % 20, n } : { n })),
    );
    answers.forEach((answer, n) => expect(answer).toEqual({ decision: "allow", metadata: { n } }));
  });

  it("writes every message as one line ending in \\n, escaping newlines, splitting only on \\n (item 83)", async () => {
    const { client } = await connect(nodeFixture("raw-harness.mjs"));
    const text = "line one\nline two\r\nsep\u2028para\u2029end é 😀";
    const decision = await client.send("pre_action", { text });
    const raw = (decision as unknown as { metadata: { raw: string } }).metadata.raw;
    expect(raw).not.toMatch(/[\r\n]/);
    const parsed = JSON.parse(raw) as { jsonrpc: string; id: string; method: string; params: { payload: { text: string } } };
    expect(parsed).toMatchObject({ jsonrpc: "2.0", method: "ahp/event" });
    expect(typeof parsed.id).toBe("string");
    expect(parsed.params.payload.text).toBe(text);
  });

  it("skips non-JSON stdout lines and responses with unknown ids, reporting them (item 84)", async () => {
    const { client, errors } = await connect(nodeFixture("raw-harness.mjs", "noisy"));
    const answers = await Promise.all([1, 2, 3].map((n) => client.send("pre_action", { n })));
    for (const answer of answers) expect(answer.decision).toBe("allow");
    // 4 exchanges (handshake + 3): each had one junk line and one unknown id.
    expect(errors.filter((e) => AhpError.isInstance(e) && e.code === -32700)).toHaveLength(4);
    expect(errors.filter((e) => /unknown id/.test(e.message))).toHaveLength(4);
    expect(client.isHandshaken).toBe(true);
  });
});

describe("StdioClientTransport: the harness goes away", () => {
  it("fails every pending request at once when the harness exits mid-request (exit code + stderr tail)", async () => {
    const { client, transport } = await connect(nodeFixture("harness.mjs"), { timeoutMs: 30_000 });
    // The slow answer would come after the test's own limit, and the client's timeout later still:
    // both calls fail only because the harness exited.
    const slow = client.send("pre_action", { do: "delay", ms: 600_000 });
    const crash = client.send("pre_action", { do: "exit", code: 3 });
    const results = await Promise.allSettled([slow, crash]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      const error = (result as PromiseRejectedResult).reason as AhpLocalError;
      expect(AhpLocalError.isInstance(error)).toBe(true);
      expect(error.code).toBe("CONNECTION_CLOSED");
      expect(error.message).toMatch(/exited with code 3/);
      expect(exitDetails(error)).toMatchObject({ exitCode: 3, signal: null });
      expect(exitDetails(error).stderrTail).toContain("fatal: harness exiting with code 3");
    }
    const cause = await client.closed;
    expect(exitDetails(cause).exitCode).toBe(3);
    expect(transport.exitCode).toBe(3);
    // Later calls fail with the same cause instead of hanging.
    await expect(client.send("pre_action", { n: 1 })).rejects.toMatchObject({ code: "CONNECTION_CLOSED" });
  });

  it("fails a write to a harness that stopped reading with the harness's exit cause, not EPIPE", async () => {
    let stdinClosed!: () => void;
    const closed = new Promise<void>((resolve) => (stdinClosed = resolve));
    const transport = new StdioClientTransport({
      ...nodeFixture("closes-stdin.mjs"),
      stderr: (chunk) => {
        if (String(chunk).includes("stdin closed")) stdinClosed();
      },
    });
    open.push(transport);
    await transport.start();
    await closed; // the child has closed its stdin
    const error = await transport.send({ jsonrpc: "2.0", method: "ahp/event", params: {} }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "CONNECTION_CLOSED" });
    expect((error as Error).message).toMatch(/exited with code 5/);
    expect(exitDetails(error)).toMatchObject({ exitCode: 5, signal: null });
    expect(exitDetails(error).stderrTail).toContain("stopped reading");
  });

  it("reports a harness killed by SIGKILL with the signal", async () => {
    const { client } = await connect(nodeFixture("harness.mjs"), { timeoutMs: 30_000 });
    const error = await client.send("pre_action", { do: "sigkill" }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "CONNECTION_CLOSED" });
    expect((error as Error).message).toMatch(/killed by signal SIGKILL/);
    expect(exitDetails(error)).toMatchObject({ exitCode: null, signal: "SIGKILL" });
    expect(exitDetails(error).stderrTail).toContain("about to be killed");
  });

  it("fails the handshake with the exit cause when the harness exits before answering", async () => {
    const transport = new StdioClientTransport({ ...nodeFixture("exit-early.mjs"), stderr: "ignore" });
    const client = new AhpClient({ timeoutMs: 30_000 });
    const error = await client.connect(transport).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "CONNECTION_CLOSED" });
    expect(exitDetails(error)).toMatchObject({ exitCode: 2, signal: null });
    expect(exitDetails(error).stderrTail).toContain("config error: missing policy file");
    expect((error as Error).message).toContain("(stderr: config error: missing policy file)");
  });

  it("rejects start() with TRANSPORT_ERROR (ENOENT) when the command does not exist, and fires onclose once", async () => {
    const transport = new StdioClientTransport({ command: "ahp-no-such-harness-command" });
    const closes: Array<Error | undefined> = [];
    transport.onclose = (e) => closes.push(e);
    const error = await transport.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(AhpLocalError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "TRANSPORT_ERROR", details: { code: "ENOENT" } });
    expect((error as Error).message).toContain("ahp-no-such-harness-command");
    expect(closes).toEqual([error]);
    expect(await transport.closed).toBe(error);
    await transport.close(); // idempotent, no second onclose
    expect(closes).toHaveLength(1);
    await expect(transport.send({ jsonrpc: "2.0", method: "ahp/event", params: {} })).rejects.toBe(error);
  });

  it("rejects AhpClient.connect with the spawn error", async () => {
    const client = new AhpClient();
    await expect(client.connect(new StdioClientTransport({ command: "ahp-no-such-harness-command" }))).rejects.toMatchObject({
      code: "TRANSPORT_ERROR",
    });
    expect(await client.closed).toMatchObject({ code: "TRANSPORT_ERROR" });
  });

  it("rejects bad options and a second start()", async () => {
    expect(() => new StdioClientTransport({ command: "" })).toThrow(/command/);
    expect(() => new StdioClientTransport({ command: "x", closeGraceMs: -1 })).toThrow(/closeGraceMs/);
    expect(() => new StdioClientTransport({ command: "x", stderrTailBytes: Number.NaN })).toThrow(/stderrTailBytes/);
    expect(() => new StdioClientTransport({ command: "x", stderr: "loud" as never })).toThrow(/stderr/);
    const { transport } = await connect(nodeFixture("harness.mjs"));
    await expect(transport.start()).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("StdioClientTransport: close()", () => {
  it("ends stdin and resolves once a well-behaved harness exited, with a clean onclose", async () => {
    // A grace longer than the test's own limit: exit code 0 and no signal mean the harness left by itself.
    const { transport, client } = await connect({ ...nodeFixture("harness.mjs"), closeGraceMs: 60_000 });
    const closes: Array<Error | undefined> = [];
    const previous = transport.onclose;
    transport.onclose = (e) => {
      closes.push(e);
      previous?.(e);
    };
    await Promise.all([transport.close(), transport.close()]);
    expect(transport.exitCode).toBe(0);
    expect(transport.signalCode).toBeNull();
    expect(closes).toEqual([undefined]);
    expect(await client.closed).toBeUndefined();
    await transport.close();
    expect(closes).toHaveLength(1);
  });

  it("sends SIGTERM to a harness that ignores the end of stdin", async () => {
    const ready = deferred();
    const transport = new StdioClientTransport({
      ...nodeFixture("stubborn.mjs"),
      // Long enough that the SIGTERM's effect is seen before a second grace period could end and
      // escalate, even when a busy machine is slow to report the child's exit.
      closeGraceMs: 2000,
      stderr: (text) => text.includes("ready") && ready.resolve(),
    });
    const notices: Error[] = [];
    transport.onerror = (e) => notices.push(e);
    await transport.start();
    await ready.promise;
    const start = performance.now();
    await transport.close();
    expect(since(start)).toBeGreaterThanOrEqual(1980); // the grace period was given first
    expect(transport.signalCode).toBe("SIGTERM");
    expect(notices.map((e) => e.message)).toEqual([expect.stringContaining("sending SIGTERM")]);
  });

  it("escalates to SIGKILL when the harness also ignores SIGTERM", async () => {
    const ready = deferred();
    let stderr = "";
    const transport = new StdioClientTransport({
      ...nodeFixture("stubborn.mjs", "ignore-term"),
      closeGraceMs: 200,
      stderr: (text) => {
        stderr += text;
        if (stderr.includes("ready")) ready.resolve();
      },
    });
    const notices: Error[] = [];
    transport.onerror = (e) => notices.push(e);
    const closes: Array<Error | undefined> = [];
    transport.onclose = (e) => closes.push(e);
    await transport.start();
    await ready.promise;
    const start = performance.now();
    await transport.close();
    expect(since(start)).toBeGreaterThanOrEqual(380); // two grace periods
    expect(transport.signalCode).toBe("SIGKILL");
    expect(notices.map((e) => e.message)).toEqual([expect.stringContaining("sending SIGTERM"), expect.stringContaining("sending SIGKILL")]);
    expect(transport.stderrTail).toContain("ignoring SIGTERM");
    expect(closes).toEqual([undefined]); // we asked for the close: not an error
  });

  it("closes before start() without spawning anything", async () => {
    const transport = new StdioClientTransport({ command: "ahp-never-spawned" });
    await transport.close();
    expect(transport.pid).toBeUndefined();
    expect(await transport.closed).toBeUndefined();
  });
});

describe("StdioClientTransport: stderr", () => {
  it("hands stderr to a callback as text and never mixes it into the JSON channel", async () => {
    let stderr = "";
    const sawAll = deferred();
    const { client, errors } = await connect({
      ...nodeFixture("harness.mjs"),
      stderr: (text) => {
        stderr += text;
        if (stderr.includes("log line 499 ")) sawAll.resolve();
      },
    });
    // The harness writes 500 stderr lines that look like JSON-RPC while answering.
    expect(await client.send("pre_action", { do: "log", lines: 500 })).toEqual({ decision: "allow", metadata: { logged: 500 } });
    expect(await client.send("pre_action", { n: 1 })).toEqual({ decision: "allow", metadata: { n: 1 } });
    await sawAll.promise; // stderr is another pipe: its bytes may trail the answers
    expect(stderr).toContain('log line 499 {"jsonrpc":"2.0","id":"fake"}');
    expect(errors).toEqual([]);
  });

  it("exposes stderr as a stream with stderr: 'pipe'", async () => {
    const transport = new StdioClientTransport({ ...nodeFixture("harness.mjs"), stderr: "pipe" });
    let text = "";
    transport.stderr!.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
    const client = new AhpClient({ timeoutMs: WAIT_MS });
    open.push(client);
    await client.connect(transport);
    await client.send("pre_action", { do: "log", lines: 3 });
    await client.close();
    expect(text).toContain("harness ready");
    expect(text).toContain("log line 2");
  });

  it("keeps only the last bytes of stderr in the tail, even when ignored", async () => {
    const { client, transport } = await connect({ ...nodeFixture("harness.mjs"), stderr: "ignore", stderrTailBytes: 64 });
    await client.send("pre_action", { do: "log", lines: 100 });
    const tail = transport.stderrTail;
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(64);
    expect(tail.endsWith('log line 99 {"jsonrpc":"2.0","id":"fake"}\n')).toBe(true);
  });

  it("passes stderr through to this process's stderr with stderr: 'inherit'", async () => {
    // Two processes started one after the other: on a busy machine that takes far longer than usual.
    const result = await runNode(fixture("inherit-driver.mjs"), [fixture("harness.mjs")], { deadlineMs: WAIT_MS });
    expect(result.exitedInTime).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe('{"decision":"allow","metadata":{"logged":2}}');
    expect(result.stderr).toContain("log line 1");
  });
});

describe("StdioClientTransport: limits and backpressure", () => {
  it("refuses an oversized outgoing message locally; the connection keeps working", async () => {
    const { client } = await connect({ ...nodeFixture("harness.mjs"), maxMessageBytes: 4096 });
    await expect(client.send("pre_action", { blob: "y".repeat(10_000) })).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
    expect(await client.send("pre_action", { n: 2 })).toEqual({ decision: "allow", metadata: { n: 2 } });
  });

  it("reports an oversized answer from the harness, fails that request, and keeps the connection", async () => {
    const { client, errors } = await connect({ ...nodeFixture("harness.mjs"), maxMessageBytes: 4096 }, { timeoutMs: 30_000 });
    // MESSAGE_TOO_LARGE, not the 30 s TIMEOUT: the request failed as soon as the answer was refused.
    await expect(client.send("pre_action", { do: "big", bytes: 50_000 })).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
    expect(errors.some((e) => AhpError.isInstance(e) && e.code === -32002)).toBe(true);
    expect(await client.send("pre_action", { n: 3 })).toEqual({ decision: "allow", metadata: { n: 3 } });
  });

  it("gets a clear error when a request exceeds the harness's limit; the connection keeps working", async () => {
    const { client } = await connect(nodeFixture("harness.mjs", JSON.stringify({ maxMessageBytes: 4096 })), { timeoutMs: 30_000 });
    const error = await client.send("pre_action", { blob: "z".repeat(10_000) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(AhpError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: -32002 });
    expect((error as Error).message).toMatch(/too large/i);
    expect(await client.send("pre_action", { n: 4 })).toEqual({ decision: "allow", metadata: { n: 4 } });
  });

  it("waits for the pipe to drain instead of buffering without bound when the harness does not read", async () => {
    const ready = deferred();
    const transport = new StdioClientTransport({
      ...nodeFixture("stubborn.mjs"),
      closeGraceMs: 100,
      stderr: (text) => text.includes("ready") && ready.resolve(),
    });
    open.push(transport);
    transport.onerror = () => {};
    await transport.start();
    await ready.promise;
    const line = "q".repeat(16 * 1024);
    let written = 0;
    const sends = Array.from({ length: 200 }, () =>
      transport.send({ jsonrpc: "2.0", method: "ahp/event", params: { line } }).then(
        () => void written++,
        () => undefined,
      ),
    );
    // 200 x 16 KiB = 3.2 MiB offered; a pipe holds ~64 KiB, so only a handful can be written.
    expect(await untilSteady(() => written, "the count of sends written")).toBeLessThan(20);
    await transport.close();
    await Promise.all(sends);
  });
});
