/**
 * Every server limit that acts says so: `ahp serve` counts it in
 * `ahp_limit_rejections_total{transport,limit}` and writes one `limit` log line with the limit,
 * its value and the peer (never the payload). Each limit is tripped over a real transport
 * against a real `ahp serve` process with low limits, then /metrics is scraped.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { HarnessProcess, type LogLine } from "../src/index.js";

const harnesses: HarnessProcess[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const h of harnesses.splice(0)) await h.dispose();
});

async function start(options: Parameters<typeof HarnessProcess.start>[0]): Promise<HarnessProcess> {
  const h = await HarnessProcess.start({ ...options, args: [...(options.args ?? []), "--metrics", "127.0.0.1:0"] });
  harnesses.push(h);
  expect(await h.waitForLogs(() => h.logs.some((l) => l.msg === "listening" && l.transport === "metrics"), 10_000)).toBe(true);
  return h;
}

const SECRET = "payload-secret-7f3a";

const event = (id: string, extra: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "ahp/event",
  params: {
    event_type: "pre_action",
    session_id: "s",
    agent_id: "a",
    timestamp: "t",
    depth: 0,
    payload: { tool_name: "bash", arguments: { command: `echo ${SECRET}` } },
    ...extra,
  },
});

const nested = (depth: number) => `{"jsonrpc":"2.0","id":"deep","method":"ahp/event","params":${"[".repeat(depth)}${"]".repeat(depth)}}`;

function metricsUrl(h: HarnessProcess): string {
  const line = h.logs.find((l) => l.msg === "listening" && l.transport === "metrics");
  return String(line!.url);
}

/** The counter's value for one transport and limit (0 when the series is absent). */
async function rejections(h: HarnessProcess, transport: string, limit: string): Promise<number> {
  const text = await (await fetch(metricsUrl(h))).text();
  const match = new RegExp(`^ahp_limit_rejections_total\\{transport="${transport}",limit="${limit}"\\} (\\d+)$`, "m").exec(text);
  return match === null ? 0 : Number(match[1]);
}

const limitLines = (h: HarnessProcess, transport: string, limit: string): LogLine[] =>
  h.logs.filter((l) => l.msg === "limit" && l.transport === transport && l.limit === limit);

/** Waits for the limit's log line, then checks it and the counter. */
async function expectReported(h: HarnessProcess, transport: string, limit: string, value: number, min = 1): Promise<LogLine> {
  expect(await h.waitForLogs(() => limitLines(h, transport, limit).length >= min, 10_000), `${transport} ${limit} logged`).toBe(true);
  const lines = limitLines(h, transport, limit);
  const line = lines[0]!;
  expect(line.level).toBe("warn");
  expect(line.value).toBe(value);
  expect(typeof line.action).toBe("string");
  expect(JSON.stringify(lines)).not.toContain(SECRET);
  // Every report is counted; the lines are aggregated per interval, each with the number of reports it stands for.
  const reports = () => limitLines(h, transport, limit).reduce((sum, l) => sum + (typeof l.count === "number" ? l.count : 1), 0);
  expect(line.count).toBe(1);
  expect(await rejections(h, transport, limit)).toBeGreaterThanOrEqual(reports());
  return line;
}

function unixSocket(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(path, () => resolve(s));
    s.once("error", reject);
    sockets.push(s);
  });
}

/** Collects what a socket receives. */
function received(s: Socket): { text: string } {
  const out = { text: "" };
  s.setEncoding("utf8").on("data", (chunk: string) => (out.text += chunk));
  return out;
}

function tcp(url: string): Promise<Socket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect(Number(u.port), u.hostname, () => resolve(s));
    s.once("error", reject);
    sockets.push(s);
  });
}

function until(test: () => boolean, timeoutMs: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const check = setInterval(() => {
      if (test()) {
        clearInterval(check);
        resolve();
      } else if (Date.now() - started > timeoutMs) {
        clearInterval(check);
        reject(new Error(`timed out waiting for ${what}`));
      }
    }, 20);
  });
}

describe("limit reports in logs and metrics", () => {
  it("Unix socket: connections, in-flight, message size, JSON depth, batch size and event depth", async () => {
    const h = await start({
      unix: true,
      args: ["--max-connections", "2", "--max-in-flight", "2", "--batch-size", "2", "--max-depth", "2"],
    });
    const path = h.urls.unix!;
    expect(await rejections(h, "unix", "max_connections")).toBe(0);

    await unixSocket(path);
    await unixSocket(path);
    // At the cap the newcomer is served: the connection idle the longest (the first) makes room.
    const a = await unixSocket(path);
    const fromA = received(a);
    const line = await expectReported(h, "unix", "max_connections", 2);
    // (Which idle connection went is not asserted: the harness's start-up may hold one of its own.)
    expect(line.action).toBe("closed_longest_idle");

    // A pipelined burst past --max-in-flight 2 (answers wait for their audit record).
    a.write(Array.from({ length: 20 }, (_, i) => `${JSON.stringify(event(`p-${i}`))}\n`).join(""));
    expect((await expectReported(h, "unix", "max_in_flight", 2)).action).toBe("paused_reading");
    await until(() => (fromA.text.match(/"id":"p-/g) ?? []).length === 20, 60_000, "every pipelined answer");

    a.write(
      `${JSON.stringify({ jsonrpc: "2.0", id: "b", method: "ahp/batch", params: { events: [1, 2, 3].map((i) => event(`e${i}`).params) } })}\n`,
    );
    const batch = await expectReported(h, "unix", "batch_size", 2);
    expect(batch.action).toBe("answered_error");
    expect(typeof batch.connection).toBe("number");

    a.write(`${JSON.stringify(event("d", { depth: 3 }))}\n`);
    await expectReported(h, "unix", "max_depth", 2);

    a.write(`${nested(200)}\n`);
    await expectReported(h, "unix", "max_json_depth", 128);

    const big = JSON.stringify(event("big", { payload: { tool_name: "bash", arguments: { blob: "x".repeat(9 * 1024 * 1024) } } }));
    a.write(`${big}\n`);
    await expectReported(h, "unix", "max_message_bytes", 8 * 1024 * 1024);
    await until(() => fromA.text.includes('"id":"big"'), 60_000, "the answer to the oversized message");
    expect(h.alive).toBe(true);
  });

  it("HTTP: body size, JSON depth, request timeout, header size, in-flight (pipelining) and connections", async () => {
    const h = await start({ http: true, args: ["--header-timeout-ms", "300", "--max-in-flight", "2", "--max-connections", "3"] });
    const url = h.urls.http!;
    const post = (body: string) => fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, keepalive: false });

    // The harness answers 413 and closes without reading the rest of the body: a client still
    // writing it may see the connection reset (EPIPE) before it reads that answer, which is a
    // matter of timing. Either way the limit is reported, and the harness serves the next request.
    const oversized = await post(JSON.stringify(event("x", { payload: { blob: "y".repeat(3 * 1024 * 1024) } }))).then(
      (r) => r.status,
      (error: unknown) => String((error as { cause?: { code?: string } }).cause?.code ?? error),
    );
    expect(oversized === 413 || oversized === "EPIPE" || oversized === "ECONNRESET").toBe(true);
    expect((await expectReported(h, "http", "max_body_bytes", 2 * 1024 * 1024)).action).toBe("answered_413_closed");

    expect((await post(nested(200))).status).toBe(400);
    await expectReported(h, "http", "max_json_depth", 128);

    const slow = await tcp(url);
    slow.write("POST /ahp HTTP/1.1\r\nHost: h\r\n");
    const timeout = await expectReported(h, "http", "request_timeout", 300);
    expect(timeout.action).toBe("answered_408_closed");
    expect(timeout.remote).toBe("127.0.0.1");

    const big = await tcp(url);
    const bigAnswer = received(big);
    big.write(`POST /ahp HTTP/1.1\r\nHost: h\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect((await expectReported(h, "http", "max_header_bytes", 16_384)).action).toBe("answered_431_closed");
    await until(() => bigAnswer.text.startsWith("HTTP/1.1 431"), 60_000, "the 431 answer");

    const piped = await tcp(url);
    const answers = received(piped);
    const body = JSON.stringify(event("pipe"));
    const request = `POST /ahp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    piped.write(request.repeat(6));
    expect((await expectReported(h, "http", "max_in_flight", 2)).action).toBe("answered_503");
    await until(() => (answers.text.match(/HTTP\/1\.1 /g) ?? []).length === 6, 60_000, "six pipelined answers");
    expect(answers.text).toContain("HTTP/1.1 503");

    // Open connections (piped, maybe a kept-alive fetch one) until one is dropped at --max-connections 3.
    for (let i = 0; i < 5 && limitLines(h, "http", "max_connections").length === 0; i++) {
      await tcp(url).catch(() => undefined);
      await h.waitForLogs(() => limitLines(h, "http", "max_connections").length > 0, 300);
    }
    expect((await expectReported(h, "http", "max_connections", 3)).action).toBe("closed_longest_idle");
  });

  it("WebSocket: connections, in-flight, message size, upgrade timeout and a peer that does not read", async () => {
    const h = await start({
      ws: true,
      args: ["--max-connections", "2", "--max-in-flight", "2", "--header-timeout-ms", "300", "--stall-timeout-ms", "500"],
    });
    const url = h.urls.ws!;
    const open = () =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url);
        ws.once("open", () => resolve(ws));
        ws.once("error", reject);
      });

    const reader = await open();
    let got = 0;
    reader.on("message", () => got++);
    for (let i = 0; i < 20; i++) reader.send(JSON.stringify(event(`w-${i}`)));
    expect((await expectReported(h, "ws", "max_in_flight", 2)).action).toBe("paused_reading");
    await until(() => got === 20, 60_000, "every WebSocket answer");

    const second = await open();
    // At the cap the newcomer is served: the connection idle the longest makes room (closed 1001).
    const sender = await open();
    expect((await expectReported(h, "ws", "max_connections", 2)).action).toBe("closed_longest_idle");
    second.close();

    const slow = await tcp(url.replace(/^ws:/, "http:"));
    slow.write("GET /ahp HTTP/1.1\r\nHost: h\r\n");
    await expectReported(h, "ws", "request_timeout", 300);
    slow.destroy();

    sender.send("x".repeat(8 * 1024 * 1024 + 1));
    expect((await expectReported(h, "ws", "max_message_bytes", 8 * 1024 * 1024)).action).toBe("closed_1009");
    await until(() => sender.readyState === WebSocket.CLOSED, 30_000, "the oversized sender to be closed");

    // A peer that stops reading while its answers pile up is dropped at the stall timeout.
    const stalled = await open();
    stalled.on("error", () => undefined);
    (stalled as unknown as { _socket: Socket })._socket.pause();
    const pad = "x".repeat(8000);
    for (let i = 0; i < 1000; i++) stalled.send(JSON.stringify(event(`${pad}-${i}`)));
    // Dropped by the WebSocket's own drain deadline or by the listener's write-stall watch, whichever sees it first.
    expect(["dropped", "closed_write_stall"]).toContain((await expectReported(h, "ws", "outbound_stall", 500)).action);
    stalled.terminate();
  });

  it("stdio: a pipelined burst past --max-in-flight", async () => {
    const h = await start({ stdio: true, args: ["--max-in-flight", "2"] });
    h.child.stdin!.write(Array.from({ length: 20 }, (_, i) => `${JSON.stringify(event(`s-${i}`))}\n`).join(""));
    expect((await expectReported(h, "stdio", "max_in_flight", 2)).action).toBe("paused_reading");
  });
});
