/**
 * The upstream face: an SDK agent app per client connection, whose handlers call the bridge.
 * Built-in methods are parsed by the SDK; the suspend methods take their params raw, so the
 * bridge's own validation produces every `-32602` (§4). Over a stream of ours, a plain
 * `session/prompt` skips the SDK's parse (ADR 0112).
 */
import { randomUUID } from "node:crypto";
import { agent, type AgentApp, type AgentConnection, type ClientApp, type PromptRequest, type Stream } from "@agentclientprotocol/sdk";
import type { AcpBridgeEngine } from "./bridge.js";
import { METHODS } from "./constants.js";
import { DIRECT_WRITER, RAW_READER, type DirectStream } from "./node-stream.js";
import { plainPromptParams } from "./prompt-params.js";
import { routeSdkSends } from "./sdk-sends.js";
import type { ClientLink } from "./session.js";

const raw = (params: unknown): unknown => params;
type P = Record<string, unknown>;

/**
 * An agent app bound to `bridge` (one per client connection). The SDK tries the handlers of a
 * message one after the other (one await each), so `session/prompt`, the message of every turn,
 * is registered first; each method has one handler, so the order changes nothing else.
 */
export function createUpstreamApp(bridge: AcpBridgeEngine, onLink?: (link: ClientLink) => void): AgentApp {
  return upstreamApp(bridge, onLink);
}

/**
 * A plain `session/prompt` of one connection, already checked at read time (ADR 0112): the raw
 * reader renames it to `method` (unguessable, per connection) with the params the SDK's parse
 * would have given, and the app handles that method without parsing. `checked` holds those
 * params objects; `initialized` turns true once `initialize` succeeded (before that, the SDK's
 * own gate must answer the prompt, naming `session/prompt`).
 */
interface PlainPrompts {
  readonly method: string;
  readonly checked: WeakSet<object>;
  initialized: boolean;
}

function upstreamApp(bridge: AcpBridgeEngine, onLink?: (link: ClientLink) => void, plain?: PlainPrompts): AgentApp {
  let link: ClientLink | undefined;
  const current = (): ClientLink => {
    if (link === undefined) throw new Error("connection not open");
    return link;
  };
  const app = agent({ name: "ahp-acp-bridge" });
  if (plain !== undefined)
    // Params the raw reader did not check (a client that sent this very method) are handled as any unknown method.
    app.onRequest(plain.method, raw, ({ params, signal }) =>
      typeof params === "object" && params !== null && plain.checked.has(params)
        ? bridge.prompt(params as PromptRequest, current(), signal)
        : bridge.forward(plain.method, params, signal),
    );
  return app
    .onConnect((connection) => {
      const l = bridge.newLink(connection.client);
      link = l;
      onLink?.(l);
      void connection.closed.then(() => bridge.detach(l));
    })
    .onRequest("session/prompt", ({ params, signal }) => bridge.prompt(params, current(), signal))
    .onRequest("initialize", async ({ params }) => {
      const response = await bridge.initialize(params, current());
      if (plain !== undefined) plain.initialized = true;
      return response;
    })
    .onRequest("session/new", async ({ params }) => (await bridge.newSession(params as unknown as P, current())) as never)
    .onRequest("session/load", async ({ params }) => (await bridge.loadSession(params as unknown as P, current())) as never)
    .onRequest("session/resume", async ({ params }) => (await bridge.resumeSession(params as unknown as P, current())) as never)
    .onNotification("session/cancel", ({ params }) => bridge.cancel(params as unknown as P))
    .onRequest("session/close", async ({ params }) => (await bridge.closeSession(params as unknown as P)) as never)
    .onRequest("session/delete", async ({ params }) => (await bridge.deleteSession(params as unknown as P)) as never)
    .onRequest("session/list", async ({ params, signal }) => (await bridge.forward("session/list", params, signal)) as never)
    .onRequest("session/set_mode", async ({ params, signal }) => (await bridge.forward("session/set_mode", params, signal)) as never)
    .onRequest(
      "session/set_config_option",
      async ({ params, signal }) => (await bridge.forward("session/set_config_option", params, signal)) as never,
    )
    .onRequest("authenticate", async ({ params, signal }) => (await bridge.forward("authenticate", params, signal)) as never)
    .onRequest("logout", async ({ params, signal }) => (await bridge.forward("logout", params, signal)) as never)
    .onRequest(METHODS.suspend, raw, ({ params }) => bridge.suspend(params, current()))
    .onRequest(METHODS.tunnelSuspend, raw, ({ params }) => bridge.suspend(params, current()))
    .onRequest(METHODS.tunnelSuspension, raw, ({ params }) => bridge.status(params))
    .onRequest("*", ({ method, params, signal }) => bridge.forward(method, params, signal))
    .onNotification("*", ({ method, params }) => bridge.forwardNotification(method, params));
}

/**
 * Serves one client connection (a stream, or a client app in memory). Over a stream of ours,
 * every message the SDK connection sends goes straight to the stream when nothing it sent before
 * is still on its way, and the link gets the stream's direct writer for `session/update` (ADRs
 * 0110, 0111); without the hook on the SDK's `sendMessage` (another SDK version) the link has no
 * direct writer and everything goes through the SDK. A plain `session/prompt` read from a stream
 * of ours skips the SDK's parse (ADR 0112).
 */
export function connectUpstream(bridge: AcpBridgeEngine, target: Stream | ClientApp): AgentConnection {
  const direct = (target as Partial<DirectStream>)[DIRECT_WRITER];
  let link: ClientLink | undefined;
  let routed = false;
  const attach = (l: ClientLink) => {
    l.write = (message) => direct!.write(message);
    l.writeLine = (line) => direct!.writeLine(line);
  };
  const rawReader = (target as Partial<DirectStream>)[RAW_READER];
  const plain: PlainPrompts | undefined =
    typeof rawReader === "function"
      ? { method: `_ahpHarness/acp-bridge/prompt/${randomUUID()}`, checked: new WeakSet(), initialized: false }
      : undefined;
  if (rawReader !== undefined && plain !== undefined) {
    rawReader((message) => {
      if (message.method === "session/prompt" && plain.initialized && "id" in message) {
        const params = plainPromptParams(message.params);
        if (params !== undefined) {
          plain.checked.add(params);
          message.params = params;
          message.method = plain.method;
        }
      }
      return false; // the SDK handles every message
    });
  }
  const connection = upstreamApp(
    bridge,
    (l) => {
      link = l;
      if (routed) attach(l);
    },
    plain,
  ).connect(target as Stream);
  if (direct !== undefined && routeSdkSends(connection, direct)) {
    routed = true;
    if (link !== undefined) attach(link);
  }
  return connection;
}
