/**
 * The window an anchor leaves after a SIGKILL: the harness is killed under load (crash kit:
 * agents over a Unix socket keeping requests and batches in flight), then the log is compared
 * with its last signed checkpoint, which is what an anchor (`--audit-anchor`) receives: each
 * checkpoint is published right after it replaced `<log>.checkpoint`. Oracles: the log covers
 * the anchor's checkpoint (verification with `--anchor` passes); the records after it (the
 * window) can be cut without verification noticing, one more cannot. The window of each run
 * (records, and the time between the checkpoint and the last record) is printed.
 */
import { spawn } from "node:child_process";
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCheckpoint } from "@ahp/audit";
import { AhpClient } from "@ahp/core";
import { UnixSocketClientTransport } from "@ahp/transport-unix";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, LoadAgent, deferred, startServe, within } from "./crash-kit.js";

const KEY_HEX = "2f".repeat(32);
/** Decisions acknowledged before each kill: different points of the checkpoint interval. */
const KILL_AFTER = [400, 1100, 1900];

let root: string;
let keyFile: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "ahp-anchor-window-"));
  keyFile = join(root, "audit.key");
  await writeFile(keyFile, KEY_HEX);
});
afterAll(() => rm(root, { recursive: true, force: true }));

function verify(args: string[]): Promise<number | null> {
  const child = spawn(process.execPath, [BIN, "audit", "verify", ...args, "--key-file", keyFile], { stdio: "ignore" });
  return within(new Promise((resolve) => child.once("exit", resolve)), 30_000, "ahp audit verify did not exit");
}

async function killUnderLoad(dir: string, killAfter: number): Promise<string> {
  const log = join(dir, "audit.log");
  const serve = await startServe(["--unix", join(dir, "h.sock"), "--audit", log, "--audit-key-file", keyFile], 1);
  const reached = deferred();
  let acknowledged = 0;
  const loads: LoadAgent[] = [];
  const clients: AhpClient[] = [];
  for (let i = 0; i < 4; i++) {
    const client = new AhpClient({ timeoutMs: 30_000 });
    await client.connect(new UnixSocketClientTransport({ path: serve.urls[0]!.slice("unix:".length) }));
    clients.push(client);
    loads.push(
      new LoadAgent(client, { concurrency: 4, batchEvery: 3, batchSize: 8, notifyEvery: 0 }, () => {
        if (++acknowledged === killAfter) reached.resolve();
      }),
    );
  }
  for (const load of loads) load.start();
  await within(reached.promise, 60_000, `${killAfter} decisions were not acknowledged`);
  // Kill only once a checkpoint covers some records: on a fast machine the decisions can all come
  // before the first checkpoint after the genesis one, and there would be no window to measure.
  const deadline = Date.now() + 60_000;
  for (;;) {
    const read = await readCheckpoint(`${log}.checkpoint`).catch(() => undefined);
    if (read !== undefined && !("problem" in read) && read.checkpoint.seq > 0) break;
    if (Date.now() > deadline) throw new Error("no checkpoint covering a record within 60 s");
    await new Promise((r) => setTimeout(r, 20));
  }
  serve.child.kill("SIGKILL");
  await within(serve.exited, 10_000, "the harness did not die");
  await within(Promise.all(loads.map((l) => l.done)), 10_000, "calls still pending after the harness died");
  for (const client of clients) await client.close().catch(() => undefined);
  return log;
}

describe("the window after a SIGKILL, against the anchored checkpoint", () => {
  it("the log covers the anchor; only the records after it can be cut undetected", async () => {
    const windows: string[] = [];
    for (const killAfter of KILL_AFTER) {
      const dir = await mkdtemp(join(root, `run-${killAfter}-`));
      const log = await killUnderLoad(dir, killAfter);
      // What --audit-anchor FILE held at the kill: the last checkpoint written.
      const anchor = join(dir, "anchor.json");
      await copyFile(`${log}.checkpoint`, anchor);
      const read = await readCheckpoint(anchor);
      if (read === undefined || "problem" in read) throw new Error(`no checkpoint after the kill: ${JSON.stringify(read)}`);
      const cp = read.checkpoint;
      const records = (await readFile(log, "utf8"))
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as { seq: number; time: string }];
          } catch {
            return []; // the torn last line of the kill
          }
        });
      const last = records.at(-1)!;
      expect(last.seq).toBeGreaterThanOrEqual(cp.seq);
      const behind = records.filter((r) => r.seq > cp.seq);
      windows.push(
        `killed after ${killAfter} decisions: ${last.seq} records, anchored checkpoint at seq ${cp.seq}: ` +
          `window ${behind.length} records, ${Date.parse(last.time) - Date.parse(cp.time)} ms after the checkpoint`,
      );
      expect(await verify([log, "--anchor", anchor]), "the log covers its anchor").toBe(0);
      // Cutting exactly the window goes unnoticed (that is the window); one record more does not.
      const lines = (await readFile(log, "utf8")).split("\n").filter((l) => l !== "");
      const upTo = (seq: number) =>
        lines.filter((l) => {
          try {
            return (JSON.parse(l) as { seq: number }).seq <= seq;
          } catch {
            return false;
          }
        });
      await writeFile(log, `${upTo(cp.seq).join("\n")}\n`);
      expect(await verify([log, "--anchor", anchor])).toBe(0);
      await writeFile(log, `${upTo(cp.seq - 1).join("\n")}\n`);
      expect(await verify([log, "--anchor", anchor])).toBe(1);
    }
    console.log(`audit anchor window (checkpoint interval 1000 ms):\n  ${windows.join("\n  ")}`);
  }, 300_000);
});
