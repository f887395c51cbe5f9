/**
 * Test utilities the transport packages share: running a Node script to prove that a process
 * exits by itself (no leaked handles), a self-signed certificate for TLS tests, a deferred, and
 * a listening harness with simple decisions plus the event payloads the tests send it.
 */
import { AhpServer, type AhpServerOptions } from "@ahp/core";
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** True when the process exited on its own before the deadline (false: it had to be killed). */
  exitedInTime: boolean;
}

export interface RunNodeOptions {
  /** Kill the process (SIGKILL) when it outlives this; `exitedInTime` is then false. Default 60000 (a cap for a process that leaks a handle, with room for a loaded machine). */
  deadlineMs?: number;
  /** Written to the child's stdin. */
  input?: string;
  /** End the child's stdin after `input` (default true); with false it stays open until the child exits. */
  endInput?: boolean;
}

/**
 * Runs a Node script to completion, killing it when it outlives the deadline (a leaked handle
 * keeps a process alive; a process that cleans up exits by itself).
 */
export function runNode(script: string, args: readonly string[] = [], options: RunNodeOptions = {}): Promise<RunResult> {
  const { deadlineMs = 60_000, input, endInput = true } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    let exitedInTime = true;
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const timer = setTimeout(() => {
      exitedInTime = false;
      child.kill("SIGKILL");
    }, deadlineMs);
    child.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, exitedInTime });
    });
    child.stdin.on("error", () => {});
    if (input !== undefined) child.stdin.write(input);
    if (endInput) child.stdin.end();
  });
}

export interface SelfSignedCert {
  /** Temporary directory holding the PEM files; remove it when done. */
  dir: string;
  cert: string;
  key: string;
}

/**
 * A self-signed certificate for `127.0.0.1` / `localhost` made with `openssl` at test time, or
 * the reason it could not be made (so a test can skip with it).
 */
export function selfSignedCert(): SelfSignedCert | string {
  let dir: string | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), "ahp-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "key.pem"),
        "-out",
        join(dir, "cert.pem"),
        "-days",
        "1",
        "-subj",
        "/CN=localhost",
        "-addext",
        "subjectAltName=IP:127.0.0.1,DNS:localhost",
      ],
      { stdio: "ignore" },
    );
    return { dir, cert: readFileSync(join(dir, "cert.pem"), "utf8"), key: readFileSync(join(dir, "key.pem"), "utf8") };
  } catch (error) {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    return `openssl could not create a self-signed certificate: ${(error as Error).message}`;
  }
}

/** `Promise.withResolvers()` for Node 20. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A `pre_action` payload for a shell command. */
export const preAction = (command = "npm test") => ({ action_type: "tool_call", tool_name: "bash", arguments: { command } });

/** A wire event of `type` with fixed session, agent and timestamp. */
export function event(type: string, payload: unknown = {}, extra: Record<string, unknown> = {}) {
  return { event_type: type, session_id: "s-1", agent_id: "a-1", timestamp: "2026-01-01T00:00:00Z", depth: 0, payload, ...extra };
}

export interface ListeningHarness<L> {
  server: AhpServer;
  listener: L;
  url: string;
  close(): Promise<void>;
}

/**
 * An AhpServer served by `listen` (listenHttp, listenWebSocket, …). Its default handlers block a
 * command containing `rm -rf` and allow everything else; `options` replace them.
 */
export async function listeningHarness<L extends { url: string; close(): Promise<void> }>(
  listen: (server: AhpServer) => Promise<L>,
  options: AhpServerOptions = {},
): Promise<ListeningHarness<L>> {
  const server = new AhpServer({
    handlers: {
      onEvent: (e) =>
        String((e.payload as { arguments?: { command?: string } } | undefined)?.arguments?.command).includes("rm -rf")
          ? { decision: "block", reason: "no" }
          : { decision: "allow" },
      onNotification: () => undefined,
    },
    ...options,
  });
  const listener = await listen(server);
  return {
    server,
    listener,
    url: listener.url,
    async close() {
      await listener.close();
      await server.close();
    },
  };
}
