/** UnixSocketServer / listenUnix: the socket file, connections, raw bytes, limits. */
import { lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, unlinkSync, writeFileSync, existsSync } from "node:fs";
import { connect as netConnect, createServer, type Socket } from "node:net";
import { AhpClient, AhpServer, type AhpServerOptions } from "@ahp/core";
import {
  MAX_SOCKET_PATH_BYTES,
  UnixSocketClientTransport,
  UnixSocketServer,
  UnixSocketServerTransport,
  listenUnix,
  type UnixSocketServerOptions,
} from "@ahp/transport-unix";
import { afterEach, describe, expect, it } from "vitest";
import { deferred, fixture, runNode, startHarness, tempDir, until, untilSteady } from "./helpers.js";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function temp() {
  const t = tempDir();
  cleanups.push(t.remove);
  return t;
}

const allowServer = (options: AhpServerOptions = {}) =>
  new AhpServer({
    handlers: {
      onEvent: async (event) => {
        const p = (event.payload ?? {}) as { n?: number; ms?: number };
        if (p.ms !== undefined) await new Promise((resolve) => setTimeout(resolve, p.ms));
        return { decision: "allow", metadata: { n: p.n ?? null } };
      },
    },
    ...options,
  });

async function listen(path: string, options: Partial<UnixSocketServerOptions> = {}, server = allowServer()) {
  const listener = await listenUnix(server, { path, ...options });
  cleanups.push(() => listener.close());
  return listener;
}

async function client(path: string) {
  const c = new AhpClient();
  await c.connect(new UnixSocketClientTransport({ path }));
  cleanups.push(() => c.close());
  return c;
}

/** A raw socket that collects lines. */
async function rawSocket(path: string) {
  const socket = netConnect({ path });
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  cleanups.push(() => socket.destroy());
  let text = "";
  const lines: string[] = [];
  const waiters: Array<() => void> = [];
  const ended = deferred();
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    text += chunk;
    let nl: number;
    while ((nl = text.indexOf("\n")) !== -1) {
      lines.push(text.slice(0, nl));
      text = text.slice(nl + 1);
    }
    for (const waiter of waiters.splice(0)) waiter();
  });
  socket.on("end", () => ended.resolve());
  return {
    socket,
    ended: ended.promise,
    all: () => lines,
    async json(): Promise<Record<string, unknown>> {
      while (lines.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
      return JSON.parse(lines.shift()!) as Record<string, unknown>;
    },
  };
}

const event = (id: string, n: number, payload: Record<string, unknown> = {}) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    method: "ahp/event",
    params: {
      event_type: "pre_action",
      session_id: "s",
      agent_id: "a",
      timestamp: "2026-06-01T10:15:00Z",
      depth: 0,
      payload: { n, ...payload },
    },
  });

describe("UnixSocketServer: the socket file", () => {
  it("creates the socket with mode 0600 by default and leaves no temporary files", async () => {
    const t = temp();
    const path = t.path();
    const listener = await listen(path);
    expect(listener.listening).toBe(true);
    const stat = lstatSync(path);
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
    expect(readdirSync(t.dir)).toEqual(["h.sock"]);
    expect(await (await client(path)).send("pre_action", { n: 1 })).toMatchObject({ decision: "allow" });
  });

  it("applies a custom mode", async () => {
    const path = temp().path();
    await listen(path, { mode: 0o660 });
    expect(statSync(path).mode & 0o777).toBe(0o660);
  });

  it("removes the socket file on close, and only its own", async () => {
    const path = temp().path();
    const listener = await listen(path);
    await listener.close();
    expect(existsSync(path)).toBe(false);
    expect(listener.listening).toBe(false);

    const other = temp().path();
    const second = await listen(other);
    unlinkSync(other); // someone replaced the path with a file of their own
    writeFileSync(other, "not ours");
    await second.close();
    expect(readFileSync(other, "utf8")).toBe("not ours");
  });

  it("replaces a stale socket left by a killed process", async () => {
    const path = temp().path();
    const harnessProcess = await startHarness(path);
    await harnessProcess.kill("SIGKILL");
    expect(lstatSync(path).isSocket()).toBe(true); // still there, nobody listening
    await listen(path);
    expect(await (await client(path)).send("pre_action", { n: 2 })).toEqual({ decision: "allow", metadata: { n: 2 } });
  });

  it("refuses to take over a live socket of another process, leaving it working", async () => {
    const path = temp().path();
    const harnessProcess = await startHarness(path);
    cleanups.push(() => harnessProcess.kill());
    const before = lstatSync(path);
    await expect(listenUnix(allowServer(), { path })).rejects.toMatchObject({
      code: "TRANSPORT_ERROR",
      details: { code: "EADDRINUSE", path },
    });
    const after = lstatSync(path);
    expect(after.ino).toBe(before.ino);
    expect(await (await client(path)).send("pre_action", { n: 3 })).toEqual({ decision: "allow", metadata: { n: 3 } });
  });

  it("refuses a live socket of this process too", async () => {
    const path = temp().path();
    await listen(path);
    const error = await listenUnix(allowServer(), { path }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "TRANSPORT_ERROR", details: { code: "EADDRINUSE" } });
    expect((error as Error).message).toMatch(/another server is listening/);
  });

  it("never deletes a file, a directory or a symlink that is at the path", async () => {
    const t = temp();
    const file = t.path("file.sock");
    writeFileSync(file, "precious");
    await expect(listenUnix(allowServer(), { path: file })).rejects.toMatchObject({ details: { code: "EEXIST" } });
    expect(readFileSync(file, "utf8")).toBe("precious");

    const dir = t.path("dir.sock");
    mkdirSync(dir);
    await expect(listenUnix(allowServer(), { path: dir })).rejects.toMatchObject({ details: { code: "EEXIST" } });
    expect(statSync(dir).isDirectory()).toBe(true);

    const link = t.path("link.sock");
    symlinkSync(file, link);
    await expect(listenUnix(allowServer(), { path: link })).rejects.toMatchObject({ details: { code: "EEXIST" } });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readdirSync(t.dir).sort()).toEqual(["dir.sock", "file.sock", "link.sock"]);
  });

  it("rejects invalid options and a second listen()", async () => {
    const server = allowServer();
    expect(() => new UnixSocketServer(server, { path: "" })).toThrow(/path/);
    expect(() => new UnixSocketServer(server, { path: "\0abstract" })).toThrow(/abstract/);
    expect(() => new UnixSocketServer(server, { path: `/tmp/${"p".repeat(MAX_SOCKET_PATH_BYTES)}` })).toThrow(/limit/);
    expect(() => new UnixSocketServer(server, { path: "/tmp/x.sock", mode: 0o1777 })).toThrow(/mode/);
    expect(() => new UnixSocketServer(server, { path: "/tmp/x.sock", maxConnections: 0 })).toThrow(/maxConnections/);
    const listener = await listen(temp().path());
    await expect(listener.listen()).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });

  it("fails listen() with TRANSPORT_ERROR when the directory does not exist", async () => {
    const path = `${temp().dir}/missing/h.sock`;
    await expect(listenUnix(allowServer(), { path })).rejects.toMatchObject({ code: "TRANSPORT_ERROR" });
  });
});

describe("UnixSocketServer: connections", () => {
  it("serves many concurrent connections", async () => {
    const path = temp().path();
    const listener = await listen(path);
    const clients = await Promise.all(Array.from({ length: 20 }, () => client(path)));
    expect(listener.connectionCount).toBe(20);
    const answers = await Promise.all(
      clients.flatMap((c, k) => Array.from({ length: 50 }, (_, i) => c.send("pre_action", { n: k * 100 + i, ms: i % 5 }))),
    );
    expect(answers.map((a) => (a as unknown as { metadata: { n: number } }).metadata.n)).toEqual(
      clients.flatMap((_, k) => Array.from({ length: 50 }, (_, i) => k * 100 + i)),
    );
  });

  it("at maxConnections closes the longest-idle connection for a newcomer; refuses (-32003) only when every one is busy", async () => {
    const path = temp().path();
    const errors: Error[] = [];
    const accepted: UnixSocketServerTransport[] = [];
    const gates: Array<() => void> = [];
    const busy = new AhpServer({
      handlers: {
        onEvent: () => new Promise((resolve) => gates.push(() => resolve({ decision: "allow" }))),
      },
    });
    await listen(path, { maxConnections: 2, onerror: (e) => errors.push(e), onconnection: (t) => accepted.push(t) }, busy);
    await client(path);
    const second = await client(path);
    // Both idle: the newcomer is served, the connection idle the longest (the first) is closed.
    const third = await client(path);
    expect(third.isHandshaken).toBe(true);
    await accepted[0]!.closed;
    expect(errors.map((e) => (e as { rejection?: { action: string } }).rejection?.action)).toEqual(["closed_longest_idle"]);
    // Both served connections have a request in flight: now a newcomer is refused.
    const pending = [second.send("pre_action", {}), third.send("pre_action", {})];
    await until(() => gates.length === 2);
    const fourth = new AhpClient();
    const error = await fourth.connect(new UnixSocketClientTransport({ path })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "CONNECTION_CLOSED", details: { peerError: "Server busy: too many connections (limit 2)" } });
    expect((errors.at(-1) as { rejection?: { action: string } }).rejection?.action).toBe("refused");
    for (const open of gates) open();
    expect(await Promise.all(pending)).toEqual([{ decision: "allow" }, { decision: "allow" }]);
    const fifth = await client(path);
    expect(fifth.isHandshaken).toBe(true);
    expect(accepted).toHaveLength(4);
  });

  it("close() ends every connection and resolves once they are gone", async () => {
    const path = temp().path();
    const listener = await listen(path);
    const clients = await Promise.all([client(path), client(path), client(path)]);
    await Promise.all([listener.close(), listener.close()]);
    expect(listener.connectionCount).toBe(0);
    for (const c of clients) expect(await c.closed).toMatchObject({ code: "CONNECTION_CLOSED" });
    await expect(client(path)).rejects.toMatchObject({ code: "TRANSPORT_ERROR", details: { code: "ENOENT" } });
  });

  it("answers what an agent sent before half-closing, then ends the connection", async () => {
    const path = temp().path();
    await listen(path);
    const raw = await rawSocket(path);
    // The last line has no newline; "b" is answered after the agent's end arrived.
    raw.socket.end(`${event("a", 1)}\n${event("b", 2, { ms: 30 })}`);
    await raw.ended;
    expect(
      raw
        .all()
        .map((l) => (JSON.parse(l) as { id: string }).id)
        .sort(),
    ).toEqual(["a", "b"]);
  });

  it("gives each connection to onconnection, and lets the AhpServer close them", async () => {
    const path = temp().path();
    const server = allowServer();
    const seen: UnixSocketServerTransport[] = [];
    const listener = await listen(path, { onconnection: (t) => seen.push(t) }, server);
    const c = await client(path);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.info).toEqual({ transport: "unix", remote: path });
    await server.close();
    expect(await seen[0]!.closed).toBeUndefined();
    expect(await c.closed).toMatchObject({ code: "CONNECTION_CLOSED" });
    expect(listener.connectionCount).toBe(0);
  });
});

describe("UnixSocketServer: bytes on the wire (item 93)", () => {
  it("speaks the same NDJSON as stdio: \\r\\n, blank lines, whitespace, pieces, one line per answer", async () => {
    const path = temp().path();
    await listen(path);
    const raw = await rawSocket(path);
    const wire = `\r\n\n  ${event("w1", 1)}\r\n \t\n${event("w2", 2)}  \n`;
    const bytes = Buffer.from(wire);
    for (let i = 0; i < bytes.length; i += 7) raw.socket.write(bytes.subarray(i, i + 7));
    const answers = [await raw.json(), await raw.json()];
    expect(answers.map((a) => a.id).sort()).toEqual(["w1", "w2"]);
    for (const a of answers) expect(a).toMatchObject({ jsonrpc: "2.0", result: { decision: "allow" } });
    raw.socket.write('{"jsonrpc":"2.0","id":"bad",\n');
    expect(await raw.json()).toMatchObject({ id: null, error: { code: -32700 } });
    raw.socket.write(`${event("w3", 3)}\n`);
    expect(await raw.json()).toMatchObject({ id: "w3" });
  });

  it("answers an oversized line with -32002 and keeps the connection", async () => {
    const path = temp().path();
    await listen(path, { maxMessageBytes: 2048 });
    const raw = await rawSocket(path);
    raw.socket.write(`${JSON.stringify({ jsonrpc: "2.0", id: "huge", method: "ahp/event", params: { pad: "p".repeat(100_000) } })}\n`);
    expect(await raw.json()).toMatchObject({ id: "huge", error: { code: -32002 } });
    raw.socket.write(`${event("fine", 1)}\n`);
    expect(await raw.json()).toMatchObject({ id: "fine", result: { decision: "allow" } });
  });

  it("waits for a slow reader to drain instead of buffering every answer (server side)", async () => {
    const path = temp().path();
    const reason = "r".repeat(64 * 1024);
    let handled = 0;
    const server = new AhpServer({ handlers: { onEvent: () => (handled++, { decision: "block" as const, reason }) } });
    const sockets: Socket[] = [];
    const net = createServer({ allowHalfOpen: true }, (socket) => {
      sockets.push(socket);
      void server.connect(new UnixSocketServerTransport(socket));
    });
    await new Promise<void>((resolve) => net.listen(path, resolve));
    cleanups.push(async () => {
      await server.close();
      await new Promise<void>((resolve) => net.close(() => resolve()));
    });
    const raw = netConnect({ path });
    await new Promise<void>((resolve) => raw.once("connect", resolve));
    cleanups.push(() => raw.destroy());
    raw.pause(); // the agent does not read
    for (let i = 0; i < 100; i++) raw.write(`${event(`s${i}`, i)}\n`);
    // Let the server read the requests and answer them (6.4 MiB of answers), watching its buffer
    // until the count of handled requests holds still.
    let maxBuffered = 0;
    await untilSteady(() => {
      maxBuffered = Math.max(maxBuffered, sockets[0]?.writableLength ?? 0);
      return handled;
    }, "the count of handled requests");
    expect(sockets).toHaveLength(1);
    expect(maxBuffered).toBeGreaterThan(0);
    expect(maxBuffered).toBeLessThanOrEqual(reason.length + 200); // one answer at a time
    // Reading again lets all answers through.
    let received = 0;
    const all = deferred();
    raw.on("data", (chunk: Buffer) => {
      for (const byte of chunk) if (byte === 0x0a && ++received === 100) all.resolve();
    });
    raw.resume();
    await all.promise;
  });
});

describe("UnixSocketServer in a real process", () => {
  it("lets the process exit on its own after close (no leaked handles) and removes the socket", async () => {
    const path = temp().path();
    // A leaked handle keeps the process alive for good; the generous deadline is for a busy machine.
    const result = await runNode(fixture("open-close.mjs"), [path], { deadlineMs: 60_000 });
    expect(result.exitedInTime).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("closed file-removed\n");
  }, 90_000);
});
