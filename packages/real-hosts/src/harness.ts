/**
 * Harnesses for hook tests: the project's own `ahp serve --unix` (the built CLI), and a tiny
 * NDJSON harness on a Unix socket that completes the handshake and then holds every blocking
 * event without answering, the way a harness waiting for a person does.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { fileURLToPath } from "node:url";

/** The built `ahp` CLI (`apps/cli/dist/main.js`). */
export const AHP_CLI = fileURLToPath(new URL("../../../apps/cli/dist/main.js", import.meta.url));

export interface RunningHarness {
  socket: string;
  /** What the harness logged on stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Starts `ahp serve --unix <socket> [args]` and resolves once it listens (60 s cap). */
export async function startAhpServe(socket: string, args: string[] = []): Promise<RunningHarness> {
  if (!existsSync(AHP_CLI)) throw new Error(`${AHP_CLI} is missing: build the CLI first (pnpm turbo run build --filter=@ahp/cli...)`);
  const child: ChildProcess = spawn(process.execPath, [AHP_CLI, "serve", "--unix", socket, ...args], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`ahp serve did not start within 60 s: ${stderr}`)), 60_000);
    const poll = setInterval(() => {
      if (stderr.includes('"listening"')) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      }
    }, 20);
    child.once("exit", (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`ahp serve exited with ${code}: ${stderr}`));
    });
  });
  return {
    socket,
    stderr: () => stderr,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

export interface HoldingHarness extends RunningHarness {
  /** Every `ahp/event` message received (params), in order. */
  events: Array<Record<string, unknown>>;
}

/**
 * A harness that answers the handshake (advertising `config.timeout_ms`) and never answers an
 * `ahp/event` request it holds (by default, tool calls): a decision held for a person who does
 * not answer. Other blocking events are allowed at once.
 */
export async function startHoldingHarness(
  socket: string,
  options: {
    timeoutMs?: number;
    /** Which events are held; the others are allowed at once. Default: `pre_action` events naming a tool. */
    hold?: (params: Record<string, unknown>) => boolean;
  } = {},
): Promise<HoldingHarness> {
  const hold =
    options.hold ??
    ((params: Record<string, unknown>) =>
      params.event_type === "pre_action" && typeof (params.payload as { tool_name?: unknown } | undefined)?.tool_name === "string");
  const events: Array<Record<string, unknown>> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((conn) => {
    sockets.add(conn);
    conn.on("close", () => sockets.delete(conn));
    conn.on("error", () => undefined);
    let buffer = "";
    conn.setEncoding("utf8").on("data", (chunk: string) => {
      buffer += chunk;
      let newline = buffer.indexOf("\n");
      while (newline !== -1) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf("\n");
        if (line === "") continue;
        let message: { id?: unknown; method?: string; params?: Record<string, unknown> };
        try {
          message = JSON.parse(line) as typeof message;
        } catch {
          continue;
        }
        if (message.method === "ahp/handshake") {
          conn.write(
            `${JSON.stringify({
              jsonrpc: "2.0",
              id: message.id,
              result: {
                protocol_version: "2.4",
                harness_info: {
                  name: "holding-harness",
                  version: "0.0.0",
                  capabilities: ["pre_action", "pre_prompt", "post_action", "session_start", "session_end", "post_response", "heartbeat"],
                },
                config: { timeout_ms: options.timeoutMs ?? 600_000, max_depth: 10, batch_size: 1 },
              },
            })}\n`,
          );
        } else if (message.method === "ahp/event" && message.params) {
          events.push(message.params);
          if (message.id !== undefined && !hold(message.params)) {
            conn.write(`${JSON.stringify({ jsonrpc: "2.0", id: message.id, result: { decision: "allow" } })}\n`);
          }
        }
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  return {
    socket,
    events,
    stderr: () => "",
    close: () =>
      new Promise<void>((resolve) => {
        for (const conn of sockets) conn.destroy();
        server.close(() => resolve());
      }),
  };
}
