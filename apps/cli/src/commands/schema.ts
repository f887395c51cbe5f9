/** `ahp schema`: print or write the generated JSON Schema set. */
import { mkdir, readFile, readdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parse } from "../args.js";
import { EXIT_OK, UsageError, type CliIo } from "../io.js";

export const usage = `Usage: ahp schema [NAME] [--out DIR] [--list]

Prints one file of the JSON Schema 2020-12 set (default: ahp.schema.json) or writes them all.

  NAME         a file of the set: ahp.schema.json (default), meta.json, or another *.schema.json
  --out DIR    write every file of the set into DIR instead of printing
  --list       list the files of the set
  -h, --help   this text
`;

function schemasDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve("@ahp/schemas/package.json"));
}

async function setFiles(dir: string): Promise<string[]> {
  return (await readdir(dir)).filter((f) => f.endsWith(".schema.json") || f === "meta.json").sort();
}

export async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv, { out: { type: "string" }, list: { type: "boolean" } }, true);
  if (values.help) {
    io.stdout.write(usage);
    return EXIT_OK;
  }
  const dir = schemasDir();
  const files = await setFiles(dir);
  if (values.list) {
    io.stdout.write(`${files.join("\n")}\n`);
    return EXIT_OK;
  }
  if (values.out !== undefined) {
    await mkdir(values.out, { recursive: true });
    for (const file of files) await writeFile(join(values.out, file), await readFile(join(dir, file)));
    io.stderr.write(`wrote ${files.length} files to ${values.out}\n`);
    return EXIT_OK;
  }
  if (positionals.length > 1) throw new UsageError("ahp schema takes at most one NAME");
  const wanted = positionals[0] ?? "ahp.schema.json";
  const name = files.find((f) => f === wanted || f === `${wanted}.schema.json` || f === `${wanted}.json`);
  if (name === undefined) throw new UsageError(`no schema file ${JSON.stringify(wanted)}; files: ${files.join(", ")}`);
  io.stdout.write(await readFile(join(dir, name), "utf8"));
  return EXIT_OK;
}
