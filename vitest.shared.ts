/**
 * Shared vitest settings for every workspace project: `@ahp/<name>` resolves to the package's
 * TypeScript source, so tests never depend on a stale build.
 */
import { fileURLToPath } from "node:url";
import { defineProject, type UserWorkspaceConfig } from "vitest/config";

const root = fileURLToPath(new URL(".", import.meta.url));

export function project(name: string, extra: UserWorkspaceConfig["test"] = {}): UserWorkspaceConfig {
  return defineProject({
    resolve: {
      alias: [{ find: /^@ahp\/((?!schemas)[a-z0-9-]+)$/, replacement: `${root}packages/$1/src/index.ts` }],
    },
    test: { name, include: ["test/**/*.test.ts"], testTimeout: 20_000, hookTimeout: 20_000, ...extra },
  });
}
