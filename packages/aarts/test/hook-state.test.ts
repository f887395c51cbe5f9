/**
 * The state file a hook process reads and writes on every tool call (`FileStateStore`): an update
 * that changes nothing is answered from one read, with neither the lock nor a write; an update
 * that changes something still writes under the lock, and runs again on what another process
 * stored between its first read and the lock.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FileStateStore } from "../src/host/state.js";

const dir = mkdtempSync(join(tmpdir(), "aarts-hook-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Counter {
  n: number;
  seen: string[];
}

describe("FileStateStore.update on the hook's path", () => {
  it("changes nothing on disk, and takes no lock, when the new value is the stored one", async () => {
    const store = new FileStateStore(join(dir, "same"), { lockTimeoutMs: 50 });
    await store.update<Counter>("s", () => ({ n: 1, seen: [] }));
    const file = store.fileOf("s");
    const before = statSync(file);
    // Another process holds the lock: an update that changes something cannot take it ...
    writeFileSync(`${file}.lock`, "");
    await expect(store.update<Counter>("s", (c) => ({ ...c!, n: c!.n + 1 }))).rejects.toThrow(/held by another process/);
    // ... one that changes nothing needs no lock, and leaves the file as it was.
    expect(await store.update<Counter>("s", (c) => c)).toEqual({ n: 1, seen: [] });
    const after = statSync(file);
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
    expect(readFileSync(file, "utf8")).toBe('{"n":1,"seen":[]}');
    rmSync(`${file}.lock`);
  });

  it("writes a changed value atomically under the lock and leaves no lock or temporary file", async () => {
    const store = new FileStateStore(join(dir, "changed"));
    for (let i = 0; i < 3; i++) await store.update<Counter>("s", (c) => ({ n: (c?.n ?? 0) + 1, seen: [] }));
    expect(await store.read<Counter>("s")).toEqual({ n: 3, seen: [] });
    expect(readdirSync(join(dir, "changed"))).toEqual([store.fileOf("s").slice(join(dir, "changed").length + 1)]);
  });

  it("runs the update again on what another process stored after the first read", async () => {
    const store = new FileStateStore(join(dir, "race"));
    await store.update<Counter>("s", () => ({ n: 1, seen: [] }));
    const file = store.fileOf("s");
    const calls: number[] = [];
    const result = await store.update<Counter>("s", (c) => {
      calls.push(c!.n);
      // The first call sees n = 1; meanwhile another process stores n = 10.
      if (calls.length === 1) writeFileSync(file, JSON.stringify({ n: 10, seen: ["other"] }));
      return { n: c!.n + 1, seen: [...c!.seen, "mine"] };
    });
    expect(calls).toEqual([1, 10]);
    expect(result).toEqual({ n: 11, seen: ["other", "mine"] });
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ n: 11, seen: ["other", "mine"] });
  });

  it("keeps the answer of the first call when nothing changed between the read and the lock", async () => {
    const store = new FileStateStore(join(dir, "once"));
    await store.update<Counter>("s", () => ({ n: 1, seen: [] }));
    let calls = 0;
    expect(await store.update<Counter>("s", (c) => (calls++, { n: c!.n + 1, seen: [] }))).toEqual({ n: 2, seen: [] });
    expect(calls).toBe(1);
    expect(await store.read<Counter>("s")).toEqual({ n: 2, seen: [] });
  });
});
