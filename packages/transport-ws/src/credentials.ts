/** Credentials of a WebSocket upgrade request (spec §13.3). */
import type { IncomingMessage } from "node:http";
import { credentialsFromHeaders, type PresentedCredentials } from "@ahp/core";

/**
 * Reads the credentials of a WebSocket upgrade request: the query parameters `api_key` and
 * `token` that the reference client appends (spec §13.3), or the headers `X-API-Key` and
 * `Authorization: Bearer <token>`. A header wins over the query when both are present.
 */
export function credentialsFromUpgrade(req: IncomingMessage): PresentedCredentials {
  const fromHeaders = credentialsFromHeaders(req.headers);
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  if (q === -1) return fromHeaders;
  const query = new URLSearchParams(url.slice(q + 1));
  return {
    apiKey: fromHeaders.apiKey ?? query.get("api_key") ?? undefined,
    bearerToken: fromHeaders.bearerToken ?? query.get("token") ?? undefined,
  };
}
