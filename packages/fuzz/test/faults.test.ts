/**
 * Fault injection and resource exhaustion against `ahp serve` (built-in default policy, audit
 * log on). Each attack runs while a well-behaved agent on another connection keeps sending
 * `pre_action` events; the oracle of every test: that agent gets every answer right (its p99
 * during the attack is printed), the harness stays alive with resident memory under a bound,
 * its audit log verifies, and the limit that stopped the attack says so in the harness's logs.
 * Limits are set low through `ahp serve` flags so that each attack trips them quickly.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { goodAgent, HarnessProcess, HttpRpc, StreamRpc, WsRpc, type GoodAgentResult, type LogLine } from "../src/index.js";

const MIB = 1024 * 1024;
const RSS_BOUND = 400 * MIB;
const harnesses: HarnessProcess[] = [];

afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.dispose();
});

async function start(options: Parameters<typeof HarnessProcess.start>[0]): Promise<HarnessProcess> {
  const h = await HarnessProcess.start(options);
  harnesses.push(h);
  return h;
}

/** Runs `attack` while a good agent sends events on its own connection; returns the agent's result. */
async function underAttack(
  connectGood: () => Promise<{ close(): Promise<void> }> | Promise<HttpRpc | StreamRpc | WsRpc>,
  attack: () => Promise<void>,
) {
  const rpc = (await connectGood()) as HttpRpc | StreamRpc | WsRpc;
  const stop = new AbortController();
  const agent = goodAgent(rpc, stop.signal);
  try {
    await attack();
  } finally {
    stop.abort();
  }
  const result = await agent;
  await rpc.close();
  return result;
}

/** The good agent got every answer right, and at least `min` of them during the attack. */
function expectGoodAgentServed(name: string, result: GoodAgentResult, h: HarnessProcess, min = 20): void {
  console.log(`${name}: good agent ${result.latencies.summary()}; harness peak RSS ${(h.peakRssBytes / MIB).toFixed(0)} MiB`);
  expect(result.errors).toEqual([]);
  expect(result.latencies.count).toBeGreaterThanOrEqual(min);
}

async function expectHealthyEnd(h: HarnessProcess): Promise<void> {
  expect(h.alive).toBe(true);
  expect(h.rssBytes()).toBeLessThan(RSS_BOUND);
  expect(h.peakRssBytes).toBeLessThan(RSS_BOUND);
  const { code } = await h.stop();
  expect(code).toBe(0);
  expect(h.strayStderr).toBe("");
  const verified = await h.verifyAudit();
  expect(verified.output).toMatch(/OK/);
  expect(verified.code).toBe(0);
}

const warned = (h: HarnessProcess, pattern: RegExp): LogLine[] =>
  h.warnings().filter((l) => pattern.test(typeof l.error === "string" ? l.error : ""));

/** How many reports the matching lines stand for (limit lines are aggregated per interval and carry `count`). */
const warnedCount = (h: HarnessProcess, pattern: RegExp): number =>
  warned(h, pattern).reduce((sum, l) => sum + (typeof l.count === "number" ? l.count : 1), 0);

/** Samples the harness's memory every 100 ms while `work` runs. */
async function sampled<T>(h: HarnessProcess, work: Promise<T>): Promise<T> {
  const timer = setInterval(() => h.rssBytes(), 100);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
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

describe("fault injection against ahp serve", () => {
  it("HTTP slowloris: 1,000 connections dribbling headers are answered 408 and closed at the header timeout, and logged", async () => {
    const h = await start({ http: true, args: ["--header-timeout-ms", "3000"] });
    const url = new URL(h.urls.http!);
    const slow: Socket[] = [];
    const closedAfter: number[] = [];
    let got408 = 0;
    const result = await underAttack(
      async () => new HttpRpc(h.urls.http!),
      () =>
        sampled(
          h,
          (async () => {
            const began = performance.now();
            await Promise.all(
              Array.from(
                { length: 1000 },
                () =>
                  new Promise<void>((resolve) => {
                    const s = connect(Number(url.port), url.hostname, () => {
                      s.write("POST /ahp HTTP/1.1\r\nHost: harness\r\nContent-Type: application/json\r\n");
                      resolve();
                    });
                    s.on("error", () => resolve());
                    s.on("data", (d: Buffer) => {
                      if (d.toString("latin1").startsWith("HTTP/1.1 408")) got408++;
                    });
                    s.on("close", () => closedAfter.push(performance.now() - began));
                    slow.push(s);
                  }),
              ),
            );
            let n = 0;
            const drip = setInterval(() => {
              n++;
              for (const s of slow) if (!s.destroyed) s.write(`X-Slow-${n}: 1\r\n`);
            }, 250);
            try {
              await until(() => closedAfter.length === 1000, 30_000, "the slow connections to be closed");
            } finally {
              clearInterval(drip);
            }
          })(),
        ),
    );
    expectGoodAgentServed("slowloris", result, h);
    expect(got408).toBe(1000);
    // Cut by the header timeout (3 s, checked every second; each answered 408), not before.
    expect(Math.min(...closedAfter)).toBeGreaterThan(2500);
    // Aggregated: the lines after the first arrive at the end of the 10 s interval, with counts.
    expect(await h.waitForLogs(() => warnedCount(h, /not received in time/) >= 1000, 30_000)).toBe(true);
    expect(warned(h, /not received in time/).length).toBeLessThan(20);
    await expectHealthyEnd(h);
  });

  it("HTTP oversized bodies (declared and chunked) are answered 413 without being buffered, and logged", async () => {
    const h = await start({ http: true });
    const url = new URL(h.urls.http!);
    const statuses: number[] = [];
    const body = Buffer.alloc(3 * MIB, 0x20);
    const post = (chunked: boolean) =>
      new Promise<void>((resolve) => {
        const s = connect(Number(url.port), url.hostname);
        let head = "";
        s.on("data", (d: Buffer) => {
          head += d.toString("latin1");
        });
        s.on("error", () => undefined);
        s.on("close", () => {
          const m = /^HTTP\/1\.1 (\d+)/.exec(head);
          statuses.push(m === null ? 0 : Number(m[1]));
          resolve();
        });
        const headers = chunked ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${body.length}\r\n`;
        s.write(`POST /ahp HTTP/1.1\r\nHost: harness\r\nContent-Type: application/json\r\n${headers}\r\n`);
        if (chunked) {
          for (let i = 0; i < 12; i++) s.write(`40000\r\n${body.subarray(0, 0x40000).toString("latin1")}\r\n`);
          s.end("0\r\n\r\n");
        } else s.end(body);
      });
    const result = await underAttack(
      async () => new HttpRpc(h.urls.http!),
      () =>
        sampled(
          h,
          (async () => {
            for (let round = 0; round < 20; round++) await Promise.all(Array.from({ length: 8 }, (_, i) => post(i % 2 === 1)));
          })(),
        ),
    );
    expectGoodAgentServed("oversized bodies", result, h);
    expect(statuses.length).toBe(160);
    // 413, or (rarely, for a chunked body still being written) the connection reset before the client read the 413.
    expect(statuses.filter((s) => s !== 413 && s !== 0)).toEqual([]);
    // The reset is a race between the harness closing a socket it stopped reading and the client
    // still writing, and it grows with machine load (up to 14 of 160 seen at load 20): most, not
    // all, must be a readable 413.
    const answered = statuses.filter((s) => s === 413).length;
    expect(answered).toBeGreaterThanOrEqual(120);
    expect(await h.waitForLogs(() => warnedCount(h, /exceeds maxBodyBytes/) >= answered, 30_000)).toBe(true);
    await expectHealthyEnd(h);
  });

  it("2,000 idle WebSocket connections past --max-connections 1500: the good agent is served, the longest-idle make room, a few aggregated log lines", async () => {
    const h = await start({ ws: true, args: ["--max-connections", "1500"] });
    const idle: WebSocket[] = [];
    let closedByHarness = 0;
    const result = await underAttack(
      () => WsRpc.open(h.urls.ws!),
      () =>
        sampled(
          h,
          (async () => {
            for (let wave = 0; wave < 10; wave++) {
              await Promise.all(
                Array.from(
                  { length: 200 },
                  () =>
                    new Promise<void>((resolve) => {
                      const ws = new WebSocket(h.urls.ws!);
                      ws.once("open", () => {
                        idle.push(ws);
                        resolve();
                      });
                      ws.once("close", (code) => {
                        if (code === 1001) closedByHarness++;
                      });
                      ws.once("error", () => resolve());
                    }),
                ),
              );
            }
            // Hold them idle for a while with the good agent running.
            await new Promise((r) => setTimeout(r, 2000));
          })(),
        ),
    );
    expectGoodAgentServed("idle WebSocket connections", result, h);
    // Never more than the cap at once: about 500 idle ones were closed to make room.
    const open = idle.filter((ws) => ws.readyState === WebSocket.OPEN).length;
    expect(open).toBeLessThanOrEqual(1500);
    expect(await h.waitForLogs(() => closedByHarness >= 400, 30_000)).toBe(true);
    // Logged aggregated: a handful of lines with counts, not one per connection.
    expect(await h.waitForLogs(() => warned(h, /closed_longest_idle/).length >= 1, 30_000)).toBe(true);
    expect(warned(h, /closed_longest_idle/).length).toBeLessThan(20);
    const closing = idle.filter((ws) => ws.readyState === WebSocket.OPEN).map((ws) => new Promise((r) => ws.once("close", r)));
    for (const ws of idle) ws.close(1000);
    await Promise.all(closing);
    const again = await WsRpc.open(h.urls.ws!);
    await again.close();
    await expectHealthyEnd(h);
  });

  it("a WebSocket agent that never reads is dropped at the stall timeout, and logged; the harness holds a bounded backlog", async () => {
    const h = await start({ ws: true, args: ["--stall-timeout-ms", "2000"] });
    const result = await underAttack(
      () => WsRpc.open(h.urls.ws!),
      () =>
        sampled(
          h,
          (async () => {
            const ws = await new Promise<WebSocket>((resolve, reject) => {
              const s = new WebSocket(h.urls.ws!);
              s.once("open", () => resolve(s));
              s.once("error", reject);
            });
            ws.on("error", () => undefined);
            // Stop reading at the socket: answers pile up on the harness's side.
            (ws as unknown as { _socket: Socket })._socket.pause();
            const pad = "x".repeat(8000);
            for (let i = 0; i < 3000; i++) {
              ws.send(
                JSON.stringify({
                  jsonrpc: "2.0",
                  id: `${pad}-${i}`,
                  method: "ahp/event",
                  params: {
                    event_type: "pre_action",
                    session_id: "s",
                    agent_id: "a",
                    timestamp: "t",
                    depth: 0,
                    payload: { tool_name: "bash" },
                  },
                }),
              );
            }
            expect(await h.waitForLogs(() => warned(h, /not reading|took none of the \d+ bytes/).length >= 1, 20_000)).toBe(true);
            (ws as unknown as { _socket: Socket })._socket.resume();
            ws.terminate();
          })(),
        ),
    );
    expectGoodAgentServed("WebSocket agent that never reads", result, h);
    await expectHealthyEnd(h);
  });

  it("a pipelined flood on one Unix connection (and one that never reads) is throttled by --max-in-flight; every flood request is answered once", async () => {
    const h = await start({ unix: true, args: ["--max-in-flight", "64"] });
    const FLOOD = 30_000;
    const answered = new Set<string>();
    let duplicates = 0;
    const result = await underAttack(
      () => StreamRpc.unix(h.urls.unix!),
      () =>
        sampled(
          h,
          (async () => {
            const silent = connect(h.urls.unix!);
            silent.on("error", () => undefined);
            silent.pause();
            const flood = connect(h.urls.unix!);
            flood.on("error", () => undefined);
            let pending = "";
            flood.setEncoding("utf8").on("data", (chunk: string) => {
              pending += chunk;
              let nl: number;
              while ((nl = pending.indexOf("\n")) !== -1) {
                const id = (JSON.parse(pending.slice(0, nl)) as { id: string }).id;
                pending = pending.slice(nl + 1);
                if (answered.has(id)) duplicates++;
                answered.add(id);
              }
            });
            const line = (who: string, i: number) =>
              `${JSON.stringify({
                jsonrpc: "2.0",
                id: `${who}-${i}`,
                method: "ahp/event",
                params: {
                  event_type: "pre_action",
                  session_id: who,
                  agent_id: who,
                  timestamp: "t",
                  depth: 0,
                  payload: { tool_name: "bash", arguments: { command: "ls" } },
                },
              })}\n`;
            const write = (s: Socket, text: string) => (s.write(text) ? Promise.resolve() : new Promise<void>((r) => s.once("drain", r)));
            const silentDone = (async () => {
              for (let i = 0; i < 10_000; i += 500)
                await write(silent, Array.from({ length: 500 }, (_, k) => line("silent", i + k)).join(""));
            })();
            for (let i = 0; i < FLOOD; i += 500) await write(flood, Array.from({ length: 500 }, (_, k) => line("flood", i + k)).join(""));
            await until(() => answered.size === FLOOD, 60_000, "every flood request to be answered");
            flood.destroy();
            silent.destroy();
            void silentDone;
          })(),
        ),
    );
    // The flood's requests are decided and audited ahead of the good agent's (one read chunk past
    // the in-flight limit is delivered at once), so the good agent gets fewer, slower answers.
    expectGoodAgentServed("Unix pipelined flood", result, h, 3);
    expect(answered.size).toBe(FLOOD);
    expect(duplicates).toBe(0);
    expect(await h.waitForLogs(() => warned(h, /requests in flight on one connection/).length >= 1, 5000)).toBe(true);
    await expectHealthyEnd(h);
  });
});
