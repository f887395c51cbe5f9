/**
 * `--connect` resolution for the hook command: `unix:PATH` and `stdio:CMD` are served by core's
 * NDJSON stream transport over `node:net` / `node:child_process` (no extra dependency, small
 * cold start); `http(s)://` and `ws(s)://` load `@ahp/transport-http` / `@ahp/transport-ws`
 * with a dynamic import (optional peer dependencies: a hook user installs only what they use).
 */
import { createConnection } from "node:net";
import { isAbsolute, resolve } from "node:path";
import { NdjsonStreamTransport, type Transport } from "@ahp/core";
import { tokenizeShell } from "@ahp/shell";
import { EngineFailure } from "../errors.js";

/** How the hook command reaches the harness: a Unix socket, a child process on stdio, HTTP(S) or WebSocket. */
export type ConnectKind = "unix" | "stdio" | "http" | "ws";

/** A parsed `--connect` value (see {@link parseConnect}). */
export interface ConnectSpec {
  /** Transport kind, from the value's prefix (`unix:`, `stdio:`, `http(s)://`, `ws(s)://`). */
  readonly kind: ConnectKind;
  /** Socket path, command line or URL. */
  readonly target: string;
  /** Events leave the machine (HTTP/WebSocket): needs `remoteTransmissionConsent` (spec §2.7). */
  readonly remote: boolean;
}

/** Parses a `--connect` value. Throws with a readable message when it is not understood. */
export function parseConnect(value: string): ConnectSpec {
  if (value.startsWith("unix:")) {
    const path = value.slice(5).replace(/^\/\/(?=\/)/, "");
    if (path === "") throw new Error("--connect unix: needs a socket path (unix:/run/ahp.sock)");
    return { kind: "unix", target: path, remote: false };
  }
  if (value.startsWith("stdio:")) {
    const command = value.slice(6).trim();
    if (command === "") throw new Error("--connect stdio: needs a command (stdio:ahp-harness --stdio)");
    return { kind: "stdio", target: command, remote: false };
  }
  if (/^https?:\/\//i.test(value)) return { kind: "http", target: value, remote: true };
  if (/^wss?:\/\//i.test(value)) return { kind: "ws", target: value, remote: true };
  throw new Error(`--connect ${JSON.stringify(value)}: expected unix:PATH, stdio:CMD, http(s)://URL or ws(s)://URL`);
}

/** Options of {@link openTransport}. */
export interface OpenOptions {
  /** Resolves a relative `unix:` path and is the working directory of a `stdio:` harness; default `process.cwd()`. */
  readonly cwd?: string;
  /** Environment of a `stdio:` harness; default the current process's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Connection establishment limit. Default 5 000 ms. */
  readonly connectTimeoutMs?: number;
  /** HTTP: limit of one request/response exchange, in ms; default the HTTP transport's. */
  readonly requestTimeoutMs?: number;
}

/**
 * Opens a client transport for a `--connect` spec (not started). Rejects with an
 * {@link EngineFailure} (`transport`) when the socket cannot be reached in time, the command
 * cannot be started, or the optional peer `@ahp/transport-http` / `@ahp/transport-ws` is not installed.
 */
export async function openTransport(spec: ConnectSpec, options: OpenOptions = {}): Promise<Transport> {
  switch (spec.kind) {
    case "unix":
      return openUnix(
        isAbsolute(spec.target) ? spec.target : resolve(options.cwd ?? process.cwd(), spec.target),
        options.connectTimeoutMs ?? 5_000,
      );
    case "stdio":
      return openStdio(spec.target, options);
    case "http": {
      const mod = await optionalImport<{ HttpClientTransport: new (url: string, o?: Record<string, unknown>) => Transport }>(
        "@ahp/transport-http",
      );
      return new mod.HttpClientTransport(
        spec.target,
        options.requestTimeoutMs === undefined ? {} : { timeoutMs: options.requestTimeoutMs },
      );
    }
    case "ws": {
      const mod = await optionalImport<{ WebSocketClientTransport: new (url: string, o?: Record<string, unknown>) => Transport }>(
        "@ahp/transport-ws",
      );
      return new mod.WebSocketClientTransport(spec.target, {});
    }
  }
}

async function optionalImport<T>(name: "@ahp/transport-http" | "@ahp/transport-ws"): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    throw new EngineFailure(
      "transport",
      `${name} is not installed (npm install ${name}) : ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
}

function openUnix(path: string, timeoutMs: number): Promise<Transport> {
  return new Promise((resolveTransport, reject) => {
    const socket = createConnection({ path });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new EngineFailure("transport", `cannot connect to the harness at unix:${path}: timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once("error", (error) => {
      clearTimeout(timer);
      reject(
        new EngineFailure(
          "transport",
          `cannot connect to the harness at unix:${path}: ${error.message} (is \`ahp serve --unix ${path}\` running?)`,
          {
            cause: error,
          },
        ),
      );
    });
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      resolveTransport(
        new NdjsonStreamTransport({
          readable: socket,
          writable: socket,
          info: { transport: "unix", remote: path },
          // Every send was awaited (written to the socket), so the socket can go at once; a
          // half-close would cost the hook a round trip to the harness before it can exit.
          onClose: () => void socket.destroy(),
        }),
      );
    });
  });
}

/** Splits a command line into argv with `@ahp/shell`'s POSIX tokenizer (no shell is run). */
export function commandArgv(command: string): string[] {
  const segment = tokenizeShell(command).segments[0];
  return segment === undefined ? [] : [...segment.words];
}

async function openStdio(command: string, options: OpenOptions): Promise<Transport> {
  const argv = commandArgv(command);
  if (argv.length === 0) throw new EngineFailure("transport", `stdio: empty command ${JSON.stringify(command)}`);
  // Loaded on demand: most hook users connect to a socket, and child_process costs start-up time.
  const { spawn } = await import("node:child_process");
  return new Promise((resolveTransport, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: ["pipe", "pipe", "ignore"],
      windowsHide: true,
    });
    child.once("error", (error) => reject(new EngineFailure("transport", `cannot start ${argv[0]}: ${error.message}`, { cause: error })));
    child.once("spawn", () => {
      const transport = new NdjsonStreamTransport({
        readable: child.stdout,
        writable: child.stdin,
        info: { transport: "stdio", remote: `pid ${child.pid}` },
        onClose: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            const kill = setTimeout(() => child.kill("SIGKILL"), 500);
            kill.unref();
            child.once("exit", () => {
              clearTimeout(kill);
              done();
            });
            child.stdin?.end();
            child.kill("SIGTERM");
          }),
      });
      child.once("exit", (code, signal) => {
        transport.setCloseCause(new EngineFailure("transport", `harness process exited (${signal ?? `code ${code}`})`));
      });
      resolveTransport(transport);
    });
  });
}
