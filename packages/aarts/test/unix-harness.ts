/** A real AHP harness on a Unix socket (AhpServer over core's NDJSON stream transport), for hook tests. */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  AhpServer,
  NdjsonStreamTransport,
  type AhpEvent,
  type AhpServerHandlers,
  type AhpServerOptions,
  type DecisionInput,
} from "@ahp/core";

export interface UnixHarness {
  readonly path: string;
  readonly dir: string;
  readonly server: AhpServer;
  /** Every event the harness received (requests and notifications), in arrival order. */
  readonly events: AhpEvent[];
  /** Resolves with the first event (already received or arriving later) that matches. */
  waitFor(predicate: (event: AhpEvent) => boolean): Promise<AhpEvent>;
  close(): Promise<void>;
}

export async function startUnixHarness(
  onEvent: (event: AhpEvent) => DecisionInput | Promise<DecisionInput>,
  options: Omit<AhpServerOptions, "handlers"> = {},
): Promise<UnixHarness> {
  const dir = mkdtempSync(join(tmpdir(), "aarts-"));
  const path = join(dir, "h.sock");
  const events: AhpEvent[] = [];
  const waiters: { predicate: (event: AhpEvent) => boolean; resolve: (event: AhpEvent) => void }[] = [];
  const record = (event: AhpEvent) => {
    events.push(event);
    for (const w of [...waiters]) {
      if (w.predicate(event)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    }
  };
  const handlers: AhpServerHandlers = {
    onEvent: (event) => {
      record(event);
      return onEvent(event);
    },
    onNotification: (event) => {
      record(event);
    },
  };
  const server = new AhpServer({
    harnessInfo: { name: "test-harness", version: "9.9.9", capabilities: ["pre_action", "pre_prompt", "post_action", "session_end"] },
    ...options,
    handlers,
  });
  const sockets = new Set<Socket>();
  const listener = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    const transport = new NdjsonStreamTransport({
      readable: socket,
      writable: socket,
      info: { transport: "unix", remote: path },
      onClose: () => void socket.destroy(),
    });
    void server.connect(transport);
  });
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(path, () => resolve());
  });
  return {
    path,
    dir,
    server,
    events,
    waitFor: (predicate) => {
      const found = events.find(predicate);
      return found !== undefined ? Promise.resolve(found) : new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close: async () => {
      await server.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The decision policy used by the hook tests, keyed on what the AARTS event carries. */
export function testPolicy(event: AhpEvent): DecisionInput | Promise<DecisionInput> {
  const aarts = (event.payload as { aarts?: Record<string, unknown> }).aarts ?? {};
  const text = JSON.stringify([aarts.tool_input, aarts.raw_input, aarts.tool_result]);
  if (text.includes("sleep-forever")) return new Promise(() => undefined);
  if (text.includes("rm -rf")) return { decision: "block", reason: "destructive command", metadata: { rules_applied: ["no-rm-rf"] } };
  if (text.includes("Ignore previous instructions")) return { decision: "block", reason: "prompt injection" };
  if (text.includes("AWS_SECRET_ACCESS_KEY")) return { decision: "block", reason: "secret in tool output" };
  if (text.includes("sed -i")) return { decision: "modify", modified_payload: { arguments: { command: "sed -n p package.json" } } };
  if (text.includes("curl") || text.includes("paste.example")) return { decision: "escalate", reason: "network fetch needs approval" };
  return { decision: "allow" };
}
