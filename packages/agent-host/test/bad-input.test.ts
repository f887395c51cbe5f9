/** Bad input on the client side of the adapter: each gets its expected answer or close code, never a crash or a hang. */
import { afterEach, describe, expect, it } from "vitest";
import { startHost, type Running } from "./helpers/harness.js";
import { S1_CHAT, S1_URI } from "./helpers/scenario.js";

let run: Running | undefined;
afterEach(async () => {
  await run?.stop();
  run = undefined;
});

describe("bad input", () => {
  it("malformed JSON is answered -32700 with id null; repeated garbage closes with 1008", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "bad1");
    c.send("{not json");
    const answer = await c.next((f) => f.error !== undefined);
    expect(answer).toMatchObject({ id: null, error: { code: -32700 } });
    for (let i = 0; i < 5; i++) c.send("]]]");
    expect((await c.whenClosed()).code).toBe(1008);
  });

  it("a JSON value that is not a JSON-RPC message is -32600; a binary frame closes with 1003", async () => {
    run = await startHost();
    const c = await run.client("viewer-token", "bad2");
    c.send(JSON.stringify({ id: 7, hello: "world" }));
    expect(await c.next((f) => f.id === 7)).toMatchObject({ error: { code: -32600 } });
    c.send(Buffer.from([1, 2, 3]), true);
    expect((await c.whenClosed()).code).toBe(1003);
  });

  it("JSON nested deeper than the limit closes with 1008; an oversized frame closes with 1009", async () => {
    run = await startHost({ limits: { maxJsonDepth: 8, maxFrameBytes: 4096 } });
    const deep = await run.client("viewer-token", "deep");
    deep.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":${"[".repeat(20)}${"]".repeat(20)}}`);
    expect((await deep.whenClosed()).code).toBe(1008);
    const big = await run.client("viewer-token", "big");
    big.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(5000) } }));
    expect((await big.whenClosed()).code).toBe(1009);
  });

  it("unknown methods, unserved methods, wrong channels and bad params get their codes", async () => {
    run = await startHost();
    const agent = await run.agent("s1");
    await agent.send("pre_action", { tool_name: "ls", arguments: {} });
    const c = await run.client("operator-token", "codes");
    await c.api.initialize([]);
    const code = async (method: string, params: unknown) => (await c.raw(method, params)).error?.code as number | undefined;
    expect(await code("nope", { channel: "ahp-root://" })).toBe(-32601);
    expect(await code("createSession", { channel: "ahp-root://" })).toBe(-32601);
    expect(await code("resourceRead", { channel: "ahp-root://" })).toBe(-32601);
    expect(await code("listSessions", { channel: S1_CHAT })).toBe(-32602);
    expect(await code("listSessions", {})).toBe(-32602);
    expect(await code("subscribe", { channel: "https://example.com" })).toBe(-32602);
    expect(await code("subscribe", { channel: "ahp-session:/00000000-0000-5000-8000-000000000000" })).toBe(-32001);
    expect(await code("subscribe", { channel: "ahp-otlp://harness/traces" })).toBe(-32008);
    expect(await code("disposeSession", { channel: S1_URI })).toBe(-32004);
    expect(await code("disposeSession", { channel: "ahp-session:/00000000-0000-5000-8000-000000000000" })).toBe(-32001);
    expect(await code("initialize", { channel: "ahp-root://", protocolVersions: ["1.1.0"], clientId: "codes" })).toBe(-32600);
    expect((await c.raw("completions", { channel: S1_CHAT })).result).toEqual({ items: [] });
    expect((await c.raw("resolveSessionConfig", { channel: S1_URI })).result).toEqual({
      schema: { type: "object", properties: {} },
      values: {},
    });
    expect((await c.raw("fetchTurns", { channel: S1_CHAT })).result).toEqual({});
  });

  it("notifications before initialize are dropped; a clientId of another principal is refused (-32600)", async () => {
    run = await startHost();
    const a = await run.client("viewer-token", "shared");
    a.api.notify("dispatchAction", { channel: "ahp-root://", clientSeq: 1, action: { type: "root/agentsChanged", agents: [] } });
    expect((await a.raw("ping", { channel: "ahp-root://" }, "p0")).result).toBeNull();
    expect(run.host.store.serverSeq).toBe(0);
    await a.api.initialize([]);
    const b = await run.client("approver-token", "shared");
    expect((await b.raw("initialize", { channel: "ahp-root://", protocolVersions: ["1.0.0"], clientId: "shared" }, "i2")).error.code).toBe(
      -32600,
    );
    expect(
      (await b.raw("reconnect", { channel: "ahp-root://", clientId: "shared", lastSeenServerSeq: 0, subscriptions: [] }, "r3")).error.code,
    ).toBe(-32600);
  });

  it("a new connection of the same principal and clientId replaces the old one", async () => {
    run = await startHost();
    const first = await run.client("viewer-token", "same");
    await first.api.initialize([]);
    const second = await run.client("viewer-token", "same");
    await second.api.initialize([]);
    expect((await first.whenClosed()).code).toBe(1008);
  });

  it("a dispatch flood past the per-second limit closes with 1008; malformed dispatches are dropped", async () => {
    run = await startHost({ limits: { maxDispatchPerSecond: 10 } });
    const agent = await run.agent("s1");
    await agent.send("pre_action", { tool_name: "ls", arguments: {} });
    const c = await run.client("operator-token", "flood");
    await c.api.initialize([S1_CHAT]);
    c.api.notify("dispatchAction", { channel: S1_CHAT, clientSeq: "x", action: {} });
    expect((await c.raw("ping", { channel: "ahp-root://" }, "p1")).result).toBeNull();
    for (let i = 0; i < 11; i++) c.api.dispatch(S1_CHAT, { type: "chat/draftChanged", draft: { text: `d${i}`, origin: { kind: "user" } } });
    expect((await c.whenClosed()).code).toBe(1008);
    expect(run.closes.map((x) => x.reason)).toContain("dispatchAction rate limit exceeded");
  });

  it("the subscription limit is enforced (-32602)", async () => {
    run = await startHost({ limits: { maxSubscriptions: 1 } });
    const c = await run.client("viewer-token", "subs");
    await c.api.initialize(["ahp-root://"]);
    expect((await c.raw("subscribe", { channel: "ahp-otlp://harness/logs" }, "s1")).error.code).toBe(-32602);
  });
});
