/** The server's record of one agent connection: its transport, handshake and abort signal. */
import { setMaxListeners } from "node:events";
import type { HandshakeRequest } from "./schema/methods.js";
import type { AhpServerConnection } from "./server-types.js";
import type { Transport, TransportInfo } from "./transport.js";

export class Connection implements AhpServerConnection {
  handshake?: HandshakeRequest;
  readonly controller = new AbortController();
  constructor(
    readonly id: number,
    readonly info: TransportInfo,
    readonly transport?: Transport,
  ) {
    // Every in-flight handler listens on this signal; hundreds of concurrent requests are normal.
    setMaxListeners(0, this.controller.signal);
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
}
