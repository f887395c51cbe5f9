/**
 * Claiming a socket path safely.
 *
 * - A file that is not a socket is never touched.
 * - A socket someone is listening on is never touched (`EADDRINUSE`).
 * - A socket left behind by a dead process (connecting to it is refused) is removed.
 * - The new socket never exists at the final path with a wider mode than asked for: it is bound
 *   inside a fresh private directory (mode 0700, so nobody else can reach it), chmod-ed there, and
 *   only then hard-linked to the final path. `link()` is atomic and fails with `EEXIST` instead of
 *   replacing whatever appeared at the path in the meantime, so no race can make us replace a
 *   file or a live socket, and no connection can arrive before the mode is set. (Changing the
 *   umask around `listen()` would also work, but the umask is process-wide and cannot be set
 *   from worker threads.)
 */
import { link, lstat, mkdtemp, rm, unlink, chmod } from "node:fs/promises";
import { createConnection, type Server } from "node:net";
import { dirname, join } from "node:path";
import { AhpLocalError } from "@ahp/core";
import { MAX_SOCKET_PATH_BYTES, errnoCode, noop } from "./socket.js";

export interface SocketIdentity {
  dev: number;
  ino: number;
}

/** Outcome of connecting to an existing socket file. */
type Probe = "live" | "stale" | "gone" | { code: string };

function probe(path: string, timeoutMs: number): Promise<Probe> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    const timer = setTimeout(() => finish({ code: "ETIMEDOUT" }), timeoutMs);
    const finish = (result: Probe) => {
      clearTimeout(timer);
      socket.removeAllListeners("connect");
      socket.on("error", noop);
      socket.destroy();
      resolve(result);
    };
    socket.once("connect", () => finish("live"));
    socket.once("error", (error) => {
      const code = errnoCode(error);
      if (code === "ECONNREFUSED") finish("stale");
      else if (code === "ENOENT") finish("gone");
      else finish({ code: code ?? "EUNKNOWN" });
    });
  });
}

function inUse(path: string, why: string, code = "EADDRINUSE"): AhpLocalError {
  return new AhpLocalError("TRANSPORT_ERROR", `cannot listen on ${path}: ${why}`, { details: { path, code } });
}

/** Throws unless `path` is free; removes a stale socket left by a dead process. */
export async function clearStaleSocket(path: string, probeTimeoutMs = 1000): Promise<void> {
  let before;
  try {
    before = await lstat(path);
  } catch (error) {
    if (errnoCode(error) === "ENOENT") return;
    throw new AhpLocalError("TRANSPORT_ERROR", `cannot inspect ${path}: ${(error as Error).message}`, {
      cause: error,
      details: { path, code: errnoCode(error) },
    });
  }
  if (!before.isSocket()) throw inUse(path, "the path exists and is not a socket; refusing to replace it", "EEXIST");
  const result = await probe(path, probeTimeoutMs);
  if (result === "gone") return;
  if (result === "live") throw inUse(path, "another server is listening on this socket");
  if (result !== "stale") {
    // EACCES (someone else's socket), EAGAIN/ETIMEDOUT (a live server with a full backlog): keep it.
    throw inUse(path, `the existing socket cannot be probed (${result.code}); refusing to replace it`, result.code);
  }
  // Remove it only if it is still the very socket file that refused the connection.
  try {
    const now = await lstat(path);
    if (now.dev !== before.dev || now.ino !== before.ino) throw inUse(path, "the socket file changed while it was probed");
    await unlink(path);
  } catch (error) {
    if (AhpLocalError.isInstance(error)) throw error;
    if (errnoCode(error) !== "ENOENT") {
      throw new AhpLocalError("TRANSPORT_ERROR", `cannot remove stale socket ${path}: ${(error as Error).message}`, {
        cause: error,
        details: { path, code: errnoCode(error) },
      });
    }
  }
}

/** Listens on `path` with file mode `mode` (see the module comment); returns the socket file's identity. */
export async function listenAt(server: Server, path: string, mode: number): Promise<SocketIdentity> {
  let dir: string | undefined;
  try {
    dir = await mkdtemp(join(dirname(path), ".ahp-"));
    const temporary = join(dir, "s");
    if (Buffer.byteLength(temporary) > MAX_SOCKET_PATH_BYTES) {
      throw new AhpLocalError(
        "INVALID_ARGUMENT",
        `socket path ${path} leaves too little room: the socket is first bound at ${temporary} (${Buffer.byteLength(temporary)} bytes, limit ${MAX_SOCKET_PATH_BYTES}); use a shorter directory`,
        { details: { path } },
      );
    }
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(error);
      server.once("error", onError);
      server.listen(temporary, () => {
        server.off("error", onError);
        resolve();
      });
    });
    try {
      await chmod(temporary, mode);
      try {
        await link(temporary, path);
      } catch (error) {
        if (errnoCode(error) === "EEXIST") throw inUse(path, "the path was taken while the socket was being set up");
        throw error;
      }
      const stat = await lstat(path);
      return { dev: stat.dev, ino: stat.ino };
    } catch (error) {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw error;
    }
  } catch (error) {
    if (AhpLocalError.isInstance(error)) throw error;
    throw new AhpLocalError("TRANSPORT_ERROR", `cannot listen on ${path}: ${(error as Error).message}`, {
      cause: error,
      details: { path, code: errnoCode(error) },
    });
  } finally {
    if (dir !== undefined) await rm(dir, { recursive: true, force: true }).catch(noop);
  }
}

/** Removes the socket file at `path` if it is still the one we created. */
export async function removeSocketFile(path: string, identity: SocketIdentity): Promise<void> {
  try {
    const stat = await lstat(path);
    if (stat.dev === identity.dev && stat.ino === identity.ino) await unlink(path);
  } catch {
    // already gone
  }
}
