/** Lexical path handling for shell words: nothing touches the filesystem. */

/** Words that are not plain paths: URLs, words with blanks, substitutions and expansions other than `$HOME`. */
const NOT_A_PATH = /:\/\/|\s|\$\(|`|[<>]\(/;

/**
 * Lexical path normalization used for positional arguments: `$HOME` and `${HOME}` become `~`,
 * repeated slashes collapse, `.` and `..` segments are resolved, and a trailing slash is
 * dropped (`/usr/../` → `/`, `~/` → `~`, `./build/` → `build`). Words that do not look like
 * paths are returned unchanged.
 */
export function normalizeShellPath(word: string): string {
  let w = word;
  if (w.startsWith("$HOME") && (w.length === 5 || w[5] === "/")) w = `~${w.slice(5)}`;
  else if (w.startsWith("${HOME}") && (w.length === 7 || w[7] === "/")) w = `~${w.slice(7)}`;
  if (!w.includes("/") && w !== "~") return w;
  if (NOT_A_PATH.test(w)) return word;
  const absolute = w.startsWith("/");
  const home = w === "~" || w.startsWith("~/");
  const parts = (home ? w.slice(1) : w).split("/");
  const out: string[] = [];
  for (const part of parts) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
      else if (!absolute && !home) out.push("..");
      continue;
    }
    out.push(part);
  }
  const body = out.join("/");
  if (absolute) return `/${body}`;
  if (home) return body.length === 0 ? "~" : `~/${body}`;
  return body.length === 0 ? "." : body;
}

/**
 * A working directory as the analysis tracks it: an absolute or `~` path, a path relative to
 * where the command line starts, `undefined` (the start, not known) or `null` (not knowable,
 * e.g. after `cd "$DIR"`).
 */
export type WorkingDirectory = string | null | undefined;

/** Resolves a (normalized) path word against a working directory; words that are not relative paths stay as they are. */
export function resolveShellPath(cwd: WorkingDirectory, word: string): string {
  const w = normalizeShellPath(word);
  if (cwd === undefined || cwd === null || cwd === "." || w === "" || w === "-") return w;
  if (w.startsWith("/") || w === "~" || w.startsWith("~/") || w.startsWith("-")) return w;
  if (w.includes("$") || NOT_A_PATH.test(w) || /^[A-Za-z][A-Za-z0-9+.-]*:/.test(w)) return w;
  const joined = cwd === "/" ? `/${w}` : `${cwd}/${w}`;
  // `w` is normalized; joined to a normalized directory it stays normalized unless it climbs out (`..`).
  if (w !== "." && w !== ".." && !w.startsWith("../") && isNormalized(cwd)) return joined;
  return normalizeShellPath(joined);
}

let lastDirectory: string | undefined;
let lastDirectoryNormalized = false;

/** Whether a directory is its own normalization (the last answer is kept: the commands of a line share one). */
function isNormalized(directory: string): boolean {
  if (directory !== lastDirectory) {
    lastDirectory = directory;
    lastDirectoryNormalized = normalizeShellPath(directory) === directory;
  }
  return lastDirectoryNormalized;
}

/**
 * Longest working directory the analysis tracks (Linux's PATH_MAX). A line that `cd`s deeper is
 * followed with an unknown directory, which keeps the analysis linear in the line's length.
 */
const MAX_DIRECTORY_LENGTH = 4096;

/** The working directory after `cd ARG` from `cwd`. */
export function changeDirectory(cwd: WorkingDirectory, arg: string | undefined): WorkingDirectory {
  const next = nextDirectory(cwd, arg);
  return typeof next === "string" && next.length > MAX_DIRECTORY_LENGTH ? null : next;
}

function nextDirectory(cwd: WorkingDirectory, arg: string | undefined): WorkingDirectory {
  if (arg === undefined || arg === "~") return "~";
  if (arg === "-" || arg.includes("$") || /[`*?[]/.test(arg)) return null;
  const w = normalizeShellPath(arg);
  if (w.startsWith("/") || w === "~" || w.startsWith("~/")) return w;
  if (cwd === null) return null;
  if (cwd === undefined) return w;
  return resolveShellPath(cwd, w);
}
