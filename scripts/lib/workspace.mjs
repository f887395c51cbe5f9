/**
 * The workspace's packages, read from pnpm-workspace.yaml, so that the docs, API report and
 * consumer smoke scripts pick up a new package without being edited. "Publishable" means every
 * workspace package that is not `"private": true`.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The `packages:` globs of pnpm-workspace.yaml (only `dir` and `dir/*` forms are used here). */
export function workspaceGlobs(root = ROOT) {
  const text = readFileSync(join(root, "pnpm-workspace.yaml"), "utf8");
  const globs = [];
  let inPackages = false;
  for (const line of text.split("\n")) {
    if (/^packages:\s*$/.test(line)) {
      inPackages = true;
      continue;
    }
    if (inPackages) {
      const item = /^\s+-\s+["']?([^"'#]+?)["']?\s*(#.*)?$/.exec(line);
      if (item) globs.push(item[1]);
      else if (/^\S/.test(line)) inPackages = false;
    }
  }
  return globs;
}

/**
 * Every workspace package: `{ name, dir (absolute), rel (from the root), manifest }`, sorted by
 * name. A glob ending in `/*` means every folder below it that holds a package.json.
 */
export function workspacePackages(root = ROOT) {
  const dirs = [];
  for (const glob of workspaceGlobs(root)) {
    if (glob.endsWith("/*")) {
      const base = join(root, glob.slice(0, -2));
      if (!existsSync(base)) continue;
      for (const entry of readdirSync(base, { withFileTypes: true })) if (entry.isDirectory()) dirs.push(join(base, entry.name));
    } else dirs.push(join(root, glob));
  }
  return dirs
    .filter((dir) => existsSync(join(dir, "package.json")))
    .map((dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      return { name: manifest.name, dir, rel: relative(root, dir), manifest };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The packages that get published: every workspace package that is not private. */
export function publishablePackages(root = ROOT) {
  return workspacePackages(root).filter((p) => p.manifest.private !== true);
}

/** Entry points of a package's `exports` that carry types: `[{ subpath, specifier, types }]`. */
export function typedEntryPoints(pkg) {
  const exports = pkg.manifest.exports;
  const entries = [];
  const typesOf = (target) => {
    if (typeof target === "string") return target.endsWith(".d.ts") ? target : undefined;
    if (target === null || typeof target !== "object") return undefined;
    if (typeof target.types === "string") return target.types;
    for (const key of ["import", "default", "require"]) {
      const found = typesOf(target[key]);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  if (exports === undefined) {
    if (typeof pkg.manifest.types === "string") entries.push({ subpath: ".", specifier: pkg.name, types: pkg.manifest.types });
    return entries;
  }
  const map = typeof exports === "string" || Object.keys(exports).every((k) => !k.startsWith(".")) ? { ".": exports } : exports;
  for (const [subpath, target] of Object.entries(map)) {
    const types = typesOf(target);
    if (types === undefined || subpath.includes("*")) continue;
    entries.push({ subpath, specifier: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`, types });
  }
  return entries;
}

/** `@ahp/transport-http` → `transport-http`: the file name a package's generated pages use. */
export const slug = (name) => name.replace(/^@[^/]+\//, "");
