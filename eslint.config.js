// @ts-check
/**
 * The linter: typescript-eslint's type-aware rules, above all the promise rules (floating and
 * misused promises, `await` of a non-promise), because the engines are promise-heavy and a
 * forgotten promise there is a silent drop. Formatting is Biome's job (`pnpm format`).
 * The choice, and every rule turned off with its reason: docs/adr/0014-formatter-and-linter.md.
 */
import js from "@eslint/js";
import globals from "globals";
import tseslint from "typescript-eslint";

/** Files outside every tsconfig: build and test configs, plain-JS fixtures and peers. */
const UNTYPED = ["**/*.{js,mjs,cjs}", "**/tsup.config.ts", "**/vitest.config.ts", "**/vitest.*.config.ts", "*.ts", "schemas/scripts/**"];

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/coverage/**", "**/.turbo/**", "**/*.d.ts", "**/*.d.cts"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
    rules: {
      // Promise rules, stricter than the preset: a void-returning callback may not hide a promise
      // (listeners, timers), and `void promise` must be deliberate.
      "@typescript-eslint/no-floating-promises": ["error", { ignoreVoid: true }],
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/await-thenable": "error",
      "@typescript-eslint/return-await": ["error", "in-try-catch"],
      // Relaying a caught value (typed `unknown`) into a rejection is allowed; inventing a non-Error is not.
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingUnknown: true, allowThrowingAny: true }],
      "@typescript-eslint/only-throw-error": ["error", { allowThrowingUnknown: true }],
      // Off: an `async` function without `await` is how a method that returns a promise turns a
      // synchronous throw into a rejection (our API never throws synchronously from such a method).
      "@typescript-eslint/require-await": "off",
      // Off: messages render unknown wire values with `String(value)` on purpose; a `[object Object]`
      // there is a readable answer, not a bug, and the rule cannot tell the cases apart.
      "@typescript-eslint/no-base-to-string": "off",
      // `_`-prefixed names are deliberately unused (parameters kept for a signature).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrorsIgnorePattern: "^_" }],
    },
  },
  {
    // In tests, vitest's asymmetric matchers (`expect.any`, `expect.stringMatching`) and
    // `JSON.parse` of captured wire lines are `any` by design; the assertions check the shape.
    // Test doubles that record arbitrary peer messages may say so with an explicit `any` too.
    // (`@ahp/conformance` is a test library: its suites are vitest code too.)
    files: ["**/test/**/*.ts", "packages/conformance/src/**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-unsafe-call": "off",
    },
  },
  { files: UNTYPED, ...tseslint.configs.disableTypeChecked },
  // CommonJS entry points (checked-in bins) load their bundle with `require` by design.
  { files: ["**/*.cjs"], languageOptions: { sourceType: "commonjs" }, rules: { "@typescript-eslint/no-require-imports": "off" } },
);
