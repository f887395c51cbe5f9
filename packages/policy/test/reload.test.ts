import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AhpClient, AhpServer, createLinkedPair } from "@ahp/core";
import {
  PolicyEngine,
  PolicyError,
  createPolicyHandler,
  loadPolicy,
  watchPolicyFile,
  type CompiledPolicy,
  type PolicyWatcher,
} from "@ahp/policy";
import { bash } from "./helpers.js";

/** How long a wait for a reload lasts before it fails: generous, because the machine may be busy. */
const WAIT_MS = 60_000;
// A test must outlive its waits, so that a failed wait reports what it awaited.
vi.setConfig({ testTimeout: WAIT_MS + 30_000 });

/** A policy whose only rule blocks bash with a reason and metadata naming the version. */
const version = (v: number) => `version: 1
name: v${v}
rules:
  - id: rule-v${v}
    events: pre_action
    match: { tool: bash }
    action:
      decision: block
      reason: blocked by v${v}
      metadata: { version: ${v} }
`;

/** Resolves with the next value passed to the returned callback. */
function nextCall<T>() {
  let resolve!: (v: T) => void;
  let promise = new Promise<T>((r) => (resolve = r));
  const calls: T[] = [];
  return {
    calls,
    callback: (v: T) => {
      calls.push(v);
      const r = resolve;
      promise = new Promise<T>((res) => (resolve = res));
      r(v);
    },
    /** The next value, or a failure naming it after a generous deadline (the machine may be busy). */
    next: (): Promise<T> => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      return Promise.race([
        promise.finally(() => clearTimeout(timer)),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no callback within ${WAIT_MS} ms`)), WAIT_MS);
        }),
      ]);
    },
  };
}

describe("hot reload", () => {
  let dir: string;
  let file: string;
  let watcher: PolicyWatcher | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "ahp-policy-watch-"));
    file = join(dir, "policy.yaml");
    writeFileSync(file, version(1));
  });
  afterEach(async () => {
    await watcher?.close();
    watcher = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("reload() swaps in the new file; an invalid file keeps the old policy and throws with file and line", async () => {
    const engine = await PolicyEngine.fromFile(file);
    expect(engine.evaluate(bash("ls")).ruleId).toBe("rule-v1");
    writeFileSync(file, version(2));
    await engine.reload();
    expect(engine.evaluate(bash("ls")).ruleId).toBe("rule-v2");

    writeFileSync(file, "version: 1\nrules:\n  - id: broken\n    events: pre_action\n    action: { decision: block }\n");
    const error = await engine.reload().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(PolicyError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ file, line: 5, ruleId: "broken" });
    expect(engine.evaluate(bash("ls")).ruleId).toBe("rule-v2");
  });

  it("watches real file writes, reports invalid versions and keeps the policy in force", async () => {
    const engine = await PolicyEngine.fromFile(file);
    const reloads = nextCall<CompiledPolicy>();
    const errors = nextCall<Error>();
    watcher = engine.watch({ onReload: reloads.callback, onError: errors.callback, debounceMs: 20 });
    await watcher.ready;

    writeFileSync(file, version(2));
    expect((await reloads.next()).name).toBe("v2");
    expect(engine.evaluate(bash("ls")).ruleId).toBe("rule-v2");

    writeFileSync(file, "version: 1\nrules:\n  - id: bad\n    events: [pre_action\n");
    const error = await errors.next();
    expect(PolicyError.isInstance(error)).toBe(true);
    expect((error as PolicyError).file).toBe(file);
    expect((error as PolicyError).line).toBeGreaterThan(0);
    expect(engine.evaluate(bash("ls")).ruleId).toBe("rule-v2");

    writeFileSync(file, version(3));
    expect((await reloads.next()).name).toBe("v3");
    expect(engine.evaluate(bash("ls")).ruleId).toBe("rule-v3");
  });

  it("sees editors that replace the file by renaming a temporary file over it", async () => {
    const engine = await PolicyEngine.fromFile(file);
    const reloads = nextCall<CompiledPolicy>();
    watcher = engine.watch({ onReload: reloads.callback, debounceMs: 20 });
    await watcher.ready;
    for (const v of [2, 3]) {
      const tmp = join(dir, `.policy.yaml.${v}.tmp`);
      writeFileSync(tmp, version(v));
      renameSync(tmp, file);
      expect((await reloads.next()).name).toBe(`v${v}`);
      expect(engine.evaluate(bash("ls")).ruleId).toBe(`rule-v${v}`);
    }
  });

  it("debounces rapid writes into one reload of the last version", async () => {
    const engine = await PolicyEngine.fromFile(file);
    const reloads = nextCall<CompiledPolicy>();
    watcher = engine.watch({ onReload: reloads.callback, debounceMs: 150 });
    await watcher.ready;
    for (let v = 2; v <= 9; v++) await writeFile(file, version(v));
    expect((await reloads.next()).name).toBe("v9");
    // Nothing else is pending: a check reads the same text and does not reload again.
    await watcher.check();
    expect(reloads.calls.map((p) => p.name)).toEqual(["v9"]);
  });

  it("polls when asked to (fs.watchFile)", async () => {
    const reloads = nextCall<CompiledPolicy>();
    watcher = watchPolicyFile(file, { poll: true, pollIntervalMs: 20, debounceMs: 10, onReload: reloads.callback });
    expect(watcher.mode).toBe("poll");
    await watcher.ready;
    // A change before the first poll took its baseline goes unseen: the file changes (in size each
    // time) until the reload arrives, within a generous deadline.
    const deadline = Date.now() + WAIT_MS;
    for (let n = 1; reloads.calls.length === 0; n++) {
      if (Date.now() > deadline) throw new Error(`no reload within ${WAIT_MS} ms`);
      writeFileSync(file, `${version(4)}\n# changed size${"!".repeat(n)}\n`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(reloads.calls.map((p) => p.name)).toContain("v4");
  });

  it("reports a deleted file and keeps going", async () => {
    const engine = await PolicyEngine.fromFile(file);
    const errors = nextCall<Error>();
    const reloads = nextCall<CompiledPolicy>();
    watcher = engine.watch({ onError: errors.callback, onReload: reloads.callback, debounceMs: 20 });
    await watcher.ready;
    rmSync(file);
    expect((await errors.next()).message).toMatch(/could not be read \(ENOENT\)/);
    expect(engine.evaluate(bash("ls")).ruleId).toBe("rule-v1");
    writeFileSync(file, version(5));
    expect((await reloads.next()).name).toBe("v5");
  });

  it("swaps atomically under concurrent evaluation through a server", async () => {
    const engine = await PolicyEngine.fromFile(file);
    const server = new AhpServer({ handlers: createPolicyHandler(engine) });
    const [agentSide, harnessSide] = createLinkedPair();
    await server.connect(harnessSide);
    const client = new AhpClient();
    await client.connect(agentSide);
    try {
      const versions5 = [1, 2, 3, 4, 5].map((v) => loadPolicy(version(v)));
      const decisions: unknown[] = [];
      const calls: Promise<unknown>[] = [];
      let swaps = 0;
      for (let round = 0; round < 200; round++) {
        engine.swap(versions5[round % 5]!);
        swaps++;
        const first = client.send("pre_action", { tool_name: "bash", arguments: { command: "ls" } }).then((d) => decisions.push(d));
        calls.push(first);
        calls.push(client.send("pre_action", { tool_name: "bash", arguments: { command: "ls" } }).then((d) => decisions.push(d)));
        // Every third round's first request is answered before the next swap; the rest stay in flight across swaps.
        if (round % 3 === 0) await first;
      }
      await Promise.all(calls);
      expect(swaps).toBe(200);
      expect(decisions).toHaveLength(400);
      const versions = new Set<number>();
      for (const d of decisions as { decision: string; reason: string; metadata: { version: number; rule: string } }[]) {
        const v = d.metadata.version;
        versions.add(v);
        // Every part of the decision comes from one and the same version.
        expect(d).toEqual({ decision: "block", reason: `blocked by v${v}`, metadata: { version: v, rule: `rule-v${v}` } });
      }
      // The rounds waited for (0, 3, 6, …) cover every version.
      expect([...versions].sort()).toEqual([1, 2, 3, 4, 5]);
    } finally {
      await client.close();
      await server.close();
    }
  });
});
