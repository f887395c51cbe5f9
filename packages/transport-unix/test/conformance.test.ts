/**
 * The cross-transport conformance suite over a Unix domain socket: the scripted harness listens
 * in-process with `listenUnix` on a short path under the OS temp dir; each connection is a
 * UnixSocketClientTransport, the raw channel a plain socket.
 */
import { connect as netConnect } from "node:net";
import { CHECKLIST, createConformanceServer, createNdjsonRawChannel, describeConformance, type ConformanceFactory } from "@ahp/conformance";
import { UnixSocketClientTransport, listenUnix } from "@ahp/transport-unix";
import { describe, expect, it } from "vitest";
import { tempDir } from "./helpers.js";

const unixFactory: ConformanceFactory = async (config) => {
  const temp = tempDir();
  const path = temp.path();
  const server = createConformanceServer(config);
  const listener = await listenUnix(server, { path });
  return {
    connect: async () => new UnixSocketClientTransport({ path }),
    async connectRaw() {
      const socket = netConnect({ path });
      socket.on("error", () => {});
      await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
      return createNdjsonRawChannel({
        readable: socket,
        writable: socket,
        close: () =>
          new Promise<void>((resolve) => {
            if (socket.closed) resolve();
            else socket.once("close", () => resolve()).end();
          }),
      });
    },
    async close() {
      await listener.close();
      await server.close();
      temp.remove();
    },
  };
};

// The agent-side [C] checks do not depend on the transport; core's in-memory run covers them.
const coverage = describeConformance("Unix domain socket", unixFactory, { kind: "stream", clientChecks: false });

describe("checklist coverage of the Unix socket run", () => {
  it("runs every server item, item 85 and every extra check over the socket (item 93)", () => {
    const expected = CHECKLIST.filter((i) => i.where === "suite" && !i.tags.includes("C")).map((i) => i.n);
    expect([...coverage.items].sort((a, b) => a - b)).toEqual(expected);
    expect([...coverage.skipped.keys()].filter((k) => typeof k === "number").sort()).toEqual([86, 87, 88]);
  });
});
