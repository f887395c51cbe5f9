import { spawn } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openAuditLog, verifyAuditLog } from "../src/index.js";
import { KEY_HEX, key, tempDir } from "./helpers.js";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const writer = fileURLToPath(new URL("./fixtures/crash-writer.ts", import.meta.url));

/** Starts the writer, waits until it is writing, lets it run `extraMs`, then SIGKILLs it. */
function runAndKill(path: string, extraMs: number): Promise<NodeJS.Signals | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", writer, path, KEY_HEX], {
      cwd: packageDir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let killed = false;
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      if (!killed && chunk.toString().includes("writing")) {
        killed = true;
        setTimeout(() => child.kill("SIGKILL"), extraMs);
      }
    });
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (signal === "SIGKILL") resolve(signal);
      else reject(new Error(`writer exited with ${code}: ${stderr}`));
    });
  });
}

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await tempDir()));
afterEach(() => cleanup());

describe("crash safety", () => {
  it("a writer SIGKILLed mid-stream leaves a log that verifies (or has only a torn tail), and reopening continues it", async () => {
    const path = join(dir, "audit.log");
    for (const extraMs of [5, 40]) {
      expect(await runAndKill(path, extraMs)).toBe("SIGKILL");
      const report = await verifyAuditLog(path, key);
      expect(report.break).toBeUndefined();
      expect(["intact", "torn_tail"]).toContain(report.status);
      expect(report.records).toBeGreaterThan(0);
      // The next writer takes over the stale lock, records a recovery if the tail was torn, and continues.
      const log = await openAuditLog({ key, path, file: { fsync: "never", maxBytes: 64 * 1024, maxFiles: 1000 } });
      expect(log.head?.seq).toBe(report.head!.seq + (report.status === "torn_tail" ? 1 : 0));
      await log.append({ kind: "note", data: { after: "crash" } });
      await log.close();
      const after = await verifyAuditLog(path, key);
      expect(after).toMatchObject({ status: "intact", startsAtGenesis: true });
      expect(after.records).toBe(report.records + 1 + (report.status === "torn_tail" ? 1 : 0));
    }
  }, 30_000);
});
