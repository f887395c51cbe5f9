/** Small helpers shared by the client and the server side. */
import type { Socket } from "node:net";

/**
 * The -32003 notice (id `null`) the server sends before closing a connection for its idle
 * timeout or to make room at the cap; a client seeing it reconnects for its next call.
 */
export const IDLE_CLOSE_MESSAGE = "Idle connection closed by the harness (idle timeout or connection limit); reconnect to continue";

/** Ends a socket (flushing what is buffered) and resolves once it is closed; destroys it after `graceMs`. */
export function endSocket(socket: Socket, graceMs: number): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => socket.destroy(), graceMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    if (socket.destroyed) return; // 'close' follows
    socket.resume(); // discard what the peer still sends, so its end arrives
    socket.end();
  });
}

/**
 * Ends our side of a socket and closes it as soon as what we wrote is flushed (the agent does
 * not wait for the harness to end its side: it wants no more answers). Destroys it after
 * `graceMs` when the flush does not complete (the harness stopped reading).
 */
export function finishSocket(socket: Socket, graceMs: number): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => socket.destroy(), graceMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve();
    });
    if (socket.destroyed) return;
    socket.end(() => socket.destroy());
  });
}

/** The longest socket path the platform accepts (bytes, without the terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = process.platform === "linux" ? 107 : 103;

export function errnoCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === "string" ? code : undefined;
}

export function noop(): void {}
