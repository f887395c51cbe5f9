/**
 * Broken relative links in Markdown: `[text](path)`, `[text](path#anchor)` and `[text](#anchor)`
 * must name a file that exists and, for a Markdown target, a heading (GitHub's anchor rules).
 * External links (with a scheme) are not fetched.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { ROOT } from "./workspace.mjs";

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

const anchorCache = new Map();
function anchorsOf(file) {
  let anchors = anchorCache.get(file);
  if (anchors !== undefined) return anchors;
  anchors = new Set();
  const seen = new Map();
  let fence = false;
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence;
    if (fence) continue;
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = anchorOf(heading[1].replace(/`/g, "").replace(/\[([^\]]*)\]\([^)]*\)/g, "$1"));
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n === 0 ? base : `${base}-${n}`);
    }
    for (const m of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1]);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

/** `["file:line: link (why)"]` for every broken relative link in the given Markdown files. */
export function checkMarkdownLinks(files) {
  const broken = [];
  for (const file of files) {
    let fence = false;
    const lines = readFileSync(file, "utf8").split("\n");
    lines.forEach((line, i) => {
      if (/^\s*(```|~~~)/.test(line)) fence = !fence;
      if (fence) return;
      const text = line.replace(/`[^`]*`/g, "").replace(/\\[[\]()]/g, "");
      for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
        const target = m[1];
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const [path, anchor] = target.split("#");
        const where = path === "" ? file : resolve(dirname(file), decodeURIComponent(path));
        const at = `${relative(ROOT, file)}:${i + 1}: ${target}`;
        if (!existsSync(where)) {
          broken.push(`${at} (no such file)`);
          continue;
        }
        if (anchor !== undefined && anchor !== "" && where.endsWith(".md") && statSync(where).isFile()) {
          if (!anchorsOf(where).has(anchor.toLowerCase())) broken.push(`${at} (no heading #${anchor})`);
        }
      }
    });
  }
  return broken;
}
