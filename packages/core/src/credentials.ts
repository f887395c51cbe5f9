/**
 * Credentials (spec §10): what an agent sends, and the server-side verification shared by the
 * HTTP and WebSocket transports.
 *
 * Server-side credential verification. The reference harness checks no credentials (spec §14
 * item 13); the HTTP and WebSocket servers of this project do when configured. Secrets are kept only as SHA-256 digests and
 * compared with `timingSafeEqual` over the equal-length digests, against every configured
 * secret (no early exit), so timing reveals neither the secret nor which one matched.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";
import { AhpLocalError } from "./errors.js";
import type { AuthConfigInput } from "./schema/auth.js";

/** Accepted credentials: API keys (header `X-API-Key`) and bearer tokens (`Authorization: Bearer`). */
export interface CredentialOptions {
  apiKeys?: readonly string[];
  bearerTokens?: readonly string[];
}

/** Your own check; return true to accept. A throw or rejection counts as a refusal. */
export type AuthorizeRequest = (req: IncomingMessage) => boolean | Promise<boolean>;

/**
 * How the HTTP and WebSocket servers check credentials: lists of accepted API keys and bearer tokens, or a function that decides per
 * request.
 */
export type ServerAuthOption = CredentialOptions | AuthorizeRequest;

/** Credentials as presented by a peer. */
export interface PresentedCredentials {
  apiKey?: string | undefined;
  bearerToken?: string | undefined;
}

const digest = (secret: string): Buffer => createHash("sha256").update(secret, "utf8").digest();

function indexOfDigest(candidate: Buffer, digests: readonly Buffer[]): number {
  let found = -1;
  for (let i = 0; i < digests.length; i++) {
    // Compare against every entry; never stop at the first match.
    const equal = timingSafeEqual(candidate, digests[i]!);
    if (equal && found < 0) found = i;
  }
  return found;
}

/**
 * Checks the API key or bearer token a peer presents against the configured ones, comparing SHA-256 digests in constant time.
 * The constructor throws `INVALID_ARGUMENT` when no secret is configured or one is empty.
 */
export class CredentialVerifier {
  readonly #apiKeys: Buffer[];
  readonly #bearerTokens: Buffer[];

  constructor(options: CredentialOptions) {
    const apiKeys = options.apiKeys ?? [];
    const bearerTokens = options.bearerTokens ?? [];
    if (apiKeys.length === 0 && bearerTokens.length === 0) {
      throw new AhpLocalError("INVALID_ARGUMENT", "auth is configured without any API key or bearer token");
    }
    for (const secret of [...apiKeys, ...bearerTokens]) {
      if (typeof secret !== "string" || secret.length === 0) {
        throw new AhpLocalError("INVALID_ARGUMENT", "API keys and bearer tokens must be non-empty strings");
      }
    }
    this.#apiKeys = apiKeys.map(digest);
    this.#bearerTokens = bearerTokens.map(digest);
  }

  /** True when bearer tokens are accepted (a 401 then carries `WWW-Authenticate: Bearer`). */
  get acceptsBearer(): boolean {
    return this.#bearerTokens.length > 0;
  }

  /** Returns a non-secret principal label (`api_key#1`, `bearer#2`) or undefined when nothing matches. */
  verify(presented: PresentedCredentials): string | undefined {
    let principal: string | undefined;
    if (presented.apiKey !== undefined && this.#apiKeys.length > 0) {
      const index = indexOfDigest(digest(presented.apiKey), this.#apiKeys);
      if (index >= 0) principal = `api_key#${index + 1}`;
    }
    if (presented.bearerToken !== undefined && this.#bearerTokens.length > 0) {
      const index = indexOfDigest(digest(presented.bearerToken), this.#bearerTokens);
      if (index >= 0) principal ??= `bearer#${index + 1}`;
    }
    return principal;
  }
}

/** Reads `X-API-Key` and `Authorization: Bearer <token>` from request headers. */
export function credentialsFromHeaders(headers: IncomingHttpHeaders): PresentedCredentials {
  const apiKeyHeader = headers["x-api-key"];
  const apiKey = Array.isArray(apiKeyHeader) ? apiKeyHeader[0] : apiKeyHeader;
  const authorization = headers.authorization;
  let bearerToken: string | undefined;
  if (authorization !== undefined) {
    const match = /^Bearer[ \t]+(.+)$/i.exec(authorization.trim());
    if (match !== null) bearerToken = match[1]!.trim();
  }
  return { apiKey, bearerToken };
}

/**
 * Client credentials: the configuration objects of spec §10. `api_key` becomes the header
 * `x-api-key: <key>`, `bearer` becomes `authorization: Bearer <token>`; `none`, `mutual_tls`
 * and `o_auth` add nothing (as the reference; use a transport's `tls` option for client certificates).
 */
export type ClientAuth = AuthConfigInput;

/** The headers one auth configuration adds (HTTP requests, WebSocket upgrades in header mode). Names are lower-case, as the reference sends them. */
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
