/** Server-side limits: requests in flight per connection (the connection limit is in server.test.ts). */
import { connect, type Socket } from "node:net";
import { AhpServer } from "@ahp/core";
import { listenUnix } from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";
import { deferred, tempDir, until } from "./helpers.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const line = (id: string) =>
  `${JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "ahp/event",
    params: { event_type: "pre_action", session_id: "s", agent_id: "a", timestamp: "t", depth: 0, payload: {} },
  })}\n`;

function reader(socket: Socket): { ids: string[]; next: (n: number) => Promise<void> } {
  const ids: string[] = [];
  let buffer = "";
  let waiter: (() => void) | undefined;
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    buffer += chunk;
    let nl: number;
    while ((nl = buffer.indexOf("\n")) !== -1) {
      ids.push((JSON.parse(buffer.slice(0, nl)) as { id: string }).id);
      buffer = buffer.slice(nl + 1);
    }
    waiter?.();
  });
  return {
    ids,
    next: (n) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (ids.length >= n) resolve();
          else waiter = check;
        };
        check();
      }),
  };
}

describe("maxInFlight", () => {
  it("hands a connection's handlers at most maxInFlight requests; the rest wait in order, then are all answered", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.remove());
    const gates: Array<{ resolve: () => void }> = [];
    const seen: string[] = [];
    const limitReached = deferred<void>();
    const server = new AhpServer({
      handlers: {
        onEvent: async (_event, ctx) => {
          seen.push(String(ctx.requestId));
          const gate = deferred<void>();
          gates.push(gate);
          await gate.promise;
          return { decision: "allow" };
        },
      },
    });
    const errors: Error[] = [];
    const listener = await listenUnix(server, {
      path: tmp.path(),
      maxInFlight: 3,
      onerror: (e) => {
        errors.push(e);
        limitReached.resolve();
      },
    });
    cleanups.push(async () => {
      await listener.close();
      await server.close();
    });
    const socket = connect(tmp.path());
    cleanups.push(() => void socket.destroy());
    const answers = reader(socket);
    // Ten requests in one write: they arrive in one chunk.
    socket.write(Array.from({ length: 10 }, (_, i) => line(`r${i}`)).join(""));
    await limitReached.promise;
    expect(errors[0]!.message).toMatch(/3 requests in flight on one connection/);
    expect(seen).toEqual(["r0", "r1", "r2"]);
    // Each answer lets one more request through, in arrival order.
    gates[0]!.resolve();
    await answers.next(1);
    await until(() => seen.length >= 4);
    expect(seen).toEqual(["r0", "r1", "r2", "r3"]);
    for (let i = 1; i < 10; i++) {
      await until(() => gates.length > i);
      gates[i]!.resolve();
    }
    await answers.next(10);
    expect([...answers.ids].sort()).toEqual(Array.from({ length: 10 }, (_, i) => `r${i}`).sort());
    expect(errors).toHaveLength(1); // reported once per connection
  });

  it("refuses a maxInFlight below 1", async () => {
    const tmp = tempDir();
    cleanups.push(() => tmp.remove());
    await expect(listenUnix(new AhpServer(), { path: tmp.path(), maxInFlight: 0 })).rejects.toThrow(/maxInFlight/);
  });
});
