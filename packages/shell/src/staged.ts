/**
 * Staged download-and-run within one command line: a file a downloader saves is later run by
 * path, made executable, sourced, or handed to a shell or interpreter
 * (`wget -qO i.sh https://x/i.sh; bash i.sh`, `curl -fsSLo t https://x/t && chmod +x t && ./t`).
 * Files are compared by base name, so a `cd` between the two steps does not hide the link.
 *
 * Across tool calls the caller keeps the base names an earlier command line downloaded
 * ({@link downloadsOf}) and asks whether a later line runs one of them ({@link runsOneOfFiles}).
 */
import type { SimpleCommand } from "./parse.js";
import { interpreterOf, SHELLS } from "./tables.js";

const URL = /^(?:https?|ftp):\/\//i;

/** The base name of a path or URL (query and fragment dropped), lower case. */
function baseName(word: string): string {
  let w = word;
  if (URL.test(w)) w = w.replace(/[?#].*$/, "");
  while (w.length > 1 && w.endsWith("/")) w = w.slice(0, -1);
  return w.slice(w.lastIndexOf("/") + 1).toLowerCase();
}

const optionValues = (cmd: SimpleCommand, names: readonly string[], out: string[]): void => {
  for (const n of names) for (const v of cmd.options.get(n) ?? []) if (!URL.test(v) && !v.startsWith("/dev/")) out.push(baseName(v));
};
const urlNames = (cmd: SimpleCommand, out: string[]): void => {
  for (const w of cmd.argv.slice(1)) if (URL.test(w)) out.push(baseName(w));
};

/** Programs that download files. */
export const DOWNLOADERS: ReadonlySet<string> = new Set(["curl", "wget", "aria2c", "fetch", "http", "https", "xh"]);

/** The base names of the files a downloader command saves; empty for other commands. */
export function downloadedFiles(cmd: SimpleCommand): string[] {
  const out: string[] = [];
  switch (cmd.program) {
    case "curl":
      optionValues(cmd, ["o", "output"], out);
      if (cmd.flags.has("O") || cmd.flags.has("remote-name") || cmd.flags.has("remote-name-all")) urlNames(cmd, out);
      break;
    case "wget":
      optionValues(cmd, ["O", "output-document"], out);
      // Without -O, wget saves under the URL's base name.
      if (out.length === 0) urlNames(cmd, out);
      break;
    case "aria2c":
      optionValues(cmd, ["o", "out"], out);
      if (out.length === 0) urlNames(cmd, out);
      break;
    case "fetch":
    case "http":
    case "https":
    case "xh":
      optionValues(cmd, ["o", "output"], out);
      break;
    default:
      break;
  }
  return out.filter((n) => n.length > 0 && n !== "-" && n !== "." && n !== "..");
}

/** A mode that sets an execute bit: `+x`, `u+x`, `a=rx`, `755`, `0700`. */
function execMode(mode: string): boolean {
  if (/^[ugoa]*[+=][rwxXst]*x/.test(mode) || /,[ugoa]*[+=][rwxXst]*x/.test(mode)) return true;
  return /^[0-7]{3,4}$/.test(mode) && /[1357]/.test(mode.slice(-3));
}

/** Programs that run a script file named as an argument. */
const RUNNERS = new Set(["source", ".", "exec"]);

/** Whether `cmd` runs, sources or makes executable a file `downloaded` says yes to (by base name). */
function runsOneOf(cmd: SimpleCommand, downloaded: (name: string) => boolean): boolean {
  const word0 = cmd.argv[0] ?? "";
  if (downloaded(cmd.program) || (word0.includes("/") && downloaded(baseName(word0)))) return true;
  if (cmd.program === "chmod") {
    const args = cmd.argv.slice(1);
    return args.some((a) => execMode(a)) && args.some((a) => downloaded(baseName(a)));
  }
  if (cmd.program === "install") {
    // What is installed with a mode is made executable; the file it replaces is not run.
    const args = cmd.argv.slice(1);
    return (
      args.some((a) => execMode(a) || a === "-m") && copiedFiles(cmd).some(([from]) => from !== undefined && downloaded(baseName(from)))
    );
  }
  if (SHELLS.has(cmd.program) || RUNNERS.has(cmd.program) || interpreterOf(cmd.program) !== undefined) {
    // `bash -c '…'` runs its argument as a script text (analysed as commands of its own), not a file.
    if (SHELLS.has(cmd.program) && cmd.flags.has("c")) return false;
    // The script is the first positional argument; later ones are its arguments (`python3 run.py data.csv`).
    const script = cmd.args[0];
    return script !== undefined && downloaded(baseName(script));
  }
  return false;
}

/**
 * Whether `cmd` could run a file given by name (a shell, interpreter or `source` with a script
 * argument, `chmod`/`install`, or a program given as a path): the cheap test before a lookup.
 */
export function mayRunFile(cmd: SimpleCommand): boolean {
  const word0 = cmd.argv[0] ?? "";
  if (word0.includes("/") || cmd.program === "chmod" || cmd.program === "install") return true;
  // The program is looked at before the arguments, which are split on first read.
  if (!SHELLS.has(cmd.program) && !RUNNERS.has(cmd.program) && interpreterOf(cmd.program) === undefined) return false;
  return cmd.args.length > 0;
}

/** True when some command of `commands` runs, sources or makes executable one of `files` (base names, lower case) that the line has not replaced before. */
export function runsOneOfFiles(commands: readonly SimpleCommand[], files: ReadonlySet<string>): boolean {
  if (files.size === 0) return false;
  return fileOrigins(commands, files).runs;
}

/** The base names (lower case) of the files the downloaders of `commands` save, in order, without repeats. */
export function downloadsOf(commands: readonly SimpleCommand[]): string[] {
  const out: string[] = [];
  for (const cmd of commands) {
    if (!DOWNLOADERS.has(cmd.program)) continue;
    for (const f of downloadedFiles(cmd)) if (!out.includes(f)) out.push(f);
    for (const f of redirectedOutput(cmd, ALL_OUTPUT)) if (!out.includes(f)) out.push(f);
  }
  return out;
}

/** The base name (lower case) a path is compared by. */
export const fileBaseName = (path: string): string => baseName(path);

/** True when a file some command of `commands` downloads is run, sourced or made executable by a later one (and not replaced in between). */
export function runsDownload(commands: readonly SimpleCommand[]): boolean {
  return fileOrigins(commands, NO_FILES).runs;
}

const NO_FILES: ReadonlySet<string> = new Set();

/** Redirections that replace a file's content (`>>` appends to it: the download stays). */
const TRUNCATING: ReadonlySet<string> = new Set([">", ">|", "&>"]);
/** Every output redirection to a file: a downloader's output appended to a file makes it downloaded content too. */
const ALL_OUTPUT: ReadonlySet<string> = new Set([">", ">|", "&>", ">>", "&>>"]);

/** Base names of the files a command's output redirections of `ops` write (`/dev/…` left out). */
function redirectedOutput(cmd: SimpleCommand, ops: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const r of cmd.redirects) if (ops.has(r.op) && !r.target.startsWith("/dev/")) out.push(baseName(r.target));
  return out.filter((n) => n.length > 0 && n !== "-");
}

/** Programs that put a file's content under another name: copy, move, link, install, `dd of=`. */
export const FILE_COPIERS: ReadonlySet<string> = new Set(["cp", "mv", "install", "ln", "dd"]);

/**
 * What a copier writes, as (source, destination base name) pairs; the source is `undefined` when
 * the content comes from elsewhere (`dd` reading its standard input). A destination that is a
 * directory (`-t DIR`, a trailing `/`, `.`, several sources) receives each source under its own name.
 */
export function copiedFiles(cmd: SimpleCommand): [source: string | undefined, destination: string][] {
  if (!FILE_COPIERS.has(cmd.program)) return [];
  if (cmd.program === "dd") {
    let from: string | undefined;
    let to: string | undefined;
    for (const a of cmd.args) {
      if (a.startsWith("if=")) from = a.slice(3);
      else if (a.startsWith("of=")) to = a.slice(3);
    }
    return to === undefined || to.startsWith("/dev/") ? [] : [[from, baseName(to)]];
  }
  // `install -d` makes directories.
  if (cmd.program === "install" && (cmd.flags.has("d") || cmd.flags.has("directory"))) return [];
  const args = cmd.args;
  const dir = cmd.options.get("t") ?? cmd.options.get("target-directory");
  if (dir !== undefined && dir.length > 0) return args.map((a) => [a, baseName(a)]);
  if (args.length === 0) return [];
  // `ln -s target` links under the target's own name.
  if (args.length === 1) return cmd.program === "ln" ? [[args[0]!, baseName(args[0]!)]] : [];
  const last = args[args.length - 1]!;
  const sources = args.slice(0, -1);
  // Positional arguments are normalized (`bin/` → `bin`): a trailing `/` is read from the word as written.
  const written = cmd.argv[cmd.argv.length - 1] ?? "";
  const intoDirectory = args.length > 2 || last.endsWith("/") || written.endsWith("/") || last === "." || last === ".." || last === "~";
  return sources.map((a) => [a, baseName(intoDirectory ? a : last)]);
}

/** What a command line leaves behind, by base name: the files downloaded content now holds, and those the agent's own content replaced. */
export interface FileOrigins {
  /** A command runs, sources or makes executable a file holding downloaded content at that point of the line. */
  readonly runs: boolean;
  /** Files holding downloaded content at the end of the line (downloaded, or copied from a download). */
  readonly downloaded: string[];
  /** Files the line replaced with content of its own (`echo … > i.sh`, `tee i.sh`, `cp mine.sh i.sh`). */
  readonly own: string[];
}

/**
 * Follows a command line in order: downloads (`curl -o`, `wget`, a downloader's output
 * redirected to a file), replacements by the agent's own content (a truncating redirection,
 * `tee` without `-a`, a copy of a file that is not a download) and copies of downloads
 * (`cp i.sh run.sh`, `mv`, `install`, `ln`, `dd if= of=`), starting from the base names in
 * `known` (what earlier calls of the session downloaded). Appending (`>>`, `tee -a`) changes
 * nothing. `runs` is whether a command runs a file that holds downloaded content at that point.
 */
export function fileOrigins(commands: readonly SimpleCommand[], known: ReadonlySet<string>): FileOrigins {
  const state = new Map<string, boolean>();
  const downloaded = (name: string): boolean => state.get(name) ?? known.has(name);
  let any = known.size > 0;
  let runs = false;
  for (const cmd of commands) {
    if (any && !runs && (downloaded(cmd.program) || mayRunFile(cmd)) && runsOneOf(cmd, downloaded)) runs = true;
    if (DOWNLOADERS.has(cmd.program)) {
      // A downloader's own output, to a file it names or by redirection, is downloaded content.
      for (const f of downloadedFiles(cmd)) state.set(f, true);
      for (const f of redirectedOutput(cmd, ALL_OUTPUT)) state.set(f, true);
      any ||= state.size > 0;
      continue;
    }
    for (const f of redirectedOutput(cmd, TRUNCATING)) state.set(f, false);
    if (cmd.program === "tee" && !cmd.flags.has("a") && !cmd.flags.has("append"))
      for (const a of cmd.args) if (a !== "-") state.set(baseName(a), false);
    for (const [from, to] of copiedFiles(cmd)) {
      if (to.length === 0 || to === "-") continue;
      // A copy of a download is one; anything else copied over a file replaces it with the agent's own.
      const copy = from !== undefined && downloaded(baseName(from));
      state.set(to, copy);
      any ||= copy;
    }
  }
  const out = { runs, downloaded: [] as string[], own: [] as string[] };
  for (const [name, isDownload] of state) if (name.length > 0) (isDownload ? out.downloaded : out.own).push(name);
  return out;
}

/**
 * The base names (lower case) of the files `commands` replace with content of their own: the
 * target of a truncating output redirection (`echo … > i.sh`, `cat > i.sh <<EOF`), the files
 * `tee` writes without `-a`, and the destination of a copy of a file that is not a download
 * of the line. A downloader's own output is not the agent's (`curl URL > i.sh`).
 */
export function overwrittenFiles(commands: readonly SimpleCommand[]): string[] {
  return fileOrigins(commands, NO_FILES).own;
}
