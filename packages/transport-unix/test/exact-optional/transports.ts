/**
 * Checked by `typecheck` with `exactOptionalPropertyTypes` on, against the published types: every
 * transport class of this package is a `Transport` for a consumer that has the option set.
 */
import type { Transport } from "@ahp/core";
import { UnixSocketClientTransport, UnixSocketServerTransport } from "@ahp/transport-unix";

type TransportClass = abstract new (...args: never[]) => Transport;

export const transports: readonly TransportClass[] = [UnixSocketClientTransport, UnixSocketServerTransport];
