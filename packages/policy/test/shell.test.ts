/**
 * The shell analysis is @ahp/shell's, tested there (packages/shell/test). The policy only
 * re-exports part of it under its own names; its decisions on shell commands are tested in
 * default-policy.test.ts, corpus.test.ts and matchers.test.ts.
 */
import * as shell from "@ahp/shell";
import { describe, expect, it } from "vitest";
import { normalizeShellPath, OPAQUE_REASONS, parseShell, shellWords, toolCalls } from "../src/shell.js";
import * as policy from "@ahp/policy";

describe("shell analysis re-exported by the policy", () => {
  it("is @ahp/shell's, not a copy", () => {
    expect(policy.parseShell).toBe(shell.parseShell);
    expect(policy.shellWords).toBe(shell.shellWords);
    expect(policy.normalizeShellPath).toBe(shell.normalizeShellPath);
    expect([parseShell, shellWords, normalizeShellPath, toolCalls, OPAQUE_REASONS]).toEqual([
      shell.parseShell,
      shell.shellWords,
      shell.normalizeShellPath,
      shell.toolCalls,
      shell.OPAQUE_REASONS,
    ]);
  });
});
