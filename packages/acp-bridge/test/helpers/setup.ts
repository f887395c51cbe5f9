/** One bridge between a stock SDK client and an agent double, with the client-side wire captured. */
import { vi } from "vitest";
import { client, type ClientApp, type ClientConnection, type ClientContext } from "@agentclientprotocol/sdk";
import { AhpClient, AhpServer, createLinkedPair, type AhpEvent, type AhpServerHandlers, type DecisionInput } from "@ahp/core";
import { ManualClock, MemorySuspensionStore, createAcpBridge, type AcpBridge, type AcpBridgeOptions } from "../../src/index.js";
import { agentDouble, type AgentDouble, type AgentDoubleOptions } from "./agent.js";
import { lifecycleEvents, tappedPair, type WireEntry } from "./wire.js";

// A test that waits must outlive its waits (60 s, see `until`), so that a failed wait reports
// what it awaited rather than a bare test timeout.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 90_000 });

export interface TestHarness {
  client: AhpClient;
  server: AhpServer;
  /** Events received (requests and notifications), in order. */
  events: AhpEvent[];
  queries: unknown[];
  close(): Promise<void>;
}

export type Decide = (event: AhpEvent, n: number) => DecisionInput | Promise<DecisionInput>;

/** An AHP harness in memory with a decision function (allow by default). */
export async function testHarness(decide: Decide = () => ({ decision: "allow" }), extra: AhpServerHandlers = {}): Promise<TestHarness> {
  const events: AhpEvent[] = [];
  const queries: unknown[] = [];
  let n = 0;
  const server = new AhpServer({
    handlers: {
      onEvent: (event) => {
        events.push(event);
        return decide(event, n++);
      },
      onNotification: (event) => {
        events.push(event);
      },
      onQuery: (q, ctx) => {
        queries.push(q);
        return extra.onQuery ? extra.onQuery(q, ctx) : { answer: { resume: false } };
      },
      ...(extra.typed ? { typed: extra.typed } : {}),
    },
    handlerTimeoutMs: 0,
  });
  const [agentSide, harnessSide] = createLinkedPair();
  await server.connect(harnessSide);
  const ahp = new AhpClient({ timeoutMs: 0 });
  await ahp.connect(agentSide);
  return {
    client: ahp,
    server,
    events,
    queries,
    close: async () => {
      await ahp.close();
      await server.close();
    },
  };
}

export interface ClientDouble {
  app: ClientApp;
  /** session/update params received by the stock client's handler, in order. */
  received: Array<{ sessionId: string; update: Record<string, any> }>;
  /** Requests the agent side sent to the client (method, params). */
  requests: Array<{ method: string; params: any }>;
}

export interface ClientOptions {
  /** `clientCapabilities` for initialize. */
  caps?: Record<string, unknown>;
  /** Answer to `_ahpHarness/session/await_resumption` (an aware client); omitted = the SDK's -32601. */
  awaitResumption?: (params: any) => Record<string, unknown>;
  permission?: (params: any) => Record<string, unknown>;
}

export function clientDouble(options: ClientOptions = {}): ClientDouble {
  const received: ClientDouble["received"] = [];
  const requests: ClientDouble["requests"] = [];
  let app = client({ name: "stock-client" })
    .onNotification("session/update", ({ params }) => {
      received.push(params);
    })
    .onRequest("session/request_permission", ({ params }) => {
      requests.push({ method: "session/request_permission", params });
      return (options.permission?.(params) ?? {
        outcome: { outcome: "selected", optionId: params.options[0]?.optionId ?? "allow" },
      }) as never;
    });
  if (options.awaitResumption !== undefined) {
    const answer = options.awaitResumption;
    app = app.onRequest(
      "_ahpHarness/session/await_resumption",
      (p: unknown) => p,
      ({ params }) => {
        requests.push({ method: "_ahpHarness/session/await_resumption", params });
        return answer(params);
      },
    );
  }
  return { app, received, requests };
}

/** Client capabilities of an aware client (§6.1). */
/** The permission options a test agent offers: allow once, reject once. */
export const OPTIONS = [
  { optionId: "allow", name: "Allow", kind: "allow_once" },
  { optionId: "reject", name: "Reject", kind: "reject_once" },
];

export const AWARE_CAPS = (extra: Record<string, unknown> = {}) => ({
  session: { notices: {} },
  _meta: {
    "ahpHarness/suspend": {
      version: 1,
      awaitResumption: true,
      lifecycle: ["meta"],
      agentInitiatedTurns: false,
      firstClass: false,
      ...extra,
    },
  },
});

export interface Rig {
  bridge: AcpBridge;
  agent: AgentDouble;
  clock: ManualClock;
  store: MemorySuspensionStore;
  harness?: TestHarness;
  log: WireEntry[];
  clientDouble: ClientDouble;
  conn: ClientConnection;
  ctx: ClientContext;
  errors: Error[];
  /** initialize + session/new; returns the session id. */
  open(cwd?: string): Promise<string>;
  close(): Promise<void>;
}

export interface RigOptions {
  agent?: AgentDoubleOptions;
  client?: ClientOptions;
  bridge?: Partial<AcpBridgeOptions>;
  harness?: Decide | TestHarness;
  /** Skip initialize in open(). */
  noInit?: boolean;
}

export async function rig(options: RigOptions = {}): Promise<Rig> {
  const agent = agentDouble(options.agent);
  const clock = new ManualClock();
  const store = new MemorySuspensionStore();
  const harness =
    options.harness === undefined
      ? undefined
      : typeof options.harness === "function"
        ? await testHarness(options.harness)
        : options.harness;
  const errors: Error[] = [];
  const bridge = await createAcpBridge({
    agent: agent.app,
    clock,
    store,
    ...(harness === undefined ? {} : { harness: harness.client }),
    onerror: (e) => errors.push(e),
    harnessPollMs: 0,
    ...options.bridge,
  });
  const pair = tappedPair();
  const cd = clientDouble(options.client);
  bridge.connect(pair.agentSide);
  const conn = cd.app.connect(pair.clientSide);
  const r: Rig = {
    bridge,
    agent,
    clock,
    store,
    ...(harness === undefined ? {} : { harness }),
    log: pair.log,
    clientDouble: cd,
    conn,
    ctx: conn.agent,
    errors,
    async open(cwd = "/work/project") {
      await conn.agent.request("initialize", { protocolVersion: 1, clientCapabilities: options.client?.caps ?? {} });
      const s = await conn.agent.request("session/new", { cwd, mcpServers: [] });
      return s.sessionId;
    },
    async close() {
      conn.close();
      await bridge.close();
      await harness?.close();
    },
  };
  return r;
}

/** Sends a tunnel suspend. */
export const suspend = (ctx: ClientContext, params: Record<string, unknown>) =>
  ctx.request<Record<string, any>>("_ahpHarness/session/suspend", params);

/** Resume with `_meta["ahpHarness/resume"]`. */
export const resumeWith = (ctx: ClientContext, sessionId: string, resume?: Record<string, unknown>, cwd = "/work/project") =>
  ctx.request("session/resume", { sessionId, cwd, ...(resume === undefined ? {} : { _meta: { "ahpHarness/resume": resume } }) }) as Promise<
    Record<string, any>
  >;

/**
 * Waits until `predicate` holds, with a deadline in wall-clock time (default 60 s, generous for a
 * busy machine), never a count of event-loop turns: re-checked after each macrotask at first (an
 * in-memory rig settles within a few), then every few milliseconds (a child process may need
 * seconds on a loaded machine).
 */
export async function until(predicate: () => boolean, what = "condition", ms = 60_000): Promise<void> {
  const deadline = performance.now() + ms;
  for (let i = 0; ; i++) {
    if (predicate()) return;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => (i < 1000 ? setImmediate(r) : setTimeout(r, 5)));
  }
}

/**
 * A short observation window for a check that something does NOT happen (no second lifecycle
 * update, no timer fired). Call it only after a positive signal proved the input was handled (an
 * awaited response, a state reached), so a slow machine cannot make the check pass vacuously.
 */
export const observe = (ms = 50) => new Promise<void>((r) => setTimeout(r, ms));

/** Waits until the bridge holds `id` in a state starting with `prefix` (e.g. "suspending"). */
export const untilState = (bridge: Pick<AcpBridge, "stateOf">, id: string, prefix: string) =>
  until(() => bridge.stateOf(id)?.startsWith(prefix) === true, `session ${id} in state ${prefix}`);

/** Waits until the wire log holds `n` lifecycle updates of `event` (default 1). */
export const untilLifecycle = (log: WireEntry[], event: string, n = 1) =>
  until(() => lifecycleEvents(log).filter((e) => e.event === event).length >= n, `${n} lifecycle ${event} update(s)`);
