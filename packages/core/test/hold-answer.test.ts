/**
 * `ctx.holdAnswer(until)`: a call's answer (its result, its failure, and the server's own answer
 * when the handler times out) is not sent before `until` settles. Without a hold nothing changes.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { AhpClient, AhpServer, createLinkedPair, type AhpServerOptions } from "../src/index.js";

async function pair(options: AhpServerOptions) {
  const server = new AhpServer(options);
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const client = new AhpClient({ timeoutMs: 0 });
  await client.connect(agentSide);
  return { server, client };
}

/** A promise with its resolve function. */
function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** An event every handler here answers at once, without a hold. */
const PROBE = { probe: true };
const isProbe = (event: { payload?: unknown }) => (event.payload as { probe?: boolean } | undefined)?.probe === true;

/**
 * A positive sign that a held answer would have arrived by now: an event sent after it, which
 * the handler answers at once, has been answered (the link delivers in order).
 */
const probed = async (client: AhpClient) => expect(await client.send("pre_action", PROBE)).toEqual({ decision: "allow" });

afterEach(() => {
  vi.useRealTimers();
});

describe("AhpHandlerContext.holdAnswer", () => {
  it("holds a synchronous decision until the hold settles", async () => {
    const hold = gate();
    const { server, client } = await pair({
      handlers: {
        onEvent: (event, ctx) => {
          if (isProbe(event)) return { decision: "allow" };
          ctx.holdAnswer!(hold.promise);
          return { decision: "allow" };
        },
      },
    });
    let answered = false;
    const answer = client.send("pre_action", {}).then((d) => {
      answered = true;
      return d;
    });
    await probed(client);
    expect(answered).toBe(false);
    hold.open();
    expect(await answer).toEqual({ decision: "allow" });
    await client.close();
    await server.close();
  });

  it("holds an async result and a failure; a rejected hold releases the answer as well", async () => {
    const holds = [gate(), gate()];
    let call = 0;
    const { server, client } = await pair({
      handlerFailure: "decision",
      handlers: {
        onEvent: async (event, ctx) => {
          if (isProbe(event)) return { decision: "allow" };
          const mine = call++;
          ctx.holdAnswer!(mine === 0 ? holds[0]!.promise : holds[1]!.promise.then(() => Promise.reject(new Error("hold failed"))));
          await Promise.resolve();
          if (mine === 1) throw new Error("boom");
          return { decision: "allow" };
        },
      },
    });
    const seen: string[] = [];
    const first = client.send("pre_action", {}).then((d) => seen.push(`first:${d.decision}`));
    const second = client.send("pre_action", {}).then((d) => seen.push(`second:${d.decision}`));
    await probed(client);
    expect(seen).toEqual([]);
    holds[1]!.open();
    await second;
    expect(seen).toEqual(["second:block"]);
    holds[0]!.open();
    await first;
    expect(seen).toEqual(["second:block", "first:allow"]);
    await client.close();
    await server.close();
  });

  it("holds the server's own answer to a handler that timed out", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const hold = gate();
    const { server, client } = await pair({
      handlerTimeoutMs: 100,
      handlerFailure: "decision",
      handlers: {
        onEvent: (event, ctx) => {
          if (isProbe(event)) return { decision: "allow" };
          ctx.holdAnswer!(hold.promise);
          return new Promise(() => undefined); // never answers
        },
      },
    });
    let answer: unknown;
    const sent = client.send("pre_action", {}).then((d) => (answer = d));
    await probed(client);
    await vi.advanceTimersByTimeAsync(150);
    await probed(client);
    expect(answer).toBeUndefined();
    hold.open();
    await sent;
    expect(answer).toMatchObject({ decision: "block", reason: "Handler error: Timeout after 100ms" });
    await client.close();
    await server.close();
  });

  it("holds each batch element; a synchronous throw after a hold waits too", async () => {
    const hold = gate();
    const { server, client } = await pair({
      handlers: {
        onEvent: (event, ctx) => {
          if (isProbe(event)) return { decision: "allow" };
          ctx.holdAnswer!(hold.promise);
          if ((event.payload as { n: number }).n === 1) throw new Error("bad slot");
          return { decision: "allow" };
        },
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
    let decisions: unknown;
    const sent = client.batch([ev(0), ev(1)]).then((d) => (decisions = d));
    await probed(client);
    expect(decisions).toBeUndefined();
    hold.open();
    await sent;
    expect(decisions).toEqual([{ decision: "allow" }, { decision: "block", reason: "Handler error: bad slot" }]);
    await client.close();
    await server.close();
  });
});
