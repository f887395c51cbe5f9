/**
 * Authentication at the WebSocket upgrade and for the extra HTTP routes (spec §3): a bearer token
 * in `Authorization` or the `token` query parameter maps to a principal and a role. Tokens are
 * compared in constant time by core's `CredentialVerifier` (digests, every entry compared).
 */
import { stat, readFile } from "node:fs/promises";
import type { IncomingMessage } from "node:http";
import { AhpLocalError, CredentialVerifier, credentialsFromHeaders } from "@ahp/core";
import type { Role } from "./approvals.js";

/**
 * One accepted bearer token (spec §3) with the principal it stands for and that principal's role:
 * what `listenAgentHost` takes as `tokens`, and what `parseTokenFile` and `loadTokenFile` return.
 */
export interface TokenEntry {
  token: string;
  principal: string;
  role: Role;
}

/**
 * Who a connection or HTTP request authenticated as (spec §3). The principal name binds the
 * connection's `clientId` and appears in the decisions its answers produce (`metadata.approved_by`).
 */
export interface Principal {
  principal: string;
  role: Role;
}

const ROLES: readonly Role[] = ["viewer", "approver", "operator"];
export const isRole = (value: unknown): value is Role => typeof value === "string" && (ROLES as readonly string[]).includes(value);

/**
 * Maps the bearer token of an HTTP request or WebSocket upgrade (`Authorization: Bearer`, else the
 * `token` query parameter) to its {@link Principal} (spec §3), comparing tokens in constant time. The
 * constructor throws `AhpLocalError` (`INVALID_ARGUMENT`) for no tokens, an unknown role or an empty principal.
 */
export class TokenAuthenticator {
  readonly #verifier: CredentialVerifier;
  readonly #principals: Principal[];

  constructor(tokens: readonly TokenEntry[]) {
    if (tokens.length === 0) throw new AhpLocalError("INVALID_ARGUMENT", "the Agent Host server needs at least one token");
    for (const t of tokens) {
      if (!isRole(t.role))
        throw new AhpLocalError("INVALID_ARGUMENT", `unknown role ${JSON.stringify(t.role)} for principal ${t.principal}`);
      if (typeof t.principal !== "string" || t.principal === "")
        throw new AhpLocalError("INVALID_ARGUMENT", "every token needs a principal");
    }
    this.#verifier = new CredentialVerifier({ bearerTokens: tokens.map((t) => t.token) });
    this.#principals = tokens.map((t) => ({ principal: t.principal, role: t.role }));
  }

  /** The principal of a request's token (header wins over the query), or undefined. */
  authenticate(req: IncomingMessage): Principal | undefined {
    const token = tokenOf(req);
    if (token === undefined) return undefined;
    const label = this.#verifier.verify({ bearerToken: token });
    const index = label === undefined ? -1 : Number(label.slice(label.indexOf("#") + 1)) - 1;
    return this.#principals[index];
  }
}

/** The bearer token of a request: `Authorization: Bearer …`, else the `token` query parameter. */
export function tokenOf(req: IncomingMessage): string | undefined {
  const fromHeader = credentialsFromHeaders(req.headers).bearerToken;
  if (fromHeader !== undefined) return fromHeader;
  const url = req.url ?? "/";
  const q = url.indexOf("?");
  if (q < 0) return undefined;
  const value = new URLSearchParams(url.slice(q + 1)).get("token");
  return value === null || value === "" ? undefined : value;
}

/**
 * Parses a tokens file: one `token principal role` per line, `#` starts a comment, blank lines
 * ignored. Errors name the line, never the token.
 */
export function parseTokenFile(text: string, name = "tokens file"): TokenEntry[] {
  const out: TokenEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/#.*$/, "").trim();
    if (line === "") continue;
    const fields = line.split(/\s+/);
    if (fields.length !== 3) throw new AhpLocalError("INVALID_ARGUMENT", `${name}, line ${i + 1}: expected "token principal role"`);
    const [token, principal, role] = fields as [string, string, string];
    if (!isRole(role)) throw new AhpLocalError("INVALID_ARGUMENT", `${name}, line ${i + 1}: role must be viewer, approver or operator`);
    if (out.some((e) => e.token === token)) throw new AhpLocalError("INVALID_ARGUMENT", `${name}, line ${i + 1}: duplicate token`);
    out.push({ token, principal, role });
  }
  if (out.length === 0) throw new AhpLocalError("INVALID_ARGUMENT", `${name} has no tokens`);
  return out;
}

/** Reads a tokens file; refuses one that its group or others may read (mode & 0o077). */
export async function loadTokenFile(path: string): Promise<TokenEntry[]> {
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    throw new AhpLocalError(
      "INVALID_ARGUMENT",
      `cannot read tokens file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  if (process.platform !== "win32" && (info.mode & 0o077) !== 0) {
    throw new AhpLocalError(
      "INVALID_ARGUMENT",
      `tokens file ${path} is readable by its group or others (mode ${(info.mode & 0o777).toString(8)}); run chmod 600 ${path}`,
    );
  }
  return parseTokenFile(await readFile(path, "utf8"), `tokens file ${path}`);
}
