/** The file store: atomic records, corrupt files refused by name, an unwritable store refuses the suspend. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deferred } from "@ahp/conformance";
import { afterEach, describe, expect, it } from "vitest";
import { FileSuspensionStore, recordFileName, SuspensionStoreError, type StoredSuspension } from "../src/index.js";
import { observe, rig, suspend, untilState, type Rig } from "./helpers/setup.js";
import { lifecycleEvents } from "./helpers/wire.js";

const dirs: string[] = [];
let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), "acp-store-"));
  dirs.push(d);
  return d;
};

const record = (sessionId: string, extra: Partial<StoredSuspension> = {}): StoredSuspension => ({
  v: 1,
  sessionId,
  state: "suspended",
  handle: "sus_1",
  initiator: "client",
  initiatorDetail: "client",
  mode: "finish_step",
  suspendedAt: "2026-11-21T10:00:00.000Z",
  cwd: "/w",
  mcpServers: [],
  issuedHandles: ["sus_1"],
  consumedHandles: [],
  ...extra,
});

describe("FileSuspensionStore", () => {
  it("writes one file per session atomically and reads every record back; leftovers of a crashed write are removed", async () => {
    const dir = tmp();
    const store = new FileSuspensionStore(dir);
    await store.save(record("a/b c"));
    await store.save(record("two", { resumeWhen: { timeout: { durationMinutes: 5, onTimeout: "fail" } } }));
    await store.save(record("two", { state: "active", handle: null }));
    writeFileSync(join(dir, `${recordFileName("x")}.abc.tmp`), "{half");
    const all = await new FileSuspensionStore(dir).loadAll();
    expect(all.map((x) => x.sessionId).sort()).toEqual(["a/b c", "two"]);
    expect(all.find((x) => x.sessionId === "two")!.state).toBe("active");
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(JSON.parse(readFileSync(join(dir, recordFileName("a/b c")), "utf8")).sessionId).toBe("a/b c");
    await store.remove("two");
    expect((await store.loadAll()).map((x) => x.sessionId)).toEqual(["a/b c"]);
  });

  it("refuses a corrupt file (bad JSON, bad shape, wrong file name) with an error naming it", async () => {
    for (const [name, text] of [
      [recordFileName("s"), "{oops"],
      [recordFileName("s"), JSON.stringify({ v: 1, sessionId: "s", state: "paused" })],
      ["0000.suspension.json", JSON.stringify(record("other"))],
    ] as const) {
      const dir = tmp();
      writeFileSync(join(dir, name), text);
      const error = await new FileSuspensionStore(dir).loadAll().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SuspensionStoreError);
      expect((error as SuspensionStoreError).code).toBe("CORRUPT");
      expect((error as SuspensionStoreError).path).toBe(join(dir, name));
      expect((error as Error).message).toContain(join(dir, name));
    }
  });

  it("an unwritable store directory refuses an idle suspend; the session is never reported suspended", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "file"), "x");
    // A store directory that cannot be created stops the start.
    const bad = await new FileSuspensionStore(join(dir, "file", "store")).loadAll().catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: "READ_FAILED" });
    // One that stops being writable while running refuses the suspend.
    const storeDir = join(dir, "store");
    r = await rig({ bridge: { store: new FileSuspensionStore(storeDir) } });
    const id = await r.open();
    rmSync(storeDir, { recursive: true, force: true });
    writeFileSync(storeDir, "not a directory");
    const error = await suspend(r.ctx, { sessionId: id }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: -32603, data: { reason: "store_unavailable" } });
    expect(r.bridge.stateOf(id)).toBe("active.idle");
    await observe(); // the suspend was refused (answered above): a lifecycle update would be on the wire by now
    expect(lifecycleEvents(r.log)).toEqual([]);
  });

  it("an unwritable store refuses a suspend during a turn: the prompt ends without a handle, no lifecycle, state active", async () => {
    const go = deferred();
    r = await rig({ agent: { turn: async (t) => (await go.promise, t.cancelled() ? "cancelled" : "end_turn") } });
    r.store.failWrites = new Error("EROFS: read-only file system");
    const id = await r.open();
    const p = r.ctx.request("session/prompt", { sessionId: id, prompt: [{ type: "text", text: "go" }] });
    await r.agent.nextTurn();
    const s = suspend(r.ctx, { sessionId: id, mode: "wait_for_completion" }).catch((e: unknown) => e);
    await untilState(r.bridge, id, "suspending");
    go.resolve();
    const [pr, err] = await Promise.all([p, s]);
    expect(pr._meta?.["ahpHarness/suspend"]).toBeUndefined();
    expect(err).toMatchObject({ code: -32603, data: { reason: "store_unavailable", detail: expect.stringContaining("EROFS") } });
    expect(r.bridge.stateOf(id)).toBe("active.idle");
    await observe(); // the suspend was refused (answered above): a lifecycle update would be on the wire by now
    expect(lifecycleEvents(r.log)).toEqual([]);
  });
});
