/**
 * The upstream face: an SDK agent app per client connection, whose handlers call the bridge.
 * Built-in methods are parsed by the SDK; the suspend methods take their params raw, so the
 * bridge's own validation produces every `-32602` (§4).
 */
import { agent, type AgentApp, type AgentConnection, type ClientApp, type Stream } from "@agentclientprotocol/sdk";
import type { AcpBridgeEngine } from "./bridge.js";
import { METHODS } from "./constants.js";
import { DIRECT_WRITER, type DirectStream } from "./node-stream.js";
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
  let link: ClientLink | undefined;
  const current = (): ClientLink => {
    if (link === undefined) throw new Error("connection not open");
    return link;
  };
  return agent({ name: "ahp-acp-bridge" })
    .onConnect((connection) => {
      const l = bridge.newLink(connection.client);
      link = l;
      onLink?.(l);
      void connection.closed.then(() => bridge.detach(l));
    })
    .onRequest("session/prompt", ({ params, signal }) => bridge.prompt(params, current(), signal))
    .onRequest("initialize", ({ params }) => bridge.initialize(params, current()))
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
 * direct writer and everything goes through the SDK.
 */
export function connectUpstream(bridge: AcpBridgeEngine, target: Stream | ClientApp): AgentConnection {
  const direct = (target as Partial<DirectStream>)[DIRECT_WRITER];
  let link: ClientLink | undefined;
  let routed = false;
  const attach = (l: ClientLink) => {
    l.write = (message) => direct!.write(message);
    l.writeLine = (line) => direct!.writeLine(line);
  };
  const connection = createUpstreamApp(bridge, (l) => {
    link = l;
    if (routed) attach(l);
  }).connect(target as Stream);
  if (direct !== undefined && routeSdkSends(connection, direct)) {
    routed = true;
    if (link !== undefined) attach(link);
  }
  return connection;
}
