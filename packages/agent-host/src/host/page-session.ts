/**
 * The page cookie: after a page was handed out for a valid `?token=`, a reload of that page in the
 * same browser must not need the token in the URL again (the page removed it from the address bar).
 * The server answers such a request with an opaque random id in an HttpOnly, SameSite=Strict
 * cookie scoped to the static prefix; the id maps, in memory only, to the token's principal. The
 * cookie authenticates nothing but GET of the static files under that prefix: never the WebSocket
 * upgrade, never a route, never another method, so it opens no cross-site WebSocket hijacking or
 * request forgery surface. Ids are 128 random bits looked up in a Map (no comparison leaks them);
 * they die after an idle period, after an absolute lifetime, and with the process.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Principal } from "./auth.js";

/** The name of the page cookie. */
export const PAGE_COOKIE = "ahp_inspector";

/** Where the page cookie applies and how long it lives. */
export interface PageSessionOptions {
  /** The path the cookie is scoped to (the static prefix, e.g. `/inspector/`). */
  path: string;
  /** A cookie not used for this long is forgotten. Default 12 hours. */
  idleMs?: number;
  /** A cookie is forgotten this long after it was issued, used or not. Default 7 days. */
  maxAgeMs?: number;
  /** At most this many live cookies; issuing one more forgets the least recently used. Default 1000. */
  maxEntries?: number;
  /** The clock (tests). Default `Date.now`. */
  now?: () => number;
}

interface Entry {
  who: Principal;
  issuedAt: number;
  usedAt: number;
}

const ID = /^[A-Za-z0-9_-]{22}$/;

/** The value of the page cookie in a request's `Cookie` header, if it has the shape of an id. */
export function pageCookieOf(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== PAGE_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (ID.test(value)) return value;
  }
  return undefined;
}

/** The in-memory table of page cookies: issue one for a principal, look one up, forget one. */
export class PageSessions {
  readonly #entries = new Map<string, Entry>();
  readonly #path: string;
  readonly #idleMs: number;
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;

  constructor(options: PageSessionOptions) {
    this.#path = options.path.endsWith("/") ? options.path : `${options.path}/`;
    this.#idleMs = options.idleMs ?? 12 * 60 * 60 * 1000;
    this.#maxAgeMs = options.maxAgeMs ?? 7 * 24 * 60 * 60 * 1000;
    this.#maxEntries = options.maxEntries ?? 1000;
    this.#now = options.now ?? Date.now;
  }

  /** How many cookies are live (expired ones are dropped first). */
  get size(): number {
    this.#sweep();
    return this.#entries.size;
  }

  /**
   * Issues a fresh cookie for `who` on `res` (the one the request carried, if any, is forgotten:
   * a cookie is never reused across token links).
   */
  issue(req: IncomingMessage, res: ServerResponse, who: Principal): void {
    const previous = pageCookieOf(req);
    if (previous !== undefined) this.#entries.delete(previous);
    this.#sweep();
    while (this.#entries.size >= this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    const id = randomBytes(16).toString("base64url");
    const now = this.#now();
    this.#entries.set(id, { who, issuedAt: now, usedAt: now });
    const secure = (req.socket as Partial<TLSSocket>).encrypted === true ? "; Secure" : "";
    res.setHeader("set-cookie", `${PAGE_COOKIE}=${id}; Path=${this.#path}; HttpOnly; SameSite=Strict${secure}`);
  }

  /** The principal of the request's page cookie, if it is live (its idle clock restarts), else undefined. */
  check(req: IncomingMessage): Principal | undefined {
    const id = pageCookieOf(req);
    if (id === undefined) return undefined;
    const entry = this.#entries.get(id);
    if (entry === undefined) return undefined;
    const now = this.#now();
    if (this.#expired(entry, now)) {
      this.#entries.delete(id);
      return undefined;
    }
    entry.usedAt = now;
    // Map order is the eviction order: the most recently used goes last.
    this.#entries.delete(id);
    this.#entries.set(id, entry);
    return entry.who;
  }

  /** Forgets every cookie (e.g. when the tokens change). */
  clear(): void {
    this.#entries.clear();
  }

  #expired(entry: Entry, now: number): boolean {
    return now - entry.usedAt >= this.#idleMs || now - entry.issuedAt >= this.#maxAgeMs;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [id, entry] of this.#entries) if (this.#expired(entry, now)) this.#entries.delete(id);
  }
}
