/**
 * What the analysis knows about programs, as data: reserved words, wrappers that run another
 * command, shells and interpreters, options that take a value, and which arguments a program
 * writes to.
 */

export const RESERVED: ReadonlySet<string> = new Set([
  "!",
  "{",
  "}",
  "if",
  "then",
  "else",
  "elif",
  "fi",
  "do",
  "done",
  "while",
  "until",
  "esac",
  "time",
  "coproc",
  "[[",
  "]]",
]);
/** Segments that are not a command (`for x in …`, `case … in`, `select`). */
export const SKIP_SEGMENT: ReadonlySet<string> = new Set(["for", "select", "case"]);
export const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

/** Shells: their `-c` text, here-documents, here-strings and piped input are scripts. */
export const SHELLS: ReadonlySet<string> = new Set([
  "sh",
  "bash",
  "zsh",
  "dash",
  "ksh",
  "mksh",
  "ash",
  "fish",
  "csh",
  "tcsh",
  "busybox-sh",
  "rbash",
  "yash",
]);

/**
 * How a language interpreter takes its program on the command line: which options carry
 * program text (checked for dangerous primitives), which run a module or file instead (nothing
 * to check), which take other values (skipped), and whether the first positional argument is
 * the program (awk). Entries of {@link INTERPRETERS}.
 */
export interface InterpreterSpec {
  /** Short options whose value is program text (`-c` of python, `-e` of perl). */
  readonly codeShort: string;
  /** Long options whose value is program text (`--eval` of node). */
  readonly codeLong: readonly string[];
  /** Short options that name a module or file to run instead of reading stdin (`-m` of python, `-f` of awk). */
  readonly runShort: string;
  /** Short options that take a (non-code) value. */
  readonly valueShort: string;
  /** The first positional argument is the program text (awk). */
  readonly positionalCode?: boolean;
}

const interp = (codeShort: string, codeLong: string[] = [], runShort = "", valueShort = "", positionalCode = false): InterpreterSpec => ({
  codeShort,
  codeLong,
  runShort,
  valueShort,
  ...(positionalCode ? { positionalCode } : {}),
});

const PYTHON = interp("c", [], "m", "WX");
const NODE = interp("ep", ["eval", "print"], "", "r", false);
const AWK = interp("", [], "f", "vF", true);

/** Interpreters other than shells, by program name (a `python3.12` falls back to `python`). */
export const INTERPRETERS: ReadonlyMap<string, InterpreterSpec> = new Map(
  Object.entries({
    python: PYTHON,
    python2: PYTHON,
    python3: PYTHON,
    py: PYTHON,
    pypy: PYTHON,
    pypy3: PYTHON,
    perl: interp("eE", [], "", "IlMmx"),
    ruby: interp("e", [], "", "IrC"),
    node: NODE,
    nodejs: NODE,
    bun: NODE,
    php: interp("rBRE", [], "f", "cdz"),
    lua: interp("e", [], "l", ""),
    luajit: interp("e", [], "l", ""),
    awk: AWK,
    gawk: AWK,
    mawk: AWK,
    nawk: AWK,
    osascript: interp("e", [], "", "l"),
    rscript: interp("e", [], "", ""),
    tclsh: interp("", [], "", ""),
  }),
);

export function interpreterOf(program: string): InterpreterSpec | undefined {
  const direct = INTERPRETERS.get(program);
  if (direct !== undefined) return direct;
  if (program.startsWith("py") && (/^python[0-9.]+$/.test(program) || /^pypy[0-9.]*$/.test(program))) return PYTHON;
  return undefined;
}

/**
 * How a wrapper program (`sudo`, `env`, `timeout`, `xargs` …) is skipped to reach the command it
 * runs: its options that take a value, positional arguments before the command, whether
 * `NAME=value` assignments may follow, and which options change the working directory. Entries
 * of {@link WRAPPERS}.
 */
export interface WrapperSpec {
  /** Short option letters and long option names that take a value. */
  readonly values: ReadonlySet<string>;
  /** Positional arguments before the wrapped command (e.g. the duration of `timeout`). */
  readonly positionals?: number;
  /** Assignments may follow the options (`env`, `sudo`). */
  readonly assignments?: boolean;
  /** Options that set the working directory of the wrapped command (`env -C`, `sudo -D`). */
  readonly chdir?: ReadonlySet<string>;
}

const spec = (values: string[], extra: Omit<WrapperSpec, "values"> = {}): WrapperSpec => ({ values: new Set(values), ...extra });

/** Programs that run the command that follows their own options. */
export const WRAPPERS: ReadonlyMap<string, WrapperSpec> = new Map(
  Object.entries({
    sudo: spec(
      [
        "u",
        "g",
        "h",
        "p",
        "C",
        "D",
        "r",
        "t",
        "T",
        "U",
        "user",
        "group",
        "host",
        "prompt",
        "close-from",
        "chdir",
        "role",
        "type",
        "command-timeout",
        "other-user",
      ],
      { assignments: true, chdir: new Set(["D", "chdir"]) },
    ),
    doas: spec(["u", "C"]),
    run0: spec(["u", "g", "D", "chdir"], { chdir: new Set(["D", "chdir"]) }),
    env: spec(["u", "C", "unset", "chdir", "S", "split-string"], { assignments: true, chdir: new Set(["C", "chdir"]) }),
    command: spec([]),
    builtin: spec([]),
    exec: spec(["a"]),
    nohup: spec([]),
    nice: spec(["n", "adjustment"]),
    ionice: spec(["c", "n", "p", "P", "u", "class", "classdata"]),
    time: spec(["f", "o", "format", "output"]),
    timeout: spec(["s", "k", "signal", "kill-after"], { positionals: 1 }),
    stdbuf: spec(["i", "o", "e", "input", "output", "error"]),
    setsid: spec([]),
    unbuffer: spec([]),
    chronic: spec([]),
    caffeinate: spec(["t", "w"]),
    xargs: spec([
      "a",
      "d",
      "E",
      "e",
      "I",
      "i",
      "L",
      "l",
      "n",
      "P",
      "s",
      "arg-file",
      "delimiter",
      "eof",
      "replace",
      "max-lines",
      "max-args",
      "max-procs",
      "max-chars",
      "process-slot-var",
    ]),
    busybox: spec([]),
    strace: spec(["e", "o", "p", "s", "u", "E"]),
    ltrace: spec(["e", "o", "p", "s", "u"]),
    flock: spec(["w", "E", "timeout", "conflict-exit-code"], { positionals: 1 }),
    watch: spec(["n", "d", "interval", "differences"]),
    proxychains: spec(["f"]),
    proxychains4: spec(["f"]),
    torsocks: spec([]),
    chroot: spec(["userspec", "groups"], { positionals: 1 }),
    unshare: spec([]),
    nsenter: spec(["t", "target"]),
    firejail: spec([]),
    "systemd-run": spec(["u", "unit", "p", "property", "E", "setenv", "M", "machine", "working-directory"], {
      chdir: new Set(["working-directory"]),
    }),
  }),
);

/**
 * Options known to take a value, per program: their value is not a positional argument
 * (`pip install --index-url URL pkg` has the positional arguments `install pkg`; `scp -i KEY f
 * host:` has `f host:`). For other programs the word after an option is both a candidate value
 * and a positional argument.
 */
export const VALUE_OPTIONS: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const pip = [
    "index-url",
    "extra-index-url",
    "i",
    "r",
    "requirement",
    "c",
    "constraint",
    "f",
    "find-links",
    "trusted-host",
    "t",
    "target",
    "prefix",
    "root",
    "src",
    "upgrade-strategy",
    "python-version",
    "platform",
    "abi",
    "implementation",
    "cache-dir",
    "log",
    "proxy",
    "retries",
    "timeout",
    "exists-action",
    "cert",
    "client-cert",
    "only-binary",
    "no-binary",
    "progress-bar",
    "report",
    "index",
    "default-index",
    "python",
    "p",
  ];
  const npm = ["registry", "prefix", "C", "dir", "filter", "F", "cache", "userconfig", "workspace", "w", "tag", "otp", "scope", "loglevel"];
  const ssh = ["b", "c", "D", "E", "e", "F", "I", "i", "J", "L", "l", "m", "O", "o", "p", "P", "Q", "R", "S", "W", "w", "X"];
  const table: Record<string, string[]> = {
    git: ["C", "c", "git-dir", "work-tree", "namespace", "exec-path", "config-env"],
    pip,
    pip3: pip,
    uv: pip,
    pipx: pip,
    npm,
    pnpm: npm,
    yarn: npm,
    bun: npm,
    ssh,
    scp: ["c", "D", "F", "i", "J", "l", "o", "P", "S", "X"],
    sftp: ["B", "b", "c", "D", "F", "i", "J", "l", "o", "P", "R", "S", "X"],
    rsync: [
      "e",
      "rsh",
      "exclude",
      "include",
      "exclude-from",
      "include-from",
      "filter",
      "f",
      "files-from",
      "rsync-path",
      "password-file",
      "log-file",
      "chmod",
      "chown",
      "usermap",
      "groupmap",
      "T",
      "temp-dir",
      "compare-dest",
      "copy-dest",
      "link-dest",
      "backup-dir",
      "suffix",
      "timeout",
      "port",
      "bwlimit",
      "B",
      "block-size",
    ],
    cp: ["t", "target-directory", "S", "suffix"],
    mv: ["t", "target-directory", "S", "suffix"],
    install: ["t", "target-directory", "m", "mode", "o", "owner", "g", "group", "S", "suffix"],
    ln: ["t", "target-directory", "S", "suffix"],
    truncate: ["s", "size", "r", "reference"],
    chmod: ["reference"],
    chown: ["reference", "from"],
    chgrp: ["reference"],
    setfacl: ["m", "M", "x", "X", "modify", "modify-file", "remove", "remove-file", "set", "set-file"],
    perl: ["e", "E", "I", "M", "m", "x"],
    sed: ["e", "f", "expression", "file", "l", "line-length"],
    tar: ["f", "file", "C", "directory", "T", "files-from", "X", "exclude-from", "exclude"],
  };
  return new Map(Object.entries(table).map(([k, v]) => [k, new Set(v)]));
})();

export function valueOptionsOf(program: string): ReadonlySet<string> | undefined {
  return VALUE_OPTIONS.get(program) ?? (/^pip3\.\d+$/.test(program) ? VALUE_OPTIONS.get("pip") : undefined);
}

/** Programs whose positional arguments (after `skip` leading ones) are files they change. */
export const CHANGES_ALL: ReadonlyMap<string, number> = new Map(
  Object.entries({
    rm: 0,
    rmdir: 0,
    unlink: 0,
    shred: 0,
    truncate: 0,
    touch: 0,
    tee: 0,
    chmod: 1,
    chown: 1,
    chgrp: 1,
    chattr: 0,
    setfacl: 0,
    srm: 0,
    wipe: 0,
    sponge: 0,
  }),
);

/** Programs that copy or move sources to a destination (the last positional, or `-t DIR`). */
export const COPIERS: ReadonlySet<string> = new Set(["cp", "mv", "install", "ln", "rsync"]);
