/**
 * Checked by `typecheck` with `exactOptionalPropertyTypes` on, against the published types: every
 * transport class of this package is a `Transport` for a consumer that has the option set.
 */
import type { Transport } from "@ahp/core";
import { HttpClientTransport } from "@ahp/transport-http";

type TransportClass = abstract new (...args: never[]) => Transport;

export const transports: readonly TransportClass[] = [HttpClientTransport];
