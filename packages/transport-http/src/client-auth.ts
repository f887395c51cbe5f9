/** Credentials an agent sends to a harness over HTTP (spec §10, §13.2). */
import type { AuthConfigInput } from "@ahp/core";

/**
 * Client credentials: the configuration objects of spec §10. `api_key` becomes the header
 * `x-api-key: <key>`, `bearer` becomes `authorization: Bearer <token>`; `none`, `mutual_tls`
 * and `o_auth` add nothing (as the reference; use the `tls` option for client certificates).
 */
export type ClientAuth = AuthConfigInput;

/** The headers one auth configuration adds to every request. Header names are lower-case, as the reference sends them. */
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
