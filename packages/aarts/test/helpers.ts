/** Shared fixtures and fakes for the AARTS tests. */
import {
  AhpServer,
  createLinkedPair,
  type AhpEvent,
  type AhpServerHandlers,
  type AhpServerOptions,
  type JsonRpcMessage,
  type Transport,
  type TransportSendOptions,
} from "@ahp/core";
import {
  AartsHost,
  AhpBridge,
  MemoryStateStore,
  MemorySubAgentRegistry,
  type AartsEngine,
  type AartsEvent,
  type AartsHostOptions,
  type AhpBridgeOptions,
  type HookRuntime,
  type AdapterOptions,
} from "@ahp/aarts";

/** The shared envelope of spec §6. */
export const E0 = {
  session_id: "s-1",
  timestamp: "2026-05-01T10:00:00.000Z",
  host_id: "claude-code",
  aarts_version: "0.1",
  turn_id: "s-1:1",
} as const;

/** Provenance our adapters always put on PreToolUse. */
export const PROV = { source_prompt_modified: false, is_sub_agent: false, input_modifier_chain: [] } as const;

export const H1_CAPABILITIES = ["pre_action", "pre_prompt", "post_action", "session_end"];

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export function preToolUse(fields: Record<string, unknown> = {}): AartsEvent {
  return {
    hook_point: "PreToolUse",
    ...E0,
    tool_name: "shell",
    tool_name_native: "Bash",
    tool_input: { command: "ls" },
    artifacts: [{ type: "command", value: "ls", source_field: "tool_input.command" }],
    ...PROV,
    ...fields,
  } as unknown as AartsEvent;
}

/** Records every message the agent side sends. */
export class RecordingTransport implements Transport {
  readonly sent: JsonRpcMessage[] = [];
  onmessage?: (message: unknown) => void;
  onparseerror?: Transport["onparseerror"];
  onerror?: (error: Error) => void;
  onclose?: (error?: Error) => void;
  constructor(readonly inner: Transport) {}
  get info() {
    return this.inner.info;
  }
  start(): Promise<void> {
    this.inner.onmessage = (m) => this.onmessage?.(m);
    this.inner.onerror = (e) => this.onerror?.(e);
    this.inner.onparseerror = (e) => this.onparseerror?.(e);
    this.inner.onclose = (e) => this.onclose?.(e);
    return this.inner.start();
  }
  send(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    this.sent.push(structuredClone(message));
    return this.inner.send(message, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  /** Messages after the handshake. */
  get events(): Array<{ id?: unknown; method: string; params: AhpEvent }> {
    return this.sent.filter((m) => "method" in m && m.method === "ahp/event") as never;
  }
}

export interface HarnessSetup {
  server: AhpServer;
  agent: RecordingTransport;
  bridge: AhpBridge;
  /** Events the harness handled (requests and notifications). */
  seen: AhpEvent[];
  close(): Promise<void>;
}

/**
 * An AhpServer harness (default: `h1` of spec §6) behind an in-memory pair, and a bridge on the
 * agent side. Results are not validated by the server so that tests can send malformed ones.
 */
export function harness(
  onEvent: AhpServerHandlers["onEvent"] = () => ({ decision: "allow" }),
  options: { server?: AhpServerOptions; bridge?: Partial<AhpBridgeOptions>; onNotification?: AhpServerHandlers["onNotification"] } = {},
): HarnessSetup {
  const seen: AhpEvent[] = [];
  const server = new AhpServer({
    harnessInfo: { name: "h1", version: "1.0.0", capabilities: H1_CAPABILITIES },
    config: {},
    validateResults: false,
    ...options.server,
    handlers: {
      onEvent: (event, ctx) => {
        seen.push(event);
        return onEvent(event, ctx);
      },
      onNotification: (event, ctx) => {
        seen.push(event);
        return options.onNotification?.(event, ctx);
      },
    },
  });
  const [agentSide, harnessSide] = createLinkedPair();
  void server.connect(harnessSide);
  const agent = new RecordingTransport(agentSide);
  const bridge = new AhpBridge({ transport: agent, ...options.bridge });
  return {
    server,
    agent,
    bridge,
    seen,
    close: async () => {
      await bridge.close();
      await server.close();
    },
  };
}

/** A host with one bridge hook over {@link harness}. */
export async function hostWithHarness(
  onEvent?: AhpServerHandlers["onEvent"],
  options: {
    server?: AhpServerOptions;
    bridge?: Partial<AhpBridgeOptions>;
    host?: Partial<AartsHostOptions>;
    onNotification?: AhpServerHandlers["onNotification"];
  } = {},
) {
  const h = harness(onEvent, options);
  const logs: { level: string; message: string }[] = [];
  const host = new AartsHost({ hooks: [{ id: "h1", engine: h.bridge }], onlog: (e) => logs.push(e), ...options.host });
  return { ...h, host, logs };
}

/** A scripted in-process engine. */
export function engine(
  evaluate: (event: AartsEvent) => unknown,
  id = "e1",
): AartsEngine & { events: AartsEvent[]; notified: AartsEvent[] } {
  const events: AartsEvent[] = [];
  const notified: AartsEvent[] = [];
  return {
    events,
    notified,
    versionCheck: async () => ({ compatible: true, engine_id: id, engine_version: "1" }),
    evaluate: async (event) => {
      events.push(event);
      return evaluate(event);
    },
    notify: async (event) => {
      notified.push(event);
    },
  };
}

export const allow = (extra: Record<string, unknown> = {}) => ({
  decision: "allow",
  category: "none",
  severity: "info",
  source: "test",
  ...extra,
});
export const deny = (extra: Record<string, unknown> = {}) => ({
  decision: "deny",
  category: "policy",
  severity: "warning",
  source: "test",
  reasons: ["no"],
  ...extra,
});
export const ask = (extra: Record<string, unknown> = {}) => ({
  decision: "ask",
  category: "policy",
  severity: "warning",
  source: "test",
  reasons: ["check"],
  ...extra,
});

/** A HookRuntime over an AartsHost and an in-memory state store. */
export function runtime(
  host: AartsHost,
  options: AdapterOptions = {},
  now = () => new Date("2026-05-01T10:00:00.000Z"),
): HookRuntime & {
  notified: AartsEvent[];
  evaluated: AartsEvent[];
  state: MemoryStateStore;
} {
  const notified: AartsEvent[] = [];
  const evaluated: AartsEvent[] = [];
  const state = new MemoryStateStore();
  return {
    notified,
    evaluated,
    state,
    now,
    options,
    evaluate: (event, o) => {
      evaluated.push(event);
      return host.evaluate(event, o?.subAgents === undefined ? {} : { subAgents: new MemorySubAgentRegistry(o.subAgents) });
    },
    notify: async (event) => {
      notified.push(event);
      await host.notify(event);
    },
  };
}

/** Parses a native JSON answer. */
export const out = (r: { stdout: string }) => (r.stdout.trim() === "" ? undefined : (JSON.parse(r.stdout) as unknown));

/** Waits until `predicate` holds (polling the event loop), or fails after `ms`. */
export async function until(predicate: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 2));
  }
}
