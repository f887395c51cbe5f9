import { describe, expect, it } from "vitest";
import { AhpClient, AhpServer, createLinkedPair, type AhpEvent } from "../src/index.js";
import { until, WAIT_MS } from "./wait.js";

const post = (n: number, session = "s"): AhpEvent => ({
  event_type: "post_action",
  session_id: session,
  agent_id: "a",
  timestamp: "2026-01-01T00:00:00Z",
  depth: 0,
  payload: { n },
});

async function pair(server: AhpServer) {
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient();
  await client.connect(agentSide);
  return client;
}

describe("AhpServer lifecycle", () => {
  it("close() lets received notifications reach their handler before closing", async () => {
    const seen: number[] = [];
    const server = new AhpServer({
      handlers: {
        onNotification: async (event) => {
          await new Promise((r) => setTimeout(r, 20));
          seen.push((event.payload as { n: number }).n);
        },
      },
    });
    const client = await pair(server);
    for (let n = 1; n <= 5; n++) await client.notify(post(n));
    await client.close();
    await server.close();
    expect(seen).toEqual([1, 2, 3, 4, 5]);
  });

  it("close() aborts handlers still running after the grace period", async () => {
    let aborted: unknown;
    let started = false;
    const server = new AhpServer({
      handlerTimeoutMs: 0,
      handlers: {
        onEvent: (_e, ctx) =>
          new Promise((_, reject) => {
            started = true;
            ctx.signal.addEventListener("abort", () => {
              aborted = ctx.signal.reason;
              reject(ctx.signal.reason);
            });
          }),
      },
    });
    const client = await pair(server);
    const pending = client.send("pre_action", {}).catch((e: unknown) => e);
    await until(() => started, "the handler running");
    const closing = performance.now();
    await server.close({ graceMs: 30 });
    const elapsed = performance.now() - closing;
    // The handler had its grace period, and close() did not wait for the default one (2 s).
    expect(elapsed).toBeGreaterThanOrEqual(25);
    expect(elapsed).toBeLessThan(2000);
    expect(aborted).toBeInstanceOf(Error);
    expect(String((await pending) as Error)).toMatch(/Connection closed/);
  });

  it("reports stream connections opening and closing, with the cause", async () => {
    const events: string[] = [];
    const server = new AhpServer({
      onconnection: (c) => events.push(`open ${c.id}`),
      ondisconnect: (c, error) => events.push(`close ${c.id} ${error?.message ?? "clean"}`),
      handlers: { onEvent: () => ({ decision: "allow" }) },
    });
    const [a1, h1] = createLinkedPair();
    const [a2, h2] = createLinkedPair();
    const c1 = await server.connect(h1);
    const c2 = await server.connect(h2);
    await a1.start();
    await a2.start();
    await a1.close();
    a2.fail(new Error("peer vanished"));
    await until(() => events.length >= 4, "both connections reported closed");
    expect(events).toEqual([`open ${c1.id}`, `open ${c2.id}`, `close ${c1.id} clean`, `close ${c2.id} peer vanished`]);
    await server.close();
    expect(events).toHaveLength(4);
  });

  it("whenIdle() waits for agents to leave and their work to finish", async () => {
    let delivered = false;
    const server = new AhpServer({
      handlers: {
        onNotification: async () => {
          await new Promise((r) => setTimeout(r, 20));
          delivered = true;
        },
      },
    });
    expect(await server.whenIdle(10)).toBe(true);
    const client = await pair(server);
    expect(await server.whenIdle(20)).toBe(false);
    await client.notify(post(1));
    const idle = server.whenIdle(WAIT_MS);
    await client.close();
    expect(await idle).toBe(true);
    expect(delivered).toBe(true);
    expect(server.pendingWork).toBe(0);
    await server.close();
  });
});

describe("AhpServer notifications", () => {
  it("a notification behind an async one of the same session waits for it, even with a synchronous handler", async () => {
    const log: string[] = [];
    const server = new AhpServer({
      handlers: {
        onNotification: (event) => {
          const n = (event.payload as { n: number }).n;
          log.push(`start ${n}`);
          if (n % 2 === 1) {
            // Odd ones are slow and asynchronous; even ones return at once.
            return new Promise<void>((resolve) =>
              setTimeout(() => {
                log.push(`end ${n}`);
                resolve();
              }, 20),
            );
          }
          log.push(`end ${n}`);
          return undefined;
        },
      },
    });
    const client = await pair(server);
    for (let n = 0; n < 5; n++) await client.notify(post(n));
    expect(await server.whenIdle(0)).toBe(false);
    await client.close();
    expect(await server.whenIdle(WAIT_MS)).toBe(true);
    expect(log).toEqual(["start 0", "end 0", "start 1", "end 1", "start 2", "end 2", "start 3", "end 3", "start 4", "end 4"]);
    await server.close();
  });

  it("another session's notification is not held up behind a slow one", async () => {
    const done: string[] = [];
    const server = new AhpServer({
      handlers: {
        onNotification: async (event) => {
          // The slow session's handler finishes only once the other session's was handled: if
          // that one were held up behind it, this wait would fail.
          if (event.session_id === "slow") await until(() => done.includes("fast"), "the fast session's notification handled");
          done.push(event.session_id);
        },
      },
    });
    const client = await pair(server);
    await client.notify(post(1, "slow"));
    await client.notify(post(2, "fast"));
    await client.close();
    expect(await server.whenIdle(WAIT_MS)).toBe(true);
    expect(done).toEqual(["fast", "slow"]);
    await server.close();
  });

  it("reports a failing handler through onerror, synchronous or not, and keeps going", async () => {
    const errors: string[] = [];
    const seen: number[] = [];
    const server = new AhpServer({
      onerror: (error) => errors.push(error.message),
      handlers: {
        onNotification: (event) => {
          const n = (event.payload as { n: number }).n;
          seen.push(n);
          if (n === 1) throw new Error("sync boom");
          if (n === 2) return Promise.reject(new Error("async boom"));
          return undefined;
        },
      },
    });
    const client = await pair(server);
    for (let n = 1; n <= 3; n++) await client.notify(post(n));
    await client.close();
    expect(await server.whenIdle(WAIT_MS)).toBe(true);
    expect(seen).toEqual([1, 2, 3]);
    expect(errors).toEqual([expect.stringContaining("sync boom"), expect.stringContaining("async boom")]);
    await server.close();
  });
});
