/**
 * Checked by `typecheck` with `exactOptionalPropertyTypes` on, against the published types: every
 * transport class of this package is a `Transport` for a consumer that has the option set.
 */
import { InMemoryTransport, NdjsonServerTransport, NdjsonStreamTransport, type Transport } from "@ahp/core";

type TransportClass = abstract new (...args: never[]) => Transport;

export const transports: readonly TransportClass[] = [InMemoryTransport, NdjsonServerTransport, NdjsonStreamTransport];

/** A consumer may also clear a callback it set. */
export function clearCallbacks(transport: Transport): void {
  transport.onmessage = undefined;
  transport.onparseerror = undefined;
  transport.onerror = undefined;
  transport.onclose = undefined;
}
