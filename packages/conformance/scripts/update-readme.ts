/** Rewrites the generated parts of README.md (checklist count and table) from src/checklist.ts. */
import { readFileSync, writeFileSync } from "node:fs";
import { renderChecklistCount, renderChecklistTable } from "../src/checklist.js";

const file = new URL("../README.md", import.meta.url);
const replace = (text: string, name: string, body: string) => {
  const pattern = new RegExp(`(<!-- ${name}:start -->\\n)[\\s\\S]*?(<!-- ${name}:end -->)`);
  if (!pattern.test(text)) throw new Error(`README.md has no ${name} markers`);
  return text.replace(pattern, (_m, start: string, end: string) => `${start}${body}\n${end}`);
};
let text = readFileSync(file, "utf8");
text = replace(text, "count", renderChecklistCount());
text = replace(text, "checklist", renderChecklistTable());
writeFileSync(file, text);
