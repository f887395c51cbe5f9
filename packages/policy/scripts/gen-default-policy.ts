/**
 * Writes src/default-policy.ts from policies/default.yaml (the YAML file, with its comments, is
 * the source; the TypeScript constant spares users a file read). A test checks that both agree.
 *
 *   pnpm --filter @ahp/policy generate
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "yaml";

const yamlUrl = new URL("../policies/default.yaml", import.meta.url);
const outUrl = new URL("../src/default-policy.ts", import.meta.url);
const policy = parse(readFileSync(yamlUrl, "utf8")) as unknown;

const text = `/**
 * The default policy, generated from policies/default.yaml by scripts/gen-default-policy.ts
 * (do not edit by hand; edit the YAML file and run \`pnpm --filter @ahp/policy generate\`).
 * See the README for what each rule does.
 */
import type { PolicyFileInput } from "./format.js";

/**
 * The built-in default policy (\`ahp serve\` without \`--policy\`, \`pnpm demo\`, the AARTS hook):
 * blocks destructive commands, writes outside the workspace and credential exfiltration, escalates
 * what it cannot analyse and unnamed actions, redacts secrets; allows the rest.
 */
export const DEFAULT_POLICY: PolicyFileInput = ${JSON.stringify(policy, null, 2)};
`;
writeFileSync(outUrl, text);
process.stdout.write("wrote src/default-policy.ts\n");
