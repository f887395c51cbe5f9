/** What a client connection needs from the host it belongs to. */
import type { Implementation, SessionSummary } from "../wire/types.js";
import type { Role } from "./approvals.js";
import type { ClientConnection, ConnectionLimits } from "./connection.js";
import type { ClientActions } from "./dispatch.js";
import type { ChannelStore } from "./store.js";

export interface HostContext {
  readonly store: ChannelStore;
  readonly actions: ClientActions;
  readonly limits: ConnectionLimits;
  readonly serverInfo: Implementation;
  readonly telemetryEnabled: boolean;
  listSessions(): SessionSummary[];
  /** The principal that owns a `clientId` in this process, if any. */
  clientOwner(clientId: string): string | undefined;
  /** Binds `clientId` to the connection's principal; an older connection of the same client is closed. */
  bindClient(connection: ClientConnection, clientId: string): void;
  telemetryOpened(uri: string): void;
  disposeSession(uri: string, role: Role): "ok" | "unknown" | "live" | "forbidden";
  /** The connection is being closed by the host. */
  closing(connection: ClientConnection, code: number, reason: string): void;
  report(error: Error): void;
}
