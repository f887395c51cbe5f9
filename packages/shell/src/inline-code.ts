/**
 * Program text given to an interpreter on its command line (`python3 -c …`, `perl -e …`,
 * `node -e …`, an awk program) or as a literal here-document: the analysis does not parse these
 * languages, it only recognises calls of primitives that delete files, run other programs or
 * open network connections. Text that calls none of them is treated like any other argument.
 */

import { ANY_WRITE_CALL, foldConstantPaths, SENSITIVE_NAME } from "./code-paths.js";

/** Node's process and network modules, with or without `node:`. */
const NODE_MODULES = String.raw`(?:node:)?(?:https?|http2|net|dgram|tls|child_process)`;

/** Names of delete, exec and network primitives across Python, Perl, Ruby, Node, PHP, Lua, awk, AppleScript and R. */
const PRIMITIVES = new RegExp(
  [
    // delete
    String.raw`\b(?:rmtree|remove_tree|rm_rf|rm_r|rmSync|rmdirSync|unlinkSync|rmdir|removedirs|unlink|truncate)\b`,
    String.raw`\bos\s*\.\s*remove\b`,
    String.raw`\bFile\s*\.\s*delete\b`,
    String.raw`\bFileUtils\b`,
    String.raw`\bfs\s*\.\s*(?:rm|promises)\b`,
    // exec
    String.raw`\b(?:system|popen|subprocess|execv[pe]*|execl[pe]*|spawn[a-z]*|shell_exec|passthru|proc_open|pcntl_exec|child_process|execSync|execFile[A-Za-z]*|pty|Open3|qx|do\s+shell\s+script)\b`,
    String.raw`\b(?:os|IO|Kernel|process)\s*\.\s*(?:exec|popen|spawn|fork)\b`,
    String.raw`(?<![.\w])(?:eval|exec|compile|__import__|Function)\s*\(`,
    // reach a primitive by a computed name or load code: importlib, getattr on builtins, ctypes, unpickling
    String.raw`\b(?:importlib|ctypes|builtins|__builtins__)\b`,
    String.raw`\b(?:marshal|pickle|cPickle|dill)\s*\.\s*loads?\b`,
    String.raw`\b(?:Deno|Bun)\s*\.\s*(?:run|Command|spawn|spawnSync|remove|connect|\$)`,
    String.raw`\bprocess\s*\.\s*(?:binding|dlopen)\b`,
    // network
    String.raw`\b(?:socket|urllib[0-9]?|urlopen|requests|httpx|aiohttp|http\.client|ftplib|smtplib|telnetlib|paramiko|LWP|HTTP::Tiny|IO::Socket|Net::|TCPSocket|UDPSocket|open-uri|fsockopen|curl_exec|curl_init|XMLHttpRequest|WebSocket)\b`,
    String.raw`\b(?:fetch|download\.file|url)\s*\(`,
    String.raw`\bURI\s*\.\s*open\b`,
    // Node's process and network modules loaded by require() or an ES import (`import cp from
    // 'node:child_process'`, `import { request } from "https"`, `await import('node:net')`). An ES
    // import of `fs` is not a primitive itself: what its functions write is read by codeWrites.
    String.raw`require\s*\(\s*['"](?:node:)?(?:https?|net|dgram|tls|child_process|fs)['"]`,
    String.raw`import\s*\(\s*['"]${NODE_MODULES}['"]`,
    String.raw`\bimport\b[^;'"\n]{0,512}?\bfrom\s*['"]${NODE_MODULES}['"]`,
    String.raw`\bimport\s*['"]${NODE_MODULES}['"]`,
    // A module loaded by a computed name (`require(name)`, `import(\`node:${m}\`)`) cannot be analysed;
    // Python's `from x import (a, b)` is a list of names.
    String.raw`(?<![.\w$])(?<!\bfrom\s+[\w.]+\s+)(?:require|import)\s*\(\s*(?!['"][^'"\n]*['"]\s*[),])`,
  ].join("|"),
);

/** awk also runs commands through a pipe to or from a quoted command (`print | "sh"`, `"cmd" | getline`). */
const AWK_EXEC = /\|\s*"|"\s*\||\bgetline\b/;

/** The language family, for the few primitives that are syntax: awk pipes, Perl and Ruby backquotes. */
export type CodeLanguage = "awk" | "perl" | "ruby" | "other";

/** True when the program text calls a delete, exec or network primitive. */
export function callsDangerousPrimitive(code: string, language: CodeLanguage = "other"): boolean {
  if (PRIMITIVES.test(code)) return true;
  // A write whose path is computed (not even a folded constant) in code naming a credential
  // store or a start-up file cannot be shown to miss them: `open(h + '/.bashrc', 'a')`.
  if (SENSITIVE_NAME.test(code) && ANY_WRITE_CALL.test(code) && !codeWrites(code).some((p) => SENSITIVE_NAME.test(p))) return true;
  if (language === "awk") return AWK_EXEC.test(code);
  if (language === "perl" || language === "ruby") return code.includes("`") || /%x[({[/|!]/.test(code);
  return false;
}

/** A quoted string literal (single, double or backquote), its text in group `s`. */
const STR = String.raw`(?<q>['"\x60])(?<s>(?:(?!\k<q>)[^\\\n]|\\.){1,4096})\k<q>`;
/** A mode string that writes: `w`, `a`, `x` or `+` among its letters (Python, Ruby, Node, PHP, C). */
const WRITE_MODE = String.raw`(?<mq>['"])[rbtU]*[wax+][rbtwax+]*\k<mq>`;

/** Calls whose first argument is a literal path the code writes, truncates, creates or deletes. */
const WRITE_CALLS: readonly RegExp[] = [
  // Python open() / io.open() / codecs.open() / os.open() with a writing mode, positional or `mode=`.
  new RegExp(String.raw`\bopen\s*\(\s*${STR}\s*,\s*(?:mode\s*=\s*)?(?:${WRITE_MODE}|os\s*\.\s*O_(?:WRONLY|RDWR|CREAT|APPEND|TRUNC))`, "g"),
  // pathlib: Path('/x').write_text(...), .write_bytes, .touch, .unlink, .open('w'), .symlink_to, .rename
  new RegExp(
    String.raw`\b(?:Path|PosixPath|PurePath)\s*\(\s*${STR}\s*\)\s*\.\s*(?:write_text|write_bytes|touch|unlink|rmdir|chmod|symlink_to|hardlink_to|rename|replace|open\s*\(\s*(?:mode\s*=\s*)?${WRITE_MODE})`,
    "g",
  ),
  // Node fs (and fs-extra): writeFile[Sync], appendFile[Sync], createWriteStream, outputFile, rm/unlink, chmod
  new RegExp(
    String.raw`\b(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|outputFile|outputFileSync|unlink|unlinkSync|truncate|truncateSync|chmod|chmodSync)\s*\(\s*${STR}`,
    "g",
  ),
  // Copies, moves and links: the destination is the second argument (shutil, os, Node fs).
  new RegExp(
    String.raw`\b(?:shutil\s*\.\s*(?:copy|copy2|copyfile|copytree|move)|os\s*\.\s*(?:rename|replace|symlink|link)|copyFile|copyFileSync|renameSync|cpSync|symlinkSync|linkSync)\s*\([^,()\n]{1,4096},\s*${STR}`,
    "g",
  ),
  // Node fs.open / openSync with a writing flag.
  new RegExp(String.raw`\b(?:open|openSync)\s*\(\s*${STR}\s*,\s*${WRITE_MODE}`, "g"),
  // Ruby File.write / IO.write / File.open(path, 'w'), PHP file_put_contents / fopen(path, 'w').
  new RegExp(String.raw`\b(?:File|IO)\s*\.\s*(?:write|binwrite|delete|unlink|chmod|symlink)\s*\(?\s*${STR}`, "g"),
  new RegExp(String.raw`\b(?:File\s*\.\s*open|fopen)\s*\(\s*${STR}\s*,\s*${WRITE_MODE}`, "g"),
  new RegExp(String.raw`\bfile_put_contents\s*\(\s*${STR}`, "g"),
  // Perl open(FH, '>', '/x') and open(FH, '>/x') / '>>/x'.
  new RegExp(String.raw`\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['"](?:>>?|\+<|\+>)['"]\s*,\s*${STR}`, "g"),
  /\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*(?<q>['"])(?:>>?|\+<|\+>)\s*(?<s>[^'"\n]{1,4096})\k<q>/g,
];

/** Python `import shutil as sh` (and the other modules {@link WRITE_CALLS} name): module and alias. */
const MODULE_ALIAS = /^[ \t]*import[ \t]+(shutil|os|io|codecs|pathlib)[ \t]+as[ \t]+([A-Za-z_]\w*)[ \t]*$/gm;
/** Python `from pathlib import Path as P`: class and alias. */
const PATH_ALIAS = /^[ \t]*from[ \t]+pathlib[ \t]+import[ \t]+(Path|PosixPath|PurePath)[ \t]+as[ \t]+([A-Za-z_]\w*)[ \t]*$/gm;

/** An ES import of names from Node's `fs` (`import { writeFileSync as w, appendFileSync } from 'node:fs'`). */
const ESM_NAMED = /\bimport\s*(?:[A-Za-z_$][\w$]*\s*,\s*)?\{([^}]{0,1024})\}\s*from\s*['"](?:node:)?fs(?:\/promises)?['"]/g;

/** The code with Python import aliases of those modules and classes, and ES import aliases of `fs` functions, spelled as their own names. */
function unaliased(code: string): string {
  if (!/\sas\s/.test(code)) return code;
  let out = code;
  for (const m of code.matchAll(ESM_NAMED)) {
    for (const part of m[1]!.split(",")) {
      const alias = /^\s*([A-Za-z_$][\w$]*)\s+as\s+([A-Za-z_$][\w$]*)\s*$/.exec(part);
      if (alias !== null)
        out = out.replace(new RegExp(String.raw`(?<![.\w$])${alias[2]!.replace(/\$/g, "\\$")}\s*\(`, "g"), `${alias[1]!}(`);
    }
  }
  for (const m of code.matchAll(MODULE_ALIAS)) out = out.replace(new RegExp(String.raw`\b${m[2]!}\s*\.`, "g"), `${m[1]!}.`);
  for (const m of code.matchAll(PATH_ALIAS)) out = out.replace(new RegExp(String.raw`\b${m[2]!}\s*\(`, "g"), `${m[1]!}(`);
  return out;
}

/** Words at least one of {@link WRITE_CALLS} contains: code with none of them is not searched further. */
const WRITE_HINT =
  /open|write|append|touch|unlink|truncate|chmod|symlink|link|rename|replace|output|put_contents|delete|rmdir|copy|move|cp/i;

/**
 * The literal paths program text opens for writing, truncates, creates or deletes (Python
 * `open('/etc/hosts', 'w')`, `Path('~/.bashrc').write_text(…)`, Node `fs.writeFileSync('/x', …)`,
 * Ruby `File.write`, PHP `file_put_contents`, Perl `open(F, '>', '/x')`), as written. Computed
 * paths are followed when they are constants (see `foldConstantPaths`), else not.
 */
export function codeWrites(code: string): string[] {
  if (!WRITE_HINT.test(code)) return [];
  code = foldConstantPaths(unaliased(code));
  const out: string[] = [];
  for (const re of WRITE_CALLS) {
    re.lastIndex = 0;
    for (const m of code.matchAll(re)) {
      const path = m.groups?.s?.replace(/\\(.)/g, "$1").trim();
      if (path !== undefined && path.length > 0 && !out.includes(path)) out.push(path);
    }
  }
  return out;
}
