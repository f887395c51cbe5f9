/**
 * Paths in program text that are computed but really constants: the home directory joined with
 * literal parts (`os.path.join(os.path.expanduser('~'), '.ssh', 'authorized_keys')`,
 * `Path.home() / '.bashrc'`, Node `path.join(os.homedir(), '.ssh')`, `` `${os.homedir()}/.bashrc` ``)
 * are folded into one string literal, so the write calls that take a literal path see them. A
 * path built from anything else stays as written.
 */

/** A string literal without escapes (the folded parts are plain path pieces). */
const LIT = String.raw`(?:'[^'\\\n]*'|"[^"\\\n]*")`;
const lit = (text: string): string => (text.includes("'") ? `"${text}"` : `'${text}'`);
const unquote = (l: string): string => l.slice(1, -1);
const parts = (list: string): string[] => (list.match(new RegExp(LIT, "g")) ?? []).map(unquote);

/** Path pieces joined as `os.path.join` and `path.join` do (a later absolute piece starts over). */
function joined(pieces: readonly string[]): string {
  let out = "";
  for (const p of pieces) {
    if (p.startsWith("/") || out.length === 0) out = p;
    else if (p.length > 0) out = out.endsWith("/") ? `${out}${p}` : `${out}/${p}`;
  }
  return out;
}

/** The home directory spelled in code, to the literal `'~'` (pathlib's `Path.home()` to `Path('~')`). */
const HOME: readonly [RegExp, string][] = [
  [new RegExp(String.raw`\bos\s*\.\s*path\s*\.\s*expanduser\s*\(\s*(['"])~\1\s*\)`, "g"), "'~'"],
  [/\b(?:os\s*\.\s*)?homedir\s*\(\s*\)/g, "'~'"],
  [/\bos\s*\.\s*environ\s*\[\s*(['"])HOME\1\s*\]/g, "'~'"],
  [/\bos\s*\.\s*(?:environ\s*\.\s*get|getenv)\s*\(\s*(['"])HOME\1\s*\)/g, "'~'"],
  [/\bprocess\s*\.\s*env\s*\.\s*HOME\b/g, "'~'"],
  [/\b(?:pathlib\s*\.\s*)?Path\s*\.\s*home\s*\(\s*\)/g, "Path('~')"],
];

/** One folding step each: applied until nothing changes. */
const STEPS: readonly [RegExp, (...m: string[]) => string][] = [
  // os.path.expanduser('~/x') is the path itself (`~` is kept: resolution knows it).
  [new RegExp(String.raw`\bos\s*\.\s*path\s*\.\s*expanduser\s*\(\s*(${LIT})\s*\)`, "g"), (_, l) => l],
  // os.path.join / posixpath.join / path.join / path.resolve of literals.
  [
    new RegExp(String.raw`\b(?:os\s*\.\s*path|posixpath|path)\s*\.\s*(?:join|resolve)\s*\(\s*(${LIT}(?:\s*,\s*${LIT})*)\s*,?\s*\)`, "g"),
    (_, list) => lit(joined(parts(list))),
  ],
  // Path('a', 'b'), Path('~/x').expanduser() / .resolve() / .absolute(), Path('a').joinpath('b', 'c'), Path('a') / 'b'.
  [new RegExp(String.raw`\bPath\s*\(\s*(${LIT}(?:\s*,\s*${LIT})+)\s*\)`, "g"), (_, list) => `Path(${lit(joined(parts(list)))})`],
  [new RegExp(String.raw`\bPath\s*\(\s*(${LIT})\s*\)\s*\.\s*(?:expanduser|resolve|absolute)\s*\(\s*\)`, "g"), (_, l) => `Path(${l})`],
  [
    new RegExp(String.raw`\bPath\s*\(\s*(${LIT})\s*\)\s*\.\s*joinpath\s*\(\s*(${LIT}(?:\s*,\s*${LIT})*)\s*\)`, "g"),
    (_, l, list) => `Path(${lit(joined([unquote(l), ...parts(list)]))})`,
  ],
  [new RegExp(String.raw`\bPath\s*\(\s*(${LIT})\s*\)\s*/\s*(${LIT})`, "g"), (_, a, b) => `Path(${lit(joined([unquote(a), unquote(b)]))})`],
  [new RegExp(String.raw`\(\s*(Path\s*\(\s*${LIT}\s*\))\s*\)`, "g"), (_, p) => p],
  // A Path given where a path is expected: open(Path('~/.bashrc'), 'a'), str(Path(…)), os.fspath(Path(…)).
  [
    new RegExp(String.raw`\b(open|str|os\s*\.\s*fspath)\s*\(\s*Path\s*\(\s*(${LIT})\s*\)`, "g"),
    (_, f, l) => (f === "open" ? `open(${l}` : l),
  ],
  // Concatenation of literals ('~' + '/.bashrc') and template literals of literals (`${'~'}/.bashrc`).
  [new RegExp(String.raw`(${LIT})\s*\+\s*(${LIT})`, "g"), (_, a, b) => lit(unquote(a) + unquote(b))],
  [
    new RegExp(String.raw`\x60([^\x60$\\\n]*)\$\{\s*(${LIT})\s*\}([^\x60$\\\n]*)\x60`, "g"),
    (_, before, l, after) => lit(before + unquote(l) + after),
  ],
];

/** Words a computed path must contain for folding to change anything. */
const FOLD_HINT = /home|expanduser|join|resolve|Path|HOME|\+|\$\{/;

/** The program text with constant path expressions folded into string literals (see the module comment). */
export function foldConstantPaths(code: string): string {
  if (!FOLD_HINT.test(code)) return code;
  let out = code;
  for (const [re, to] of HOME) out = out.replace(re, to);
  for (let round = 0; round < 16; round++) {
    const before = out;
    for (const [re, to] of STEPS) out = out.replace(re, to as (substring: string, ...args: unknown[]) => string);
    if (out === before) break;
  }
  return out;
}

/** Names of credential stores and start-up or scheduling files. */
export const SENSITIVE_NAME =
  /\.(?:bashrc|bash_profile|bash_login|profile|zshrc|zprofile|zshenv|zlogin|kshrc|cshrc|tcshrc|xprofile|xinitrc|netrc|git-credentials|pgpass|pypirc|npmrc|vault-token)\b|\.(?:ssh|aws|gnupg|kube|docker|azure|password-store)\b|authorized_keys|gcloud|crontab|cron\.d|LaunchAgents|LaunchDaemons|systemd\/user|autostart/;

/** A call that writes a file, whatever its path argument (a literal or not). */
export const ANY_WRITE_CALL = new RegExp(
  [
    String.raw`\bopen\s*\([^;\n]*?,\s*(?:mode\s*=\s*)?['"][rbtU]*[wax+]`,
    String.raw`\bopen\s*\([^;\n]*?,\s*os\s*\.\s*O_(?:WRONLY|RDWR|CREAT|APPEND|TRUNC)`,
    String.raw`\.\s*(?:write_text|write_bytes|touch|symlink_to|hardlink_to)\s*\(`,
    String.raw`\b(?:writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream|outputFile|outputFileSync|copyFile|copyFileSync|renameSync|cpSync|symlinkSync|linkSync|file_put_contents)\s*\(`,
    String.raw`\bshutil\s*\.\s*(?:copy|copy2|copyfile|copytree|move)\s*\(`,
    String.raw`\bos\s*\.\s*(?:rename|replace|symlink|link)\s*\(`,
    String.raw`\b(?:File|IO)\s*\.\s*(?:write|binwrite|symlink)\b`,
    String.raw`\b(?:File\s*\.\s*open|fopen)\s*\([^;\n]*?,\s*['"][wax]`,
    String.raw`\bopen\s*\(?\s*(?:my\s+)?[$\w]+\s*,\s*['"](?:>>?|\+<|\+>)`,
  ].join("|"),
);
