/**
 * Checked by `typecheck` with `exactOptionalPropertyTypes` on, against the published types: every
 * transport class of this package is a `Transport` for a consumer that has the option set.
 */
import type { Transport } from "@ahp/core";
import { StdioClientTransport, StdioServerTransport } from "@ahp/transport-stdio";

type TransportClass = abstract new (...args: never[]) => Transport;

export const transports: readonly TransportClass[] = [StdioClientTransport, StdioServerTransport];
