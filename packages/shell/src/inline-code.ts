/**
 * Program text given to an interpreter on its command line (`python3 -c …`, `perl -e …`,
 * `node -e …`, an awk program) or as a literal here-document: the analysis does not parse these
 * languages, it only recognises calls of primitives that delete files, run other programs or
 * open network connections. Text that calls none of them is treated like any other argument.
 */

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
    String.raw`require\s*\(\s*['"](?:node:)?(?:https?|net|dgram|tls|child_process|fs)['"]`,
  ].join("|"),
);

/** awk also runs commands through a pipe to or from a quoted command (`print | "sh"`, `"cmd" | getline`). */
const AWK_EXEC = /\|\s*"|"\s*\||\bgetline\b/;

/** The language family, for the few primitives that are syntax: awk pipes, Perl and Ruby backquotes. */
export type CodeLanguage = "awk" | "perl" | "ruby" | "other";

/** True when the program text calls a delete, exec or network primitive. */
export function callsDangerousPrimitive(code: string, language: CodeLanguage = "other"): boolean {
  if (PRIMITIVES.test(code)) return true;
  if (language === "awk") return AWK_EXEC.test(code);
  if (language === "perl" || language === "ruby") return code.includes("`") || /%x[({[/|!]/.test(code);
  return false;
}
