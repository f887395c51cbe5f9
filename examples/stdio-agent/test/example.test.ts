import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runAgentLoop, type ShellArgs } from "../src/agent.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
const task = {
  prompt: `Deploy with token ${TOKEN} and clean up`,
  steps: [{ command: "ls -la" }, { command: "npm test" }, { command: "rm -rf build/" }, { command: "git push origin main" }],
};

describe("stdio-agent example", () => {
  it("enforces the harness's YAML policy: redacts the prompt, runs allowed and modified calls, skips the blocked, asks for the escalated", async () => {
    const ran: ShellArgs[] = [];
    const asked: string[] = [];
    let harnessLog = "";
    const result = await runAgentLoop(task, {
      harnessStderr: (chunk) => (harnessLog += chunk),
      runTool: async (args) => {
        ran.push(args);
        return { exitCode: 0 };
      },
      askHuman: async (args) => {
        asked.push(args.command);
        return false;
      },
    });
    expect(result.prompt).toBe("Deploy with token [REDACTED:github_token] and clean up");
    expect(result.outcomes.map((o) => [o.command, o.decision, o.enforced])).toEqual([
      ["ls -la", "allow", "ran"],
      ["npm test", "modify", "ran"],
      ["rm -rf build/", "block", "skipped"],
      ["git push origin main", "escalate", "asked"],
    ]);
    expect(ran).toEqual([{ command: "ls -la" }, { command: "npm test", timeout_ms: 120000 }]);
    expect(asked).toEqual(["git push origin main"]);
    expect(result.outcomes[2]?.reason).toBe("recursive forced delete");
    // The custom harness's own handler and decision log saw every event.
    expect(harnessLog).toContain("harness: pre_action -> block [no-recursive-delete]");
    expect(harnessLog.match(/harness: noted post_action/g)).toHaveLength(2);
  });

  it("runs an escalated call once a human approves it", async () => {
    const ran: string[] = [];
    const { outcomes } = await runAgentLoop(
      { prompt: "push it", steps: [{ command: "git push origin main" }] },
      {
        runTool: async (args) => {
          ran.push(args.command);
          return { exitCode: 0 };
        },
        askHuman: async () => true,
        harnessStderr: "ignore",
      },
    );
    expect(outcomes).toMatchObject([{ decision: "escalate", enforced: "asked", ran: { command: "git push origin main" } }]);
    expect(ran).toEqual(["git push origin main"]);
  });

  it("works the same against the ahp command's harness (ahp serve --stdio --policy policy.yaml)", async () => {
    const ahp = fileURLToPath(new URL("../node_modules/@ahp/cli/bin/ahp.js", import.meta.url));
    const result = await runAgentLoop(task, {
      harness: { command: process.execPath, args: [ahp, "serve", "--stdio", "--policy", `${ROOT}policy.yaml`] },
      harnessStderr: "ignore",
    });
    expect(result.prompt).toBe("Deploy with token [REDACTED:github_token] and clean up");
    expect(result.outcomes.map((o) => o.decision)).toEqual(["allow", "modify", "block", "escalate"]);
  });

  it("fails closed when the harness is gone: nothing runs", async () => {
    const ran: string[] = [];
    const run = runAgentLoop(task, {
      harness: { command: process.execPath, args: ["-e", "process.exit(3)"] },
      harnessStderr: "ignore",
      runTool: async (args) => {
        ran.push(args.command);
        return { exitCode: 0 };
      },
    });
    await expect(run).rejects.toThrow();
    expect(ran).toEqual([]);
  });

  it("pnpm start prints what the agent did", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "src/agent.ts"], { cwd: ROOT, timeout: 120_000 });
    expect(stdout).toContain("model sees: Deploy with token [REDACTED:github_token] and clean up");
    expect(stdout).not.toContain(TOKEN);
    expect(stdout).toMatch(/^block\s+rm -rf build\/\s+skipped \(recursive forced delete\)$/m);
    expect(stdout).toMatch(/^modify\s+npm test\s+ran \{"command":"npm test","timeout_ms":120000\}$/m);
  });
});
