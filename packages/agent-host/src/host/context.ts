/** What a client connection needs from the host it belongs to. */
import type { Implementation, SessionSummary } from "../wire/types.js";
import type { Role } from "./approvals.js";
import type { Principal } from "./auth.js";
import type { ClientActions } from "./dispatch.js";
import type { ConnectionLimits } from "./limits.js";
import type { ChannelStore } from "./store.js";

/** What the host reads of, and does to, one of its client connections. */
export interface HostedConnection {
  readonly who: Principal;
  readonly clientId?: string;
  readonly closed: boolean;
  close(code: number, reason: string): void;
}

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
  bindClient(connection: HostedConnection, clientId: string): void;
  telemetryOpened(uri: string): void;
  disposeSession(uri: string, role: Role): "ok" | "unknown" | "live" | "forbidden";
  /** The connection is being closed by the host. */
  closing(connection: HostedConnection, code: number, reason: string): void;
  report(error: Error): void;
}
