/**
 * Write-ahead: a call's answer is released only after its record was stored; records of one
 * event-loop turn go out in one write; sink failures (disk full, permission lost, file deleted
 * while open) are reported and answered fail-closed by default; signed checkpoints; replicas.
 */
import { existsSync } from "node:fs";
import { chmod, readFile, symlink, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AhpClient, AhpServer, createLinkedPair, type AhpServerHandlers, type AhpServerOptions } from "@ahp/core";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import {
  FileAuditSink,
  MemoryAuditSink,
  genesisHash,
  recordHash,
  sealRecord,
  openAuditLog,
  readCheckpoint,
  verifyAuditLog,
  verifyAuditLogs,
  withAudit,
  type AuditIncident,
  type AuditRecord,
  type AuditSink,
  type UnauditedCall,
  type WithAuditOptions,
} from "../src/index.js";
import { entry, key, tempDir } from "./helpers.js";

let dir: string;
let cleanup: () => Promise<void>;
const closers: (() => Promise<unknown>)[] = [];
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  await cleanup();
});

function gate() {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A memory sink whose writes wait for `release()` and that counts writes and syncs. */
function heldSink() {
  const memory = new MemoryAuditSink();
  let held = gate();
  const writes: number[] = [];
  let syncs = 0;
  let failWith: Error | undefined;
  const sink: AuditSink = {
    open: () => memory.open(),
    append: (r) => memory.append(r),
    appendBatch: async (records) => {
      writes.push(records.length);
      await held.promise;
      if (failWith !== undefined) throw failWith;
      await memory.appendBatch(records);
    },
    sync: () => {
      syncs++;
      return Promise.resolve();
    },
    close: () => memory.close(),
  };
  return {
    sink,
    memory,
    writes,
    syncs: () => syncs,
    release: () => held.open(),
    hold: () => (held = gate()),
    fail: (error: Error | undefined) => (failWith = error),
  };
}

async function serve(
  handlers: AhpServerHandlers,
  recorder: Parameters<typeof withAudit>[1],
  options: WithAuditOptions = {},
  server: Omit<AhpServerOptions, "handlers"> = {},
) {
  const harness = new AhpServer({ ...server, handlers: withAudit(handlers, recorder, { observeMissing: false, ...options }) });
  const [agentSide, harnessSide] = createLinkedPair();
  await harness.connect(harnessSide);
  const client = new AhpClient({ timeoutMs: 10_000 });
  await client.connect(agentSide);
  closers.push(
    () => harness.close(),
    () => client.close(),
  );
  return client;
}

/** Polls until `done()` holds, with a generous deadline (fails instead of hanging; never a count of turns). */
async function until(done: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise<void>((resolve) => setTimeout(resolve, 5));
  expect(done()).toBe(true);
}

/**
 * Resolves once a request asked for after every earlier answer was released has its answer: the
 * harness answers it without a record (no such query), and the linked pair delivers in order, so
 * an earlier answer sent before it has arrived by then.
 */
const laterAnswer = (client: AhpClient) =>
  client.query("no_such_query", {}).then(
    () => undefined,
    () => undefined,
  );

/**
 * Resolves once a second log, asked to append after `log`'s appends, has written: group commit
 * starts a write on the turn after an append, so by then `log` has started every write it would
 * start for those appends.
 */
async function writesStartedBy(): Promise<void> {
  const other = await openAuditLog({ key, sink: new MemoryAuditSink(), checkpoint: false });
  await other.append(entry(0));
  await other.close();
}

const fileRecords = async (path: string) =>
  (await readFile(path, "utf8"))
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as AuditRecord);

describe("group commit", () => {
  it("the records appended in one turn go out in one write; appends resolve only once it returned", async () => {
    const held = heldSink();
    const log = await openAuditLog({ key, sink: held.sink });
    closers.push(() => log.close());
    let resolved = 0;
    const appends = Array.from({ length: 50 }, (_, i) => log.append(entry(i)).then(() => resolved++));
    await until(() => held.writes.length > 0);
    expect(held.writes).toEqual([50]);
    expect(resolved).toBe(0);
    // Appended while that write is in flight: the next group.
    const later = [log.append(entry(50)), log.append(entry(51))];
    await writesStartedBy();
    expect(held.writes).toEqual([50]);
    held.release();
    await Promise.all([...appends, ...later]);
    expect(held.writes).toEqual([50, 2]);
    expect(log.stats).toMatchObject({ groups: 2, records: 52, largestGroup: 50 });
    expect(log.head?.seq).toBe(52);
  });

  it("sync fsync: one sync per group on a custom sink", async () => {
    const held = heldSink();
    held.release();
    const log = await openAuditLog({ key, sink: held.sink, sync: "fsync", checkpoint: false });
    closers.push(() => log.close());
    await Promise.all(Array.from({ length: 20 }, (_, i) => log.append(entry(i))));
    await Promise.all([log.append(entry(20)), log.append(entry(21))]);
    expect(held.writes).toEqual([20, 2]);
    expect(held.syncs()).toBe(2);
  });

  it("withAudit releases a decision only after its record was written (sync write)", async () => {
    const held = heldSink();
    const log = await openAuditLog({ key, sink: held.sink });
    closers.push(() => log.close());
    const client = await serve({ onEvent: () => ({ decision: "allow" }) }, log);
    let answered = false;
    const answer = client.send("pre_action", { tool_name: "x" }).then((d) => {
      answered = true;
      return d;
    });
    await until(() => held.writes.length > 0);
    await laterAnswer(client);
    expect(held.writes).toEqual([1]);
    expect(answered).toBe(false);
    held.release();
    expect(await answer).toEqual({ decision: "allow" });
    expect(held.memory.text()).toContain('"decision":"allow"');
  });

  it("sync none releases at once; the record follows", async () => {
    const held = heldSink();
    const log = await openAuditLog({ key, sink: held.sink, sync: "none" });
    closers.push(() => log.close());
    const client = await serve({ onEvent: () => ({ decision: "allow" }) }, log);
    expect(await client.send("pre_action", { tool_name: "x" })).toEqual({ decision: "allow" });
    expect(held.memory.text()).toBe("");
    held.release();
    await log.flush();
    expect(held.memory.text()).toContain('"decision":"allow"');
  });

  it("a handler timeout's fail-closed answer waits for the timeout's record (holdAnswer)", async () => {
    const held = heldSink();
    const log = await openAuditLog({ key, sink: held.sink });
    closers.push(() => log.close());
    const client = await serve({ onEvent: () => new Promise(() => undefined) }, log, {}, { handlerTimeoutMs: 30 });
    let answered = false;
    const answer = client.send("pre_action", { tool_name: "slow" }).finally(() => (answered = true));
    answer.catch(() => undefined);
    // The failure record's write starts once the server gave up on the handler.
    await until(() => held.writes.length > 0);
    await laterAnswer(client);
    expect(held.writes).toEqual([1]);
    expect(answered).toBe(false);
    held.release();
    await expect(answer).rejects.toMatchObject({ code: -32603 });
    expect(held.memory.text()).toContain('"error":"Timeout after 30ms"');
  });
});

describe("sink failures", () => {
  it.skipIf(!existsSync("/dev/full"))(
    "an unwritable log (/dev/full) is refused when it is opened, with WRITE_FAILED naming the cause",
    async () => {
      const path = join(dir, "audit.log");
      await symlink("/dev/full", path);
      const opened = openAuditLog({ key, path, checkpoint: false });
      await expect(opened).rejects.toMatchObject({
        name: "AuditError",
        code: "WRITE_FAILED",
        message: `audit log ${path} is not writable: ENOSPC: no space left on device, write`,
      });
      // Nothing is left holding the log: the lock is released.
      expect(existsSync(`${path}.lock`)).toBe(false);
    },
  );

  it("a path that cannot be created is refused when it is opened (WRITE_FAILED)", async () => {
    const file = join(dir, "plain");
    await writeFile(file, "");
    await expect(openAuditLog({ key, path: join(file, "audit.log"), checkpoint: false })).rejects.toMatchObject({
      code: "WRITE_FAILED",
      message: expect.stringMatching(/is not writable: .*(EEXIST|ENOTDIR)/) as unknown,
    });
  });

  it("disk full while running (ENOSPC): loud, fail-closed by default, and never silent", async () => {
    const held = heldSink();
    held.release();
    const incidents: AuditIncident[] = [];
    const log = await openAuditLog({ key, sink: held.sink, onincident: (i) => incidents.push(i) });
    closers.push(() => log.close());
    held.fail(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }));
    const unaudited: UnauditedCall[] = [];
    const client = await serve({ onEvent: () => ({ decision: "allow" }) }, log, { onunaudited: (u) => unaudited.push(u) });
    expect(await client.send("pre_action", { tool_name: "x" })).toEqual({
      decision: "block",
      reason: "audit log unavailable (ENOSPC): the decision is withheld",
    });
    expect(log.available).toBe(false);
    expect(incidents[0]).toMatchObject({ kind: "write_failed", records: 1, consecutive: 1 });
    expect(incidents[0]!.message).toContain("ENOSPC");
    expect(unaudited).toMatchObject([{ outcome: "failed_closed" }]);
    // A typed event gets its own fail-closed form; a query fails.
    await expect(client.query("capabilities", {})).rejects.toMatchObject({ code: -32603 });
  });

  it("--audit-failure open: the handler's answer is released, reported as unrecorded", async () => {
    const held = heldSink();
    held.release();
    const log = await openAuditLog({ key, sink: held.sink });
    closers.push(() => log.close());
    held.fail(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }));
    const unaudited: UnauditedCall[] = [];
    const client = await serve({ onEvent: () => ({ decision: "allow" }) }, log, { failure: "open", onunaudited: (u) => unaudited.push(u) });
    expect(await client.send("pre_action", { tool_name: "x" })).toEqual({ decision: "allow" });
    expect(unaudited).toMatchObject([{ outcome: "released", error: { code: "WRITE_FAILED" } }]);
  });

  it("permission lost (EACCES on write): fail closed; once writable again the gap is put on record", async () => {
    const held = heldSink();
    held.release();
    const incidents: AuditIncident[] = [];
    const log = await openAuditLog({ key, sink: held.sink, onincident: (i) => incidents.push(i) });
    closers.push(() => log.close());
    const client = await serve({ onEvent: () => ({ decision: "allow" }) }, log);
    expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
    held.fail(Object.assign(new Error("EACCES: permission denied, write"), { code: "EACCES" }));
    expect(await client.send("pre_action", {})).toMatchObject({
      decision: "block",
      reason: "audit log unavailable (EACCES): the decision is withheld",
    });
    expect(await client.send("pre_action", {})).toMatchObject({ decision: "block" });
    held.fail(undefined);
    expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
    await log.flush();
    expect(incidents.map((i) => i.kind)).toEqual(["write_failed", "write_failed", "restored"]);
    const records = held.memory
      .text()
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => JSON.parse(l) as AuditRecord);
    expect(records.map((r) => r.kind)).toEqual(["decision", "decision", "incident"]);
    expect(records[2]!.data).toMatchObject({ incident: "unavailable", failed_writes: 2, records_not_written: 2 });
    const file = join(dir, "copy.log");
    await writeFile(file, held.memory.text());
    expect(await verifyAuditLog(file, key)).toMatchObject({ status: "intact", records: 3 });
  });

  it.skipIf(process.getuid?.() === 0)(
    "permission lost on the directory: a deleted file cannot be created again, calls fail closed",
    async () => {
      const path = join(dir, "audit.log");
      const log = await openAuditLog({ key, path, checkpoint: false });
      closers.push(async () => {
        await chmod(dir, 0o700);
        await log.close();
      });
      const client = await serve({ onEvent: () => ({ decision: "allow" }) }, log);
      expect(await client.send("pre_action", {})).toEqual({ decision: "allow" });
      await unlink(path);
      await chmod(dir, 0o500);
      expect(await client.send("pre_action", {})).toMatchObject({
        decision: "block",
        reason: expect.stringContaining("EACCES") as unknown,
      });
    },
  );

  it("file deleted while open: the link check finds it, a new file gets what only the deleted file held, the incident is on record, the chain continues", async () => {
    const path = join(dir, "audit.log");
    const incidents: AuditIncident[] = [];
    const log = await openAuditLog({ key, path, onincident: (i) => incidents.push(i) });
    closers.push(() => log.close());
    const client = await serve({ onEvent: () => ({ decision: "allow" }) }, log);
    for (let i = 0; i < 3; i++) await client.send("pre_action", { n: i });
    await unlink(path);
    expect(await client.send("pre_action", { n: 3 })).toEqual({ decision: "allow" });
    // The link count is checked after that write, at once or (the last check being recent) by a
    // timer LINK_CHECK_MS later.
    await vi.waitFor(() => expect(incidents.map((i) => i.kind)).toEqual(["file_replaced"]), { timeout: 30_000, interval: 10 });
    await log.flush();
    const records = await fileRecords(path);
    const incident = records.at(-1)!;
    expect(incident).toMatchObject({ seq: 5, kind: "incident", data: { incident: "file_replaced" } });
    // The records written after the last check that found the file intact are in the new file, in order.
    const lastInDeleted = (incident.data as { last_seq_in_deleted_file: number }).last_seq_in_deleted_file;
    expect(lastInDeleted).toBeGreaterThanOrEqual(1);
    expect(lastInDeleted).toBeLessThanOrEqual(3);
    const copied = Array.from({ length: 4 - lastInDeleted }, (_, i) => [lastInDeleted + 1 + i, "decision"]);
    expect(records.map((r) => [r.seq, r.kind])).toEqual([...copied, [5, "incident"]]);
    await log.close();
    // The new file lacks the head (the records up to lastInDeleted went with the deleted file): verification says so.
    expect((await verifyAuditLog(path, key)).break).toMatchObject({ kind: "deleted", seq: lastInDeleted + 1 });
    // Accepted as cut on purpose, it verifies from there on; the checkpoint (seq 5) is present in it.
    expect(await verifyAuditLog(path, key, { allowMissingHead: true })).toMatchObject({
      ok: true,
      records: records.length,
      checkpoint: { status: "verified", seq: 5 },
    });
  });

  it("file deleted while open, then one more record and close: whichever check finds it, the record is in a new file", async () => {
    const path = join(dir, "audit.log");
    const incidents: AuditIncident[] = [];
    const log = await openAuditLog({ key, path, checkpoint: false, onincident: (i) => incidents.push(i) });
    await log.append(entry(0)); // the first write checks the link count
    await unlink(path);
    // Within LINK_CHECK_MS of the last check the write does not look; the timer or close does.
    await log.append(entry(1));
    await log.close();
    expect(incidents.map((i) => i.kind)).toEqual(["file_replaced"]);
    const records = await fileRecords(path);
    expect(records[0]).toMatchObject({ seq: 2, kind: "decision", latency_us: 101 });
    expect(records.slice(1).map((r) => r.kind)).toEqual(records.slice(1).map(() => "incident"));
  });
});

describe("signed checkpoints", () => {
  it("written on close and on demand; a removed, altered or foreign checkpoint is reported", async () => {
    const path = join(dir, "audit.log");
    const log = await openAuditLog({ key, path, checkpoint: { intervalMs: 60_000 } });
    for (let i = 0; i < 5; i++) await log.append(entry(i));
    await log.checkpoint();
    expect((await readCheckpoint(`${path}.checkpoint`)) as unknown).toMatchObject({ checkpoint: { seq: 5, type: "checkpoint" } });
    await log.append(entry(5));
    await log.close();
    expect((await readCheckpoint(`${path}.checkpoint`)) as unknown).toMatchObject({ checkpoint: { seq: 6 } });
    expect(await verifyAuditLog(path, key)).toMatchObject({ status: "intact", checkpoint: { status: "verified", seq: 6 } });

    const text = await readFile(`${path}.checkpoint`, "utf8");
    await writeFile(`${path}.checkpoint`, text.replace('"seq":6', '"seq":4'));
    expect((await verifyAuditLog(path, key)).break).toMatchObject({
      kind: "checkpoint",
      message: expect.stringContaining("altered or forged") as unknown,
    });
    await unlink(`${path}.checkpoint`);
    expect((await verifyAuditLog(path, key)).break).toMatchObject({
      kind: "checkpoint",
      message: expect.stringContaining("is missing") as unknown,
    });
    expect(await verifyAuditLog(path, key, { checkpoint: false })).toMatchObject({ status: "intact" });
  });

  it("written at the interval while records are added, not while idle", async () => {
    vi.useFakeTimers({ toFake: ["setInterval"] });
    try {
      const path = join(dir, "audit.log");
      const log = await openAuditLog({ key, path, checkpoint: { intervalMs: 500 } });
      closers.push(() => log.close());
      for (let i = 0; i < 3; i++) await log.append(entry(i));
      expect(log.stats.checkpoints).toBe(0);
      vi.advanceTimersByTime(500);
      await until(() => log.stats.checkpoints === 1);
      expect((await readCheckpoint(`${path}.checkpoint`)) as unknown).toMatchObject({ checkpoint: { seq: 3 } });
      vi.advanceTimersByTime(500);
      // checkpoint() joins a checkpoint in progress: any the interval started has finished after it.
      await log.checkpoint();
      expect(log.stats.checkpoints).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("a writer refuses to continue a log that ends before its checkpoint", async () => {
    const path = join(dir, "audit.log");
    const log = await openAuditLog({ key, path });
    for (let i = 0; i < 4; i++) await log.append(entry(i));
    await log.close();
    const lines = (await readFile(path, "utf8")).split("\n");
    await writeFile(path, `${lines.slice(0, 2).join("\n")}\n`);
    await expect(openAuditLog({ key, path })).rejects.toMatchObject({
      code: "CHAIN_BROKEN",
      message: expect.stringContaining("records 3..4 were removed") as unknown,
    });
  });
});

describe("replicas", () => {
  it("records carry the replica id; another replica does not continue the log; each chain verifies on its own", async () => {
    const a = join(dir, "a.log");
    const b = join(dir, "b.log");
    for (const [path, id] of [
      [a, "harness-a"],
      [b, "harness-b"],
    ] as const) {
      const log = await openAuditLog({ key, path, replicaId: id });
      for (let i = 0; i < 3; i++) await log.append(entry(i));
      await log.close();
    }
    expect((await fileRecords(a)).every((r) => r.replica === "harness-a")).toBe(true);
    await expect(openAuditLog({ key, path: a, replicaId: "harness-b" })).rejects.toMatchObject({ code: "REPLICA_MISMATCH" });
    await expect(openAuditLog({ key, path: a, replicaId: "bad id!" })).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });

    const ok = await verifyAuditLogs([a, b], key);
    expect(ok).toMatchObject({ ok: true, duplicateReplicas: [] });
    expect(ok.logs.map((l) => [l.report?.replica, l.report?.records])).toEqual([
      ["harness-a", 3],
      ["harness-b", 3],
    ]);
    const lines = (await readFile(b, "utf8")).split("\n");
    await writeFile(b, `${lines.slice(0, 1).join("\n")}\n`);
    const cut = await verifyAuditLogs([a, b], key);
    expect(cut.ok).toBe(false);
    expect(cut.logs.map((l) => l.report?.status)).toEqual(["intact", "broken"]);
    expect(cut.logs[1]!.report!.break).toMatchObject({ kind: "truncated", expectedSeq: 3 });
  });
});

describe("FileAuditSink.sync", () => {
  it("is a no-op once closed", async () => {
    const sink = new FileAuditSink({ path: join(dir, "s.log"), fsync: "never" });
    await sink.open();
    await sink.sync();
    await sink.close();
    await sink.sync();
  });
});

describe("FileAuditSink.appendBatchNow", () => {
  const sealed = (n: number) => {
    const records: AuditRecord[] = [];
    let prev = genesisHash(key.id);
    for (let i = 1; i <= n; i++) {
      const record = sealRecord({ ...entry(i), time: new Date(0).toISOString() }, { seq: i, prev, key });
      records.push(record);
      prev = recordHash(record);
    }
    return records;
  };

  it("writes at once when nothing is queued: the lines are in the file when it returns undefined", async () => {
    const path = join(dir, "now.log");
    const sink = new FileAuditSink({ path, fsync: "never" });
    await sink.open();
    const [a, b, c] = sealed(3);
    expect(sink.appendBatchNow([a!, b!])).toBeUndefined();
    expect((await readFile(path, "utf8")).split("\n").filter((l) => l !== "")).toHaveLength(2);
    expect(sink.appendBatchNow([c!])).toBeUndefined();
    await sink.close();
    expect(await verifyAuditLog(path, key)).toMatchObject({ ok: true, records: 3 });
  });

  it("with fsync always, returns the flush to wait for; after close it fails with CLOSED", async () => {
    const path = join(dir, "now-fsync.log");
    const sink = new FileAuditSink({ path, fsync: "always" });
    await sink.open();
    const [a, b] = sealed(2);
    const flushed = sink.appendBatchNow([a!]);
    expect(flushed).toBeInstanceOf(Promise);
    await flushed;
    await sink.close();
    await expect(Promise.resolve().then(() => sink.appendBatchNow([b!]))).rejects.toMatchObject({ code: "CLOSED" });
    expect(await verifyAuditLog(path, key)).toMatchObject({ ok: true, records: 1 });
  });
});
