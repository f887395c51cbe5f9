/**
 * stdio round trips between this process and a child process: our AhpClient +
 * StdioClientTransport against an AhpServer served with serveStdio, against a raw floor (a
 * trivial NDJSON echo peer and client with plain JSON.parse/JSON.stringify and manual line
 * splitting) and against vscode-jsonrpc over the same kind of pipes. Every child runs built JS.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { fileURLToPath } from "node:url";
import { AhpClient } from "@ahp/core";
import { StdioClientTransport } from "@ahp/transport-stdio";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";
import type { Suite } from "../harness.js";
import { RawNdjsonClient, contenderRows, measureContenders, payload, rawEvent, type Connection } from "../ndjson-bench.js";

const peer = (name: string) => fileURLToPath(new URL(`../peers/${name}`, import.meta.url));

function spawnPeer(script: string, ...args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [peer(script), ...args], { stdio: ["pipe", "pipe", "pipe"] });
}

async function stop(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once("exit", () => resolve());
    child.stdin.end();
  });
}

async function rawFloor(): Promise<Connection> {
  const child = spawnPeer("raw-ndjson-peer.mjs", "stdio");
  const client = new RawNdjsonClient(child.stdout, child.stdin);
  return {
    request: () => client.request("ahp/event", rawEvent()),
    notify: () => client.notify("ahp/event", rawEvent("post_action")),
    flush: () => client.request("bench/count", {}),
    ...(child.pid === undefined ? {} : { peerPid: child.pid }),
    close: () => stop(child),
  };
}

async function ours(): Promise<Connection> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [peer("ahp-harness.mjs"), "stdio"] });
  // A request's limit only matters on a loaded machine, where a pipelined burst can wait longer
  // than the default 10 s; the figures do not depend on it.
  const client = new AhpClient({ timeoutMs: 120_000 });
  await client.connect(transport);
  return {
    request: () => client.send("pre_action", payload),
    notify: () => client.send("post_action", payload),
    flush: () => client.query("bench/count", null),
    ...(transport.pid === undefined ? {} : { peerPid: transport.pid }),
    close: () => client.close(),
  };
}

async function vscodeJsonrpc(): Promise<Connection> {
  const child = spawnPeer("vscode-jsonrpc-peer.mjs");
  const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  connection.listen();
  return {
    request: () => connection.sendRequest("ahp/event", rawEvent()),
    notify: () => connection.sendNotification("ahp/event", rawEvent("post_action")),
    flush: () => connection.sendRequest("bench/count", {}),
    ...(child.pid === undefined ? {} : { peerPid: child.pid }),
    close: async () => {
      connection.dispose();
      await stop(child);
    },
  };
}

export const suite: Suite = {
  name: "stdio",
  async run({ quick }) {
    const results = await measureContenders({ floor: rawFloor, mine: ours, other: vscodeJsonrpc }, quick);
    return contenderRows("stdio", results, "AhpClient->stdio child AhpServer", [{ key: "other", label: "vscode-jsonrpc 10.0.0" }]);
  },
};
