/**
 * UnixSocketClientTransport against in-process servers and harness processes (the fixtures
 * import the BUILT packages: build first; the root `pnpm test` does).
 */
import { createServer, type Server, type Socket } from "node:net";
import { AhpClient, AhpError, AhpLocalError, AhpServer, type AhpServerOptions } from "@ahp/core";
import {
  UnixSocketClientTransport,
  listenUnix,
  type UnixSocketClientTransportOptions,
  type UnixSocketServerOptions,
  type UnixSocketServerTransport,
} from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness, tempDir, untilSteady } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function socketPath(): string {
  const temp = tempDir();
  cleanups.push(temp.remove);
  return temp.path();
}

async function harness(options: AhpServerOptions = {}, listenOptions: Partial<UnixSocketServerOptions> = {}) {
  const path = socketPath();
  const server = new AhpServer({
    handlers: {
      onEvent: async (event) => {
        const p = (event.payload ?? {}) as { n?: number; ms?: number; do?: string; bytes?: number };
        if (p.do === "big") return { decision: "block", reason: "x".repeat(p.bytes ?? 0) };
        if (p.ms !== undefined) await new Promise((resolve) => setTimeout(resolve, p.ms));
        return { decision: "allow", metadata: { n: p.n ?? null } };
      },
    },
    ...options,
  });
  const listener = await listenUnix(server, { path, ...listenOptions });
  cleanups.push(() => listener.close());
  return { path, server, listener };
}

async function connect(
  path: string,
  options: Partial<UnixSocketClientTransportOptions> = {},
  clientOptions: ConstructorParameters<typeof AhpClient>[0] = {},
) {
  const errors: Error[] = [];
  const transport = new UnixSocketClientTransport({ path, ...options });
  const client = new AhpClient({ onerror: (e) => errors.push(e), ...clientOptions });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport, errors };
}

describe("UnixSocketClientTransport: round trips", () => {
  it("handshakes and matches answers by id", async () => {
    const { path } = await harness();
    const { client, transport } = await connect(path);
    expect(client.handshakeResponse?.protocol_version).toBe("2.4");
    expect(transport.info).toEqual({ transport: "unix", remote: path });
    expect(await client.send("pre_action", { n: 5 })).toEqual({ decision: "allow", metadata: { n: 5 } });
  });

  it("answers 1000 concurrent in-flight requests out of order, each matched by id (item 93)", async () => {
    const { path } = await harness();
    const { client } = await connect(path);
    const answers = await Promise.all(
      Array.from({ length: 1000 }, (_, n) => client.send("pre_action", n % 3 === 0 ? { n, ms: (n * 7) % 20 } : { n })),
    );
    answers.forEach((answer, n) => expect(answer).toEqual({ decision: "allow", metadata: { n } }));
  });
});

describe("UnixSocketClientTransport: connect errors", () => {
  it("rejects start() with TRANSPORT_ERROR (ENOENT) when nothing is at the path, and fires onclose once", async () => {
    const path = socketPath();
    const transport = new UnixSocketClientTransport({ path });
    const closes: Array<Error | undefined> = [];
    transport.onclose = (e) => closes.push(e);
    const error = await transport.start().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(AhpLocalError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: "TRANSPORT_ERROR", details: { code: "ENOENT", path } });
    expect(closes).toEqual([error]);
    await transport.close();
    expect(closes).toHaveLength(1);
  });

  it("rejects with ECONNREFUSED on a socket file nobody listens on (left by a killed process)", async () => {
    const path = socketPath();
    const harnessProcess = await startHarness(path);
    await harnessProcess.kill("SIGKILL"); // leaves the socket file behind
    const client = new AhpClient();
    await expect(client.connect(new UnixSocketClientTransport({ path }))).rejects.toMatchObject({
      code: "TRANSPORT_ERROR",
      details: { code: "ECONNREFUSED" },
    });
  });

  it("rejects bad options and a second start()", async () => {
    expect(() => new UnixSocketClientTransport({ path: "" })).toThrow(/path/);
    const { path } = await harness();
    const { transport } = await connect(path);
    await expect(transport.start()).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});

describe("UnixSocketClientTransport: the harness goes away", () => {
  it("fails pending requests at once when the harness process exits mid-request", async () => {
    const path = socketPath();
    const harnessProcess = await startHarness(path);
    cleanups.push(() => harnessProcess.kill());
    const { client } = await connect(path, {}, { timeoutMs: 30_000 });
    const results = await Promise.allSettled([
      client.send("pre_action", { do: "delay", ms: 20_000 }),
      client.send("pre_action", { do: "exit", code: 3 }),
    ]);
    // CONNECTION_CLOSED, not an answer after 20 s nor a TIMEOUT after 30 s: the exit failed them.
    for (const result of results) {
      expect(result).toMatchObject({ status: "rejected", reason: { code: "CONNECTION_CLOSED", details: { path } } });
    }
    expect((await client.closed)?.message).toMatch(/closed the connection/);
    expect((await harnessProcess.exited).code).toBe(3);
  });

  it("fails pending requests at once when the harness process is killed", async () => {
    const path = socketPath();
    const harnessProcess = await startHarness(path);
    const { client } = await connect(path, {}, { timeoutMs: 30_000 });
    const pending = client.send("pre_action", { do: "delay", ms: 20_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await client.send("pre_action", { n: 1 }); // the slow one is in flight at the harness
    await harnessProcess.kill("SIGKILL");
    const error = await pending;
    // CONNECTION_CLOSED, not an answer after 20 s nor a TIMEOUT after 30 s: the kill failed it.
    expect(error).toMatchObject({ code: "CONNECTION_CLOSED", details: { path } });
  });

  it("fails pending requests at once when an in-process server closes", async () => {
    const { path, listener } = await harness();
    const { client } = await connect(path, {}, { timeoutMs: 30_000 });
    const pending = client.send("pre_action", { ms: 20_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await client.send("pre_action", { n: 1 });
    await listener.close();
    // CONNECTION_CLOSED, not an answer after 20 s nor a TIMEOUT after 30 s: the close failed it.
    expect(await pending).toMatchObject({ code: "CONNECTION_CLOSED" });
  });
});

describe("UnixSocketClientTransport: close()", () => {
  it("closes cleanly and idempotently; the server sees the connection end", async () => {
    const serverSide: UnixSocketServerTransport[] = [];
    const { path, listener } = await harness({}, { onconnection: (t) => serverSide.push(t) });
    const { client, transport } = await connect(path);
    expect(listener.connectionCount).toBe(1);
    expect(serverSide).toHaveLength(1);
    const closes: Array<Error | undefined> = [];
    const previous = transport.onclose;
    transport.onclose = (e) => {
      closes.push(e);
      previous?.(e);
    };
    await Promise.all([transport.close(), transport.close()]);
    expect(closes).toEqual([undefined]);
    expect(await client.closed).toBeUndefined();
    await expect(transport.send({ jsonrpc: "2.0", method: "ahp/event", params: {} })).rejects.toMatchObject({
      code: "CONNECTION_CLOSED",
    });
    // The server side ends too.
    expect(await serverSide[0]!.closed).toBeUndefined();
    expect(listener.connectionCount).toBe(0);
  });

  it("closes before start() without connecting", async () => {
    const transport = new UnixSocketClientTransport({ path: socketPath() });
    await transport.close();
    expect(await transport.closed).toBeUndefined();
  });
});

describe("UnixSocketClientTransport: limits and backpressure", () => {
  it("refuses an oversized outgoing message locally; the connection keeps working", async () => {
    const { path } = await harness();
    const { client } = await connect(path, { maxMessageBytes: 4096 });
    await expect(client.send("pre_action", { blob: "y".repeat(10_000) })).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
    expect(await client.send("pre_action", { n: 2 })).toEqual({ decision: "allow", metadata: { n: 2 } });
  });

  it("fails a request whose answer is over the client's limit at once, and keeps the connection", async () => {
    const { path } = await harness();
    const { client, errors } = await connect(path, { maxMessageBytes: 4096 }, { timeoutMs: 30_000 });
    // MESSAGE_TOO_LARGE, not a TIMEOUT after 30 s: the answer over the limit failed the call.
    await expect(client.send("pre_action", { do: "big", bytes: 50_000 })).rejects.toMatchObject({ code: "MESSAGE_TOO_LARGE" });
    expect(errors.some((e) => AhpError.isInstance(e) && e.code === -32002)).toBe(true);
    expect(await client.send("pre_action", { n: 3 })).toEqual({ decision: "allow", metadata: { n: 3 } });
  });

  it("gets -32002 at once for a request over the harness's limit; the connection keeps working", async () => {
    const { path } = await harness({}, { maxMessageBytes: 4096 });
    const { client } = await connect(path, {}, { timeoutMs: 30_000 });
    // -32002 from the harness, not a TIMEOUT after 30 s.
    await expect(client.send("pre_action", { blob: "z".repeat(10_000) })).rejects.toMatchObject({ code: -32002 });
    expect(await client.send("pre_action", { n: 4 })).toEqual({ decision: "allow", metadata: { n: 4 } });
  });

  it("waits for the socket to drain instead of buffering without bound when the harness does not read", async () => {
    const path = socketPath();
    const accepted: Socket[] = [];
    const server: Server = createServer((socket) => {
      socket.pause(); // a harness that does not read
      accepted.push(socket);
    });
    await new Promise<void>((resolve) => server.listen(path, resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of accepted) socket.destroy();
          server.close(() => resolve());
        }),
    );
    const transport = new UnixSocketClientTransport({ path, closeGraceMs: 100 });
    transport.onerror = () => {};
    await transport.start();
    cleanups.push(() => transport.close());
    const line = "q".repeat(64 * 1024);
    let written = 0;
    const sends = Array.from({ length: 200 }, () =>
      transport.send({ jsonrpc: "2.0", method: "ahp/event", params: { line } }).then(
        () => void written++,
        () => undefined,
      ),
    );
    // 200 x 64 KiB = 12.5 MiB offered; the kernel buffers a few hundred KiB at most.
    expect(await untilSteady(() => written, "the count of sends written")).toBeLessThan(40);
    // Once the harness reads, everything goes through.
    for (const socket of accepted) socket.resume();
    await Promise.all(sends);
    expect(written).toBe(200);
  });
});
