/**
 * Unix domain socket round trips between this process and a harness process: our AhpClient +
 * UnixSocketClientTransport against an AhpServer behind listenUnix, against a raw floor (a
 * trivial NDJSON echo server and client with plain JSON.parse/JSON.stringify and manual line
 * splitting) on the same kind of socket. Every peer runs built JS in its own process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AhpClient } from "@ahp/core";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import type { Suite } from "../harness.js";
import { RawNdjsonClient, contenderRows, measureContenders, payload, rawEvent, type Connection } from "../ndjson-bench.js";

const peer = (name: string) => fileURLToPath(new URL(`../peers/${name}`, import.meta.url));

/** Starts a peer listening on a fresh socket path; resolves once it is ready. */
async function startPeer(script: string): Promise<{ child: ChildProcessWithoutNullStreams; path: string; stop(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "ahp-bench-"));
  const path = join(dir, "s.sock");
  const child = spawn(process.execPath, [peer(script), "unix", path], { stdio: ["pipe", "pipe", "pipe"] });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
      if (err.includes("ready")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}: ${err}`)));
  });
  return {
    child,
    path,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once("exit", () => resolve());
          child.stdin.end();
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function rawFloor(): Promise<Connection> {
  const server = await startPeer("raw-ndjson-peer.mjs");
  const socket = connect({ path: server.path });
  await new Promise<void>((resolve) => socket.once("connect", resolve));
  const client = new RawNdjsonClient(socket, socket);
  return {
    request: () => client.request("ahp/event", rawEvent()),
    notify: () => client.notify("ahp/event", rawEvent("post_action")),
    flush: () => client.request("bench/count", {}),
    ...(server.child.pid === undefined ? {} : { peerPid: server.child.pid }),
    close: async () => {
      socket.destroy();
      await server.stop();
    },
  };
}

async function ours(): Promise<Connection> {
  const server = await startPeer("ahp-harness.mjs");
  const client = new AhpClient();
  await client.connect(new UnixSocketClientTransport({ path: server.path }));
  return {
    request: () => client.send("pre_action", payload),
    notify: () => client.send("post_action", payload),
    flush: () => client.query("bench/count", null),
    ...(server.child.pid === undefined ? {} : { peerPid: server.child.pid }),
    close: async () => {
      await client.close();
      await server.stop();
    },
  };
}

export const suite: Suite = {
  name: "unix",
  async run({ quick }) {
    const results = await measureContenders({ floor: rawFloor, mine: ours }, quick);
    return contenderRows("unix", results, "AhpClient->unix socket->AhpServer process");
  },
};
