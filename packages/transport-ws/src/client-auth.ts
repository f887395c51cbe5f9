/** Credentials an agent sends to a harness over WebSocket (spec §10, §13.3). */
import type { AuthConfigInput } from "@ahp/core";

/**
 * Client credentials: the configuration objects of spec §10. With `authMode: "query"` (the
 * reference) `api_key` / `bearer` become the query parameters `api_key=` / `token=`; with
 * `authMode: "header"` they become `x-api-key: <key>` / `authorization: Bearer <token>`.
 * `none`, `mutual_tls` and `o_auth` add nothing (as the reference; use the `tls` option for
 * client certificates).
 */
export type ClientAuth = AuthConfigInput;

/** The upgrade headers one auth configuration adds in `header` mode. */
export function authHeaders(auth: ClientAuth | undefined): Record<string, string> {
  if (auth === undefined) return {};
  switch (auth.type) {
    case "api_key":
      return { "x-api-key": auth.key };
    case "bearer":
      return { authorization: `Bearer ${auth.token}` };
    default:
      return {};
  }
}
