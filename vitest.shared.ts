/**
 * Shared vitest settings for every workspace project: `@ahp/<name>` resolves to the package's
 * TypeScript source, so tests never depend on a stale build.
 */
import { fileURLToPath } from "node:url";
import { defineProject, type UserWorkspaceConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

/**
 * A test's time limit only stops a test that hangs; what a test waits for, it waits for as a
 * condition (up to 60 s). 90 s leaves room for a test that takes 5 s on an idle machine to pass at a load
 * average of 40 on two cores.
 */
const LIMIT_MS = 90_000;

export function project(name: string, extra: UserWorkspaceConfig["test"] = {}): UserWorkspaceConfig {
  return defineProject({
    resolve: {
      alias: [{ find: /^@ahp\/((?!schemas)[a-z0-9-]+)$/, replacement: `${root}packages/$1/src/index.ts` }],
    },
    test: { name, include: ["test/**/*.test.ts"], testTimeout: LIMIT_MS, hookTimeout: LIMIT_MS, ...extra },
  });
}
