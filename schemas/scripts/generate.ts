/**
 * Writes the checked-in JSON Schema set from the zod sources of every package that contributes
 * wire types. `--check` compares instead of writing and exits 1 when a file would change.
 *
 *   pnpm schemas         regenerate
 *   pnpm schemas:check   fail when schemas/ is stale
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { bundles, buildMeta } from "./bundles.js";
import { schemaText } from "./integers.js";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "..");
const check = process.argv.includes("--check");

const files = new Map<string, string>();
for (const bundle of bundles) files.set(bundle.file, schemaText(bundle.build()));
files.set("meta.json", schemaText(buildMeta()));

let stale = 0;
for (const [name, text] of files) {
  const path = join(outDir, name);
  let current: string | undefined;
  try {
    current = readFileSync(path, "utf8");
  } catch {
    current = undefined;
  }
  if (current === text) continue;
  if (check) {
    stale++;
    process.stderr.write(`schemas/${name} is out of date; run \`pnpm schemas\` and commit the result\n`);
  } else {
    writeFileSync(path, text);
    process.stdout.write(`wrote schemas/${name}\n`);
  }
}
if (check && stale > 0) process.exit(1);
if (check) process.stdout.write(`schemas/ is up to date (${files.size} files)\n`);
