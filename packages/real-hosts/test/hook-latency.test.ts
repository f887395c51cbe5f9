/**
 * The hook's cost per tool call as a host pays it: a process started per call, answering a
 * Claude Code `PreToolUse` through a running `ahp serve --unix` (the recommended set-up), against
 * the floor of a bare `node -e` that reads stdin and prints `{}`, interleaved in one run. The
 * figures are printed; the test checks every answer, not the speed (the machine may be busy).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AHP_CLI, type RunningHarness, startAhpServe } from "../src/harness.js";

const HOOK_BIN = fileURLToPath(new URL("../../aarts/bin/ahp-aarts-hook.cjs", import.meta.url));
const ROUNDS = 15;

function timed(args: string[], input: string): Promise<{ ms: number; stdout: string; code: number | null }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { stdio: ["pipe", "pipe", "ignore"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.once("error", reject);
    child.once("close", (code) => resolve({ ms: performance.now() - started, stdout, code }));
    child.stdin.end(input);
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

let dir: string;
let harness: RunningHarness;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "ahp-rh-latency-"));
  harness = await startAhpServe(join(dir, "h.sock"));
});
afterAll(async () => {
  await harness?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("hook latency through ahp serve --unix", () => {
  it(`p50 of ${ROUNDS} PreToolUse calls: ahp-aarts-hook and ahp hook against a bare node -e`, async () => {
    const input = JSON.stringify({
      session_id: "0d9f7a3c-5e21-4b8a-9c6d-1f2e3a4b5c6d",
      transcript_path: join(dir, "t.jsonl"),
      cwd: dir,
      permission_mode: "default",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls -la" },
      tool_use_id: "toolu_latency",
    });
    const hookArgs = ["claude-code", "--connect", `unix:${harness.socket}`, "--fail-closed", "--state-dir", join(dir, "state")];
    const variants = {
      floor: ["-e", "let d='';process.stdin.on('data',c=>d+=c).on('end',()=>process.stdout.write('{}'))"],
      "ahp-aarts-hook": [HOOK_BIN, ...hookArgs],
      "ahp hook": [AHP_CLI, "hook", ...hookArgs],
    };
    const times: Record<string, number[]> = { floor: [], "ahp-aarts-hook": [], "ahp hook": [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, args] of Object.entries(variants)) {
        const result = await timed(args, input);
        expect(result.code).toBe(0);
        expect(JSON.parse(result.stdout)).toEqual({});
        times[name]!.push(result.ms);
      }
    }
    const floor = median(times.floor!);
    const rows = Object.entries(times).map(
      ([name, values]) => `${name}: p50 ${median(values).toFixed(1)} ms (${(median(values) / floor).toFixed(2)}x)`,
    );
    console.log(`hook latency, ${ROUNDS} rounds interleaved: ${rows.join("; ")}`);
  });
});
