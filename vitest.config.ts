import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The test files that take longest (mostly waiting: real agent hosts, a person who answers after
 * 20 s, bench runs in child processes), in the order they should start. Started first, they run
 * beside the many short files instead of leaving one worker alone at the end of the suite.
 */
const SLOW_FIRST = [
  "packages/real-hosts/test/approval-claude.test.ts",
  "bench/test/suites.test.ts",
  "packages/real-hosts/test/acp-approval.test.ts",
  "packages/real-hosts/test/acp-proxy.test.ts",
  "apps/cli/test/conformance.test.ts",
  "packages/real-hosts/test/hook-doctor.test.ts",
  "bench/test/aarts-hook.test.ts",
  "apps/inspector/test/decisions.test.ts",
  "packages/transport-stdio/test/conformance.test.ts",
  "apps/cli/test/cli.test.ts",
  "packages/real-hosts/test/claude-hooks.test.ts",
];

class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (f: TestSpecification) => {
      const i = SLOW_FIRST.findIndex((p) => f.moduleId.endsWith(p));
      return i === -1 ? SLOW_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the other files keep the base sequencer's order.
    return [...sorted].sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*", "bench", "examples/*/vitest.config.ts"],
    // Vitest's default is one worker fewer than the cores (one on a 2-core machine), but most of
    // the slow test files wait on child processes, sockets and timers: two files at a time on
    // two cores finish the suite sooner without starving either.
    maxWorkers: Math.max(2, availableParallelism()),
    sequence: { sequencer: SlowFirstSequencer },
  },
});
