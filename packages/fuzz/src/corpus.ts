/**
 * Regression corpus: every input batch a campaign found failing is saved as one JSON file under
 * `packages/fuzz/corpus/`, and the test suite replays every file on every transport. Input bytes
 * are stored gzip-compressed in base64 (a huge line of repeated words shrinks to a few bytes).
 */
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import type { FuzzInput } from "./mutate.js";

export interface CorpusCase {
  /** File name without `.json`. */
  name: string;
  /** Where it was found and how to regenerate it. */
  transport: string;
  seed: number;
  batch: number;
  /** What went wrong when it was found. */
  problems: string[];
  inputs: FuzzInput[];
}

interface StoredInput {
  note: string;
  binary?: boolean;
  contentType?: string;
  gzip64: string;
}

interface StoredCase {
  transport: string;
  seed: number;
  batch: number;
  problems: string[];
  inputs: StoredInput[];
}

export async function saveCorpusCase(dir: string, c: Omit<CorpusCase, "name">): Promise<string> {
  await mkdir(dir, { recursive: true });
  const name = `${c.transport}-seed${c.seed}-batch${c.batch}`;
  const stored: StoredCase = {
    transport: c.transport,
    seed: c.seed,
    batch: c.batch,
    problems: c.problems.slice(0, 20),
    inputs: c.inputs.map((i) => ({
      note: i.note,
      ...(i.binary === true ? { binary: true } : {}),
      ...(i.contentType === undefined ? {} : { contentType: i.contentType }),
      gzip64: gzipSync(i.bytes).toString("base64"),
    })),
  };
  const file = join(dir, `${name}.json`);
  await writeFile(file, `${JSON.stringify(stored, null, 2)}\n`);
  return file;
}

export async function loadCorpus(dir: string): Promise<CorpusCase[]> {
  let files: string[];
  try {
    files = (await readdir(dir)).filter((f) => f.endsWith(".json")).sort();
  } catch {
    return [];
  }
  const cases: CorpusCase[] = [];
  for (const file of files) {
    const stored = JSON.parse(await readFile(join(dir, file), "utf8")) as StoredCase;
    cases.push({
      name: file.replace(/\.json$/, ""),
      transport: stored.transport,
      seed: stored.seed,
      batch: stored.batch,
      problems: stored.problems,
      inputs: stored.inputs.map((i) => {
        const input: FuzzInput = { note: i.note, bytes: gunzipSync(Buffer.from(i.gzip64, "base64")) };
        if (i.binary === true) input.binary = true;
        if (i.contentType !== undefined) input.contentType = i.contentType;
        return input;
      }),
    });
  }
  return cases;
}
