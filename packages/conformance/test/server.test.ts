/** The scripted harness itself: configuration, script protocol, log and reserved queries. */
import { PassThrough } from "node:stream";
import { AhpLocalError, createLinkedPair } from "@ahp/core";
import {
  ConformanceLog,
  RawFrameQueue,
  WireClient,
  abortableDelay,
  createConformanceServer,
  createNdjsonRawChannel,
  parseConformanceServerConfig,
  readScript,
  request,
  queryParams,
  wireEvent,
  type ConformanceServer,
  type ConformanceServerConfig,
} from "@ahp/conformance";
import { afterEach, describe, expect, it } from "vitest";

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(
  config: ConformanceServerConfig = {},
  errors: Error[] = [],
  wireTimeoutMs = 3000,
): Promise<{ server: ConformanceServer; wire: WireClient }> {
  const server = createConformanceServer(config, { onerror: (error) => errors.push(error) });
  const [agent, side] = createLinkedPair();
  await server.connect(side);
  const wire = await WireClient.open(agent, { timeoutMs: wireTimeoutMs });
  cleanups.push(async () => {
    await wire.close();
    await server.close();
  });
  return { server, wire };
}

const event = (wire: WireClient, payload: unknown, session = "s", type = "pre_action", overrides = {}) =>
  wire.call(request(wire.id("e"), "ahp/event", wireEvent(type, payload, session, overrides)));

describe("configuration", () => {
  it("accepts the documented members and drops undefined ones", () => {
    expect(
      parseConformanceServerConfig({ harnessConfig: { batch_size: 3 }, typedHandlers: true, logLimit: 5, handlerTimeoutMs: undefined }),
    ).toEqual({
      harnessConfig: { batch_size: 3 },
      typedHandlers: true,
      logLimit: 5,
    });
    expect(parseConformanceServerConfig(null)).toEqual({});
    expect(parseConformanceServerConfig(undefined)).toEqual({});
  });

  it("refuses unknown members and wrong types with a clear local error", () => {
    const unknown = (() => {
      try {
        parseConformanceServerConfig({ typedHandler: true });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(AhpLocalError.isInstance(unknown) && unknown.code).toBe("INVALID_ARGUMENT");
    expect((unknown as Error).message).toMatch(/^invalid conformance harness config: .*typedHandler/);
    expect(() => parseConformanceServerConfig({ handlerFailure: "explode" })).toThrow(/handlerFailure/);
    expect(() => parseConformanceServerConfig({ harnessConfig: { max_depth: -1 } })).toThrow(/max_depth/);
    expect(() => parseConformanceServerConfig({ logLimit: 0 })).toThrow(/logLimit/);
    expect(() => createConformanceServer({ compatV1: "yes" } as never)).toThrow(/compatV1/);
  });

  it("passes the configuration to the server", () => {
    const server = createConformanceServer({ harnessConfig: { max_depth: 2 } });
    expect(server.config).toEqual({ max_depth: 2 });
    expect(server.harnessInfo.name).toBe("ahp-server");
    expect(server.conformanceConfig).toEqual({ harnessConfig: { max_depth: 2 } });
  });
});

describe("script protocol", () => {
  it("reads payload.script and reports malformed scripts as handler errors", async () => {
    const { wire } = await harness({ maxScriptDelayMs: 1000 });
    expect(readScript({ other: 1 })).toBeUndefined();
    expect(readScript("text")).toBeUndefined();
    expect(readScript({ script: { result: null } })).toEqual({ script: { result: null }, hasResult: true });
    const cases: Array<[unknown, RegExp]> = [
      [{ delay_ms: -1 }, /^Handler error: invalid conformance script at script\.delay_ms: /],
      [{ delay_ms: 1.5 }, /^Handler error: invalid conformance script at script\.delay_ms: /],
      [{ delay_ms: 5000 }, /^Handler error: invalid conformance script at script\.delay_ms: /],
      [{ throw: 42 }, /^Handler error: invalid conformance script at script\.throw: /],
      ["not an object", /^Handler error: invalid conformance script: /],
    ];
    for (const [script, message] of cases) {
      const response = await event(wire, { script });
      expect((response.error as { message: string }).message).toMatch(message);
    }
  });

  it("delays, throws, returns raw results, echoes and answers decisions, in that order of precedence", async () => {
    const { wire } = await harness();
    const started = Date.now();
    const delayed = await event(wire, { script: { delay_ms: 60, decision: { decision: "block", reason: "late" } } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(delayed.result).toEqual({ decision: "block", reason: "late" });
    expect((await event(wire, { script: { throw: "x", decision: { decision: "allow" } } })).error).toMatchObject({
      message: "Handler error: x",
    });
    expect((await event(wire, { script: { result: { decision: "allow", modified_payload: 1 }, echo: true } })).result).toEqual({
      decision: "allow",
      modified_payload: 1,
    });
    expect((await event(wire, { a: 1, script: { echo: true } })).result).toEqual({ decision: "allow", modified_payload: { a: 1 } });
    expect((await event(wire, { script: {} })).result).toEqual({ decision: "allow" });
  });

  it("a delay is cut short when the connection closes, leaving no timer behind", async () => {
    const controller = new AbortController();
    const reason = new Error("gone");
    const waiting = abortableDelay(60_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    await expect(abortableDelay(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    await expect(abortableDelay(0, new AbortController().signal)).resolves.toBeUndefined();
  });
});

describe("the log and the reserved queries", () => {
  it("records every handler call with how it arrived", async () => {
    const { server, wire } = await harness({ typedHandlers: true });
    await wire.call(
      request("h", "ahp/handshake", {
        protocol_version: "2.4",
        agent_info: { framework: "f", version: "1", capabilities: [] },
        session_id: "s",
        agent_id: "a",
      }),
    );
    await event(wire, {});
    await wire.call(request("b", "ahp/batch", { events: [wireEvent("post_action", {}, "s"), wireEvent("pre_prompt", {}, "s")] }));
    await wire.send({ jsonrpc: "2.0", method: "ahp/event", params: wireEvent("session_end", {}, "s") });
    await wire.call(request(9, "ahp/event", wireEvent("idle", { idle_duration_ms: 1, idle_reason: "r" }, "s")));
    await wire.call(request("q", "ahp/query", queryParams("s", "approval_check", null)));
    const records = await wire.log("s", { min_count: 7 });
    expect(records.map((r) => [r.handler, r.via, r.event_type, r.request_id, r.batch_index, r.batch_size])).toEqual([
      ["handshake", "request", undefined, "h", undefined, undefined],
      ["event", "request", "pre_action", expect.any(String), undefined, undefined],
      ["event", "batch", "post_action", "b", 0, 2],
      ["event", "batch", "pre_prompt", "b", 1, 2],
      ["notification", "notification", "session_end", undefined, undefined, undefined],
      ["typed", "request", "idle", 9, undefined, undefined],
      ["query", "request", undefined, "q", undefined, undefined],
    ]);
    expect(records.every((r) => r.transport === "memory" && r.outcome === "ok" && r.done! > r.seq)).toBe(true);
    expect(server.log.records({ session_id: "s" })).toEqual(records);
  });

  it("keeps at most logLimit records and counts the dropped ones", async () => {
    const { server, wire } = await harness({ logLimit: 3 });
    for (let i = 0; i < 5; i++) await event(wire, { i });
    expect(server.log.records().map((r) => (r.event?.payload as { i: number }).i)).toEqual([2, 3, 4]);
    expect(server.log.dropped).toBe(2);
    expect(() => new ConformanceLog(0)).toThrow(RangeError);
  });

  it("conformance/log waits for running handlers unless settle is false, and gives up after timeout_ms", async () => {
    // The handler runs long enough that the unsettled query is answered before it ends, even on a
    // loaded machine; the wire's deadlines are longer still.
    const { wire } = await harness({}, [], 20_000);
    const slow = event(wire, { script: { delay_ms: 2000 } }, "slow");
    const unsettled = await wire.log("slow", { min_count: 1, settle: false });
    expect(unsettled).toHaveLength(1);
    expect(unsettled[0]).not.toHaveProperty("done");
    const settled = await wire.log("slow");
    expect(settled[0]!.outcome).toBe("ok");
    await slow;
    const started = Date.now();
    expect(await wire.log("nobody", { min_count: 1, timeout_ms: 80 })).toEqual([]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
  });

  it("conformance/reset clears records, conformance/errors reports what the server saw, other conformance/ queries fail", async () => {
    const errors: Error[] = [];
    const { wire } = await harness({}, errors);
    await event(wire, {}, "a");
    await event(wire, {}, "b");
    expect(await wire.query("x", "conformance/reset", { session_id: "a" })).toEqual({ cleared: 1 });
    expect(await wire.log("a")).toEqual([]);
    expect(await wire.log("b")).toHaveLength(1);
    const { last } = await wire.errors();
    await wire.send({ jsonrpc: "2.0", method: "ahp/event", params: wireEvent("pre_action", {}, "b") });
    const { errors: seen } = await wire.errors(last);
    expect(seen.map((e) => [e.code, e.message])).toEqual([
      [-32603, "Handler error: Protocol error: Blocking event pre_action must be sent as a request"],
    ]);
    expect(errors.map((e) => e.message)).toContain("Handler error: Protocol error: Blocking event pre_action must be sent as a request");
    const unknown = await wire.call(request("u", "ahp/query", queryParams("s", "conformance/nope", {})));
    expect(unknown.error).toEqual({ code: -32603, message: "Handler error: unknown conformance query conformance/nope" });
    const bad = await wire.call(request("v", "ahp/query", queryParams("s", "conformance/log", { min_count: -1 })));
    expect((bad.error as { message: string }).message).toMatch(/^Handler error: invalid conformance\/log payload: .*min_count/);
  });

  it("scripts queries through payload.script and echoes others", async () => {
    const { wire } = await harness();
    expect(await wire.query("s", "approval_check", { q: 1 })).toEqual({ query_type: "approval_check", payload: { q: 1 } });
    const response = await wire.call(
      request("r", "ahp/query", queryParams("s", "x", { script: { response: { answer: [1], reason: "r" } } })),
    );
    expect(response.result).toEqual({ answer: [1], reason: "r" });
  });
});

describe("raw channel building blocks", () => {
  it("RawFrameQueue hands frames out in order, times out with undefined and ends on close", async () => {
    const queue = new RawFrameQueue();
    queue.push({ text: "a" });
    queue.push({ text: "b", status: 204 });
    expect(queue.size).toBe(2);
    expect(await queue.next()).toEqual({ text: "a" });
    expect(await queue.next()).toEqual({ text: "b", status: 204 });
    const started = Date.now();
    expect(await queue.next(30)).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    const pending = queue.next(5000);
    queue.close();
    expect(await pending).toBeUndefined();
    queue.push({ text: "late" });
    expect(await queue.next(10)).toBeUndefined();
  });

  it("createNdjsonRawChannel writes text plus \\n and reads lines split on \\n only", async () => {
    const toHarness = new PassThrough();
    const toAgent = new PassThrough();
    let closed = false;
    const raw = createNdjsonRawChannel({ readable: toAgent, writable: toHarness, close: () => void (closed = true) });
    expect(raw.framing).toBe("ndjson");
    const written: string[] = [];
    toHarness.on("data", (chunk: Buffer) => written.push(chunk.toString("utf8")));
    await raw.send("one\r\ntwo");
    expect(written.join("")).toBe("one\r\ntwo\n");
    const text = "é\u2028x";
    const bytes = Buffer.from(`{"a":"${text}"}\r\n\n  \n{"b":1}\n`, "utf8");
    for (const byte of bytes) toAgent.write(Buffer.from([byte]));
    expect(await raw.next(1000)).toEqual({ text: `{"a":"${text}"}` });
    expect(await raw.next(1000)).toEqual({ text: '{"b":1}' });
    await raw.close();
    expect(closed).toBe(true);
    await expect(raw.send("x")).rejects.toThrow(/closed/);
    expect(await raw.next(10)).toBeUndefined();
  });
});
