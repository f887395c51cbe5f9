/**
 * The Redis connection both the policy state store and the action stream use: the options that say
 * where the server is and how to reach it, and one client factory with the same failure behaviour
 * (no offline queue: a command fails at once while the connection is down;
 * exponential reconnection until the owner closes).
 */
import { createClient, type RedisClientType } from "@redis/client";

/** Where a Redis server is and how to reach it. */
export interface RedisConnectionOptions {
  /** `redis://[user@]host:port[/db]` or `rediss://…` (TLS). A password in the URL works but prefer `password`. */
  url: string;
  /** The server's password (read it from a file or the environment; it never appears in errors). */
  password?: string;
  /** ACL user name. */
  username?: string;
  /** Time allowed for one connection attempt. Default 2000 ms. */
  connectTimeoutMs?: number;
  /** Reconnection backoff: the first delay, doubled per attempt up to `maxDelayMs`. Defaults 50 ms and 2000 ms. */
  reconnect?: { minDelayMs?: number; maxDelayMs?: number };
}

/**
 * A client for `options` (not yet connected) that never queues commands while disconnected and
 * reconnects with exponential backoff until `closed()` says the owner has closed.
 */
export function redisClient(options: RedisConnectionOptions, closed: () => boolean): RedisClientType {
  const min = options.reconnect?.minDelayMs ?? 50;
  const max = options.reconnect?.maxDelayMs ?? 2000;
  return createClient({
    url: options.url,
    ...(options.password === undefined ? {} : { password: options.password }),
    ...(options.username === undefined ? {} : { username: options.username }),
    disableOfflineQueue: true,
    socket: {
      connectTimeout: options.connectTimeoutMs ?? 2000,
      reconnectStrategy: (retries: number) => (closed() ? false : Math.min(max, min * 2 ** Math.min(retries, 16))),
    },
  });
}

/**
 * `promise`, or a rejection naming `url` when it does not settle within `timeoutMs`. A late answer
 * or failure of a timed-out command is dropped on purpose: the caller already failed.
 */
export function withTimeout<T>(promise: Promise<T>, timeoutMs: number, url: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer from ${url} within ${timeoutMs} ms`)), timeoutMs);
  });
  promise.catch(() => undefined);
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** `message` with every occurrence of `secret` replaced by `***`. */
export const scrub = (message: string, secret: string | undefined): string =>
  secret === undefined || secret === "" ? message : message.split(secret).join("***");
